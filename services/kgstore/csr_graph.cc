#include "services/kgstore/csr_graph.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "services/kgstore/kg_store_strings.h"

namespace ibgraphrag::kgstore {

EdgeRun EdgeRun::RelationRange(RelationId relation) const {
  const uint64_t lo = PackEdge(relation, 0, 0);
  const uint64_t* begin = std::lower_bound(edges, edges + size, lo);
  const uint64_t* end = std::lower_bound(begin, edges + size, lo + (uint64_t{1} << 48));
  return {begin, static_cast<size_t>(end - begin)};
}

size_t EdgeRun::Find(RelationId relation, EntityId other) const {
  const uint64_t lo = PackEdge(relation, other, 0);
  const uint64_t* it = std::lower_bound(edges, edges + size, lo);
  return (it != edges + size && EdgeKey(*it) == EdgeKey(lo)) ? static_cast<size_t>(it - edges)
                                                             : size;
}

void CsrAdjacency::BuildGroupIndex() {
  const size_t n = num_nodes();
  group_offsets.assign(n + 1, 0);
  group_starts.clear();
  for (size_t node = 0; node < n; ++node) {
    const uint64_t begin = offsets[node];
    const uint64_t end = offsets[node + 1];
    for (uint64_t i = begin; i < end; ++i) {
      if (i == begin || EdgeRelation(edges[i]) != EdgeRelation(edges[i - 1])) {
        group_starts.push_back(static_cast<uint32_t>(i - begin));
      }
    }
    group_offsets[node + 1] = group_starts.size();
  }
  group_starts.shrink_to_fit();
}

void CsrGraph::BuildGroupIndexes(bool parallel) {
  if (!parallel) {
    out_.BuildGroupIndex();
    in_.BuildGroupIndex();
    return;
  }
  std::thread in_thread([this] { in_.BuildGroupIndex(); });
  out_.BuildGroupIndex();
  in_thread.join();
}

CsrAdjacency CsrGraph::BuildOut(size_t num_nodes, absl::Span<const Triple> triples) {
  CsrAdjacency out;
  out.offsets.assign(num_nodes + 1, 0);
  for (const Triple& t : triples) ++out.offsets[t.head + 1];
  for (size_t n = 0; n < num_nodes; ++n) out.offsets[n + 1] += out.offsets[n];
  // Sorted by (head, relation, tail), so the triples already are the concatenated runs.
  out.edges.resize(triples.size());
  for (size_t i = 0; i < triples.size(); ++i) {
    out.edges[i] = PackEdge(triples[i].relation, triples[i].tail,
                            static_cast<SourceId>(triples[i].provenance));
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
  std::vector<uint64_t> cursor(in.offsets.begin(), in.offsets.end() - 1);
  for (uint32_t i : by_relation) {
    const Triple& t = triples[i];
    in.edges[cursor[t.tail]++] = PackEdge(t.relation, t.head, static_cast<SourceId>(t.provenance));
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
  return run.Find(relation, tail) != run.size;
}

size_t CsrGraph::MemoryBytes() const {
  auto bytes = [](const CsrAdjacency& a) {
    return a.offsets.capacity() * sizeof(uint64_t) + a.edges.capacity() * sizeof(uint64_t) +
           a.group_offsets.capacity() * sizeof(uint64_t) +
           a.group_starts.capacity() * sizeof(uint32_t);
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
  AppendChunks<const uint64_t, Byte>("in.offsets", in.offsets.data(), in.offsets.size(),
                                     chunk_bytes, &chunks);
  AppendChunks<const uint64_t, Byte>("in.edges", in.edges.data(), in.edges.size(), chunk_bytes,
                                     &chunks);
  return chunks;
}

absl::Status ValidateDirection(const CsrAdjacency& a, std::string_view name, size_t num_nodes,
                               size_t num_edges, size_t num_relations, size_t num_sources) {
  if (a.offsets.size() != num_nodes + 1 || a.edges.size() != num_edges) {
    return absl::DataLossError(
        absl::StrCat("CSR ", AsAbsl(name), ": array sizes do not match header"));
  }
  if (a.offsets.front() != 0 || a.offsets.back() != num_edges) {
    return absl::DataLossError(
        absl::StrCat("CSR ", AsAbsl(name), ": offsets do not span the edges"));
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    if (a.offsets[n] > a.offsets[n + 1]) {
      return absl::DataLossError(
          absl::StrCat("CSR ", AsAbsl(name), ": offsets decrease at node ", n));
    }
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    for (uint64_t i = a.offsets[n]; i < a.offsets[n + 1]; ++i) {
      const uint64_t e = a.edges[i];
      if (EdgeOther(e) >= num_nodes || EdgeRelation(e) >= num_relations ||
          EdgeSource(e) >= num_sources ||
          (i > a.offsets[n] && EdgeKey(a.edges[i - 1]) >= EdgeKey(e))) {
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
