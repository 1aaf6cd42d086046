// Compressed sparse row adjacency of a KG, one array set per direction.
//
// A node's edges in one direction are `edges[offsets[n] .. offsets[n+1])`, each packed as
// (relation << 32 | other end) and sorted, so (1) one integer compare orders by relation then by
// other end, (2) the edges of one relation are a contiguous run found by binary search, and
// (3) "does (h, r, t) exist" is one binary search. Sources live in a parallel array so the hot
// traversal loops touch 8 bytes per edge. 8.1M triples cost 2 x 8.1M x 10 B ~ 162 MB.
//
// The arrays are plain vectors of fixed-width integers so they can be persisted as a handful of
// large chunks (see Chunks()) and read back with memcpy, which is what makes reopening an 8M-edge
// snapshot take a fraction of a second instead of re-reading 16M RocksDB keys.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_CSR_GRAPH_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_CSR_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore {

// Debian's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::StrCat and
// heterogeneous hash-map lookups take absl::string_view, which std::string_view does not
// convert to implicitly. Our APIs use std::string_view; this bridges them at call sites.
inline absl::string_view AsAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

inline uint64_t PackEdge(RelationId relation, EntityId other) {
  return (static_cast<uint64_t>(relation) << 32) | other;
}
inline RelationId EdgeRelation(uint64_t packed) { return static_cast<RelationId>(packed >> 32); }
inline EntityId EdgeOther(uint64_t packed) { return static_cast<EntityId>(packed); }

// A node's edges in one direction: sorted packed edges with their sources. Views only.
struct EdgeRun {
  const uint64_t* edges = nullptr;
  const SourceId* sources = nullptr;
  size_t size = 0;

  // The sub-run of `relation` (binary search).
  EdgeRun RelationRange(RelationId relation) const;
  // Index of `packed` in the run, or size when absent.
  size_t Find(uint64_t packed) const;
};

// One direction. offsets.size() == num_nodes + 1 (or 0 for an empty graph).
struct CsrAdjacency {
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> edges;
  std::vector<SourceId> sources;

  size_t num_nodes() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  // Empty for nodes outside the array (entities added after the CSR was built).
  EdgeRun Run(EntityId node) const {
    if (node >= num_nodes()) return {};
    const uint64_t b = offsets[node];
    return {edges.data() + b, sources.data() + b, static_cast<size_t>(offsets[node + 1] - b)};
  }
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
  // Both directions. Requires sorted, unique triples with ids below num_nodes/num_relations.
  static CsrGraph Build(size_t num_nodes, size_t num_relations,
                        absl::Span<const Triple> sorted_triples);
  static CsrGraph FromParts(CsrAdjacency out, CsrAdjacency in);

  // Merges a base direction with extra edges per node (each extra run sorted, disjoint from the
  // base) into a new direction over `num_nodes` >= base.num_nodes() nodes.
  template <typename ExtraRunFn>  // EdgeRun(EntityId)
  static CsrAdjacency Merge(const CsrAdjacency& base, size_t num_nodes, ExtraRunFn extra);

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
  // Checks the structural invariants after loading (offsets monotone and in range, runs sorted,
  // other ends below num_nodes, relations and sources below their counts) so damaged bytes fail
  // the open instead of indexing out of bounds later. O(E), a few ms per million edges.
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
  merged.sources.resize(merged.offsets[num_nodes]);
  for (size_t n = 0; n < num_nodes; ++n) {
    const EntityId node = static_cast<EntityId>(n);
    const EdgeRun a = base.Run(node);
    const EdgeRun b = extra(node);
    size_t i = 0, j = 0, k = merged.offsets[n];
    while (i < a.size || j < b.size) {
      if (j == b.size || (i < a.size && a.edges[i] < b.edges[j])) {
        merged.edges[k] = a.edges[i];
        merged.sources[k++] = a.sources[i++];
      } else {
        merged.edges[k] = b.edges[j];
        merged.sources[k++] = b.sources[j++];
      }
    }
  }
  return merged;
}

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_CSR_GRAPH_H_
