// Crash safety of Ingest: kill -9 the real kgstore binary while a client streams batches, restart
// it, and check that every acknowledged batch is fully there and no batch is half-visible.
#include <signal.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gtest/gtest.h"
#include "tests/test_util/kgstore_client.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

using ::ibgraphrag::common::test_util::MakeTempDir;

namespace pb = ::ibgraphrag::v1;

constexpr int kTriplesPerBatch = 300;

// Batch i: a hub entity with kTriplesPerBatch edges to entities of its own.
pb::IngestRequest MakeBatch(int i) {
  pb::IngestRequest batch;
  batch.set_batch_id(absl::StrCat("crash-batch-", i));
  auto add_entity = [&](const std::string& id) {
    pb::Entity* e = batch.add_entities();
    e->set_external_id(id);
    e->set_type("gene");
    e->set_name(id);
  };
  const std::string hub = absl::StrCat("CRASH:b", i, "-hub");
  add_entity(hub);
  for (int j = 0; j < kTriplesPerBatch; ++j) {
    const std::string leaf = absl::StrCat("CRASH:b", i, "-e", j);
    add_entity(leaf);
    pb::IngestTriple* t = batch.add_triples();
    t->set_head_external_id(hub);
    t->set_relation("gene interacts with gene");
    t->set_tail_external_id(leaf);
    t->set_source("crash-test");
  }
  return batch;
}

// How many of batch i's triples the server has: -1 when its hub entity does not exist.
int64_t TriplesOfBatch(pb::KgStoreService::Stub* stub, int i) {
  return OutDegree(stub, absl::StrCat("CRASH:b", i, "-hub"));
}

class KgStoreCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("kgstore-crash");
    // A small seed graph in generic TSV form.
    std::ofstream tsv(dir_ + "/seed.tsv");
    tsv << "head\trelation\ttail\n";
    for (int i = 0; i < 50; ++i) {
      tsv << "SEED:" << i << "\tgene interacts with gene\tSEED:" << (i + 1) << "\n";
    }
    tsv.close();
    auto rc = RunToCompletion({BinDir() + "/ibgr", "kg", "build", "--base=" + dir_ + "/art",
                               "--tsv=" + dir_ + "/seed.tsv"},
                              dir_ + "/build.log", absl::Seconds(60));
    ASSERT_TRUE(rc.ok() && *rc == 0) << "ibgr kg build failed; see " << dir_ << "/build.log";
  }

  absl::StatusOr<Subprocess> StartServer(int round) {
    return Subprocess::Start({BinDir() + "/kgstore", "--base=" + dir_ + "/art", "--host=127.0.0.1",
                              "--port=0", "--metrics_port=-1"},
                             absl::StrCat(dir_, "/kgstore-", round, ".log"));
  }

  std::string dir_;
};

TEST_F(KgStoreCrashTest, KillDuringIngestLosesNoAcknowledgedBatchAndExposesNoPartialOne) {
  std::mt19937 rng(7);
  int next_batch = 0;
  std::vector<int> acknowledged;  // batch indices whose Ingest call returned OK
  for (int round = 0; round < 3; ++round) {
    auto server = StartServer(round);
    ASSERT_OK(server);
    auto port = server->WaitForReadyPort("kgstore", absl::Seconds(60));
    ASSERT_OK(port);
    auto stub = KgStub(*port);

    // After a restart: every acknowledged batch is complete; anything else is all or nothing.
    for (int i = 0; i < next_batch; ++i) {
      const int64_t n = TriplesOfBatch(stub.get(), i);
      const bool acked =
          std::find(acknowledged.begin(), acknowledged.end(), i) != acknowledged.end();
      if (acked) {
        EXPECT_EQ(n, kTriplesPerBatch) << "acknowledged batch " << i << " lost after kill -9";
      } else {
        EXPECT_TRUE(n == -1 || n == kTriplesPerBatch) << "batch " << i << " is partial: " << n;
      }
    }

    // Stream batches from a client thread and SIGKILL the server at a random moment.
    std::atomic<bool> stop{false};
    std::thread client([&] {
      while (!stop.load()) {
        const int i = next_batch;
        pb::IngestResponse resp;
        grpc::Status s = IngestOne(stub.get(), MakeBatch(i), &resp, 5);
        if (!s.ok()) break;  // the server died mid-call: batch i is in doubt
        acknowledged.push_back(i);
        next_batch = i + 1;
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + rng() % 400));
    ASSERT_OK(server->Stop(SIGKILL, absl::Seconds(10)));
    stop.store(true);
    client.join();
    ++next_batch;  // the in-doubt batch keeps its index; it is checked as "all or nothing"
  }
  EXPECT_GE(acknowledged.size(), 3u) << "too few batches acknowledged to test anything";

  // Final restart: re-sending acknowledged batches is a no-op (idempotent on batch_id).
  auto server = StartServer(99);
  ASSERT_OK(server);
  auto port = server->WaitForReadyPort("kgstore", absl::Seconds(60));
  ASSERT_OK(port);
  auto stub = KgStub(*port);
  for (int i : acknowledged) {
    EXPECT_EQ(TriplesOfBatch(stub.get(), i), kTriplesPerBatch) << i;
    pb::IngestResponse resp;
    ASSERT_OK(IngestOne(stub.get(), MakeBatch(i), &resp));
    EXPECT_EQ(resp.batches_already_applied(), 1u) << i;
  }
}

}  // namespace
}  // namespace ibgraphrag::testing
