// The scorer on CUDA: same code path as CPU, same scores. Skipped without CUDA.
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gtest/gtest.h"
#include "services/retriever/fused_scorer.h"
#include "services/retriever/scorer_test_util.h"
#include "services/retriever/scoring_backend.h"
#include "services/retriever/torch_backend.h"
#include "services/retriever/torch_scorer.h"

namespace ibgraphrag::retriever {
namespace {

TEST(ScorerGpuTest, CudaScoresMatchCpu) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device";
  ScorerConfig config;
  const ScorerParams params = InitScorerParams(config, 9);
  auto data = testing::MakeRandomCandidates(config.text_dim, 5, 500, 20, 100, 2000, 3);
  auto cpu = TorchScorer::Create(params, "cpu");
  auto gpu = TorchScorer::Create(params, "auto");
  ASSERT_OK(cpu);
  ASSERT_OK(gpu);
  EXPECT_EQ((*gpu)->device(), "cuda:0");
  ASSERT_OK((*cpu)->Precompute(*data.entities, *data.relations));
  ASSERT_OK((*gpu)->Precompute(*data.entities, *data.relations));
  const size_t n = data.heads.size();
  std::vector<float> a(n), b(n), c(n);
  ASSERT_OK((*cpu)->ScoreMlp(data.batch(), *data.entities, *data.relations, absl::MakeSpan(a)));
  ASSERT_OK((*gpu)->ScoreMlp(data.batch(), *data.entities, *data.relations, absl::MakeSpan(b)));
  ASSERT_OK((*gpu)->ScoreFactorised(data.batch(), absl::MakeSpan(c)));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(b[i], a[i], 1e-4) << i;
    ASSERT_NEAR(c[i], a[i], 1e-4) << i;
  }
}

// At the serving size (10,000 candidates, 20,000 entities), both GPU paths agree with the CPU's
// scores, and scoring twice gives the same scores (no state left on the device between calls).
// The time it takes is measured by retriever_scoring_bench's BM_ScoreOnCuda/mlp and /factorised.
TEST(ScorerGpuTest, ServingSizeBatchesMatchCpuAndRepeat) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device";
  ScorerConfig config;
  const ScorerParams params = InitScorerParams(config, 1);
  auto data = testing::MakeRandomCandidates(config.text_dim, 5, 20000, 30, 3000, 10000, 17);
  auto cpu = TorchScorer::Create(params, "cpu");
  auto gpu = TorchScorer::Create(params, "cuda:0");
  ASSERT_OK(cpu);
  ASSERT_OK(gpu);
  ASSERT_OK((*cpu)->Precompute(*data.entities, *data.relations));
  ASSERT_OK((*gpu)->Precompute(*data.entities, *data.relations));
  const size_t n = data.heads.size();
  ASSERT_EQ(n, 10000u);
  std::vector<float> want(n), mlp(n), factorised(n), again(n);
  ASSERT_OK((*cpu)->ScoreMlp(data.batch(), *data.entities, *data.relations, absl::MakeSpan(want)));
  ASSERT_OK((*gpu)->ScoreMlp(data.batch(), *data.entities, *data.relations, absl::MakeSpan(mlp)));
  ASSERT_OK((*gpu)->ScoreFactorised(data.batch(), absl::MakeSpan(factorised)));
  ASSERT_OK((*gpu)->ScoreFactorised(data.batch(), absl::MakeSpan(again)));
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NEAR(mlp[i], want[i], 1e-4) << i;
    ASSERT_NEAR(factorised[i], want[i], 1e-4) << i;
    ASSERT_EQ(again[i], factorised[i]) << i;
  }
}

// What `retriever_torch --device=auto` does on a GPU machine: the LibTorch backend resolves auto to
// cuda:0, refuses a GPU that is not there, and its device scorer gives the scores the CPU serving
// binaries give (the fused loop over the BLAS projections, no LibTorch) at the serving size.
TEST(ScorerGpuTest, TheServingBackendPicksCudaAndScoresAsTheCpuServingPath) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device";
  const ScoringBackend& backend = LibTorchScoringBackend();
  ASSERT_OK_AND_ASSIGN(const std::string device, ResolveScoringDevice(&backend, "auto"));
  EXPECT_EQ(device, "cuda:0");
  EXPECT_THAT(ResolveScoringDevice(&backend, "cuda:64"),
              common::test_util::StatusIs(absl::StatusCode::kFailedPrecondition));
  ScorerConfig config;  // with the structure features of the trained models (prior_dim)
  const ScorerParams params = InitScorerParams(config, 5);
  auto data = testing::MakeRandomCandidates(config.text_dim, 5, 20000, 30, 3000, 10000, 23);
  ASSERT_OK_AND_ASSIGN(auto gpu,
                       backend.CreateScorer(params, *data.entities, *data.relations, device));
  ASSERT_OK_AND_ASSIGN(auto projections,
                       ComputeProjections(params, *data.entities, *data.relations));
  const FusedScorer fused(projections);
  const size_t n = data.heads.size();
  std::vector<float> want(n), got(n);
  FusedScratch scratch;
  ASSERT_OK(fused.Score(data.batch(), absl::MakeSpan(want), &scratch));
  ASSERT_OK(gpu->Score(data.batch(), absl::MakeSpan(got)));
  for (size_t i = 0; i < n; ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

}  // namespace
}  // namespace ibgraphrag::retriever
