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
#include "common/blocking_reactor.h"
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

// Both RPCs are raw callback methods (public generated API): the request arrives as bytes and
// is parsed with common::ParseRequestBytes, so a question or option that is not valid UTF-8 gets
// INVALID_ARGUMENT naming the field (gRPC's own parser would refuse it as INTERNAL before any
// handler ran). Handlers run on common::BlockingCallPool threads, as sync handlers would.
using GatewayRawService = ibgraphrag::v1::GatewayService::WithRawCallbackMethod_Answer<
    ibgraphrag::v1::GatewayService::WithRawCallbackMethod_AnswerStream<
        ibgraphrag::v1::GatewayService::Service>>;

class GatewayServiceImpl final : public GatewayRawService {
 public:
  // `keys` null = no authentication (every caller is "anonymous"; development only). `metrics`
  // receives ibgr_gateway_* series and must outlive the service.
  static absl::StatusOr<std::unique_ptr<GatewayServiceImpl>> Create(
      std::unique_ptr<AnswerPipeline> pipeline, std::unique_ptr<ApiKeyStore> keys,
      std::unique_ptr<RateLimiter> rate_limiter, common::MetricsRegistry* metrics);
  ~GatewayServiceImpl() override;

  grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* AnswerStream(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override;

 private:
  struct Metrics;
  GatewayServiceImpl();
  grpc::Status RunAnswer(const grpc::ServerContextBase& context, const grpc::ByteBuffer& bytes,
                         grpc::ByteBuffer* response_bytes);
  grpc::Status RunStream(const grpc::ServerContextBase& context, const grpc::ByteBuffer& bytes,
                         const common::StreamWrite& write);
  // Parses a request from bytes; INVALID_ARGUMENT naming a non-UTF-8 field (after checking the
  // caller's key, so unauthenticated callers learn nothing about validation).
  grpc::Status ParseRequest(const grpc::ServerContextBase& context, absl::string_view rpc,
                            const grpc::ByteBuffer& bytes, google::protobuf::Message* request);
  // Authentication, rate limit and validation; fills `caller`.
  grpc::Status Admit(const grpc::ServerContextBase& context,
                     const ibgraphrag::v1::AnswerRequest& request, std::string* caller);
  void Audit(const grpc::ServerContextBase& context, absl::string_view rpc,
             const std::string& caller, const grpc::Status& status,
             const ibgraphrag::v1::AnswerResponse& response, double latency_ms) const;

  std::unique_ptr<AnswerPipeline> pipeline_;
  std::unique_ptr<ApiKeyStore> keys_;
  std::unique_ptr<RateLimiter> rate_limiter_;
  std::unique_ptr<Metrics> metrics_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_SERVICE_IMPL_H_
