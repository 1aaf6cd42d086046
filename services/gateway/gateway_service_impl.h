// GatewayServiceImpl: the public Answer / AnswerStream RPCs. Per request, in order: caller
// authentication (when keys are configured) → per-caller rate limit → validation → the
// AnswerPipeline → one audit log line (caller, request id, code, timings, entity/evidence
// counts, degraded components; never the question or options) and the gateway's metrics.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/metrics.h"
#include "grpcpp/support/byte_buffer.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/answer_pipeline.h"
#include "services/gateway/api_keys.h"
#include "services/gateway/rate_limiter.h"

namespace prometheus {
class Counter;
template <typename T>
class Family;
class Histogram;
}  // namespace prometheus

namespace ibgraphrag::gateway {

// Both RPCs are registered with byte-level handlers that parse the request themselves, so a
// question or option that is not valid UTF-8 gets INVALID_ARGUMENT naming the field (gRPC's own
// parser would refuse it as INTERNAL before any handler ran); they then call the typed methods.
class GatewayServiceImpl final : public ibgraphrag::v1::GatewayService::Service {
 public:
  // `keys` null = no authentication (every caller is "anonymous"; development only). `metrics`
  // receives ibgr_gateway_* series and must outlive the service.
  static absl::StatusOr<std::unique_ptr<GatewayServiceImpl>> Create(
      std::unique_ptr<AnswerPipeline> pipeline, std::unique_ptr<ApiKeyStore> keys,
      std::unique_ptr<RateLimiter> rate_limiter, common::MetricsRegistry* metrics);
  ~GatewayServiceImpl() override;

  grpc::Status Answer(grpc::ServerContext* context, const ibgraphrag::v1::AnswerRequest* request,
                      ibgraphrag::v1::AnswerResponse* response) override;
  grpc::Status AnswerStream(
      grpc::ServerContext* context, const ibgraphrag::v1::AnswerStreamRequest* request,
      grpc::ServerWriter<ibgraphrag::v1::AnswerStreamResponse>* writer) override;

 private:
  struct Metrics;
  GatewayServiceImpl();
  using StreamWrite = std::function<bool(const ibgraphrag::v1::AnswerStreamResponse&)>;
  grpc::Status RunStream(grpc::ServerContext* context,
                         const ibgraphrag::v1::AnswerStreamRequest& request, StreamWrite write);
  // Parses a request from bytes; INVALID_ARGUMENT naming a non-UTF-8 field (after checking the
  // caller's key, so unauthenticated callers learn nothing about validation).
  grpc::Status ParseRequest(grpc::ServerContext* context, absl::string_view rpc,
                            const grpc::ByteBuffer& bytes, google::protobuf::Message* request);
  // Authentication, rate limit and validation; fills `caller`.
  grpc::Status Admit(const grpc::ServerContext& context,
                     const ibgraphrag::v1::AnswerRequest& request, std::string* caller);
  void Audit(const grpc::ServerContext& context, absl::string_view rpc, const std::string& caller,
             const grpc::Status& status, const ibgraphrag::v1::AnswerResponse& response,
             double latency_ms) const;

  std::unique_ptr<AnswerPipeline> pipeline_;
  std::unique_ptr<ApiKeyStore> keys_;
  std::unique_ptr<RateLimiter> rate_limiter_;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_
