// Compressed sparse row adjacency of a KG, one array pair per direction.
//
// A node's edges in one direction are `edges[offsets[n] .. offsets[n+1])`, each one 64-bit word
// packing (relation:16 | other end:32 | source:16), sorted. Because (relation, other end) is
// unique per node, sorting the words orders a run by relation, then other end, so (1) the edges
// of one relation are a contiguous run found by binary search, (2) "does (h, r, t) exist" is one
// binary search, and (3) a traversal reads one word per edge: the source comes in the same
// load, which matters when sampling a hub's run means one cache miss per picked edge.
// 8.1M triples cost 2 x 8.1M x 8 B = 130 MB. Relation ids are therefore limited to 16 bits
// (kMaxCsrRelations). The "source" bits hold the triple's provenance group (KgData::provenance:
// the set of sources that asserted it), so they are limited to kMaxProvenanceGroups.
//
// The arrays are plain vectors of fixed-width integers so they can be persisted as a handful of
// large chunks (see Chunks()) and read back with memcpy, which is what makes reopening an 8M-edge
// snapshot take a fraction of a second instead of re-reading 16M RocksDB keys.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_CSR_GRAPH_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_CSR_GRAPH_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "services/kgstore/kg_store_strings.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore {

// Relation ids must fit the 16 bits the packed edge gives them.
inline constexpr size_t kMaxCsrRelations = size_t{1} << 16;

inline uint64_t PackEdge(RelationId relation, EntityId other, SourceId source = 0) {
  return (static_cast<uint64_t>(relation) << 48) | (static_cast<uint64_t>(other) << 16) | source;
}
inline RelationId EdgeRelation(uint64_t packed) { return static_cast<RelationId>(packed >> 48); }
inline EntityId EdgeOther(uint64_t packed) { return static_cast<EntityId>(packed >> 16); }
inline SourceId EdgeSource(uint64_t packed) { return static_cast<SourceId>(packed); }
// (relation, other end) without the source: what identifies an edge within a node's run.
inline uint64_t EdgeKey(uint64_t packed) { return packed >> 16; }

// A node's edges in one direction, sorted. A view only.
struct EdgeRun {
  const uint64_t* edges = nullptr;
  size_t size = 0;

  // The sub-run of `relation` (binary search).
  EdgeRun RelationRange(RelationId relation) const;
  // Index of the edge (relation, other) in the run, whatever its source; size when absent.
  size_t Find(RelationId relation, EntityId other) const;
};

// Where each relation group of a node's run starts, relative to the run (first is always 0).
struct GroupStarts {
  const uint32_t* starts = nullptr;
  size_t count = 0;
};

// One direction. offsets.size() == num_nodes + 1 (or 0 for an empty graph).
struct CsrAdjacency {
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> edges;
  // Derived, not persisted (BuildGroupIndex): the relation groups of every run, so sampling a
  // hub's edges by relation costs two loads instead of a search through a run that can span
  // megabytes. Node n's groups are group_starts[group_offsets[n] .. group_offsets[n+1]).
  std::vector<uint64_t> group_offsets;
  std::vector<uint32_t> group_starts;

  size_t num_nodes() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  // Empty for nodes outside the array (entities added after the CSR was built).
  EdgeRun Run(EntityId node) const {
    if (node >= num_nodes()) return {};
    const uint64_t b = offsets[node];
    return {edges.data() + b, static_cast<size_t>(offsets[node + 1] - b)};
  }
  // Requires BuildGroupIndex() and node < num_nodes().
  GroupStarts Groups(EntityId node) const {
    const uint64_t b = group_offsets[node];
    return {group_starts.data() + b, static_cast<size_t>(group_offsets[node + 1] - b)};
  }
  bool has_group_index() const { return group_offsets.size() == offsets.size(); }
  // Fills group_offsets/group_starts in one sequential pass over the edges.
  void BuildGroupIndex();
};

// A chunk of one array, named for persistence ("out.edges/3"); `data` aliases the graph.
struct CsrChunk {
  std::string name;
  char* data = nullptr;
  size_t size = 0;
};

