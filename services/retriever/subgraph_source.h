// Where the retriever gets candidate subgraphs and entity names: the kgstore service over gRPC
// (GrpcSubgraphSource, in retriever_service), a KgStore opened in this process
// (InProcessSubgraphSource: tests, training and the all-in-one mode), or the snapshot a
// servable manager serves now (ServedSnapshotSubgraphSource: the retriever's own read-only KG
// replica, swapped to newer snapshots as they are published). Plain C++.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SUBGRAPH_SOURCE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SUBGRAPH_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/servable_holder.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::retriever {

struct SubgraphRequest {
  // Seed entities by internal id (1..100).
  std::vector<uint32_t> seed_ids;
  // Seed entities by external id or xref alias; resolved by the source.
  std::vector<std::string> seed_external_ids;
  // Hops from the seeds, 1..4.
  int max_hops = 2;
  // Cap on triples, 1..100,000.
  int max_triples = 10000;
  // Edges followed per node; 0 = kgstore's automatic spread.
  int max_fanout_per_node = 0;
  // Follow only these relations (names the KG has: KnownRelations); empty follows all.
  std::vector<std::string> allow_relations;
  // Give up (DEADLINE_EXCEEDED or UNAVAILABLE) after this.
  absl::Time deadline = absl::InfiniteFuture();
};

struct RelationInfo {
  uint32_t id = 0;
  std::string name;
  std::string description;
};

// Columnar triples, BFS order (hop 1 first), as kgstore returns them.
struct CandidateSubgraph {
  std::vector<uint32_t> heads;
  std::vector<uint32_t> relations;
  std::vector<uint32_t> tails;
  std::vector<uint32_t> hops;
  // Seeds after resolving external ids: seed_ids first, then the resolved external ids.
  std::vector<uint32_t> resolved_seeds;
  // Every relation used by the triples.
  std::vector<RelationInfo> relation_info;
  bool truncated = false;
  std::string kg_version;
};

struct EntityInfo {
  uint32_t id = 0;
  std::string external_id;
  std::string name;
  std::string type;
};

// Where one triple comes from: every source that asserted it, with licences, and the
// source-specific score and note (kgstore provenance).
struct TripleSources {
  // Whether the KG holds the triple (a triple asked about that it lacks has no sources).
  bool found = false;
  std::vector<std::string> sources;
  std::vector<std::string> licenses;      // parallel to sources; "" = unknown
  float score = kgstore::kNoTripleScore;  // NaN = none
  std::string note;
};

class SubgraphSource {
 public:
  virtual ~SubgraphSource() = default;
  // A source fixed on the snapshot served now, for one request: its subgraph, names and
  // provenance then come from one KG version even if a newer one is swapped in meanwhile. Null
  // when this source has only one snapshot (or follows versions itself, as kgstore does).
  virtual std::shared_ptr<SubgraphSource> PinSnapshot() { return nullptr; }
  // NOT_FOUND listing unknown seeds; INVALID_ARGUMENT for out-of-range limits; UNAVAILABLE or
  // DEADLINE_EXCEEDED when the store cannot answer in time.
  virtual absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) = 0;
  // Names of `ids`, in order. NOT_FOUND listing unknown ids.
  virtual absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t> ids,
                                                           absl::Time deadline) = 0;
  // Those of `names` the KG has relations for, in order (the others are left out: a KG built
  // without the Disease Ontology has no is_a relation). The default knows none.
  virtual absl::StatusOr<std::vector<std::string>> KnownRelations(
      absl::Span<const std::string> names, absl::Time deadline);
  // Provenance of the triples (heads[i], relations[i], tails[i]), in order; one batched read.
  // A triple the KG lacks gets an empty entry. The default knows no provenance (all empty).
  virtual absl::StatusOr<std::vector<TripleSources>> DescribeTriples(
      absl::Span<const uint32_t> heads, absl::Span<const uint32_t> relations,
      absl::Span<const uint32_t> tails, absl::Time deadline);
};

// Reads a KgStore in this process (no copy, no serialisation).
class InProcessSubgraphSource : public SubgraphSource {
 public:
  explicit InProcessSubgraphSource(std::shared_ptr<const kgstore::KgStore> store)
      : store_(std::move(store)) {}
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override;
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t> ids,
                                                   absl::Time deadline) override;
  absl::StatusOr<std::vector<std::string>> KnownRelations(absl::Span<const std::string> names,
                                                          absl::Time deadline) override;
  absl::StatusOr<std::vector<TripleSources>> DescribeTriples(absl::Span<const uint32_t> heads,
                                                             absl::Span<const uint32_t> relations,
                                                             absl::Span<const uint32_t> tails,
                                                             absl::Time deadline) override;
  const kgstore::KgStore& store() const { return *store_; }

 private:
  std::shared_ptr<const kgstore::KgStore> store_;
};

// Reads whichever snapshot `holder` serves (the retriever's local KG replica under a
// ServableManager that swaps in newer versions). Requests pin one snapshot (PinSnapshot); a call
// made without pinning reads the current one. UNAVAILABLE while the holder has none.
class ServedSnapshotSubgraphSource : public SubgraphSource {
 public:
  explicit ServedSnapshotSubgraphSource(
      std::shared_ptr<const common::ServableHolder<kgstore::KgStore>> holder)
      : holder_(std::move(holder)) {}
  std::shared_ptr<SubgraphSource> PinSnapshot() override;
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override;
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t> ids,
                                                   absl::Time deadline) override;
  absl::StatusOr<std::vector<std::string>> KnownRelations(absl::Span<const std::string> names,
                                                          absl::Time deadline) override;
  absl::StatusOr<std::vector<TripleSources>> DescribeTriples(absl::Span<const uint32_t> heads,
                                                             absl::Span<const uint32_t> relations,
                                                             absl::Span<const uint32_t> tails,
                                                             absl::Time deadline) override;

 private:
  absl::StatusOr<std::shared_ptr<InProcessSubgraphSource>> Current() const;
  std::shared_ptr<const common::ServableHolder<kgstore::KgStore>> holder_;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SUBGRAPH_SOURCE_H_
