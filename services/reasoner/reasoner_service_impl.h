// gRPC face of the Reasoner: translates ibgraphrag.v1.ReasonRequest to the core ReasonRequest and
// the core ReasonResult back to ReasonResponse, one field to one field, passes the caller's
// deadline and request id down, and converts every outcome with the one common::ToGrpcStatus.
// Validation (limits, field names in messages) is the core's, so the library and the service
// reject exactly the same requests.
#ifndef IBGRAPHRAG_SERVICES_REASONER_REASONER_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_REASONER_REASONER_SERVICE_IMPL_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/client.h"
#include "ibgraphrag/v1/reasoner.grpc.pb.h"
#include "services/reasoner/reasoner.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

// Proto -> core. The core identifies entities by `external_id` (then by name); the snapshot-local
// `id` and the `type` of EntityRef are not used. INVALID_ARGUMENT for enum values the core does
// not know (naming the field).
absl::StatusOr<ReasonRequest> FromProto(const ibgraphrag::v1::ReasonRequest& request);

// Core -> proto.
void ToProto(const ReasonResult& result, ibgraphrag::v1::ReasonResponse* response);

// The caller's gRPC deadline as absl::Time; InfiniteFuture when the caller set none.
absl::Time DeadlineOf(const grpc::ServerContext& context);

class ReasonerServiceImpl final : public ibgraphrag::v1::ReasonerService::Service {
 public:
  // Receives every request that produced an answer, with the backend the request resolved to
  // (after default_backend) and the result; the server records metrics with it. Called on the
  // handler's thread; must be thread-safe.
  using AnswerObserver =
      std::function<void(absl::string_view requested_backend, const ReasonResult& result)>;

  // `default_backend` replaces an empty ReasonRequest.backend ("" keeps the extractive backend).
  // `observer` may be null.
  explicit ReasonerServiceImpl(std::string default_backend = "", AnswerObserver observer = nullptr);

  // Serves `reasoner` from now on; until the first call every RPC is UNAVAILABLE.
  void SetReasoner(std::shared_ptr<const Reasoner> reasoner);

  grpc::Status Reason(grpc::ServerContext* context, const ibgraphrag::v1::ReasonRequest* request,
                      ibgraphrag::v1::ReasonResponse* response) override;
  // Reason without gRPC, for a caller in this process (the all-in-one's gateway): the same
  // handler as the RPC, on the caller's thread, with the call's deadline and request id.
  grpc::Status ReasonDirect(const common::DirectCall& call,
                            const ibgraphrag::v1::ReasonRequest& request,
                            ibgraphrag::v1::ReasonResponse* response) const;

  // Writes one `token` message per piece of LLM output as it arrives, then one `result` message
  // (always the last one). The extractive backend writes only the result. A caller that goes
  // away does not stop the LLM call early; the caller's deadline does.
  grpc::Status ReasonStream(
      grpc::ServerContext* context, const ibgraphrag::v1::ReasonStreamRequest* request,
      grpc::ServerWriter<ibgraphrag::v1::ReasonStreamResponse>* writer) override;

 private:
  // The reasoner being served, or UNAVAILABLE before SetReasoner.
  absl::StatusOr<std::shared_ptr<const Reasoner>> Get() const;
  // FromProto plus the default backend and the RPC's request id.
  absl::StatusOr<ReasonRequest> ToCore(std::string request_id,
                                       const ibgraphrag::v1::ReasonRequest& request) const;

  const std::string default_backend_;
  const AnswerObserver observer_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Reasoner> reasoner_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_REASONER_SERVICE_IMPL_H_
