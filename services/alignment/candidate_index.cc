#include "services/alignment/candidate_index.h"

#include <faiss/IndexHNSW.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/index_io.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <exception>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "services/alignment/hnsw_search.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

CandidateIndex::~CandidateIndex() = default;

int CandidateIndex::dim() const { return index_ == nullptr ? 0 : static_cast<int>(index_->d); }

std::string CandidateIndex::kind_name() const { return hnsw_ ? "hnsw" : "flat"; }

absl::StatusOr<std::unique_ptr<CandidateIndex>> CandidateIndex::Build(
    std::vector<NameRef> rows, absl::Span<const float> embeddings, int dim,
    const CandidateIndexOptions& options) {
  if (dim <= 0 || embeddings.size() != rows.size() * static_cast<size_t>(dim)) {
    return absl::InvalidArgumentError("CandidateIndex: embeddings size != rows * dim");
  }
  std::unique_ptr<CandidateIndex> out(new CandidateIndex());
  out->rows_ = std::move(rows);
  const int64_t n = static_cast<int64_t>(out->rows_.size());
  out->hnsw_ = options.kind == IndexKind::kHnsw ||
               (options.kind == IndexKind::kAuto && n > options.flat_max_rows);
  out->ef_search_ = options.hnsw_ef_search;
  out->search_omp_threads_ = options.search_omp_threads;
  try {
    if (out->hnsw_) {
      auto hnsw =
          std::make_unique<faiss::IndexHNSWFlat>(dim, options.hnsw_m, faiss::METRIC_INNER_PRODUCT);
      hnsw->hnsw.efConstruction = options.hnsw_ef_construction;
      hnsw->hnsw.efSearch = options.hnsw_ef_search;
      UseSimdInnerProductStorage(hnsw.get());
      out->index_ = std::move(hnsw);
    } else {
      out->index_ = std::make_unique<faiss::IndexFlatIP>(dim);
    }
    if (n > 0) {
      // One thread: FAISS inserts HNSW vertices in parallel, in an order that depends on thread
      // timing, so two builds of the same names gave different graphs (and a few different
      // candidates). Built on one thread, a bundle is a function of its inputs (this thread's
      // OpenMP setting only, restored after).
      const int threads = omp_get_max_threads();
      if (out->hnsw_) omp_set_num_threads(1);
      out->index_->add(n, embeddings.data());
      if (out->hnsw_) omp_set_num_threads(threads);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("FAISS index build failed: ", e.what()));
  }
  return out;
}

