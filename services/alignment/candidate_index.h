// FAISS nearest-name search: one row per lexicon name (preferred name, synonyms,
// abbreviations), inner product over unit vectors (= cosine). Exact IndexFlatIP for small
// lexicons, IndexHNSWFlat (inner product) for large ones.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_CANDIDATE_INDEX_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_CANDIDATE_INDEX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "services/alignment/mention_extractor.h"

namespace faiss {
struct Index;
}  // namespace faiss

namespace ibgraphrag::alignment {

enum class IndexKind {
  // kFlat up to CandidateIndexOptions::flat_max_rows rows, kHnsw above.
  kAuto,
  // Exact search; cost grows linearly with the rows (~0.1 ms per 10k rows of d=256).
  kFlat,
  // Approximate graph search; near-constant query cost, slower to build.
  kHnsw,
};

struct CandidateIndexOptions {
  IndexKind kind = IndexKind::kAuto;
  // Largest lexicon (in rows) kAuto still searches exactly.
  int64_t flat_max_rows = 50000;
  // HNSW graph degree: higher is more accurate, bigger and slower to build. 16 keeps the
  // embedded KG's build near a minute on two cores with recall close to exact search.
  int hnsw_m = 16;
  // HNSW beam width while building.
  int hnsw_ef_construction = 40;
  // HNSW beam width while searching (raised to the rows fetched when a request asks for more).
  int hnsw_ef_search = 64;
  // OpenMP threads a Search may use, set on the calling thread before every search (0 = leave
  // the thread's setting). OpenMP's thread count is a per-thread setting: a request thread that
  // never set it gets one thread per core, and the idle team members spin between requests
  // (measured: 7.5x the alignment server's CPU per answer once handlers moved to pool threads).
  int search_omp_threads = 0;
};

// One search hit, deduplicated by entry.
struct NameHit {
  uint32_t entry = 0;
  // Which of the entry's names matched best (index into AllNames()).
  uint32_t name_index = 0;
  // Cosine between the query and that name.
  float similarity = 0;
};

class CandidateIndex {
 public:
  // Builds over `embeddings` (rows.size() x dim, unit rows); `rows[i]` names row i.
  static absl::StatusOr<std::unique_ptr<CandidateIndex>> Build(
      std::vector<NameRef> rows, absl::Span<const float> embeddings, int dim,
      const CandidateIndexOptions& options);
  // Reads an index written by Write (faiss::read_index) and its row map.
  static absl::StatusOr<std::unique_ptr<CandidateIndex>> Read(const std::string& index_path,
                                                              const std::string& rows_path,
                                                              const CandidateIndexOptions& options);
  ~CandidateIndex();

  // faiss::write_index plus the row map (uint32 pairs, little-endian).
  absl::Status Write(const std::string& index_path, const std::string& rows_path) const;

  // Top `k` distinct entries for each of `queries` (n x dim), best first. Thread-safe. An HNSW
  // index is searched by SearchHnswInnerProduct (hnsw_search.h), which finds what FAISS's own
  // search finds, faster.
  absl::StatusOr<std::vector<std::vector<NameHit>>> Search(absl::Span<const float> queries,
                                                           int k) const;
  // The same through faiss::Index::search: what Search must equal (tests, benchmarks).
  absl::StatusOr<std::vector<std::vector<NameHit>>> SearchThroughFaiss(
      absl::Span<const float> queries, int k) const;

  int dim() const;
  int64_t rows() const { return static_cast<int64_t>(rows_.size()); }
  // Which lexicon name each row holds.
  const std::vector<NameRef>& row_refs() const { return rows_; }
  // "flat" or "hnsw".
  std::string kind_name() const;

 private:
  CandidateIndex() = default;
  absl::StatusOr<std::vector<std::vector<NameHit>>> SearchRows(absl::Span<const float> queries,
                                                               int k, bool through_faiss) const;
  std::unique_ptr<faiss::Index> index_;
  std::vector<NameRef> rows_;
  bool hnsw_ = false;
  int ef_search_ = 64;
  int search_omp_threads_ = 0;
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_CANDIDATE_INDEX_H_
