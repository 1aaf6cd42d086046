// The scorer on CUDA: same code path as CPU, same scores. Skipped without CUDA.
#include <chrono>
#include <cstdio>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gtest/gtest.h"
#include "services/retriever/fused_scorer.h"
#include "services/retriever/scorer_test_util.h"
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

// Prints (does not assert) the time to score 10,000 candidates on the GPU, for docs/retriever.md.
TEST(ScorerGpuTest, ReportsCudaScoringTime) {
  if (!CudaAvailable()) GTEST_SKIP() << "no CUDA device";
  ScorerConfig config;
  auto data = testing::MakeRandomCandidates(config.text_dim, 5, 20000, 30, 3000, 10000, 17);
  auto gpu = TorchScorer::Create(InitScorerParams(config, 1), "cuda:0");
  ASSERT_OK(gpu);
  ASSERT_OK((*gpu)->Precompute(*data.entities, *data.relations));
  std::vector<float> out(data.heads.size());
  for (const char* path : {"mlp", "factorised"}) {
    const bool mlp = path[0] == 'm';
    auto run = [&] {
      return mlp ? (*gpu)->ScoreMlp(data.batch(), *data.entities, *data.relations,
                                    absl::MakeSpan(out))
                 : (*gpu)->ScoreFactorised(data.batch(), absl::MakeSpan(out));
    };
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(run().ok());  // warm-up
    const int iterations = 50;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) ASSERT_TRUE(run().ok());
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count() /
        iterations;
    std::printf("cuda %s: %.3f ms per 10,000 candidates (incl. host<->device copies)\n", path, ms);
  }
}

}  // namespace
}  // namespace ibgraphrag::retriever
