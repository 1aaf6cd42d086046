// AlignmentServer: the alignment service on a ServerRunner with its bundle loaded, health and
// metrics. Health turns SERVING only once a bundle is loaded and its encoder id matches the
// configured encoder; otherwise the server keeps running NOT_SERVING (RPCs get UNAVAILABLE) and
// the log says why, so an operator can fix the bundle and call ReloadIfNewer (or restart).
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVER_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http_gateway.h"
#include "common/openai_client.h"
#include "common/servable_holder.h"
#include "common/server_runner.h"
#include "services/alignment/aligner.h"
#include "services/alignment/alignment_service_impl.h"
#include "services/alignment/alignment_setup.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

inline constexpr int kDefaultAlignmentPort = 50053;
inline constexpr int kDefaultAlignmentMetricsPort = 9093;
inline constexpr char kAlignmentServiceName[] = "ibgraphrag.v1.AlignmentService";

class AlignmentServer {
 public:
  struct Options {
    // Port, TLS, drain and logging; service_name defaults to "alignment".
    common::ServerRunner::Options server;
    // Artifact base; bundles live in `<base_path>/alignment/<version>/`.
    std::string base_path;
    // Serve this version instead of the newest.
    std::optional<int64_t> pinned_version;
    // Serve exactly this bundle directory (overrides base_path and pinned_version).
    std::string bundle_dir;
    // The encoder requests are encoded with; must match the bundle's encoder id. Default: the
    // encoder each bundle's manifest names, opened by id (trained encoders from
    // `<base_path>/encoder/`; base_path empty: the base the bundle directory lives in).
    EncoderSpec encoder = EncoderSpec{"bundle"};
    // LLM for the selection step and LLM mentions; unset = none (the selection step does not
    // run and is not reported; a request asking for llm_mentions gets a degradation).
    std::optional<common::OpenAiClientOptions> llm;
    // MSCA defaults and LLM limits.
    AlignerOptions aligner;
    // FAISS search settings.
    CandidateIndexOptions index;
    // OpenMP threads FAISS may use (process-wide); 1 keeps concurrent requests from fighting
    // over nested thread teams.
    int faiss_omp_threads = 1;
    // When > 0 and no version or directory is pinned, look for a newer bundle this often and
    // swap to it once it has loaded (requests in flight finish on the one they started with).
    // Also retries a bundle that failed to load, so fixing it brings the server to SERVING.
    absl::Duration watch_interval = absl::ZeroDuration();
    // HTTP/JSON port for teams that use alignment alone (POST /v1/align, GET /healthz,
    // /readyz; common/http_gateway.h): -1 = none, 0 = the OS picks. server.listen_host and
    // server.tls apply; calls go through the gRPC server itself.
    int http_port = -1;
  };

  // Starts the gRPC server (NOT_SERVING), creates the encoder (an error here is returned: the
  // configuration is wrong), then loads the bundle. A bundle that is missing, corrupt or built
  // with another encoder is logged and leaves the server NOT_SERVING rather than failing.
  static absl::StatusOr<std::unique_ptr<AlignmentServer>> BuildAndStart(const Options& options);
  ~AlignmentServer();

  int port() const { return runner_->port(); }
  int metrics_port() const { return runner_->metrics_port(); }
  // The bound HTTP/JSON port, or -1 when there is none.
  int http_port() const { return http_ != nullptr ? http_->port() : -1; }
  bool serving() const { return bundles_->Get() != nullptr; }
  // Why the newest (or pinned) bundle is not served (OK when it is).
  absl::Status load_status() const { return bundles_->load_status(); }
  common::ServerRunner& runner() { return *runner_; }
  std::shared_ptr<grpc::Channel> InProcessChannel() { return runner_->InProcessChannel(); }
  // The service behind the RPCs, for direct calls in this process (AlignDirect).
  const AlignmentServiceImpl& service() const { return *service_; }

  // Loads the newest (or pinned) bundle if it differs from the served one; true when swapped.
  // The watcher calls it; do not call it yourself while watch_interval is set.
  absl::StatusOr<bool> ReloadIfNewer();

  void WaitForTermination();
  void Shutdown();

 private:
  explicit AlignmentServer(const Options& options);
  // options_.index with the search threads of faiss_omp_threads.
  CandidateIndexOptions IndexOptions() const;
  absl::StatusOr<std::shared_ptr<const Aligner>> Load(const std::string& dir);
  void OnSwap(const Aligner& aligner);

  Options options_;
  // Resolves, loads and hot-swaps bundles; its holder is what the service reads.
  std::unique_ptr<common::ServableManager<const Aligner>> bundles_;
  std::unique_ptr<AlignmentServiceImpl> service_;
  absl::StatusOr<std::shared_ptr<const TextEncoder>> EncoderFor(const AlignmentBundle& bundle);

  // The configured encoder; null when each bundle's manifest names it (EncoderComesFromManifest).
  std::shared_ptr<const TextEncoder> encoder_;
  // The last encoder opened by a bundle's id, reused while newer bundles name the same id.
  absl::Mutex bundle_encoder_mu_;
  std::shared_ptr<const TextEncoder> bundle_encoder_ ABSL_GUARDED_BY(bundle_encoder_mu_);
  std::shared_ptr<const common::OpenAiClient> llm_;
  std::unique_ptr<common::ServerRunner> runner_;
  // After runner_, so it is destroyed first: its requests call into the runner.
  std::unique_ptr<common::HttpGateway> http_;
  struct Gauges;
  std::unique_ptr<Gauges> gauges_;
};

// Takes the encoder, MSCA defaults, LLM and its bounds, FAISS settings and bundle version (unless
// options->pinned_version is already set) of `setup` (an AlignmentConfig, alignment_setup.h) into
// `options`; trained encoders are looked up under options->base_path, so set it first.
// retriever_train --alignment_config reads the same file (OpenTrainingAligner), which is what keeps
// the topics trained on equal to those served.
void ApplyAlignmentSetup(const AlignmentSetup& setup, AlignmentServer::Options* options);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVER_H_