absl::Status CandidateIndex::Write(const std::string& index_path,
                                   const std::string& rows_path) const {
  try {
    faiss::write_index(index_.get(), index_path.c_str());
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(index_path, ": faiss::write_index failed: ", e.what()));
  }
  FILE* f = std::fopen(rows_path.c_str(), "wb");
  if (f == nullptr) return absl::InternalError(absl::StrCat(rows_path, ": cannot open"));
  std::vector<uint32_t> flat;
  flat.reserve(rows_.size() * 2);
  for (const NameRef& r : rows_) {
    flat.push_back(r.entry);
    flat.push_back(r.name_index);
  }
  const bool ok = std::fwrite(flat.data(), sizeof(uint32_t), flat.size(), f) == flat.size();
  if (std::fclose(f) != 0 || !ok) {
    return absl::InternalError(absl::StrCat(rows_path, ": write failed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CandidateIndex>> CandidateIndex::Read(
    const std::string& index_path, const std::string& rows_path,
    const CandidateIndexOptions& options) {
  std::unique_ptr<CandidateIndex> out(new CandidateIndex());
  try {
    out->index_.reset(faiss::read_index(index_path.c_str()));
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat(index_path, ": faiss::read_index failed: ", e.what()));
  }
  if (auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(out->index_.get()); hnsw != nullptr) {
    out->hnsw_ = true;
    hnsw->hnsw.efSearch = options.hnsw_ef_search;
    UseSimdInnerProductStorage(hnsw);
  }
  out->ef_search_ = options.hnsw_ef_search;
  out->search_omp_threads_ = options.search_omp_threads;
  FILE* f = std::fopen(rows_path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(rows_path, ": cannot open"));
  std::vector<uint32_t> flat(static_cast<size_t>(out->index_->ntotal) * 2);
  const size_t got = std::fread(flat.data(), sizeof(uint32_t), flat.size(), f);
  const bool extra = std::fgetc(f) != EOF;
  std::fclose(f);
  if (got != flat.size() || extra) {
    return absl::DataLossError(absl::StrCat(rows_path, ": row map does not match the index (",
                                            out->index_->ntotal, " rows)"));
  }
  out->rows_.resize(out->index_->ntotal);
  for (size_t i = 0; i < out->rows_.size(); ++i) out->rows_[i] = {flat[2 * i], flat[2 * i + 1]};
  return out;
}

absl::StatusOr<std::vector<std::vector<NameHit>>> CandidateIndex::Search(
    absl::Span<const float> queries, int k) const {
  return SearchRows(queries, k, /*through_faiss=*/false);
}

absl::StatusOr<std::vector<std::vector<NameHit>>> CandidateIndex::SearchThroughFaiss(
    absl::Span<const float> queries, int k) const {
  return SearchRows(queries, k, /*through_faiss=*/true);
}

absl::StatusOr<std::vector<std::vector<NameHit>>> CandidateIndex::SearchRows(
    absl::Span<const float> queries, int k, bool through_faiss) const {
  const int d = dim();
  if (d == 0 || queries.size() % d != 0) {
    return absl::InvalidArgumentError(
        "CandidateIndex::Search: query size is not a multiple of dim");
  }
  const int64_t nq = static_cast<int64_t>(queries.size() / d);
  std::vector<std::vector<NameHit>> out(nq);
  if (nq == 0 || rows_.empty() || k <= 0) return out;
  // Several names of one entity can crowd the top: ask for more rows than entities wanted.
  const int64_t fetch = std::min<int64_t>(rows(), std::max<int64_t>(int64_t{k} * 4, 16));
  std::vector<float> distances(nq * fetch);
  std::vector<faiss::Index::idx_t> labels(nq * fetch);
  const int ef_search = std::max<int>(ef_search_, static_cast<int>(fetch));
  const auto* hnsw = dynamic_cast<const faiss::IndexHNSW*>(index_.get());
  if (hnsw != nullptr && !through_faiss && CanSearchHnswInnerProduct(*hnsw)) {
    // One visited table per thread, reused across requests (FAISS allocates and clears one of
    // ntotal bytes per call); hnsw_search.h says why this search and not FAISS's.
    thread_local std::unique_ptr<faiss::VisitedTable> visited;
    if (visited == nullptr || visited->visited.size() < static_cast<size_t>(hnsw->ntotal)) {
      visited = std::make_unique<faiss::VisitedTable>(static_cast<int>(hnsw->ntotal));
    }
    for (int64_t q = 0; q < nq; ++q) {
      SearchHnswInnerProduct(*hnsw, queries.data() + q * d, static_cast<int>(fetch), ef_search,
                             distances.data() + q * fetch, labels.data() + q * fetch,
                             visited.get());
    }
  } else {
    if (search_omp_threads_ > 0 && omp_get_max_threads() != search_omp_threads_) {
      omp_set_num_threads(search_omp_threads_);  // this thread's setting only
    }
    try {
      if (hnsw_) {
        faiss::SearchParametersHNSW params;
        params.efSearch = ef_search;
        index_->search(nq, queries.data(), fetch, distances.data(), labels.data(), &params);
      } else {
        index_->search(nq, queries.data(), fetch, distances.data(), labels.data());
      }
    } catch (const std::exception& e) {
      return absl::InternalError(absl::StrCat("FAISS search failed: ", e.what()));
    }
  }
  for (int64_t q = 0; q < nq; ++q) {
    absl::flat_hash_map<uint32_t, size_t> seen;
    for (int64_t j = 0; j < fetch && static_cast<int>(out[q].size()) < k; ++j) {
      const faiss::Index::idx_t label = labels[q * fetch + j];
      if (label < 0) break;
      const NameRef& ref = rows_[label];
      if (!seen.emplace(ref.entry, out[q].size()).second) continue;
      out[q].push_back({ref.entry, ref.name_index, distances[q * fetch + j]});
    }
  }
  return out;
}

}  // namespace ibgraphrag::alignment
