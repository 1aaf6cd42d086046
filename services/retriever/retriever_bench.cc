// Scoring and Retrieve benchmarks.
//
//   retriever_bench --benchmark_filter=Score      # 10,000 candidates: MLP / factorised / fused
//   IBGR_BENCH_BASE=/tmp/art retriever_bench --benchmark_filter=Retrieve
//
// BM_Score*: hidden 256, text_dim 256, 20,000 entities, 3,000 subgraph nodes, LibTorch on one
// intra-op thread (torch_threads = 1). BM_Retrieve* needs an artifact base with a KG snapshot
// and a trained model (`ibgr kg build` + `retriever_train`) and runs the real in-process path.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever.h"
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

void BM_ScoreMlp(benchmark::State& state) {
  ScoringFixture& f = Fixture();
  const CandidateBatch batch = f.data.batch();
  for (auto _ : state) {
    auto s = f.scorer->ScoreMlp(batch, *f.data.entities, *f.data.relations, absl::MakeSpan(f.out));
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(f.out.data());
  }
  state.SetItemsProcessed(state.iterations() * batch.heads.size());
}
BENCHMARK(BM_ScoreMlp)->Unit(benchmark::kMillisecond);

void BM_ScoreFactorisedTorch(benchmark::State& state) {
  ScoringFixture& f = Fixture();
  const CandidateBatch batch = f.data.batch();
  for (auto _ : state) {
    auto s = f.scorer->ScoreFactorised(batch, absl::MakeSpan(f.out));
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(f.out.data());
  }
  state.SetItemsProcessed(state.iterations() * batch.heads.size());
}
BENCHMARK(BM_ScoreFactorisedTorch)->Unit(benchmark::kMillisecond);

void BM_ScoreFused(benchmark::State& state) {
  ScoringFixture& f = Fixture();
  const CandidateBatch batch = f.data.batch();
  FusedScratch scratch;
  for (auto _ : state) {
    auto s = f.fused->Score(batch, absl::MakeSpan(f.out), &scratch);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(f.out.data());
  }
  state.SetItemsProcessed(state.iterations() * batch.heads.size());
}
BENCHMARK(BM_ScoreFused)->Unit(benchmark::kMillisecond);

// ---- End to end on a real artifact base ----

struct RetrieveFixture {
  std::unique_ptr<Retriever> retriever;
  std::vector<uint32_t> topics;  // diseases with many edges
  std::string error;
};

RetrieveFixture& Retrieval() {
  static RetrieveFixture* f = [] {
    auto* f = new RetrieveFixture();
    const char* base = std::getenv("IBGR_BENCH_BASE");
    if (base == nullptr) {
      f->error = "set IBGR_BENCH_BASE to an artifact base with kg/ and retriever/";
      return f;
    }
    auto kg_dir = kgstore::ResolveSnapshotDir(base, std::nullopt);
    if (!kg_dir.ok()) {
      f->error = kg_dir.status().ToString();
      return f;
    }
    kgstore::KgStoreOptions so;
    so.snapshot_dir = *kg_dir;
    so.read_only = true;
    auto store = kgstore::KgStore::Open(so);
    auto model_dir = ResolveRetrieverDir(base, std::nullopt);
    if (!store.ok() || !model_dir.ok()) {
      f->error = "cannot open the KG or the model";
      return f;
    }
    (void)SetTorchThreads(1);
    RetrieverModel::Options mo;
    mo.device = "cpu";
    auto model = RetrieverModel::Load(*model_dir, mo, HashNgramEmbedder(256).value());
    if (!model.ok()) {
      f->error = model.status().ToString();
      return f;
    }
    std::shared_ptr<const kgstore::KgStore> shared = std::move(*store);
    for (const char* id : {"DOID:9352", "DOID:1612", "DOID:10652", "DOID:2377", "DOID:1324"}) {
      auto r = shared->ResolveExternalId(id);
      if (r.ok()) f->topics.push_back(*r);
    }
    f->retriever = std::make_unique<Retriever>(
        Retriever::Options(), std::make_shared<InProcessSubgraphSource>(shared), *model);
    return f;
  }();
  return *f;
}

void RunRetrieve(benchmark::State& state, ScoringMode mode) {
  RetrieveFixture& f = Retrieval();
  if (f.retriever == nullptr || f.topics.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  size_t i = 0;
  int64_t candidates = 0;
  for (auto _ : state) {
    RetrieveQuery q;
    q.question = "Which drug treats this disease?";
    q.topic_ids = {f.topics[i++ % f.topics.size()]};
    q.max_hops = static_cast<int>(state.range(0));
    q.mode = mode;
    auto r = f.retriever->Retrieve(q);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    candidates += r->subgraph_triples;
  }
  state.counters["candidates"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kAvgIterations);
}

void BM_RetrieveIbrp(benchmark::State& state) { RunRetrieve(state, ScoringMode::kIbrp); }
BENCHMARK(BM_RetrieveIbrp)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
void BM_RetrieveShortestPath(benchmark::State& state) {
  RunRetrieve(state, ScoringMode::kShortestPath);
}
BENCHMARK(BM_RetrieveShortestPath)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ibgraphrag::retriever

BENCHMARK_MAIN();
