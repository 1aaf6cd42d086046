#include "services/alignment/candidate_index.h"

#include <omp.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::alignment {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// FAISS inserts HNSW vertices on every OpenMP thread, in an order that depends on timing; the
// index is built on one thread, so the same names give the same file (and the same candidates).
TEST(CandidateIndexTest, AnHnswIndexIsTheSameFileEveryTimeItIsBuilt) {
  constexpr int kRows = 6000;
  constexpr int kDim = 32;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> embeddings(static_cast<size_t>(kRows) * kDim);
  for (float& x : embeddings) x = normal(rng);
  std::vector<NameRef> rows(kRows);
  for (int i = 0; i < kRows; ++i) rows[i] = {static_cast<uint32_t>(i), 0};
  CandidateIndexOptions options;
  options.kind = IndexKind::kHnsw;
  // However many threads the caller's OpenMP would use.
  omp_set_num_threads(4);
  const common::test_util::ScratchDir dir("align-candidate-index");
  std::vector<std::string> files;
  for (int build = 0; build < 3; ++build) {
    absl::StatusOr<std::unique_ptr<CandidateIndex>> index =
        CandidateIndex::Build(rows, embeddings, kDim, options);
    ASSERT_OK(index);
    const std::string path = dir.path() + "/index" + std::to_string(build);
    ASSERT_OK((*index)->Write(path + ".faiss", path + ".rows"));
    files.push_back(ReadBytes(path + ".faiss"));
  }
  ASSERT_FALSE(files[0].empty());
  EXPECT_TRUE(files[1] == files[0]);
  EXPECT_TRUE(files[2] == files[0]);
  // The caller's setting is back.
  EXPECT_EQ(omp_get_max_threads(), 4);
}

}  // namespace
}  // namespace ibgraphrag::alignment
