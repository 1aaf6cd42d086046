// gRPC face of the Aligner: translates ibgraphrag.v1 alignment protos to core calls and back,
// fills unset options from the service defaults and converts every status with the one
// ToGrpcStatus. Validation lives in the core so the library and the service reject the same
// requests with the same messages.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVICE_IMPL_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/client.h"
#include "common/servable_holder.h"
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "services/alignment/aligner.h"

namespace ibgraphrag::alignment {

// The Aligner being served (common/servable_holder.h): requests keep the one they started with
// alive through their shared_ptr; a replaced one is freed off the request path.
using AlignerHolder = common::ServableHolder<const Aligner>;

// Request options merged over the service defaults (exposed for tests).
MscaOptions MergeAlignOptions(const ibgraphrag::v1::AlignOptions& request,
                              const MscaOptions& defaults);

// Core results -> protos (exposed for the gateway's in-process use and tests).
void ToProto(const Mention& mention, ibgraphrag::v1::Mention* out);
void ToProto(const AlignResult& result, const std::string& kg_version,
             ibgraphrag::v1::AlignResponse* out);

// The three RPCs are raw callback methods (public generated API): each request arrives as
// bytes and is parsed with common::ParseRequestBytes, so text that is not valid UTF-8 gets
// INVALID_ARGUMENT "text: not valid UTF-8" (protobuf's own parser would refuse the message,
// which gRPC reports as INTERNAL before any handler runs). Handlers run on
// common::BlockingCallPool threads.
using AlignmentRawService = ibgraphrag::v1::AlignmentService::WithRawCallbackMethod_ExtractMentions<
    ibgraphrag::v1::AlignmentService::WithRawCallbackMethod_Link<
        ibgraphrag::v1::AlignmentService::WithRawCallbackMethod_Align<
            ibgraphrag::v1::AlignmentService::Service>>>;

class AlignmentServiceImpl final : public AlignmentRawService {
 public:
  // `holder` must outlive the service.
  explicit AlignmentServiceImpl(const AlignerHolder* holder);

  grpc::ServerUnaryReactor* ExtractMentions(grpc::CallbackServerContext* context,
                                            const grpc::ByteBuffer* request,
                                            grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Link(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Align(grpc::CallbackServerContext* context,
                                  const grpc::ByteBuffer* request,
                                  grpc::ByteBuffer* response) override;

  // Align without gRPC, for a caller in this process (the all-in-one's gateway): the same
  // handler as the RPC, on the caller's thread, with the call's deadline.
  grpc::Status AlignDirect(const common::DirectCall& call,
                           const ibgraphrag::v1::AlignRequest& request,
                           ibgraphrag::v1::AlignResponse* response) const;

 private:
  // The typed handlers behind the raw methods.
  grpc::Status HandleExtractMentions(const grpc::ServerContextBase& context,
                                     const ibgraphrag::v1::ExtractMentionsRequest& request,
                                     ibgraphrag::v1::ExtractMentionsResponse* response) const;
  grpc::Status HandleLink(const grpc::ServerContextBase& context,
                          const ibgraphrag::v1::LinkRequest& request,
                          ibgraphrag::v1::LinkResponse* response) const;
  grpc::Status HandleAlign(absl::Time deadline, const ibgraphrag::v1::AlignRequest& request,
                           ibgraphrag::v1::AlignResponse* response) const;
  // The current aligner, or UNAVAILABLE while no bundle is loaded.
  absl::StatusOr<std::shared_ptr<const Aligner>> Current() const;

  const AlignerHolder* holder_;
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVICE_IMPL_H_
