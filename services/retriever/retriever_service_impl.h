// gRPC face of the Retriever: translates ibgraphrag.v1 protos to RetrieveQuery /
// ScoreTriplesQuery and back, carries the caller's deadline into the core, and converts every
// result with the one ToGrpcStatus.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_

#include <array>
#include <atomic>

#include "absl/status/statusor.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "prometheus/counter.h"
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

  // IBRP requests answered, by scorer variant (ibgr_retriever_ibrp_requests_total{variant});
  // null counters count nothing. Set once, when the metrics registry exists.
  void SetVariantCounters(prometheus::Counter* residual, prometheus::Counter* plain);

 private:
  const Retriever* retriever_;
  std::array<std::atomic<prometheus::Counter*>, 2> variant_counters_{};
};

// Proto request -> core query; INVALID_ARGUMENT naming `scorer_variant` for a value outside the
// enum (the core checks the limits). `deadline` is the call's.
absl::StatusOr<RetrieveQuery> FromProto(const ibgraphrag::v1::RetrieveRequest& request,
                                        absl::Time deadline);
// The proto's variant (UNSPECIFIED = unset) and back.
absl::StatusOr<std::optional<ScorerVariant>> ScorerVariantFromProto(int variant);
ibgraphrag::v1::ScorerVariant ScorerVariantToProto(std::optional<ScorerVariant> variant);
// Core result -> proto response.
void ToProto(const RetrieveResult& result, const std::string& device,
             ibgraphrag::v1::RetrieveResponse* response);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_SERVICE_IMPL_H_
