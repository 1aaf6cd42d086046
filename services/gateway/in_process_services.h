// Services the gateway runs in its own process rather than calling over the network: the
// all-in-one's four (all_in_one.h) and the distributed gateway's own reasoner
// (`gateway --reasoner=local`, GatewayServer::Options::local_reasoner). Both serve them the same
// way: an in-process-only server (no port, the process's one /metrics registry) whose handler the
// answer pipeline calls directly (DirectCalls), failing as the RPC would.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_IN_PROCESS_SERVICES_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_IN_PROCESS_SERVICES_H_

#include <exception>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/client.h"
#include "common/metrics.h"
#include "common/server_runner.h"
#include "grpcpp/support/status.h"

namespace ibgraphrag::gateway {

// Server options of a service that only this process calls: no port, no endpoint of its own,
// `registry` for its metrics; drain, logging and message limits as `base` (the gateway's) says.
common::ServerRunner::Options InProcessServerOptions(
    const common::ServerRunner::Options& base, const std::string& name,
    std::shared_ptr<common::MetricsRegistry> registry);

// A handler called directly fails as it would over gRPC: gRPC's handler wrapper turns an
// exception into UNKNOWN, which the pipeline degrades like any failed upstream, where an
// exception escaping into the gateway's worker thread would end the process.
template <typename Call>
grpc::Status CatchLikeGrpc(Call call) {
  try {
    return call();
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::UNKNOWN, absl::StrCat("handler threw: ", e.what()));
  } catch (...) {
    return grpc::Status(grpc::StatusCode::UNKNOWN, "handler threw");
  }
}

// A DirectCalls member that calls `method` of `service` (which must outlive it), e.g.
// DirectHandler(&reasoner->service(), &reasoner::ReasonerServiceImpl::ReasonDirect).
template <typename Service, typename Method>
auto DirectHandler(Service* service, Method method) {
  return [service, method](const common::DirectCall& call, const auto& request, auto* response) {
    return CatchLikeGrpc([&] { return (service->*method)(call, request, response); });
  };
}

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_IN_PROCESS_SERVICES_H_
