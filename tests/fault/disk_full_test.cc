// Disk full during `ibgr kg build`: the build runs with a file-size limit (RLIMIT_FSIZE, with
// SIGXFSZ ignored so writes fail with EFBIG as on a full disk, no root or tmpfs needed) and must
// fail with a clear error, leave no new version directory behind, and leave the previous
// snapshot opening with the same counts.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

namespace fs = std::filesystem;
using ::ibgraphrag::common::test_util::MakeTempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A chain of `n` gene-gene triples with external ids: a few MB of snapshot.
std::string WriteChainTsv(const std::string& dir, int n) {
  const std::string path = dir + "/chain.tsv";
  std::ofstream out(path);
  for (int i = 0; i < n; ++i) out << "G:" << i << "\tgene interacts with gene\tG:" << i + 1 << "\n";
  return path;
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
  ASSERT_TRUE(rc.ok()) << rc.status();
  ASSERT_EQ(*rc, 0) << "see " << dir << "/build1.log";
  kgstore::KgStoreOptions options;
  options.snapshot_dir = kgstore::SnapshotDir(dir + "/art", 1);
  options.read_only = true;
  int64_t triples_before = 0;
  {
    auto store = kgstore::KgStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    triples_before = (*store)->counts().triples;
  }
  ASSERT_EQ(triples_before, 50000);

  // The same build again, with files capped at 256 KiB: the SST writer hits EFBIG.
  std::string command = "trap '' XFSZ; ulimit -f 512; exec";
  for (const std::string& arg : build) absl::StrAppend(&command, " '", arg, "'");
  rc = RunToCompletion({"/bin/sh", "-c", command}, dir + "/build2.log", absl::Seconds(60));
  ASSERT_TRUE(rc.ok()) << rc.status();
  EXPECT_NE(*rc, 0);
  absl::StatusOr<std::string> read = common::ReadFileToString(dir + "/build2.log");
  ASSERT_TRUE(read.ok()) << read.status();
  const std::string& log = *read;
  EXPECT_THAT(log, HasSubstr("File too large"));
  EXPECT_THAT(log, HasSubstr("kg/2"));  // the error names the version being written
  std::printf("[disk full] ibgr kg build -> exit %d: %s\n", *rc,
              log.substr(log.rfind("error")).c_str());

  // No version 2, not even a staging directory, and version 1 opens with the same counts.
  EXPECT_THAT(Versions(dir + "/art/kg"), ElementsAre("1"));
  auto store = kgstore::KgStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->counts().triples, triples_before);
}

}  // namespace
}  // namespace ibgraphrag::testing
