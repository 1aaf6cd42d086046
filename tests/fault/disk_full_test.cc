// Disk full during `ibgr kg build` and during Ingest. The process runs with a file-size limit
// (RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail with EFBIG as on a full disk, no root or
// tmpfs needed).
// - kg build must fail with a clear error, leave no new version directory behind, and leave the
//   previous snapshot opening with the same counts.
// - A kgstore server whose ingest write hits the limit must answer RESOURCE_EXHAUSTED naming the
//   batch, keep serving reads, and after a restart show none of the failed batch (all or nothing)
//   and accept the same batch id again.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "tests/test_util/kgstore_client.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

namespace fs = std::filesystem;
using ::ibgraphrag::common::test_util::MakeTempDir;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace pb = ::ibgraphrag::v1;

// A chain of `n` gene-gene triples with external ids: a few MB of snapshot.
std::string WriteChainTsv(const std::string& dir, int n) {
  const std::string path = dir + "/chain.tsv";
  std::ofstream out(path);
  for (int i = 0; i < n; ++i) out << "G:" << i << "\tgene interacts with gene\tG:" << i + 1 << "\n";
  return path;
}

// Runs `argv` under a file-size limit of `kib` KiB with SIGXFSZ ignored (EFBIG, as on a full disk).
std::vector<std::string> UnderFileSizeLimit(const std::vector<std::string>& argv, int kib) {
  // dash's ulimit -f counts 512-byte blocks.
  std::string command = absl::StrCat("trap '' XFSZ; ulimit -f ", kib * 2, "; exec");
  for (const std::string& arg : argv) absl::StrAppend(&command, " '", arg, "'");
  return {"/bin/sh", "-c", command};
}

std::vector<std::string> Versions(const std::string& kg_dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kg_dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(DiskFullTest, KgBuildFailsCleanlyAndKeepsThePreviousSnapshot) {
  const std::string dir = MakeTempDir("disk-full");
  const std::string tsv = WriteChainTsv(dir, 50000);
  const std::vector<std::string> build = {
      BinDir() + "/ibgr",       "kg",           "build",
      "--base=" + dir + "/art", "--tsv=" + tsv, "--tsv_internal_ids=false"};
  absl::StatusOr<int> rc = RunToCompletion(build, dir + "/build1.log", absl::Seconds(60));
  ASSERT_OK(rc);
  ASSERT_EQ(*rc, 0) << "see " << dir << "/build1.log";
  kgstore::KgStoreOptions options;
  options.snapshot_dir = kgstore::SnapshotDir(dir + "/art", 1);
  options.read_only = true;
  int64_t triples_before = 0;
  {
    auto store = kgstore::KgStore::Open(options);
    ASSERT_OK(store);
    triples_before = (*store)->counts().triples;
  }
  ASSERT_EQ(triples_before, 50000);

  // The same build again, with files capped at 256 KiB: the SST writer hits EFBIG.
  rc = RunToCompletion(UnderFileSizeLimit(build, 256), dir + "/build2.log", absl::Seconds(60));
  ASSERT_OK(rc);
  EXPECT_NE(*rc, 0);
  absl::StatusOr<std::string> read = common::ReadFileToString(dir + "/build2.log");
  ASSERT_OK(read);
  const std::string& log = *read;
  EXPECT_THAT(log, HasSubstr("File too large"));
  EXPECT_THAT(log, HasSubstr("kg/2"));  // the error names the version being written
  std::printf("[disk full] ibgr kg build -> exit %d: %s\n", *rc,
              log.substr(log.rfind("error")).c_str());

  // No version 2, not even a staging directory, and version 1 opens with the same counts.
  EXPECT_THAT(Versions(dir + "/art/kg"), ElementsAre("1"));
  auto store = kgstore::KgStore::Open(options);
  ASSERT_OK(store);
  EXPECT_EQ((*store)->counts().triples, triples_before);
}

// One ingest batch of `n` new triples with long notes: about n * 300 bytes of write-ahead log.
pb::IngestRequest BigBatch(const std::string& id, int n) {
  pb::IngestRequest batch;
  batch.set_batch_id(id);
  for (int i = 0; i < n; ++i) {
    pb::IngestTriple* t = batch.add_triples();
    t->set_head_external_id(absl::StrCat("G:", i));
    t->set_relation("gene regulates gene");
    t->set_tail_external_id(absl::StrCat("G:", (i + 2) % 2000));
    t->set_source("disk-full-test");
    t->set_note(std::string(200, 'n'));
  }
  return batch;
}

TEST(DiskFullTest, IngestFailsWholeAndTheServerKeepsServing) {
  const std::string dir = MakeTempDir("disk-full-ingest");
  const std::string tsv = WriteChainTsv(dir, 2000);
  absl::StatusOr<int> rc =
      RunToCompletion({BinDir() + "/ibgr", "kg", "build", "--base=" + dir + "/art", "--tsv=" + tsv,
                       "--tsv_internal_ids=false"},
                      dir + "/build.log", absl::Seconds(60));
  ASSERT_OK(rc);
  ASSERT_EQ(*rc, 0) << "see " << dir << "/build.log";
  const std::vector<std::string> serve = {BinDir() + "/kgstore", "--base=" + dir + "/art",
                                          "--host=127.0.0.1", "--port=0", "--metrics_port=-1"};
  {
    // Files capped at 256 KiB: opening works, the ~600 KiB batch's write-ahead log entry does not.
    auto server = Subprocess::Start(UnderFileSizeLimit(serve, 256), dir + "/kgstore-limited.log");
    ASSERT_OK(server);
    auto port = server->WaitForReadyPort("kgstore", absl::Seconds(60));
    ASSERT_OK(port);
    auto stub = KgStub(*port);
    ASSERT_EQ(OutDegree(stub.get(), "G:5"), 1);

    pb::IngestResponse response;
    grpc::Status s = IngestOne(stub.get(), BigBatch("big-1", 2000), &response);
    EXPECT_THAT(s, StatusIs(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            AllOf(HasSubstr("big-1"), HasSubstr("File too large"))));
    std::printf("[disk full] Ingest -> %d: %s\n", static_cast<int>(s.error_code()),
                s.error_message().c_str());
    // Still serving reads, and nothing of the failed batch is visible.
    EXPECT_TRUE(server->Running());
    EXPECT_EQ(OutDegree(stub.get(), "G:5"), 1);
    ASSERT_OK(server->Stop(SIGTERM, absl::Seconds(20)));
  }
  // Restarted without the limit: the batch is absent as a whole and can be applied now.
  auto server = Subprocess::Start(serve, dir + "/kgstore.log");
  ASSERT_OK(server);
  auto port = server->WaitForReadyPort("kgstore", absl::Seconds(60));
  ASSERT_OK(port);
  auto stub = KgStub(*port);
  EXPECT_EQ(OutDegree(stub.get(), "G:5"), 1);
  EXPECT_EQ(OutDegree(stub.get(), "G:1999"), 1);
  pb::IngestResponse response;
  grpc::Status s = IngestOne(stub.get(), BigBatch("big-1", 2000), &response);
  ASSERT_OK(s);
  EXPECT_EQ(response.batches_applied(), 1u);
  EXPECT_EQ(response.batches_already_applied(), 0u);
  EXPECT_EQ(response.triples_added(), 2000u);
  EXPECT_EQ(OutDegree(stub.get(), "G:5"), 2);
}

}  // namespace
}  // namespace ibgraphrag::testing
