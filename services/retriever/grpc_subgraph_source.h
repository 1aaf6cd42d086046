// SubgraphSource over the kgstore gRPC API: ExtractSubgraph with ENTITY_DETAIL_IDS (packed
// columns, no names on the hot path), then GetEntities for the few entities returned.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_GRPC_SUBGRAPH_SOURCE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_GRPC_SUBGRAPH_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/channel.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"
#include "services/retriever/subgraph_source.h"

namespace ibgraphrag::retriever {

class GrpcSubgraphSource : public SubgraphSource {
 public:
  // `channel` to a KgStoreService (common::MakeChannel: retries UNAVAILABLE with backoff).
  explicit GrpcSubgraphSource(std::shared_ptr<grpc::Channel> channel);

  // An INVALID_ARGUMENT answer to a request with allow_relations (a name the KG lost in a swap
  // since KnownRelations cached it) refreshes the names and retries once with the known ones.
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override;
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t> ids,
                                                   absl::Time deadline) override;
  // From kgstore's Stats, cached per KG version: a new version seen by Extract, or an Extract
  // refused for an unknown allowed relation, refreshes.
  absl::StatusOr<std::vector<std::string>> KnownRelations(absl::Span<const std::string> names,
                                                          absl::Time deadline) override;
  // One GetTripleProvenance call. A kgstore without that method (UNIMPLEMENTED) yields empty
  // provenance rather than failing the retrieval.
  absl::StatusOr<std::vector<TripleSources>> DescribeTriples(absl::Span<const uint32_t> heads,
                                                             absl::Span<const uint32_t> relations,
                                                             absl::Span<const uint32_t> tails,
                                                             absl::Time deadline) override;

 private:
  absl::StatusOr<CandidateSubgraph> ExtractOnce(const SubgraphRequest& request);
  // Reads the relation names and the KG version from kgstore's Stats.
  absl::Status RefreshRelationNames(absl::Time deadline);

  std::unique_ptr<ibgraphrag::v1::KgStoreService::Stub> stub_;
  absl::Mutex mu_;
  // The KG version `relation_names_` was read from (empty: not read yet), and the newest
  // version an Extract answer carried.
  std::string names_version_ ABSL_GUARDED_BY(mu_);
  std::string seen_version_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> relation_names_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_GRPC_SUBGRAPH_SOURCE_H_
