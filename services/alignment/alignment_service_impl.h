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
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "services/alignment/aligner.h"

namespace ibgraphrag::alignment {

// Holds the Aligner being served; Swap() replaces it while requests keep the one they started
// with alive through their shared_ptr.
class AlignerHolder {
 public:
  std::shared_ptr<const Aligner> Get() const {
    absl::ReaderMutexLock lock(&mu_);
    return aligner_;
  }
  void Swap(std::shared_ptr<const Aligner> aligner) {
    absl::MutexLock lock(&mu_);
    aligner_.swap(aligner);
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Aligner> aligner_ ABSL_GUARDED_BY(mu_);
};

// Request options merged over the service defaults (exposed for tests).
MscaOptions MergeAlignOptions(const ibgraphrag::v1::AlignOptions& request,
                              const MscaOptions& defaults);

// Core results -> protos (exposed for the gateway's in-process use and tests).
void ToProto(const Mention& mention, ibgraphrag::v1::Mention* out);
void ToProto(const AlignResult& result, const std::string& kg_version,
             ibgraphrag::v1::AlignResponse* out);

// Parses a serialized request whose field `text_field` is a proto3 `string`, keeping that field's
// bytes as sent even when they are not UTF-8 (protobuf's own parser rejects such a message,
// which gRPC reports as INTERNAL before any handler runs); the core then answers
// INVALID_ARGUMENT "text: not valid UTF-8". False for a malformed message.
bool ParseRequestKeepingRawText(absl::string_view wire, int text_field,
                                google::protobuf::Message* request, std::string* text);

class AlignmentServiceImpl final : public ibgraphrag::v1::AlignmentService::Service {
 public:
  // `holder` must outlive the service. The three RPCs are registered with byte-level handlers
  // that parse requests with ParseRequestKeepingRawText and then call the typed methods below.
  explicit AlignmentServiceImpl(const AlignerHolder* holder);

  grpc::Status ExtractMentions(grpc::ServerContext* context,
                               const ibgraphrag::v1::ExtractMentionsRequest* request,
                               ibgraphrag::v1::ExtractMentionsResponse* response) override;
  grpc::Status Link(grpc::ServerContext* context, const ibgraphrag::v1::LinkRequest* request,
                    ibgraphrag::v1::LinkResponse* response) override;
  grpc::Status Align(grpc::ServerContext* context, const ibgraphrag::v1::AlignRequest* request,
                     ibgraphrag::v1::AlignResponse* response) override;

 private:
  // The current aligner, or UNAVAILABLE while no bundle is loaded.
  absl::StatusOr<std::shared_ptr<const Aligner>> Current() const;

  const AlignerHolder* holder_;
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ALIGNMENT_SERVICE_IMPL_H_
