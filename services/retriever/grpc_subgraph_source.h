// SubgraphSource over the kgstore gRPC API: ExtractSubgraph with ENTITY_DETAIL_IDS (packed
// columns, no names on the hot path), then GetEntities for the few entities returned.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_GRPC_SUBGRAPH_SOURCE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_GRPC_SUBGRAPH_SOURCE_H_

#include <memory>
#include <vector>

#include "grpcpp/channel.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"
#include "services/retriever/subgraph_source.h"

namespace ibgraphrag::retriever {

class GrpcSubgraphSource : public SubgraphSource {
 public:
  // `channel` to a KgStoreService (common::MakeChannel: retries UNAVAILABLE with backoff).
  explicit GrpcSubgraphSource(std::shared_ptr<grpc::Channel> channel);

  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override;
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t> ids,
                                                   absl::Time deadline) override;

 private:
  std::unique_ptr<ibgraphrag::v1::KgStoreService::Stub> stub_;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_GRPC_SUBGRAPH_SOURCE_H_
