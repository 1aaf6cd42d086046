#include "services/alignment/hnsw_search.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/HNSW.h>
#include <faiss/utils/Heap.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {
namespace {

// Inner products for the HNSW graph with the suite's SIMD Dot: the Debian FAISS build only has
// a scalar kernel, which was most of the time of a search and of building the graph. Same
// vectors, same metric; only the order of float additions differs.
struct SimdInnerProductComputer final : faiss::FlatCodesDistanceComputer {
  explicit SimdInnerProductComputer(const faiss::IndexFlat& index)
      : faiss::FlatCodesDistanceComputer(index.codes.data(), index.code_size),
        base(index.get_xb()),
        dim(static_cast<int>(index.d)) {}
  void set_query(const float* x) override { query = x; }
  float distance_to_code(const uint8_t* code) override {
    return Dot(query, reinterpret_cast<const float*>(code), dim);
  }
  float symmetric_dis(idx_t i, idx_t j) override {
    return Dot(base + i * dim, base + j * dim, dim);
  }
  const float* base;
  int dim;
  const float* query = nullptr;
};

// IndexFlatIP whose distance computer (what IndexHNSW uses on its storage) is the one above.
// Serialised exactly as IndexFlatIP, so bundles stay readable by stock FAISS.
struct SimdIndexFlatIP final : faiss::IndexFlatIP {
  explicit SimdIndexFlatIP(faiss::Index::idx_t d) : faiss::IndexFlatIP(d) {}
  faiss::FlatCodesDistanceComputer* get_FlatCodesDistanceComputer() const override {
    return new SimdInnerProductComputer(*this);
  }
};

using StorageId = faiss::HNSW::storage_idx_t;

// A graph level's neighbour lists hold at most 2M (level 0) or M entries; 64 covers M up to 32.
constexpr int kMaxNeighbours = 64;

// The rows of the index's flat storage and the query: distances as FAISS's HNSW sees them for
// an inner-product index (NegativeDistanceComputer: smaller is closer).
class Rows {
 public:
  Rows(const float* base, int dim, const float* query) : base_(base), dim_(dim), query_(query) {}
  float Distance(StorageId id) const { return -Dot(query_, Row(id), dim_); }
  // The Distance of each of `n` rows into `out`, the same floats as n Distance calls: every row
  // is prefetched first, so their cache misses overlap, then they are scored four at a time
  // (Dot4) and the rest one by one.
  void Distances(const StorageId* ids, int n, float* out) const {
    for (int i = 0; i < n; ++i) Prefetch(ids[i]);
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      const float* const r[4] = {Row(ids[i]), Row(ids[i + 1]), Row(ids[i + 2]), Row(ids[i + 3])};
      Dot4(query_, r, dim_, out + i);
      for (int j = i; j < i + 4; ++j) out[j] = -out[j];
    }
    for (; i < n; ++i) out[i] = Distance(ids[i]);
  }

 private:
  const float* Row(StorageId id) const { return base_ + static_cast<size_t>(id) * dim_; }
  // Asks for a row's cache lines ahead of its distance.
  void Prefetch(StorageId id) const {
    const char* p = reinterpret_cast<const char*>(Row(id));
    const size_t bytes = static_cast<size_t>(dim_) * sizeof(float);
    for (size_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at, 0, 3);
  }
  const float* base_;
  int dim_;
  const float* query_;
};

// A node's neighbour list at `level`, up to its first -1.
int Neighbours(const faiss::HNSW& hnsw, StorageId node, int level, const StorageId** out) {
  size_t begin = 0, end = 0;
  hnsw.neighbor_range(node, level, &begin, &end);
  const StorageId* list = hnsw.neighbors.data() + begin;
  int n = 0;
  const int cap = static_cast<int>(end - begin);
  while (n < cap && list[n] >= 0) ++n;
  *out = list;
  return n;
}

// FAISS's greedy_update_nearest: move to the closest neighbour until none is closer.
void GreedyUpdateNearest(const faiss::HNSW& hnsw, const Rows& rows, int level, StorageId* nearest,
                         float* d_nearest) {
  for (;;) {
    const StorageId previous = *nearest;
    const StorageId* list = nullptr;
    const int n = Neighbours(hnsw, *nearest, level, &list);
    float d[kMaxNeighbours];
    rows.Distances(list, n, d);
    for (int i = 0; i < n; ++i) {
      if (d[i] < *d_nearest) {
        *nearest = list[i];
        *d_nearest = d[i];
      }
    }
    if (*nearest == previous) return;
  }
}

