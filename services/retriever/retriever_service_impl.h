// gRPC face of the Retriever: translates ibgraphrag.v1 protos to RetrieveQuery /
// ScoreTriplesQuery and back, carries the caller's deadline into the core, and converts every
// result with the one ToGrpcStatus.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_

#include <array>
#include <atomic>

#include "absl/status/statusor.h"
#include "common/client.h"
#include "common/servable_holder.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "prometheus/counter.h"
#include "services/retriever/document_retrieval.h"
#include "services/retriever/retriever.h"

namespace ibgraphrag::retriever {

// Retrieve is a raw callback method (common/blocking_reactor.h): its request and response live
// on one arena per call, so the ~100 evidence triples it builds are not allocated and freed one
// by one, and a `question` that is not UTF-8 is INVALID_ARGUMENT naming it. The other methods
// are plain sync methods.
using RetrieverRawService = ibgraphrag::v1::RetrieverService::WithRawCallbackMethod_Retrieve<
    ibgraphrag::v1::RetrieverService::Service>;

class RetrieverServiceImpl final : public RetrieverRawService {
 public:
  // `retriever` must outlive the service.
  explicit RetrieverServiceImpl(const Retriever* retriever) : retriever_(retriever) {}

  grpc::ServerUnaryReactor* Retrieve(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  // Retrieve without gRPC, for a caller in this process (the all-in-one's gateway): the same
  // handler as the RPC, on the caller's thread, with the call's deadline.
  grpc::Status RetrieveDirect(const common::DirectCall& call,
                              const ibgraphrag::v1::RetrieveRequest& request,
                              ibgraphrag::v1::RetrieveResponse* response);
  grpc::Status ScoreTriples(grpc::ServerContext* context,
                            const ibgraphrag::v1::ScoreTriplesRequest* request,
                            ibgraphrag::v1::ScoreTriplesResponse* response) override;

  grpc::Status RetrieveDocuments(grpc::ServerContext* context,
                                 const ibgraphrag::v1::RetrieveDocumentsRequest* request,
                                 ibgraphrag::v1::RetrieveDocumentsResponse* response) override;

  // The documents artifact RetrieveDocuments searches (ILlama mode) and why none is loaded;
  // unset = FAILED_PRECONDITION "no documents artifact". Set once, before serving.
  void SetDocuments(std::shared_ptr<const common::ServableHolder<const SubgraphDocuments>> holder,
                    std::function<absl::Status()> load_status);

  // IBRP requests answered, by scorer variant (ibgr_retriever_ibrp_requests_total{variant});
  // null counters count nothing. Set once, when the metrics registry exists.
  void SetVariantCounters(prometheus::Counter* residual, prometheus::Counter* plain);

 private:
  const Retriever* retriever_;
  std::shared_ptr<const common::ServableHolder<const SubgraphDocuments>> documents_;
  std::function<absl::Status()> documents_status_;
  std::array<std::atomic<prometheus::Counter*>, 2> variant_counters_{};
};

// Proto request -> core query; INVALID_ARGUMENT naming `scorer_variant` for a value outside the
// enum (the core checks the limits). `deadline` is the call's.
absl::StatusOr<RetrieveQuery> FromProto(const ibgraphrag::v1::RetrieveRequest& request,
                                        absl::Time deadline);
// The proto's variant (UNSPECIFIED = unset) and back.
absl::StatusOr<std::optional<ScorerVariant>> ScorerVariantFromProto(int variant);
ibgraphrag::v1::ScorerVariant ScorerVariantToProto(std::optional<ScorerVariant> variant);
// Documents result -> proto response (each document's triples as evidence, names from the
// artifact).
void ToProto(const SubgraphDocuments& documents, const DocumentsResult& result,
             ibgraphrag::v1::RetrieveDocumentsResponse* response);
// Core result -> proto response.
void ToProto(const RetrieveResult& result, const std::string& device,
             ibgraphrag::v1::RetrieveResponse* response);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_
