// Per-RPC observability for every server built by ServerRunner: request ids, Prometheus RPC
// metrics and one JSON access-log line per RPC. Payloads are never looked at.
//
// Request ids: the caller's `x-request-id` metadata is used when it is 1..128 visible ASCII
// characters; otherwise a random 128-bit hex id is generated. Either way the id is
//  - returned to the caller as `x-request-id` in the server's initial metadata, or in trailing
//    metadata for status-only responses (the usual failed unary call), which must keep empty
//    initial metadata to stay retryable (gRPC retries only Trailers-Only responses);
//  - written back into the server context's client metadata, so RequestIdOf(context) inside a
//    handler sees the same id the access log and the caller see;
//  - propagated to downstream calls by MakeChildContext (common/client.h).
//
// Metrics (labels `service` = full gRPC service name, `method` = method name; RPCs to methods
// no linked proto defines are counted under service="unknown", method="unknown" so that
// arbitrary paths cannot blow up the series count):
//   ibgr_grpc_requests_total{service,method,code}       counter, code = "OK", "NOT_FOUND", ...
//   ibgr_grpc_request_duration_seconds{service,method}  histogram, 0.1 ms .. 10 s
//   ibgr_grpc_inflight_requests{service}                gauge
//
// Access log fields: ts, level, msg="rpc", server (ServerRunner::Options::service_name),
// service, method, request_id, code, latency_ms, peer. Health and reflection RPCs log at debug
// level so probes do not flood the log.
#ifndef IBGRAPHRAG_COMMON_SERVER_INTERCEPTOR_H_
#define IBGRAPHRAG_COMMON_SERVER_INTERCEPTOR_H_

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_interceptor.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/metrics.h"

namespace ibgraphrag::common {

// Metadata key of the request id, in both directions.
inline constexpr char kRequestIdMetadataKey[] = "x-request-id";

// A random 128-bit id as 32 lower-case hex digits.
std::string GenerateRequestId();

// Whether a caller-supplied id is acceptable (1..128 visible ASCII characters).
bool IsValidRequestId(absl::string_view id);

// The request id of the RPC `context` belongs to: the id the interceptor chose (caller's or
// generated). Without the interceptor (a handler called directly in a unit test), the caller's
// `x-request-id` metadata if any, else "".
std::string RequestIdOf(const grpc::ServerContextBase& context);

// "CANCELLED", "NOT_FOUND", ...; "OK" for OK.
absl::string_view GrpcStatusCodeName(grpc::StatusCode code);

class RpcObserverState;

// Installed by ServerRunner on every server; exposed for servers built by hand.
class RpcObservabilityInterceptorFactory
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  // `server_name` goes into access-log lines; the RPC metric families are registered in
  // `metrics`, which must outlive the server this factory is installed on.
  static absl::StatusOr<std::unique_ptr<RpcObservabilityInterceptorFactory>> Create(
      std::string server_name, MetricsRegistry* metrics);

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  explicit RpcObservabilityInterceptorFactory(std::shared_ptr<RpcObserverState> state);

  std::shared_ptr<RpcObserverState> state_;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_SERVER_INTERCEPTOR_H_
