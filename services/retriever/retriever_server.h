// RetrieverServer: the retriever service on a ServerRunner. Opens its KG source (the kgstore
// service over gRPC, or a snapshot in this process), loads the newest or pinned model version,
// and reports SERVING only once the model is loaded. A missing or corrupt model is logged and
// leaves health NOT_SERVING (RPCs other than SHORTEST_PATH Retrieve get FAILED_PRECONDITION
// naming the problem) so orchestrators keep traffic away without a crash loop.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/client.h"
#include "common/servable_holder.h"
#include "common/server_runner.h"
#include "prometheus/gauge.h"
#include "services/kgstore/kg_store.h"
#include "services/retriever/retriever.h"
#include "services/retriever/retriever_service_impl.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever {

// Default ports of the service (gRPC, Prometheus).
inline constexpr int kDefaultRetrieverPort = 50054;
inline constexpr int kDefaultRetrieverMetricsPort = 9094;
// gRPC service name, also the health-check entry.
inline constexpr char kRetrieverServiceName[] = "ibgraphrag.v1.RetrieverService";

class RetrieverServer {
 public:
  struct Options {
    // Port, TLS, drain and logging settings; service_name defaults to "retriever".
    common::ServerRunner::Options server;
    // Artifact base: models in `<base_path>/retriever/<version>/`, and, when kgstore_address and
    // kg_base_path are empty, the KG replica's snapshots in `<base_path>/kg/<version>/`.
    std::string base_path;
    // Serve this model version instead of the newest.
    std::optional<int64_t> pinned_version;
    // kgstore service address ("host:port", "dns:///..."); empty = a read-only KG replica in
    // this process: the newest snapshot under `kg_base_path`, followed to newer ones like the
    // model (watch_interval). The replica scores without moving subgraphs over the network.
    std::string kgstore_address;
    // Artifact base holding the replica's `kg/<version>/` (a local copy that `ibgr-ops sync-kg`
    // keeps up to date, on Kubernetes); empty = base_path.
    std::string kg_base_path;
    // Serve this KG snapshot version in the replica instead of the newest (--pin_kg_version; the
    // KG's counterpart of kgstore's --pin_version, for rolling a KG back).
    std::optional<int64_t> kg_pinned_version;
    // TLS towards kgstore.
    common::ClientTlsOptions kgstore_tls;
    // A KG already open in this process (the all-in-one binary shares kgstore's); takes
    // precedence over kgstore_address and the snapshot under base_path. Snapshot swaps of its
    // owner are not followed.
    std::shared_ptr<kgstore::KgStore> kg_store;
    // Scoring device: "auto", "cpu" or "cuda:N" (a GPU needs `scoring_backend`).
    std::string device = "auto";
    // The device backend the binary links (torch_backend.h in retriever_torch); null: the fused
    // CPU loop only, no LibTorch in the process.
    const ScoringBackend* scoring_backend = nullptr;
    // The backend's intra-op threads (LibTorch kernels), >= 1; checked but unused without one.
    int torch_threads = 1;
    // Request-path options (subgraph budget, fan-out).
    Retriever::Options retriever;
    // Text encoder; must be the one the model's artifacts were built with. Default: the
    // built-in encoder named by the model's manifest.
    std::optional<TextEmbedder> embedder;
    // Scorer variant IBRP requests naming none get (--scorer); unset = each version's default.
    // A version without it is refused (FAILED_PRECONDITION naming it), like a broken one.
    std::optional<ScorerVariant> default_variant;
    // When > 0 and no version is pinned, look for a newer model version this often and swap to
    // it once it has loaded (requests in flight finish on the model they started with; a version
    // that fails to load is logged and the current one keeps serving). Also retries a model that
    // failed to load, so publishing a good one brings the server to SERVING.
    absl::Duration watch_interval = absl::ZeroDuration();
  };

  // Starts the gRPC server (NOT_SERVING), opens the KG source (an error here is fatal), loads
  // the model (an error here is logged; health stays NOT_SERVING), then reports SERVING.
  static absl::StatusOr<std::unique_ptr<RetrieverServer>> BuildAndStart(const Options& options);
  ~RetrieverServer();

  int port() const { return runner_->port(); }
  int metrics_port() const { return runner_->metrics_port(); }
  common::ServerRunner& runner() { return *runner_; }
  const Retriever& retriever() const { return *retriever_; }
  // Why the newest (or pinned) model is not served (empty when it is).
  std::string model_error() const;
  // Loads the newest (or pinned) model version if it is not the one served; true when swapped.
  absl::StatusOr<bool> ReloadIfNewer() { return models_->ReloadIfNewer(); }
  // The KG replica's newest snapshot, if it is not the one served (replica mode only: else
  // FAILED_PRECONDITION); true when swapped.
  absl::StatusOr<bool> ReloadKgIfNewer();
  std::shared_ptr<grpc::Channel> InProcessChannel() { return runner_->InProcessChannel(); }
  // The service behind the RPCs, for direct calls in this process (RetrieveDirect).
  RetrieverServiceImpl& service() { return *service_; }

  // SIGTERM/SIGINT: NOT_SERVING, grace period, drain, return.
  void WaitForTermination();
  void Shutdown();

 private:
  RetrieverServer() = default;
  static absl::StatusOr<std::shared_ptr<SubgraphSource>> OpenKgSource(const Options& options,
                                                                      RetrieverServer* server);
  void OnModelSwap(const RetrieverModel& model);
  // Creates the documents manager and loads the newest version (absent or broken: logged).
  void LoadDocuments(const Options& options);
  // ibgr_retriever_ibrp_requests_total{variant}, counted by the service.
  absl::Status RegisterVariantCounters();

  void OnKgSwap(const kgstore::KgStore& store);

  std::shared_ptr<kgstore::KgStore> store_;  // a KG passed in (the all-in-one's) only
  // The read-only KG replica (kgstore_address empty): resolves, opens and hot-swaps snapshots.
  std::unique_ptr<common::ServableManager<kgstore::KgStore>> kg_snapshots_;
  // ibgr_retriever_kg_snapshot_version: the replica's served snapshot (replica mode only).
  prometheus::Gauge* kg_version_gauge_ = nullptr;
  // Resolves, loads and hot-swaps model versions; the retriever reads its holder.
  std::unique_ptr<common::ServableManager<const RetrieverModel>> models_;
  std::unique_ptr<Retriever> retriever_;
  // ILlama subgraph documents, `<base_path>/documents/<version>/` (newest; optional: without
  // them only RetrieveDocuments fails, FAILED_PRECONDITION).
  std::unique_ptr<common::ServableManager<const SubgraphDocuments>> documents_;
  std::unique_ptr<RetrieverServiceImpl> service_;
  std::unique_ptr<common::ServerRunner> runner_;
  // ibgr_retriever_model_version: the served version (0 until one is loaded).
  prometheus::Gauge* model_version_gauge_ = nullptr;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVER_H_
