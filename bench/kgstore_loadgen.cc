// Load generator for kgstore's hot query, ExtractSubgraph (2 hops from random seeds, capped), over
// gRPC on loopback; optionally the same query against PostgreSQL in the same run, so that the
// ratio between the two is measured on the same machine at the same time.
//
//   kgstore_loadgen --target=127.0.0.1:50051 --seconds=10 --clients=1,2 \
//       [--postgres="host=127.0.0.1 port=5433 dbname=kg user=postgres"]
//
// Every client thread draws seeds from its own deterministic stream (seeded by --seed and the
// thread index), so kgstore and PostgreSQL answer the same sequence of queries. Both are bounded by
// --seconds and --max_requests.
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "ibgraphrag/v1/kgstore.grpc.pb.h"

ABSL_FLAG(std::string, target, "127.0.0.1:50051", "kgstore address");
ABSL_FLAG(std::string, postgres, "", "libpq connection string; empty skips PostgreSQL");
ABSL_FLAG(std::string, clients, "1,2", "comma-separated concurrency levels");
ABSL_FLAG(double, seconds, 10, "measured seconds per level and system");
ABSL_FLAG(int64_t, max_requests, 200000, "request cap per level and system");
ABSL_FLAG(int, seeds, 3, "random seeds per query");
ABSL_FLAG(int, hops, 2, "hops");
ABSL_FLAG(int, max_triples, 10000, "triple cap");
ABSL_FLAG(int, max_fanout, 1000, "kgstore fan-out cap per node");
ABSL_FLAG(uint64_t, seed, 42, "random seed");
ABSL_FLAG(std::string, seed_pool, "",
          "comma-separated external ids to draw seeds from (e.g. hub entities); empty = uniform "
          "over all entities");
ABSL_FLAG(int, lookahead_bytes, 0,
          "client HTTP/2 stream window (grpc.http2.lookahead_bytes); 0 keeps gRPC's default");
ABSL_FLAG(int, max_frame_bytes, 0,
          "client HTTP/2 max frame size to advertise (grpc.http2.max_frame_size); 0 = default");
ABSL_FLAG(int, warmup, 50, "unmeasured requests per client before measuring");

namespace {

using Clock = std::chrono::steady_clock;

struct LevelResult {
  std::string system;
  int clients = 0;
  std::vector<double> latencies_ms;
  double wall_seconds = 0;
  int64_t errors = 0;
  int64_t rows = 0;
};

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

// Internal ids of --seed_pool, resolved once in main; empty = draw from every entity.
std::vector<uint32_t>& SeedPool() {
  static auto* const pool = new std::vector<uint32_t>();
  return *pool;
}

// One query = `seeds` entity ids drawn uniformly from the seed pool, else from [0, num_entities).
std::vector<uint32_t> DrawSeeds(std::mt19937_64& rng, uint32_t num_entities, int n) {
  const std::vector<uint32_t>& pool = SeedPool();
  std::uniform_int_distribution<uint32_t> dist(
      0, pool.empty() ? num_entities - 1 : static_cast<uint32_t>(pool.size() - 1));
  std::vector<uint32_t> s(n);
  for (auto& x : s) x = pool.empty() ? dist(rng) : pool[dist(rng)];
  return s;
}

// Runs `clients` threads each calling `query(thread_index, seeds) -> rows (or -1 on error)`.
template <typename QueryFn, typename SetupFn>
LevelResult RunLevel(const std::string& system, int clients, uint32_t num_entities, SetupFn setup,
                     QueryFn query) {
  LevelResult result{system, clients};
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const int64_t cap = absl::GetFlag(FLAGS_max_requests);
  std::atomic<int64_t> issued{0};
  std::vector<std::vector<double>> per_thread(clients);
  std::vector<int64_t> errors(clients, 0), rows(clients, 0);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point start;
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      auto state = setup(t);
      std::mt19937_64 rng(absl::GetFlag(FLAGS_seed) * 1000003 + t);
      for (int i = 0; i < absl::GetFlag(FLAGS_warmup); ++i) {
        query(state, DrawSeeds(rng, num_entities, absl::GetFlag(FLAGS_seeds)));
      }
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      const auto deadline = start + std::chrono::duration<double>(seconds);
      while (Clock::now() < deadline && issued.fetch_add(1) < cap) {
        auto seeds = DrawSeeds(rng, num_entities, absl::GetFlag(FLAGS_seeds));
        const auto t0 = Clock::now();
        const int64_t n = query(state, seeds);
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (n < 0) {
          ++errors[t];
        } else {
          rows[t] += n;
          per_thread[t].push_back(ms);
        }
      }
    });
  }
  while (ready.load() < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  start = Clock::now();
  go.store(true);
  for (auto& th : threads) th.join();
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int t = 0; t < clients; ++t) {
    result.latencies_ms.insert(result.latencies_ms.end(), per_thread[t].begin(),
                               per_thread[t].end());
    result.errors += errors[t];
    result.rows += rows[t];
  }
  return result;
}

