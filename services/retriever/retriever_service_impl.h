// gRPC face of the Retriever: translates ibgraphrag.v1 protos to RetrieveQuery /
// ScoreTriplesQuery and back, carries the caller's deadline into the core, and converts every
// result with the one ToGrpcStatus.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_

#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "services/retriever/retriever.h"

namespace ibgraphrag::retriever {

class RetrieverServiceImpl final : public ibgraphrag::v1::RetrieverService::Service {
 public:
  // `retriever` must outlive the service.
  explicit RetrieverServiceImpl(const Retriever* retriever) : retriever_(retriever) {}

  grpc::Status Retrieve(grpc::ServerContext* context,
                        const ibgraphrag::v1::RetrieveRequest* request,
                        ibgraphrag::v1::RetrieveResponse* response) override;
  grpc::Status ScoreTriples(grpc::ServerContext* context,
                            const ibgraphrag::v1::ScoreTriplesRequest* request,
                            ibgraphrag::v1::ScoreTriplesResponse* response) override;

 private:
  const Retriever* retriever_;
};

// Proto request -> core query (no validation: the core does it). `deadline` is the call's.
RetrieveQuery FromProto(const ibgraphrag::v1::RetrieveRequest& request, absl::Time deadline);
// Core result -> proto response.
void ToProto(const RetrieveResult& result, const std::string& device,
             ibgraphrag::v1::RetrieveResponse* response);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_
