// Retrieve benchmarks on a real artifact base (the triple scorer alone: scoring_bench.cc).
//
//   IBGR_BENCH_BASE=/tmp/art retriever_bench --benchmark_filter=Retrieve
//   IBGR_BENCH_BASE=/tmp/art IBGR_BENCH_TOPICS=topics.txt retriever_bench --benchmark_filter=Replay
//
// BM_Retrieve* needs an artifact base with a KG snapshot and a trained model (`ibgr kg build` +
// `retriever_train`) and runs the real in-process path with the CPU serving scorer (no LibTorch);
// BM_RetrieveIbrp / ShortestPath / PairsPruned use five large diseases of the default KG,
// BM_RetrieveReplay the topic sets of IBGR_BENCH_TOPICS (any KG, e.g. `ibgr kg synth`).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever.h"

namespace ibgraphrag::retriever {
namespace {

struct RetrieveFixture {
  std::shared_ptr<SubgraphSource> source;
  std::shared_ptr<const RetrieverModel> model;
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
    RetrieverModel::Options mo;
    mo.device = "cpu";
    // The encoder the manifest names (hashed or trained).
    auto model = RetrieverModel::Load(*model_dir, mo, TextEmbedder());
    if (!model.ok()) {
      f->error = model.status().ToString();
      return f;
    }
    std::shared_ptr<const kgstore::KgStore> shared = std::move(*store);
    for (const char* id : {"DOID:9352", "DOID:1612", "DOID:10652", "DOID:2377", "DOID:1324"}) {
      auto r = shared->ResolveExternalId(id);
      if (r.ok()) f->topics.push_back(*r);
    }
    f->source = std::make_shared<InProcessSubgraphSource>(shared);
    f->model = *model;
    f->retriever = std::make_unique<Retriever>(Retriever::Options(), f->source, f->model);
    return f;
  }();
  return *f;
}

// Runs `retriever` on make_query(0), make_query(1), ... Counters: candidates (mean per
// request) and the per-request p50_ms / p99_ms (requests differ in size; the mean alone hides
// the tail).
void RunQueries(benchmark::State& state, const Retriever& retriever,
                const std::function<RetrieveQuery(size_t)>& make_query) {
  size_t i = 0;
  int64_t candidates = 0;
  std::vector<double> latencies_ms;
  for (auto _ : state) {
    const RetrieveQuery q = make_query(i++);
    const absl::Time start = absl::Now();
    auto r = retriever.Retrieve(q);
    latencies_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    candidates += r->subgraph_triples;
  }
  state.counters["candidates"] =
      benchmark::Counter(static_cast<double>(candidates), benchmark::Counter::kAvgIterations);
  std::sort(latencies_ms.begin(), latencies_ms.end());
  state.counters["p50_ms"] = latencies_ms[latencies_ms.size() / 2];
  state.counters["p99_ms"] = latencies_ms[latencies_ms.size() * 99 / 100];
}

// Retrieves for the fixture's diseases in turn: one topic each, or (`pairs`) two at a time
// like a true/false claim naming two entities. state.range(0) = hops.
void RunRetrieve(benchmark::State& state, const Retriever& retriever, ScoringMode mode,
                 bool pairs) {
  const std::vector<uint32_t>& topics = Retrieval().topics;
  RunQueries(state, retriever, [&](size_t i) {
    RetrieveQuery q;
    q.question = "Which drug treats this disease?";
    q.topic_ids = {topics[i % topics.size()]};
    if (pairs) q.topic_ids.push_back(topics[(i + 1) % topics.size()]);
    q.max_hops = static_cast<int>(state.range(0));
    q.mode = mode;
    return q;
  });
}

// `need_diseases`: the benchmark uses the fixture's diseases (the replay brings its own topics).
bool FixtureReady(benchmark::State& state, bool need_diseases = true) {
  RetrieveFixture& f = Retrieval();
  if (f.retriever != nullptr && (!need_diseases || !f.topics.empty())) return true;
  state.SkipWithError(f.error.empty() ? "none of the benchmark diseases is in this KG"
                                      : f.error.c_str());
  return false;
}

void BM_RetrieveIbrp(benchmark::State& state) {
  if (FixtureReady(state)) RunRetrieve(state, *Retrieval().retriever, ScoringMode::kIbrp, false);
}
BENCHMARK(BM_RetrieveIbrp)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
void BM_RetrieveShortestPath(benchmark::State& state) {
  if (FixtureReady(state)) {
    RunRetrieve(state, *Retrieval().retriever, ScoringMode::kShortestPath, false);
  }
}
BENCHMARK(BM_RetrieveShortestPath)->Arg(2)->Unit(benchmark::kMillisecond);

// Two topics per request, 2 hops, the model scoring only the best state.range(1) candidates
// by the shortest-path prior (Retriever::Options::max_scored_candidates; 0 = all).
void BM_RetrievePairsPruned(benchmark::State& state) {
  if (!FixtureReady(state)) return;
  RetrieveFixture& f = Retrieval();
  Retriever::Options options;
  options.max_scored_candidates = static_cast<int>(state.range(1));
  const Retriever retriever(options, f.source, f.model);
  RunRetrieve(state, retriever, ScoringMode::kIbrp, true);
}
BENCHMARK(BM_RetrievePairsPruned)
    ->Args({2, 0})
    ->Args({2, 1000})
    ->Args({2, 500})
    ->Unit(benchmark::kMillisecond);

// Replays recorded topic sets: IBGR_BENCH_TOPICS names a file with one request per line,
// comma-separated internal entity ids of the KG under IBGR_BENCH_BASE (e.g. the topic
// entities the gateway sent for the true/false questions). 2 hops, the cap state.range(1)
// (0 = the served model's trained cap, what the gateway sends), the model scoring the best
// state.range(0) candidates by the prior (0 = all).
std::vector<std::vector<uint32_t>> ReplayTopics() {
  std::vector<std::vector<uint32_t>> requests;
  const char* path = std::getenv("IBGR_BENCH_TOPICS");
  if (path == nullptr) return requests;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<uint32_t> ids;
    for (absl::string_view id : absl::StrSplit(line, ',', absl::SkipEmpty())) {
      uint32_t v = 0;
      if (absl::SimpleAtoi(id, &v)) ids.push_back(v);
    }
    if (!ids.empty()) requests.push_back(std::move(ids));
  }
  return requests;
}

void BM_RetrieveReplay(benchmark::State& state) {
  if (!FixtureReady(state, /*need_diseases=*/false)) return;
  static const std::vector<std::vector<uint32_t>>* requests =
      new std::vector<std::vector<uint32_t>>(ReplayTopics());
  if (requests->empty()) {
    state.SkipWithError("set IBGR_BENCH_TOPICS to a file of comma-separated topic ids");
    return;
  }
  RetrieveFixture& f = Retrieval();
  Retriever::Options options;
  options.max_scored_candidates = static_cast<int>(state.range(0));
  const Retriever retriever(options, f.source, f.model);
  RunQueries(state, retriever, [&](size_t i) {
    RetrieveQuery q;
    q.question = "Is this claim about these entities true?";
    q.topic_ids = (*requests)[i % requests->size()];
    q.max_candidates = static_cast<int>(state.range(1));
    return q;
  });
}
BENCHMARK(BM_RetrieveReplay)
    ->Args({0, 10000})
    ->Args({0, 0})
    ->Args({1000, 0})
    ->Args({500, 0})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ibgraphrag::retriever

BENCHMARK_MAIN();