void Print(LevelResult r) {
  const size_t n = r.latencies_ms.size();
  const double p50 = Percentile(r.latencies_ms, 0.50);
  const double p90 = Percentile(r.latencies_ms, 0.90);
  const double p99 = Percentile(r.latencies_ms, 0.99);
  std::printf("| %-10s | %7d | %8zu | %8.3f | %8.3f | %8.3f | %9.0f | %9.0f | %6lld |\n",
              r.system.c_str(), r.clients, n, p50, p90, p99, n / r.wall_seconds,
              n ? static_cast<double>(r.rows) / n : 0.0, static_cast<long long>(r.errors));
  std::fflush(stdout);
}

// What an ops team would write: hop 1 = edges touching a seed, hop 2 = edges touching a hop-1
// neighbour, UNION ALL with LIMIT so PostgreSQL streams index nested loops and stops at the cap
// (no global dedup, no ordering: PostgreSQL's cap is "the first rows found").
constexpr char kPgQuery[] =
    "WITH h1 AS ("
    "  SELECT head, rel, tail, tail AS other FROM triples WHERE head = ANY($1::int[]) "
    "  UNION ALL SELECT head, rel, tail, head AS other FROM triples WHERE tail = ANY($1::int[])) "
    "SELECT head, rel, tail FROM h1 "
    "UNION ALL SELECT t.head, t.rel, t.tail FROM h1 JOIN triples t ON t.head = h1.other "
    "UNION ALL SELECT t.head, t.rel, t.tail FROM h1 JOIN triples t ON t.tail = h1.other "
    "LIMIT $2";

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  auto channel_args = grpc::ChannelArguments();
  channel_args.SetMaxReceiveMessageSize(64 << 20);
  if (absl::GetFlag(FLAGS_max_frame_bytes) > 0) {
    channel_args.SetInt("grpc.http2.max_frame_size", absl::GetFlag(FLAGS_max_frame_bytes));
  }
  if (absl::GetFlag(FLAGS_lookahead_bytes) > 0) {
    channel_args.SetInt("grpc.http2.lookahead_bytes", absl::GetFlag(FLAGS_lookahead_bytes));
  }
  // One channel per client thread: separate HTTP/2 connections, as separate callers would have.
  auto make_stub = [&](int) {
    return ibgraphrag::v1::KgStoreService::NewStub(grpc::CreateCustomChannel(
        absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials(), channel_args));
  };
  auto stub = make_stub(0);
  ibgraphrag::v1::StatsResponse stats;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub->Stats(&ctx, ibgraphrag::v1::StatsRequest(), &stats);
    if (!s.ok()) {
      std::fprintf(stderr, "Stats failed: %s\n", s.error_message().c_str());
      return 1;
    }
  }
  const auto num_entities = static_cast<uint32_t>(stats.entities());
  if (!absl::GetFlag(FLAGS_seed_pool).empty()) {
    ibgraphrag::v1::GetEntitiesRequest req;
    for (absl::string_view id : absl::StrSplit(absl::GetFlag(FLAGS_seed_pool), ',')) {
      req.add_external_ids(std::string(id));
    }
    ibgraphrag::v1::GetEntitiesResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s = stub->GetEntities(&ctx, req, &resp);
    if (!s.ok()) {
      std::fprintf(stderr, "--seed_pool: %s\n", s.error_message().c_str());
      return 1;
    }
    for (const auto& e : resp.entities()) SeedPool().push_back(e.id());
    std::printf("# seeds drawn from %zu pool entities\n", SeedPool().size());
  }
  std::printf("# kgstore %s: %llu entities, %llu triples; %d seeds, %d hops, cap %d triples\n",
              absl::GetFlag(FLAGS_target).c_str(),
              static_cast<unsigned long long>(stats.entities()),
              static_cast<unsigned long long>(stats.triples()), absl::GetFlag(FLAGS_seeds),
              absl::GetFlag(FLAGS_hops), absl::GetFlag(FLAGS_max_triples));
  std::printf(
      "| system     | clients | requests | p50 (ms) | p90 (ms) | p99 (ms) | req/s     | "
      "rows/req  | errors |\n|---|---|---|---|---|---|---|---|---|\n");

  std::vector<int> levels;
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_clients), ',')) {
    int c;
    if (absl::SimpleAtoi(part, &c) && c > 0) levels.push_back(c);
  }
  for (int clients : levels) {
    Print(RunLevel("kgstore", clients, num_entities, make_stub,
                   [](std::unique_ptr<ibgraphrag::v1::KgStoreService::Stub>& s,
                      const std::vector<uint32_t>& seeds) -> int64_t {
                     ibgraphrag::v1::ExtractSubgraphRequest req;
                     for (uint32_t id : seeds) req.add_seed_ids(id);
                     req.set_max_hops(absl::GetFlag(FLAGS_hops));
                     req.set_max_triples(absl::GetFlag(FLAGS_max_triples));
                     req.set_max_fanout_per_node(absl::GetFlag(FLAGS_max_fanout));
                     req.set_entity_detail(ibgraphrag::v1::ENTITY_DETAIL_IDS);
                     ibgraphrag::v1::ExtractSubgraphResponse resp;
                     grpc::ClientContext ctx;
                     ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
                     if (!s->ExtractSubgraph(&ctx, req, &resp).ok()) return -1;
                     return resp.triples().head_size();
                   }));
    if (absl::GetFlag(FLAGS_postgres).empty()) continue;
    Print(RunLevel(
        "postgresql", clients, num_entities,
        [](int) {
          PGconn* conn = PQconnectdb(absl::GetFlag(FLAGS_postgres).c_str());
          if (PQstatus(conn) != CONNECTION_OK) {
            std::fprintf(stderr, "postgres: %s", PQerrorMessage(conn));
            std::exit(1);
          }
          PQclear(PQprepare(conn, "subgraph", kPgQuery, 2, nullptr));
          return std::unique_ptr<PGconn, void (*)(PGconn*)>(conn, PQfinish);
        },
        [](std::unique_ptr<PGconn, void (*)(PGconn*)>& conn,
           const std::vector<uint32_t>& seeds) -> int64_t {
          const std::string array = absl::StrCat("{", absl::StrJoin(seeds, ","), "}");
          const std::string limit = absl::StrCat(absl::GetFlag(FLAGS_max_triples));
          const char* params[2] = {array.c_str(), limit.c_str()};
          PGresult* res = PQexecPrepared(conn.get(), "subgraph", 2, params, nullptr, nullptr, 0);
          int64_t rows = PQresultStatus(res) == PGRES_TUPLES_OK ? PQntuples(res) : -1;
          PQclear(res);
          return rows;
        }));
  }
  return 0;
}
