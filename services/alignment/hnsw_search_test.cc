#include "services/alignment/hnsw_search.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/impl/HNSW.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/candidate_index.h"

namespace ibgraphrag::alignment {
namespace {

// Unit rows in clusters (names of one entity sit close together), some rows repeated exactly
// (the same name under two entities: equal distances, so the heaps' tie order is exercised).
std::vector<float> ClusteredRows(int rows, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> pick(0, rows - 1);
  const int clusters = std::max(1, rows / 20);
  std::vector<float> centres(static_cast<size_t>(clusters) * dim);
  for (float& x : centres) x = normal(rng);
  std::vector<float> out(static_cast<size_t>(rows) * dim);
  for (int i = 0; i < rows; ++i) {
    float* row = out.data() + static_cast<size_t>(i) * dim;
    if (i > 0 && i % 37 == 0) {  // a repeat of an earlier row
      const int j = pick(rng) % i;
      std::memcpy(row, out.data() + static_cast<size_t>(j) * dim, sizeof(float) * dim);
      continue;
    }
    const float* c = centres.data() + static_cast<size_t>(i % clusters) * dim;
    double norm = 0;
    for (int k = 0; k < dim; ++k) {
      row[k] = c[k] + 0.35f * normal(rng);
      norm += double{row[k]} * row[k];
    }
    for (int k = 0; k < dim; ++k) row[k] = static_cast<float>(row[k] / std::sqrt(norm));
  }
  return out;
}

// Queries near rows (a mention close to a name), far from all (a stray word), and rows
// themselves (an exact name).
std::vector<float> Queries(const std::vector<float>& rows, int dim, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  const int nrows = static_cast<int>(rows.size() / dim);
  std::uniform_int_distribution<int> pick(0, nrows - 1);
  std::vector<float> out(static_cast<size_t>(n) * dim);
  for (int q = 0; q < n; ++q) {
    float* v = out.data() + static_cast<size_t>(q) * dim;
    const float* r = rows.data() + static_cast<size_t>(pick(rng)) * dim;
    const float noise = q % 3 == 0 ? 0.0f : (q % 3 == 1 ? 0.05f : 2.0f);
    for (int k = 0; k < dim; ++k) v[k] = r[k] + noise * normal(rng);
  }
  return out;
}

std::unique_ptr<faiss::IndexHNSWFlat> BuildHnsw(const std::vector<float>& rows, int dim, int m) {
  auto index = std::make_unique<faiss::IndexHNSWFlat>(dim, m, faiss::METRIC_INNER_PRODUCT);
  index->hnsw.efConstruction = 40;
  UseSimdInnerProductStorage(index.get());
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  index->add(static_cast<faiss::Index::idx_t>(rows.size() / dim), rows.data());
  omp_set_num_threads(threads);
  return index;
}

// Every label and every distance bit equal to IndexHNSW::search's, over beam widths and k, and
// the same walk: as many distances computed at level 0 as FAISS counts (hnsw_stats.n3).
TEST(HnswSearchTest, FindsExactlyWhatFaissFinds) {
  constexpr int kDim = 48;
  const std::vector<float> rows = ClusteredRows(12000, kDim, 3);
  const std::unique_ptr<faiss::IndexHNSWFlat> index = BuildHnsw(rows, kDim, 16);
  ASSERT_TRUE(CanSearchHnswInnerProduct(*index));
  constexpr int kQueries = 1500;
  const std::vector<float> queries = Queries(rows, kDim, kQueries, 5);
  faiss::VisitedTable visited(static_cast<int>(index->ntotal));
  int differing = 0, checked = 0;
  for (const int ef : {16, 64, 200}) {
    for (const int k : {1, 10, 40, 64}) {
      index->hnsw.efSearch = ef;
      const int ef_search = std::max(ef, k);
      faiss::SearchParametersHNSW params;
      params.efSearch = ef_search;
      std::vector<float> want_d(static_cast<size_t>(kQueries) * k);
      std::vector<faiss::Index::idx_t> want_l(want_d.size());
      for (int q = 0; q < kQueries; ++q) {
        const size_t at = static_cast<size_t>(q) * k;
        faiss::hnsw_stats.reset();
        index->search(1, queries.data() + static_cast<size_t>(q) * kDim, k, want_d.data() + at,
                      want_l.data() + at, &params);
        const size_t want_computed = faiss::hnsw_stats.n3;
        std::vector<float> d(k);
        std::vector<faiss::Index::idx_t> l(k);
        const size_t computed =
            SearchHnswInnerProduct(*index, queries.data() + static_cast<size_t>(q) * kDim, k,
                                   ef_search, d.data(), l.data(), &visited);
        ++checked;
        const bool same = std::equal(l.begin(), l.end(), want_l.begin() + at) &&
                          std::memcmp(d.data(), want_d.data() + at, sizeof(float) * k) == 0 &&
                          computed == want_computed;
        if (!same && ++differing <= 3) {
          ADD_FAILURE() << "ef " << ef << " k " << k << " query " << q << ": first label " << l[0]
                        << " (" << d[0] << ") vs FAISS " << want_l[at] << " (" << want_d[at]
                        << "), " << computed << " distances vs " << want_computed;
        }
      }
    }
  }
  EXPECT_EQ(differing, 0) << "of " << checked << " searches";
  // The table was advanced past its 250-search wrap-around and still gave FAISS's answers.
  EXPECT_GT(checked, 250);
}

// Fewer rows than k: the rest of the row is FAISS's filler (-1, the lowest float).
TEST(HnswSearchTest, FillsMissingHitsAsFaissDoes) {
  constexpr int kDim = 16;
  const std::vector<float> rows = ClusteredRows(5, kDim, 11);
  const std::unique_ptr<faiss::IndexHNSWFlat> index = BuildHnsw(rows, kDim, 16);
  const std::vector<float> queries = Queries(rows, kDim, 1, 13);
  faiss::VisitedTable visited(static_cast<int>(index->ntotal));
  std::vector<float> d(8);
  std::vector<faiss::Index::idx_t> l(8);
  SearchHnswInnerProduct(*index, queries.data(), 8, 16, d.data(), l.data(), &visited);
  for (int i = 0; i < 5; ++i) EXPECT_GE(l[i], 0) << i;
  for (int i = 5; i < 8; ++i) {
    EXPECT_EQ(l[i], -1) << i;
    EXPECT_EQ(d[i], std::numeric_limits<float>::lowest()) << i;
  }
  faiss::IndexHNSWFlat empty(kDim, 16, faiss::METRIC_INNER_PRODUCT);
  UseSimdInnerProductStorage(&empty);
  SearchHnswInnerProduct(empty, queries.data(), 8, 16, d.data(), l.data(), &visited);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(l[i], -1) << i;
}

// Only what the search replicates is searched by it: an L2 graph, FAISS's own scalar inner
// product and other search settings go to FAISS.
TEST(HnswSearchTest, RefusesIndexesItDoesNotReplicate) {
  faiss::IndexHNSWFlat l2(8, 16);
  UseSimdInnerProductStorage(&l2);
  EXPECT_FALSE(CanSearchHnswInnerProduct(l2));
  faiss::IndexHNSWFlat ip(8, 16, faiss::METRIC_INNER_PRODUCT);
  EXPECT_FALSE(CanSearchHnswInnerProduct(ip));
  UseSimdInnerProductStorage(&ip);
  EXPECT_TRUE(CanSearchHnswInnerProduct(ip));
  ip.hnsw.check_relative_distance = false;
  EXPECT_FALSE(CanSearchHnswInnerProduct(ip));
}

// The name index end to end: Search (this search) and SearchThroughFaiss agree on every hit,
// also after a round trip through the files a bundle holds.
TEST(HnswSearchTest, CandidateIndexSearchEqualsFaissSearch) {
  constexpr int kDim = 32;
  constexpr int kRows = 9000;
  const std::vector<float> embeddings = ClusteredRows(kRows, kDim, 17);
  std::vector<NameRef> refs(kRows);
  for (int i = 0; i < kRows; ++i) refs[i] = {static_cast<uint32_t>(i / 3), 0};  // 3 names each
  CandidateIndexOptions options;
  options.kind = IndexKind::kHnsw;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<CandidateIndex> built,
                       CandidateIndex::Build(refs, embeddings, kDim, options));
  const common::test_util::ScratchDir dir("align-hnsw-search");
  ASSERT_OK(built->Write(dir.path() + "/names.faiss", dir.path() + "/names.rows"));
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CandidateIndex> read,
      CandidateIndex::Read(dir.path() + "/names.faiss", dir.path() + "/names.rows", options));
  const std::vector<float> queries = Queries(embeddings, kDim, 400, 19);
  for (const CandidateIndex* index : {built.get(), read.get()}) {
    for (const int k : {1, 10, 30}) {
      ASSERT_OK_AND_ASSIGN(auto hits, index->Search(queries, k));
      ASSERT_OK_AND_ASSIGN(auto want, index->SearchThroughFaiss(queries, k));
      ASSERT_EQ(hits.size(), want.size());
      for (size_t q = 0; q < hits.size(); ++q) {
        ASSERT_EQ(hits[q].size(), want[q].size()) << "query " << q << " k " << k;
        EXPECT_FALSE(hits[q].empty());
        for (size_t i = 0; i < hits[q].size(); ++i) {
          EXPECT_EQ(hits[q][i].entry, want[q][i].entry) << q << "/" << i;
          EXPECT_EQ(hits[q][i].name_index, want[q][i].name_index) << q << "/" << i;
          EXPECT_EQ(hits[q][i].similarity, want[q][i].similarity) << q << "/" << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ibgraphrag::alignment
