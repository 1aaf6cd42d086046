#include "services/kgstore/csr_graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::kgstore {

EdgeRun EdgeRun::RelationRange(RelationId relation) const {
  const uint64_t lo = PackEdge(relation, 0);
  const uint64_t* begin = std::lower_bound(edges, edges + size, lo);
  const uint64_t* end = std::lower_bound(begin, edges + size, lo + (uint64_t{1} << 32));
  const size_t skip = static_cast<size_t>(begin - edges);
  return {begin, sources + skip, static_cast<size_t>(end - begin)};
}

size_t EdgeRun::Find(uint64_t packed) const {
  const uint64_t* it = std::lower_bound(edges, edges + size, packed);
  return (it != edges + size && *it == packed) ? static_cast<size_t>(it - edges) : size;
}

CsrAdjacency CsrGraph::BuildOut(size_t num_nodes, absl::Span<const Triple> triples) {
  CsrAdjacency out;
  out.offsets.assign(num_nodes + 1, 0);
  for (const Triple& t : triples) ++out.offsets[t.head + 1];
  for (size_t n = 0; n < num_nodes; ++n) out.offsets[n + 1] += out.offsets[n];
  // Sorted by (head, relation, tail), so the triples already are the concatenated runs.
  out.edges.resize(triples.size());
  out.sources.resize(triples.size());
  for (size_t i = 0; i < triples.size(); ++i) {
    out.edges[i] = PackEdge(triples[i].relation, triples[i].tail);
    out.sources[i] = triples[i].source;
  }
  return out;
}

CsrAdjacency CsrGraph::BuildIn(size_t num_nodes, size_t num_relations,
                               absl::Span<const Triple> triples) {
  // Stable counting sort by relation keeps head order inside each relation, so scattering in
  // that order into tail buckets leaves every bucket sorted by (relation, head).
  std::vector<uint32_t> by_relation(triples.size());
  {
    std::vector<uint64_t> start(num_relations + 1, 0);
    for (const Triple& t : triples) ++start[t.relation + 1];
    for (size_t r = 0; r < num_relations; ++r) start[r + 1] += start[r];
    for (size_t i = 0; i < triples.size(); ++i) {
      by_relation[start[triples[i].relation]++] = static_cast<uint32_t>(i);
    }
  }
  CsrAdjacency in;
  in.offsets.assign(num_nodes + 1, 0);
  for (const Triple& t : triples) ++in.offsets[t.tail + 1];
  for (size_t n = 0; n < num_nodes; ++n) in.offsets[n + 1] += in.offsets[n];
  in.edges.resize(triples.size());
  in.sources.resize(triples.size());
  std::vector<uint64_t> cursor(in.offsets.begin(), in.offsets.end() - 1);
  for (uint32_t i : by_relation) {
    const Triple& t = triples[i];
    const uint64_t pos = cursor[t.tail]++;
    in.edges[pos] = PackEdge(t.relation, t.head);
    in.sources[pos] = t.source;
  }
  return in;
}

CsrGraph CsrGraph::Build(size_t num_nodes, size_t num_relations,
                         absl::Span<const Triple> sorted_triples) {
  return CsrGraph(BuildOut(num_nodes, sorted_triples),
                  BuildIn(num_nodes, num_relations, sorted_triples));
}

CsrGraph CsrGraph::FromParts(CsrAdjacency out, CsrAdjacency in) {
  return CsrGraph(std::move(out), std::move(in));
}

bool CsrGraph::Contains(EntityId head, RelationId relation, EntityId tail) const {
  const EdgeRun run = out_.Run(head);
  return run.Find(PackEdge(relation, tail)) != run.size;
}

size_t CsrGraph::MemoryBytes() const {
  auto bytes = [](const CsrAdjacency& a) {
    return a.offsets.capacity() * sizeof(uint64_t) + a.edges.capacity() * sizeof(uint64_t) +
           a.sources.capacity() * sizeof(SourceId);
  };
  return bytes(out_) + bytes(in_);
}

