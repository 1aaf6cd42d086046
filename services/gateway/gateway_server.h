// GatewayServer: the public gateway on a ServerRunner: channels to the four services (client-side
// round robin, retries on UNAVAILABLE, optional TLS/mTLS), caller authentication, rate limit,
// and the answer pipeline. The gateway holds no data, so it reports SERVING as soon as it starts;
// an unreachable service shows up per request (UNAVAILABLE or a degraded answer), not as a dead
// gateway. With `local_reasoner` it answers from the evidence itself (`gateway --reasoner=local`):
// the reasoner runs in this process, so an answer makes two network calls (alignment, retriever)
// instead of three. With `local_alignment` too (`--alignment=local`) it also finds the question's
// entities itself, and the retriever is the one network call left.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVER_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/client.h"
#include "common/http_gateway.h"
#include "common/metrics.h"
#include "common/server_runner.h"
#include "services/alignment/alignment_server.h"
#include "services/gateway/answer_pipeline.h"
#include "services/gateway/gateway_service_impl.h"
#include "services/reasoner/reasoner_server.h"

namespace ibgraphrag::gateway {

inline constexpr int kDefaultGatewayPort = 50051;
inline constexpr int kDefaultGatewayMetricsPort = 9091;
inline constexpr char kGatewayServiceName[] = "ibgraphrag.v1.GatewayService";

class GatewayServer {
 public:
  struct Options {
    // Port, TLS, drain and logging settings; service_name defaults to "gateway".
    common::ServerRunner::Options server;
    // Service addresses ("host:port", "dns:///name.ns.svc.cluster.local:port" for a headless
    // Service). alignment, retriever and reasoner are required unless `upstreams` is given;
    // kgstore is optional (the degraded evidence path when the retriever fails).
    std::string alignment_address;
    std::string retriever_address;
    std::string reasoner_address;
    std::string kgstore_address;
    // Answer in this process instead of calling reasoner_address (which is then ignored): a
    // reasoner served in-process only (no port; its metrics join the gateway's /metrics), whose
    // Reason handler the pipeline calls directly as the all-in-one does; AnswerStream and the
    // modes reach it through its in-process channel. Its `server` field is replaced. Meant for
    // the extractive backend, whose work (well under a millisecond) costs less than the network
    // call it replaces; a ReasonerConfig with LLM backends works too, each gateway pod then
    // calling the LLM itself.
    std::optional<reasoner::ReasonerServer::Options> local_reasoner;
    // Align in this process instead of calling alignment_address (then ignored): an alignment
    // server served in-process only, as local_reasoner is, on the bundles under its base_path
    // (or bundle_dir), following newer versions when its watch_interval is set. Its `server` and
    // http_port fields are replaced. The bundle must load at start (FAILED_PRECONDITION naming
    // it otherwise): a gateway that cannot align answers nothing. Costs the bundle's memory
    // (about 0.6 GiB at its peak for the embedded KG) in every gateway pod.
    std::optional<alignment::AlignmentServer::Options> local_alignment;
    // TLS/mTLS towards the services.
    common::ClientTlsOptions upstream_tls;
    // Channels to use instead of the addresses (the all-in-one binary's in-process channels).
    std::optional<Upstreams> upstreams;
    // API key file (see api_keys.h); empty = no authentication (logged as a warning).
    std::string api_keys_file;
    absl::Duration api_keys_reload_interval = absl::Seconds(2);
    // Per-caller token bucket; qps <= 0 disables it.
    double rate_limit_qps = 0;
    double rate_limit_burst = 0;
    PipelineConfig pipeline;
    // HTTP/JSON port (common/http_gateway.h: POST /v1/answer, /v1/answer:stream, GET /healthz,
    // /readyz): -1 = none, 0 = the OS picks. Binds server.listen_host with server.tls; calls go
    // through the gRPC server itself, so keys, rate limit, validation and deadlines are shared.
    int http_port = -1;
  };

  static absl::StatusOr<std::unique_ptr<GatewayServer>> BuildAndStart(const Options& options);
  ~GatewayServer();

  int port() const { return runner_->port(); }
  int metrics_port() const { return runner_->metrics_port(); }
  // The bound HTTP/JSON port, or -1 when there is none.
  int http_port() const { return http_ != nullptr ? http_->port() : -1; }
  common::ServerRunner& runner() { return *runner_; }
  std::shared_ptr<grpc::Channel> InProcessChannel() { return runner_->InProcessChannel(); }

  // SIGTERM/SIGINT: NOT_SERVING, grace period, drain, return.
  void WaitForTermination();
  void Shutdown();

 private:
  GatewayServer() = default;

  // Declared before the gateway's service and runner so they are destroyed after them: their
  // requests call into them.
  std::unique_ptr<alignment::AlignmentServer> local_alignment_;
  std::unique_ptr<reasoner::ReasonerServer> local_reasoner_;
  std::unique_ptr<GatewayServiceImpl> service_;
  std::unique_ptr<common::ServerRunner> runner_;
  // Declared after runner_ so it is destroyed first: its requests call into the runner.
  std::unique_ptr<common::HttpGateway> http_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVER_H_