class CsrGraph {
 public:
  // Persisted arrays are split into values of at most this many bytes: big enough that reopening
  // is a few dozen reads, small enough that RocksDB never holds a multi-hundred-MB block.
  static constexpr size_t kDefaultChunkBytes = size_t{16} << 20;

  CsrGraph() = default;
  CsrGraph(CsrGraph&&) = default;
  CsrGraph& operator=(CsrGraph&&) = default;
  CsrGraph(const CsrGraph&) = delete;
  CsrGraph& operator=(const CsrGraph&) = delete;

  // Out direction from triples sorted by (head, relation, tail) and unique (KgData's invariant).
  static CsrAdjacency BuildOut(size_t num_nodes, absl::Span<const Triple> sorted_triples);
  // In direction from the same triples, in O(E) by two stable counting passes (relation, then
  // tail), so each node's in-edges come out sorted by (relation, head) without a comparison sort.
  static CsrAdjacency BuildIn(size_t num_nodes, size_t num_relations,
                              absl::Span<const Triple> sorted_triples);
  // Both directions. Requires sorted, unique triples with ids below num_nodes/num_relations and
  // num_relations <= kMaxCsrRelations.
  static CsrGraph Build(size_t num_nodes, size_t num_relations,
                        absl::Span<const Triple> sorted_triples);
  static CsrGraph FromParts(CsrAdjacency out, CsrAdjacency in);

  // Merges a base direction with extra edges per node (each extra run sorted, disjoint from the
  // base) into a new direction over `num_nodes` >= base.num_nodes() nodes.
  template <typename ExtraRunFn>  // EdgeRun(EntityId)
  static CsrAdjacency Merge(const CsrAdjacency& base, size_t num_nodes, ExtraRunFn extra);

  // Builds both directions' relation-group indexes (two threads when `parallel`).
  void BuildGroupIndexes(bool parallel = true);

  const CsrAdjacency& out() const { return out_; }
  const CsrAdjacency& in() const { return in_; }
  size_t num_nodes() const { return out_.num_nodes(); }
  size_t num_edges() const { return out_.edges.size(); }
  bool Contains(EntityId head, RelationId relation, EntityId tail) const;
  size_t MemoryBytes() const;

  // Persistence. Chunks() names every chunk of every array; Allocate() sizes an empty graph for
  // num_nodes/num_edges so MutableChunks() (same names, same sizes) can be filled from storage.
  std::vector<CsrChunk> Chunks(size_t chunk_bytes = kDefaultChunkBytes) const;
  static CsrGraph Allocate(size_t num_nodes, size_t num_edges);
  std::vector<CsrChunk> MutableChunks(size_t chunk_bytes = kDefaultChunkBytes);
  // Checks the structural invariants after loading (offsets monotone and in range, runs sorted
  // and unique on (relation, other), other ends below num_nodes, relations and sources below
  // their counts) so damaged bytes fail the open instead of indexing out of bounds later.
  // O(E), a few ms per million edges.
  absl::Status Validate(size_t num_relations, size_t num_sources) const;

 private:
  CsrGraph(CsrAdjacency out, CsrAdjacency in) : out_(std::move(out)), in_(std::move(in)) {}
  CsrAdjacency out_;
  CsrAdjacency in_;
};

template <typename ExtraRunFn>
CsrAdjacency CsrGraph::Merge(const CsrAdjacency& base, size_t num_nodes, ExtraRunFn extra) {
  CsrAdjacency merged;
  merged.offsets.resize(num_nodes + 1);
  merged.offsets[0] = 0;
  for (size_t n = 0; n < num_nodes; ++n) {
    const EntityId node = static_cast<EntityId>(n);
    merged.offsets[n + 1] = merged.offsets[n] + base.Run(node).size + extra(node).size;
  }
  merged.edges.resize(merged.offsets[num_nodes]);
  for (size_t n = 0; n < num_nodes; ++n) {
    const EntityId node = static_cast<EntityId>(n);
    const EdgeRun a = base.Run(node);
    const EdgeRun b = extra(node);
    std::merge(a.edges, a.edges + a.size, b.edges, b.edges + b.size,
               merged.edges.begin() + static_cast<std::ptrdiff_t>(merged.offsets[n]));
  }
  return merged;
}

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_CSR_GRAPH_H_
