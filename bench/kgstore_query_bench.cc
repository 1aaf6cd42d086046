// Where the time of an ExtractSubgraph request goes: the store's traversal alone, then the same
// query through the gRPC service over an in-process channel (proto fill + serialisation, no
// sockets). The loopback figures come from kgstore_loadgen (bench/kgstore_bench.sh).
//
//   IBGR_BENCH_TRIPLES=8100498 build/bin/kgstore_query_bench --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include "benchmark/benchmark.h"
#include "common/server_runner.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"
#include "services/kgstore/import/synthetic_kg.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kgstore_service_impl.h"

namespace ibgraphrag::kgstore {
namespace {

struct Fixture {
  std::string dir;
  std::shared_ptr<KgStore> store;
  StoreHolder holder;
  std::unique_ptr<KgStoreServiceImpl> service;
  std::unique_ptr<common::ServerRunner> runner;
  std::unique_ptr<ibgraphrag::v1::KgStoreService::Stub> stub;
  int64_t entities = 0;
  bool keep_dir = false;

  Fixture() {
    const char* env = std::getenv("IBGR_BENCH_TRIPLES");
    import_::SyntheticKgOptions options;
    options.num_triples = env != nullptr ? std::atoll(env) : 1'000'000;
    options.num_entities = std::max<int64_t>(1000, options.num_triples * 129375 / 8100498);
    KgData kg = import_::GenerateSyntheticPrimeKg(options);
    // IBGR_BENCH_KEEP_DIR keeps the snapshot (as <dir>/kg/1) for a kgstore to serve afterwards.
    const char* keep = std::getenv("IBGR_BENCH_KEEP_DIR");
    keep_dir = keep != nullptr && *keep != '\0';
    dir = keep_dir ? std::string(keep)
                   : (std::filesystem::temp_directory_path() /
                      ("ibgr-query-bench-" + std::to_string(getpid())))
                         .string();
    std::filesystem::remove_all(dir);
    SnapshotManifestInfo info;
    info.version = 1;
    if (!KgStore::WriteSnapshot(kg, info, dir + "/kg/1").ok()) std::abort();
    entities = static_cast<int64_t>(kg.entities.size());
    KgStoreOptions store_options;
    store_options.snapshot_dir = dir + "/kg/1";
    store_options.read_only = true;
    auto opened = KgStore::Open(store_options);
    if (!opened.ok()) std::abort();
    store = std::move(*opened);
    holder.Swap(store, 1);
    service = std::make_unique<KgStoreServiceImpl>(&holder);
    common::ServerRunner::Options runner_options;
    runner_options.service_name = "kgstore-bench";
    runner_options.listen_host = "127.0.0.1";
    auto runner_or = common::ServerRunner::BuildAndStart(runner_options, {service.get()}, {});
    if (!runner_or.ok()) std::abort();
    runner = std::move(*runner_or);
    runner->SetServing(true);
    stub = ibgraphrag::v1::KgStoreService::NewStub(runner->InProcessChannel());
  }
  ~Fixture() {
    runner->Shutdown();
    store.reset();
    holder.Swap(nullptr, 0);
    holder.ReleaseRetired();
    if (!keep_dir) std::filesystem::remove_all(dir);
  }
};

Fixture* g_fixture = nullptr;

// Built on first use (generating and writing the graph is slow); removed at exit so the temp
// snapshot does not outlive the run.
Fixture& GetFixture() {
  if (g_fixture == nullptr) {
    g_fixture = new Fixture();
    std::atexit([] { delete g_fixture; });
  }
  return *g_fixture;
}

void BM_StoreExtractSubgraph(benchmark::State& state) {
  Fixture& f = GetFixture();
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<EntityId> pick(0, static_cast<EntityId>(f.entities - 1));
  SubgraphQuery query;
  query.max_hops = 2;
  query.max_triples = 10000;
  int64_t triples = 0;
  for (auto _ : state) {
    query.seeds = {pick(rng), pick(rng), pick(rng)};
    auto result = f.store->ExtractSubgraph(query);
    triples += result->triples.size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["triples_per_query"] =
      benchmark::Counter(static_cast<double>(triples), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_StoreExtractSubgraph)->Unit(benchmark::kMicrosecond);

void BM_ServiceExtractSubgraphInProcess(benchmark::State& state) {
  Fixture& f = GetFixture();
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uint32_t> pick(0, static_cast<uint32_t>(f.entities - 1));
  for (auto _ : state) {
    ibgraphrag::v1::ExtractSubgraphRequest request;
    for (int i = 0; i < 3; ++i) request.add_seed_ids(pick(rng));
    request.set_max_hops(2);
    request.set_max_triples(10000);
    request.set_entity_detail(ibgraphrag::v1::ENTITY_DETAIL_IDS);
    ibgraphrag::v1::ExtractSubgraphResponse response;
    grpc::ClientContext ctx;
    if (!f.stub->ExtractSubgraph(&ctx, request, &response).ok()) state.SkipWithError("rpc failed");
    benchmark::DoNotOptimize(response);
  }
}
BENCHMARK(BM_ServiceExtractSubgraphInProcess)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ibgraphrag::kgstore

BENCHMARK_MAIN();