// FAISS's search_from_candidates at level 0 with check_relative_distance: the same visits in the
// same order; only the unvisited neighbours of the node being expanded are gathered, and their
// distances computed together (Rows::Distances), before they join the heaps in order.
size_t SearchLevelZero(const faiss::HNSW& hnsw, const Rows& rows, int k, int ef_search,
                       faiss::HNSW::MinimaxHeap* candidates, float* D, faiss::Index::idx_t* I,
                       faiss::VisitedTable* vt) {
  int nres = 0;
  size_t computed = 0;
  for (int i = 0; i < candidates->size(); ++i) {
    const faiss::Index::idx_t v1 = candidates->ids[i];
    const float d = candidates->dis[i];
    if (nres < k) {
      faiss::maxheap_push(++nres, D, I, d, v1);
    } else if (d < D[0]) {
      faiss::maxheap_replace_top(nres, D, I, d, v1);
    }
    vt->set(static_cast<int>(v1));
  }
  StorageId fresh[kMaxNeighbours];
  while (candidates->size() > 0) {
    float d0 = 0;
    const int v0 = candidates->pop_min(&d0);
    if (candidates->count_below(d0) >= ef_search) break;
    const StorageId* list = nullptr;
    const int n = Neighbours(hnsw, v0, 0, &list);
    int m = 0;
    for (int j = 0; j < n; ++j) {
      const StorageId v1 = list[j];
      if (vt->get(v1)) continue;
      vt->set(v1);
      fresh[m++] = v1;
    }
    float d[kMaxNeighbours];
    rows.Distances(fresh, m, d);
    for (int j = 0; j < m; ++j) {
      if (nres < k) {
        faiss::maxheap_push(++nres, D, I, d[j], fresh[j]);
      } else if (d[j] < D[0]) {
        faiss::maxheap_replace_top(nres, D, I, d[j], fresh[j]);
      }
      candidates->push(fresh[j], d[j]);
    }
    computed += m;
  }
  return computed;
}

}  // namespace

void UseSimdInnerProductStorage(faiss::IndexHNSW* index) {
  auto* flat = dynamic_cast<faiss::IndexFlat*>(index->storage);
  if (flat == nullptr || flat->metric_type != faiss::METRIC_INNER_PRODUCT ||
      dynamic_cast<SimdIndexFlatIP*>(flat) != nullptr) {
    return;
  }
  auto* simd = new SimdIndexFlatIP(flat->d);
  simd->codes = std::move(flat->codes);
  simd->ntotal = flat->ntotal;
  if (index->own_fields) delete flat;
  index->storage = simd;
  index->own_fields = true;
}

bool CanSearchHnswInnerProduct(const faiss::IndexHNSW& index) {
  return dynamic_cast<const SimdIndexFlatIP*>(index.storage) != nullptr &&
         index.metric_type == faiss::METRIC_INNER_PRODUCT && index.hnsw.upper_beam == 1 &&
         index.hnsw.search_bounded_queue && index.hnsw.check_relative_distance &&
         index.hnsw.nb_neighbors(0) <= kMaxNeighbours;
}

size_t SearchHnswInnerProduct(const faiss::IndexHNSW& index, const float* query, int k,
                              int ef_search, float* distances, faiss::Index::idx_t* labels,
                              faiss::VisitedTable* visited) {
  const faiss::HNSW& hnsw = index.hnsw;
  const auto& flat = static_cast<const faiss::IndexFlat&>(*index.storage);
  const Rows rows(flat.get_xb(), static_cast<int>(index.d), query);
  faiss::maxheap_heapify(k, distances, labels);
  size_t computed = 0;
  if (hnsw.entry_point >= 0) {
    StorageId nearest = hnsw.entry_point;
    float d_nearest = rows.Distance(nearest);
    for (int level = hnsw.max_level; level >= 1; --level) {
      GreedyUpdateNearest(hnsw, rows, level, &nearest, &d_nearest);
    }
    faiss::HNSW::MinimaxHeap candidates(std::max(ef_search, k));
    candidates.push(nearest, d_nearest);
    computed = SearchLevelZero(hnsw, rows, k, ef_search, &candidates, distances, labels, visited);
    visited->advance();
  }
  faiss::maxheap_reorder(k, distances, labels);
  for (int i = 0; i < k; ++i) distances[i] = -distances[i];  // back to similarities
  return computed;
}

}  // namespace ibgraphrag::alignment
