// Scale check of the KG store on a generated graph shaped like PrimeKG (about 63 triples per
// entity, skewed degrees, 30 relations). Prints write, reopen, memory and query latency figures;
// asserts correctness only (timings depend on the machine).
//
//   IBGR_KG_SCALE_TRIPLES=8100000 build/tests/kg_store_scale_test   # PrimeKG-sized targets
//
// Defaults to 300k triples so the `slow` label stays a few seconds.
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_test_util.h"

namespace ibgraphrag::kgstore {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Resident and peak resident memory of this process, in MiB.
std::pair<double, double> RssMib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  double rss = 0, hwm = 0;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::atof(line.c_str() + 6) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::atof(line.c_str() + 6) / 1024;
  }
  return {rss, hwm};
}

int64_t TriplesFromEnv() {
  const char* env = getenv("IBGR_KG_SCALE_TRIPLES");
  const int64_t n = env != nullptr ? std::atoll(env) : 300000;
  return std::max<int64_t>(n, 1000);
}

KgData GenerateKg(int64_t target_triples, uint64_t seed) {
  KgData kg;
  const size_t num_entities = static_cast<size_t>(std::max<int64_t>(1000, target_triples / 63));
  const char* types[] = {"disease", "gene",    "compound",           "phenotype",
                         "anatomy", "pathway", "biological_process", "side_effect"};
  kg.entities.resize(num_entities);
  for (size_t i = 0; i < num_entities; ++i) {
    Entity& e = kg.entities[i];
    e.id = static_cast<EntityId>(i);
    e.external_id = absl::StrCat("SYN:", i);
    e.type = types[i % 8];
    e.name = absl::StrCat("entity ", i);
  }
  for (RelationId r = 0; r < 30; ++r) {
    kg.relations.push_back(Relation{r, absl::StrCat("relation_", r), "", "", ""});
  }
  kg.sources = {{"primekg", "CC BY 4.0"},
                {"hetionet", "CC0"},
                {"drugbank", "CC BY-NC 4.0"},
                {"hpo", "HPO license"}};
  kg.provenance = {{0}, {1}, {2}, {3}};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  // Squared uniforms give a few heavy hubs and a long tail, like real biomedical KGs.
  auto skewed = [&](double power) {
    return static_cast<EntityId>(std::pow(u(rng), power) * static_cast<double>(num_entities - 1));
  };
  kg.triples.reserve(static_cast<size_t>(target_triples * 1.05));
  while (kg.triples.size() < static_cast<size_t>(target_triples * 1.05)) {
    Triple t;
    t.head = skewed(2.0);
    t.tail = skewed(1.5);
    // As in PrimeKG, the relation follows from the (head type, tail type) pair, so a node sees
    // a handful of relations rather than all of them.
    t.relation = static_cast<RelationId>(((t.head % 8) * 8 + (t.tail % 8)) % 30);
    t.provenance = static_cast<ProvenanceId>(rng() % 4);
    if (t.head != t.tail) kg.triples.push_back(t);
  }
  std::sort(kg.triples.begin(), kg.triples.end());
  kg.triples.erase(std::unique(kg.triples.begin(), kg.triples.end()), kg.triples.end());
  if (kg.triples.size() > static_cast<size_t>(target_triples)) kg.triples.resize(target_triples);
  return kg;
}

template <typename Fn>
std::vector<double> TimeMicros(int n, Fn fn) {
  std::vector<double> us;
  us.reserve(n);
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    fn(i);
    us.push_back(Seconds(start) * 1e6);
  }
  std::sort(us.begin(), us.end());
  return us;
}

std::string Percentiles(const std::vector<double>& sorted) {
  auto at = [&](double q) { return sorted[static_cast<size_t>(q * (sorted.size() - 1))]; };
  char buf[128];
  std::snprintf(buf, sizeof(buf), "p50 %.1f us  p90 %.1f us  p99 %.1f us", at(0.5), at(0.9),
                at(0.99));
  return buf;
}

