#include "services/gateway/gateway_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "services/gateway/in_process_services.h"
#include "web/ui/evidence_viewer_files.h"

namespace ibgraphrag::gateway {
namespace {

absl::StatusOr<std::shared_ptr<grpc::Channel>> Channel(absl::string_view field,
                                                       const std::string& target,
                                                       const common::ClientTlsOptions& tls,
                                                       bool required) {
  if (target.empty()) {
    if (!required) return std::shared_ptr<grpc::Channel>();
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": required (host:port or dns:///name:port of the service)"));
  }
  common::ChannelOptions options;
  options.target = target;
  options.tls = tls;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = common::MakeChannel(options);
  if (!channel.ok()) {
    return absl::Status(channel.status().code(),
                        absl::StrCat(field, ": ", channel.status().message()));
  }
  return channel;
}

// Starts a service this gateway runs itself (`--alignment=local`, `--reasoner=local`): in-process
// only, its metrics on the gateway's registry; errors name it ("local alignment: ...").
template <typename Server>
absl::StatusOr<std::unique_ptr<Server>> StartLocal(typename Server::Options options,
                                                   const std::string& name,
                                                   const common::ServerRunner::Options& gateway) {
  options.server = InProcessServerOptions(gateway, name, gateway.metrics_registry);
  absl::StatusOr<std::unique_ptr<Server>> started = Server::BuildAndStart(options);
  if (!started.ok()) {
    return absl::Status(started.status().code(),
                        absl::StrCat("local ", name, ": ", started.status().message()));
  }
  return started;
}

}  // namespace

GatewayServer::~GatewayServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<GatewayServer>> GatewayServer::BuildAndStart(
    const Options& options) {
  if (options.rate_limit_qps < 0 || options.rate_limit_burst < 0) {
    return absl::InvalidArgumentError("rate_limit_qps, rate_limit_burst: must not be negative");
  }
  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "gateway";
  // The service (and a local alignment or reasoner) record into the registry before the runner
  // exists, so the registry is made here (or given, when several servers share one /metrics
  // endpoint).
  if (runner_options.metrics_registry == nullptr) {
    common::MetricsRegistry::Options metrics_options;
    metrics_options.listen_host = runner_options.listen_host;
    metrics_options.port = runner_options.metrics_port;
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<common::MetricsRegistry> registry,
                          common::MetricsRegistry::Create(metrics_options));
    runner_options.metrics_registry = std::move(registry);
    runner_options.metrics_port = -1;
  }
  std::unique_ptr<GatewayServer> server(new GatewayServer());

  Upstreams upstreams;
  if (options.upstreams.has_value()) {
    upstreams = *options.upstreams;
  } else {
    const common::ClientTlsOptions& tls = options.upstream_tls;
    if (!options.local_alignment.has_value()) {
      IBGR_ASSIGN_OR_RETURN(upstreams.alignment,
                            Channel("alignment", options.alignment_address, tls, true));
    }
    IBGR_ASSIGN_OR_RETURN(upstreams.retriever,
                          Channel("retriever", options.retriever_address, tls, true));
    if (!options.local_reasoner.has_value()) {
      IBGR_ASSIGN_OR_RETURN(upstreams.reasoner,
                            Channel("reasoner", options.reasoner_address, tls, true));
    }
    IBGR_ASSIGN_OR_RETURN(upstreams.kgstore,
                          Channel("kgstore", options.kgstore_address, tls, false));
  }
  if (options.local_alignment.has_value()) {
    alignment::AlignmentServer::Options local = *options.local_alignment;
    local.http_port = -1;
    IBGR_ASSIGN_OR_RETURN(
        server->local_alignment_,
        StartLocal<alignment::AlignmentServer>(std::move(local), "alignment", runner_options));
    if (!server->local_alignment_->serving()) {
      return absl::FailedPreconditionError(
          absl::StrCat("local alignment: ", server->local_alignment_->load_status().message()));
    }
    upstreams.alignment = server->local_alignment_->InProcessChannel();
    upstreams.direct.align = DirectHandler(&server->local_alignment_->service(),
                                           &alignment::AlignmentServiceImpl::AlignDirect);
  }
  if (options.local_reasoner.has_value()) {
    IBGR_ASSIGN_OR_RETURN(
        server->local_reasoner_,
        StartLocal<reasoner::ReasonerServer>(*options.local_reasoner, "reasoner", runner_options));
    upstreams.reasoner = server->local_reasoner_->InProcessChannel();
    upstreams.direct.reason = DirectHandler(&server->local_reasoner_->service(),
                                            &reasoner::ReasonerServiceImpl::ReasonDirect);
  }
  if (upstreams.alignment == nullptr || upstreams.retriever == nullptr ||
      upstreams.reasoner == nullptr) {
    return absl::InvalidArgumentError("upstreams: alignment, retriever and reasoner are required");
  }
  std::unique_ptr<ApiKeyStore> keys;
  if (!options.api_keys_file.empty()) {
    IBGR_ASSIGN_OR_RETURN(
        keys, ApiKeyStore::Load(options.api_keys_file, options.api_keys_reload_interval));
  } else {
    common::LogWarning(
        "gateway: no api_keys_file; callers are NOT authenticated (development only)");
  }
  std::unique_ptr<RateLimiter> limiter;
  if (options.rate_limit_qps > 0) {
    limiter = std::make_unique<RateLimiter>(options.rate_limit_qps, options.rate_limit_burst > 0
                                                                        ? options.rate_limit_burst
                                                                        : options.rate_limit_qps);
  }

  IBGR_ASSIGN_OR_RETURN(
      server->service_,
      GatewayServiceImpl::Create(std::make_unique<AnswerPipeline>(options.pipeline, upstreams),
                                 std::move(keys), std::move(limiter),
                                 runner_options.metrics_registry.get()));
  IBGR_ASSIGN_OR_RETURN(
      server->runner_, common::ServerRunner::BuildAndStart(runner_options, {server->service_.get()},
                                                           {kGatewayServiceName}));
  if (options.http_port >= 0) {
    common::HttpGateway::Options http =
        common::HttpGateway::ForServer(runner_options, options.http_port, kGatewayServiceName);
    // The evidence viewer page at /ui/ (web/ui), which calls POST /v1/answer of this port.
    http.ui_files = ui::EvidenceViewerFiles();
    IBGR_ASSIGN_OR_RETURN(server->http_,
                          common::HttpGateway::Start(http, server->runner_->InProcessChannel()));
  }
  server->runner_->SetServing(true);
  return server;
}

void GatewayServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void GatewayServer::Shutdown() {
  // HTTP first: its requests in flight finish through the still-running gRPC server.
  if (http_ != nullptr) http_->Shutdown();
  if (runner_ != nullptr) runner_->Shutdown();
  if (local_reasoner_ != nullptr) local_reasoner_->Shutdown();
  if (local_alignment_ != nullptr) local_alignment_->Shutdown();
}

}  // namespace ibgraphrag::gateway