namespace {

template <typename T, typename Byte>
void AppendChunks(std::string_view name, T* data, size_t count, size_t chunk_bytes,
                  std::vector<CsrChunk>* chunks) {
  // Whole elements per chunk so a chunk never splits an integer.
  const size_t per_chunk = std::max<size_t>(1, chunk_bytes / sizeof(T));
  size_t index = 0;
  for (size_t begin = 0; begin < count; begin += per_chunk, ++index) {
    const size_t n = std::min(per_chunk, count - begin);
    chunks->push_back(CsrChunk{absl::StrCat(AsAbsl(name), "/", index),
                               const_cast<char*>(reinterpret_cast<Byte*>(data + begin)),
                               n * sizeof(T)});
  }
}

template <typename Graph>
std::vector<CsrChunk> ChunksOf(Graph& out, Graph& in, size_t chunk_bytes) {
  std::vector<CsrChunk> chunks;
  using Byte = const char;
  AppendChunks<const uint64_t, Byte>("out.offsets", out.offsets.data(), out.offsets.size(),
                                     chunk_bytes, &chunks);
  AppendChunks<const uint64_t, Byte>("out.edges", out.edges.data(), out.edges.size(), chunk_bytes,
                                     &chunks);
  AppendChunks<const SourceId, Byte>("out.sources", out.sources.data(), out.sources.size(),
                                     chunk_bytes, &chunks);
  AppendChunks<const uint64_t, Byte>("in.offsets", in.offsets.data(), in.offsets.size(),
                                     chunk_bytes, &chunks);
  AppendChunks<const uint64_t, Byte>("in.edges", in.edges.data(), in.edges.size(), chunk_bytes,
                                     &chunks);
  AppendChunks<const SourceId, Byte>("in.sources", in.sources.data(), in.sources.size(),
                                     chunk_bytes, &chunks);
  return chunks;
}

absl::Status ValidateDirection(const CsrAdjacency& a, std::string_view name, size_t num_nodes,
                               size_t num_edges, size_t num_relations, size_t num_sources) {
  if (a.offsets.size() != num_nodes + 1 || a.edges.size() != num_edges ||
      a.sources.size() != num_edges) {
    return absl::DataLossError(absl::StrCat("CSR ", AsAbsl(name), ": array sizes do not match header"));
  }
  if (a.offsets.front() != 0 || a.offsets.back() != num_edges) {
    return absl::DataLossError(absl::StrCat("CSR ", AsAbsl(name), ": offsets do not span the edges"));
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    if (a.offsets[n] > a.offsets[n + 1]) {
      return absl::DataLossError(absl::StrCat("CSR ", AsAbsl(name), ": offsets decrease at node ", n));
    }
  }
  for (SourceId source : a.sources) {
    if (source >= num_sources) {
      return absl::DataLossError(absl::StrCat("CSR ", AsAbsl(name), ": source id ", source, " out of range"));
    }
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    for (uint64_t i = a.offsets[n]; i < a.offsets[n + 1]; ++i) {
      const uint64_t e = a.edges[i];
      if (EdgeOther(e) >= num_nodes || EdgeRelation(e) >= num_relations ||
          (i > a.offsets[n] && a.edges[i - 1] >= e)) {
        return absl::DataLossError(
            absl::StrCat("CSR ", AsAbsl(name), ": bad or unsorted edge ", i, " of node ", n));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<CsrChunk> CsrGraph::Chunks(size_t chunk_bytes) const {
  return ChunksOf(out_, in_, chunk_bytes);
}

CsrGraph CsrGraph::Allocate(size_t num_nodes, size_t num_edges) {
  CsrAdjacency out, in;
  for (CsrAdjacency* a : {&out, &in}) {
    a->offsets.resize(num_nodes + 1);
    a->edges.resize(num_edges);
    a->sources.resize(num_edges);
  }
  return CsrGraph(std::move(out), std::move(in));
}

std::vector<CsrChunk> CsrGraph::MutableChunks(size_t chunk_bytes) {
  return ChunksOf(out_, in_, chunk_bytes);
}

absl::Status CsrGraph::Validate(size_t num_relations, size_t num_sources) const {
  const size_t n = num_nodes();
  const size_t e = num_edges();
  if (auto s = ValidateDirection(out_, "out", n, e, num_relations, num_sources); !s.ok()) return s;
  return ValidateDirection(in_, "in", n, e, num_relations, num_sources);
}

}  // namespace ibgraphrag::kgstore