TEST(KgStoreScaleTest, WriteReopenAndQueryAGeneratedGraph) {
  const int64_t target = TriplesFromEnv();
  testing::ScratchDir tmp;
  // IBGR_KG_SCALE_KEEP_DIR keeps the snapshot there and reuses it on the next run, to iterate on
  // query performance without regenerating.
  const char* keep = getenv("IBGR_KG_SCALE_KEEP_DIR");
  const std::string base = keep != nullptr ? keep : tmp.path();
  const std::string dir = SnapshotDir(base, 1);
  auto start = Clock::now();
  size_t num_entities = 0;
  size_t num_triples = 0;
  if (keep != nullptr && ReadSnapshotManifest(dir).ok()) {
    const SnapshotManifest m = *ReadSnapshotManifest(dir);
    num_entities = static_cast<size_t>(m.counts.entities);
    num_triples = static_cast<size_t>(m.counts.triples);
    std::printf("reusing %s: %zu entities, %zu triples\n", dir.c_str(), num_entities, num_triples);
  } else {
    KgData kg = GenerateKg(target, 42);
    num_entities = kg.entities.size();
    num_triples = kg.triples.size();
    std::printf("generated %zu entities, %zu triples in %.2f s\n", num_entities, num_triples,
                Seconds(start));
    SnapshotManifestInfo info;
    info.version = 1;
    start = Clock::now();
    const absl::Status written = KgStore::WriteSnapshot(kg, info, dir);
    ASSERT_OK(written);
    std::printf("WriteSnapshot: %.2f s\n", Seconds(start));
  }  // the generated graph is freed before measuring the serving footprint
  const auto [rss_before, hwm_before] = RssMib();

  KgStoreOptions options;
  options.snapshot_dir = dir;
  options.read_only = true;
  start = Clock::now();
  auto opened = KgStore::Open(options);
  ASSERT_OK(opened);
  const double open_s = Seconds(start);
  const KgStore& store = **opened;
  const auto [rss_after, hwm_after] = RssMib();
  const KgStoreStats stats = store.stats();
  std::printf(
      "Open (read-only, ready): %.2f s; RSS %.0f -> %.0f MiB (peak %.0f); CSR %.0f MiB, "
      "entity index %.1f MiB\n",
      open_s, rss_before, rss_after, hwm_after, stats.csr_bytes / 1048576.0,
      stats.entity_index_bytes / 1048576.0);
  EXPECT_EQ(store.counts().triples, static_cast<int64_t>(num_triples));
  EXPECT_EQ(store.num_entities(), static_cast<int64_t>(num_entities));

  std::mt19937_64 rng(7);
  auto random_entity = [&] { return static_cast<EntityId>(rng() % num_entities); };
  constexpr int kQueries = 2000;
  std::vector<SubgraphQuery> subgraph_queries(kQueries);
  for (SubgraphQuery& q : subgraph_queries) {
    q.seeds = {random_entity(), random_entity(), random_entity()};
    q.max_hops = 2;
    q.max_triples = 10000;
  }
  int64_t total_triples = 0;
  int truncated = 0;
  const auto subgraph_us = TimeMicros(kQueries, [&](int i) {
    auto g = store.ExtractSubgraph(subgraph_queries[i]);
    ASSERT_OK(g);
    total_triples += static_cast<int64_t>(g->triples.size());
    truncated += g->truncated;
  });
  std::printf(
      "ExtractSubgraph 3 seeds, 2 hops, <=10000 triples: %s (mean %.0f triples, %d%% "
      "truncated)\n",
      Percentiles(subgraph_us).c_str(), static_cast<double>(total_triples) / kQueries,
      truncated * 100 / kQueries);
  {
    // The shape of the slowest query says where the tail comes from.
    double worst = 0;
    size_t worst_index = 0;
    for (int i = 0; i < kQueries; ++i) {
      const auto t0 = Clock::now();
      auto g = store.ExtractSubgraph(subgraph_queries[i]);
      const double us = Seconds(t0) * 1e6;
      if (us > worst) {
        worst = us;
        worst_index = static_cast<size_t>(i);
      }
    }
    auto g = store.ExtractSubgraph(subgraph_queries[worst_index]);
    std::vector<int> per_hop(3, 0);
    for (const SubgraphEntity& e : g->entities) ++per_hop[e.hop];
    int64_t seed_degree = 0;
    for (EntityId seed : subgraph_queries[worst_index].seeds) {
      NeighborQuery nq;
      nq.entity = seed;
      nq.limit = 1;
      seed_degree += store.Neighbors(nq)->total;
    }
    std::printf(
        "  slowest (rerun) %.0f us: seeds' degree %lld, entities by hop %d/%d/%d, capped "
        "nodes %lld, triples %zu\n",
        worst, static_cast<long long>(seed_degree), per_hop[0], per_hop[1], per_hop[2],
        static_cast<long long>(g->capped_nodes), g->triples.size());
  }
  EXPECT_GT(total_triples, 0);

  const auto neighbors_us = TimeMicros(kQueries, [&](int) {
    NeighborQuery q;
    q.entity = random_entity();
    q.limit = 100;
    ASSERT_OK(store.Neighbors(q));
  });
  std::printf("Neighbors limit 100: %s\n", Percentiles(neighbors_us).c_str());

  int found = 0;
  int path_truncated = 0;
  const auto paths_us = TimeMicros(200, [&](int) {
    PathQuery q;
    q.sources = {random_entity()};
    q.targets = {random_entity(), random_entity()};
    q.max_length = 3;
    q.max_paths = 10;
    auto r = store.ShortestPaths(q);
    ASSERT_OK(r);
    found += !r->paths.empty();
    path_truncated += r->truncated;
  });
  std::printf("ShortestPaths 1 source, 2 targets, length<=3: %s (%d/200 connected, %d capped)\n",
              Percentiles(paths_us).c_str(), found, path_truncated);

  std::vector<EntityId> ids;
  for (int i = 0; i < 100; ++i) ids.push_back(random_entity());
  const auto describe_us =
      TimeMicros(kQueries, [&](int) { ASSERT_TRUE(store.DescribeEntities(ids).ok()); });
  std::printf("DescribeEntities x100: %s\n", Percentiles(describe_us).c_str());
  // The retriever's provenance read: 100 returned triples of one subgraph, one MultiGet.
  std::vector<std::vector<Triple>> top_triples;
  for (int i = 0; i < kQueries && top_triples.size() < 100; ++i) {
    auto g = store.ExtractSubgraph(subgraph_queries[i]);
    ASSERT_OK(g);
    if (g->triples.size() < 100) continue;
    std::vector<Triple>& batch = top_triples.emplace_back();
    for (int k = 0; k < 100; ++k) batch.push_back(g->triples[k].triple);
  }
  ASSERT_FALSE(top_triples.empty());
  const auto annotation_us = TimeMicros(kQueries, [&](int i) {
    auto a = store.GetTripleAnnotations(top_triples[i % top_triples.size()]);
    ASSERT_OK(a);
    ASSERT_TRUE(a->front().found);
  });
  std::printf("GetTripleAnnotations x100: %s\n", Percentiles(annotation_us).c_str());
  const auto get_us =
      TimeMicros(kQueries, [&](int) { ASSERT_TRUE(store.GetEntity(random_entity()).ok()); });
  std::printf("GetEntity: %s\n", Percentiles(get_us).c_str());
  const auto resolve_us = TimeMicros(kQueries, [&](int) {
    ASSERT_OK(store.ResolveExternalId(absl::StrCat("SYN:", random_entity())));
  });
  std::printf("ResolveExternalId: %s\n", Percentiles(resolve_us).c_str());
  const auto [rss_end, hwm_end] = RssMib();
  std::printf("RSS after queries: %.0f MiB (peak %.0f)\n", rss_end, hwm_end);
}

}  // namespace
}  // namespace ibgraphrag::kgstore
