// Scoring benchmarks: the triple scorer alone, no KG and no gRPC, so the file builds anywhere a
// LibTorch does (bench/gpu_scoring_check.sh builds it on a GPU machine against a CUDA LibTorch).
//
//   retriever_scoring_bench                               # CPU: MLP / factorised / fused
//   retriever_scoring_bench --benchmark_filter=Cuda       # the same on cuda:0 (skipped without)
//
// 10,000 candidates, hidden 256, text_dim 256, 20,000 entities, 3,000 subgraph nodes, LibTorch on
// one intra-op thread (torch_threads = 1); the fused loop is the CPU serving path.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "services/retriever/fused_scorer.h"
#include "services/retriever/scorer_test_util.h"
#include "services/retriever/torch_scorer.h"

namespace ibgraphrag::retriever {
namespace {

constexpr int kTextDim = 256;
constexpr int kHidden = 256;

struct ScoringFixture {
  ScoringFixture() {
    (void)SetTorchThreads(1);
    ScorerConfig c;
    c.text_dim = kTextDim;
    c.hidden = kHidden;
    data = testing::MakeRandomCandidates(kTextDim, 5, 20000, 30, 3000, 10000, 17);
    scorer = std::move(TorchScorer::Create(InitScorerParams(c, 1), "cpu")).value();
    projections = scorer->Precompute(*data.entities, *data.relations).value();
    fused = std::make_unique<FusedScorer>(projections);
    out.resize(data.heads.size());
  }
  testing::RandomCandidates data;
  std::unique_ptr<TorchScorer> scorer;
  std::shared_ptr<const ScorerProjections> projections;
  std::unique_ptr<FusedScorer> fused;
  std::vector<float> out;
};

ScoringFixture& Fixture() {
  static ScoringFixture* f = new ScoringFixture();
  return *f;
}

// Times `score(batch, out)` (an absl::Status) over the fixture's 10,000 candidates.
template <typename Score>
void RunScoring(benchmark::State& state, Score score) {
  ScoringFixture& f = Fixture();
  const CandidateBatch batch = f.data.batch();
  for (auto _ : state) {
    const absl::Status s = score(batch, absl::MakeSpan(f.out));
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(f.out.data());
  }
  state.SetItemsProcessed(state.iterations() * batch.heads.size());
}

void BM_ScoreMlp(benchmark::State& state) {
  ScoringFixture& f = Fixture();
  RunScoring(state, [&](const CandidateBatch& batch, absl::Span<float> out) {
    return f.scorer->ScoreMlp(batch, *f.data.entities, *f.data.relations, out);
  });
}
BENCHMARK(BM_ScoreMlp)->Unit(benchmark::kMillisecond);

void BM_ScoreFactorisedTorch(benchmark::State& state) {
  ScoringFixture& f = Fixture();
  RunScoring(state, [&](const CandidateBatch& batch, absl::Span<float> out) {
    return f.scorer->ScoreFactorised(batch, out);
  });
}
BENCHMARK(BM_ScoreFactorisedTorch)->Unit(benchmark::kMillisecond);

void BM_ScoreFused(benchmark::State& state) {
  ScoringFixture& f = Fixture();
  FusedScratch scratch;
  RunScoring(state, [&](const CandidateBatch& batch, absl::Span<float> out) {
    return f.fused->Score(batch, out, &scratch);
  });
}
BENCHMARK(BM_ScoreFused)->Unit(benchmark::kMillisecond);

// The same 10,000 candidates on the GPU (host <-> device copies included): skipped without CUDA.
void BM_ScoreOnCuda(benchmark::State& state, bool mlp) {
  if (!CudaAvailable()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  static TorchScorer* const gpu = []() -> TorchScorer* {
    ScorerConfig c;
    c.text_dim = kTextDim;
    c.hidden = kHidden;
    auto created = TorchScorer::Create(InitScorerParams(c, 1), "cuda:0");
    if (!created.ok()) return nullptr;
    std::unique_ptr<TorchScorer> scorer = *std::move(created);
    ScoringFixture& f = Fixture();
    if (!scorer->Precompute(*f.data.entities, *f.data.relations).ok()) return nullptr;
    return scorer.release();  // lives for the process
  }();
  if (gpu == nullptr) {
    state.SkipWithError("cannot create the CUDA scorer");
    return;
  }
  ScoringFixture& f = Fixture();
  RunScoring(state, [&](const CandidateBatch& batch, absl::Span<float> out) {
    return mlp ? gpu->ScoreMlp(batch, *f.data.entities, *f.data.relations, out)
               : gpu->ScoreFactorised(batch, out);
  });
}
BENCHMARK_CAPTURE(BM_ScoreOnCuda, mlp, true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ScoreOnCuda, factorised, false)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ibgraphrag::retriever

BENCHMARK_MAIN();
