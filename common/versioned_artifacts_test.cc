#include "common/versioned_artifacts.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/servable_holder.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

namespace fs = std::filesystem;
using ::ibgraphrag::common::test_util::StatusIs;
using test_util::ScratchDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

VersionedArtifactDir Models(const std::string& base) {
  return VersionedArtifactDir({base, "model", "test model", "(train one)"});
}

// Publishes version `v` holding manifest.json with `content`.
void PublishVersion(const VersionedArtifactDir& dir, int64_t v, const std::string& content) {
  absl::StatusOr<ArtifactStaging> staging = ArtifactStaging::CreateVersion(dir, v);
  ASSERT_OK(staging);
  ASSERT_OK(WriteStringToFileAtomic(staging->dir() + "/manifest.json", content));
  ASSERT_OK(staging->Publish());
}

TEST(ParseArtifactVersionTest, AcceptsOnlyPositiveDecimalNames) {
  EXPECT_EQ(ParseArtifactVersion("12"), 12);
  EXPECT_EQ(ParseArtifactVersion("0"), std::nullopt);
  EXPECT_EQ(ParseArtifactVersion("012"), std::nullopt);
  EXPECT_EQ(ParseArtifactVersion("-3"), std::nullopt);
  EXPECT_EQ(ParseArtifactVersion("3.tmp-1"), std::nullopt);
  EXPECT_EQ(ParseArtifactVersion("99999999999999999999"), std::nullopt);
}

TEST(VersionedArtifactDirTest, ListsCompleteVersionsNumerically) {
  ScratchDir tmp("artifacts");
  const VersionedArtifactDir dir = Models(tmp.path());
  EXPECT_TRUE(dir.ListVersions()->empty());  // no root yet
  PublishVersion(dir, 9, "{}");
  PublishVersion(dir, 10, "{}");
  fs::create_directories(dir.root() + "/11");          // no manifest: incomplete
  fs::create_directories(dir.root() + "/12.tmp-1-2");  // a build in progress
  EXPECT_THAT(*dir.ListVersions(), ElementsAre(9, 10));
  EXPECT_EQ(*dir.Resolve(std::nullopt), dir.root() + "/10");
  EXPECT_EQ(*dir.Resolve(9), dir.root() + "/9");
  EXPECT_EQ(*dir.NextVersion(), 13);  // counts the staging directory
}

TEST(VersionedArtifactDirTest, ResolveErrorsNameTheVersionAndTheHint) {
  ScratchDir tmp("artifacts");
  const VersionedArtifactDir dir = Models(tmp.path());
  absl::StatusOr<std::string> none = dir.Resolve(std::nullopt);
  EXPECT_THAT(
      none, StatusIs(absl::StatusCode::kNotFound,
                     ::testing::AllOf(HasSubstr("no test model under"), HasSubstr("(train one)"))));
  PublishVersion(dir, 2, "{}");
  absl::StatusOr<std::string> pinned = dir.Resolve(5);
  EXPECT_THAT(pinned, StatusIs(absl::StatusCode::kNotFound,
                               ::testing::AllOf(HasSubstr("version 5 not found"),
                                                HasSubstr("present: 2"))));
}

TEST(ArtifactStagingTest, UnpublishedStagingIsRemoved) {
  ScratchDir tmp("artifacts");
  const VersionedArtifactDir dir = Models(tmp.path());
  std::string staging_dir;
  {
    absl::StatusOr<ArtifactStaging> staging = ArtifactStaging::CreateVersion(dir);
    ASSERT_OK(staging);
    EXPECT_EQ(staging->version(), 1);
    staging_dir = staging->dir();
    ASSERT_OK(WriteStringToFileAtomic(staging_dir + "/manifest.json", "{}"));
  }
  EXPECT_FALSE(fs::exists(staging_dir));
  EXPECT_TRUE(dir.ListVersions()->empty());
}

TEST(ArtifactStagingTest, PublishNeverReplacesAVersionThatAppeared) {
  ScratchDir tmp("artifacts");
  const VersionedArtifactDir dir = Models(tmp.path());
  absl::StatusOr<ArtifactStaging> first = ArtifactStaging::CreateVersion(dir, 1);
  absl::StatusOr<ArtifactStaging> second = ArtifactStaging::Create(dir.VersionDir(1));
  ASSERT_OK(first);
  ASSERT_OK(second);
  ASSERT_OK(WriteStringToFileAtomic(first->dir() + "/manifest.json", "first"));
  ASSERT_OK(WriteStringToFileAtomic(second->dir() + "/manifest.json", "second"));
  ASSERT_OK(first->Publish());
  const absl::Status lost = second->Publish();
  EXPECT_THAT(lost, StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(*ReadFileToString(dir.VersionDir(1) + "/manifest.json"), "first");
  EXPECT_THAT(ArtifactStaging::Create(dir.VersionDir(1)),
              StatusIs(absl::StatusCode::kAlreadyExists));
}

TEST(VersionedArtifactDirTest, RetainKeepsNewestAndTheServedVersion) {
  ScratchDir tmp("artifacts");
  const VersionedArtifactDir dir = Models(tmp.path());
  for (int v = 1; v <= 5; ++v) PublishVersion(dir, v, "{}");
  absl::StatusOr<std::vector<int64_t>> removed = dir.Retain(2, /*keep_version=*/2);
  ASSERT_OK(removed);
  EXPECT_THAT(*removed, ElementsAre(1, 3));
  EXPECT_THAT(*dir.ListVersions(), ElementsAre(2, 4, 5));
  EXPECT_THAT(dir.Retain(0, std::nullopt), StatusIs(absl::StatusCode::kInvalidArgument));
}

struct Counted {
  explicit Counted(int v, std::atomic<int>* destroyed) : value(v), destroyed(destroyed) {}
  ~Counted() { destroyed->fetch_add(1); }
  int value;
  std::atomic<int>* destroyed;
};

TEST(ServableHolderTest, RetiredVersionIsReleasedOnlyByReleaseRetired) {
  std::atomic<int> destroyed{0};
  ServableHolder<const Counted> holder;
  EXPECT_EQ(holder.Get(), nullptr);
  holder.Swap(std::make_shared<const Counted>(1, &destroyed), 1);
  std::shared_ptr<const Counted> in_flight = holder.Get();
  holder.Swap(std::make_shared<const Counted>(2, &destroyed), 2);
  EXPECT_EQ(holder.Get()->value, 2);
  EXPECT_EQ(holder.version(), 2);
  EXPECT_EQ(in_flight->value, 1);  // a request keeps the version it started with
  EXPECT_EQ(holder.ReleaseRetired(), 1u);
  in_flight.reset();  // the request ends: the old version is NOT destroyed on its thread
  EXPECT_EQ(destroyed.load(), 0);
  EXPECT_EQ(holder.ReleaseRetired(), 0u);
  EXPECT_EQ(destroyed.load(), 1);
}

TEST(ServableManagerTest, WatcherSwapsToNewVersionsAndSkipsBrokenOnes) {
  ScratchDir tmp("artifacts");
  const VersionedArtifactDir dir = Models(tmp.path());
  PublishVersion(dir, 1, "1");
  ServableManager<const int>::Options options;
  options.artifacts = dir.options();
  options.watch_interval = absl::Milliseconds(10);
  options.log_name = "test";
  ServableManager<const int> manager(
      options, [](const std::string& path, int64_t) -> absl::StatusOr<std::shared_ptr<const int>> {
        absl::StatusOr<std::string> text = ReadFileToString(path + "/manifest.json");
        if (!text.ok()) return text.status();
        int v = 0;
        if (!absl::SimpleAtoi(*text, &v)) return absl::DataLossError("bad manifest");
        return std::make_shared<const int>(v);
      });
  ASSERT_TRUE(*manager.ReloadIfNewer());
  EXPECT_FALSE(*manager.ReloadIfNewer());  // same version: no reload
  manager.StartWatching();
  PublishVersion(dir, 2, "not a number");  // broken: keeps serving 1
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(*manager.Get(), 1);
  EXPECT_THAT(manager.load_status(), StatusIs(absl::StatusCode::kDataLoss));
  PublishVersion(dir, 3, "3");
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (manager.version() != 3 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_EQ(*manager.Get(), 3);
  EXPECT_OK(manager.load_status());
}

TEST(FileDigestsTest, ChecksExactlyTheListedFiles) {
  ScratchDir dir;
  ASSERT_OK(WriteStringToFileAtomic(dir.path() + "/a.bin", "alpha"));
  ASSERT_OK(WriteStringToFileAtomic(dir.path() + "/b.tsv", "beta\n"));
  const std::vector<std::string> files = {"a.bin", "b.tsv"};
  auto digests = FileDigests(dir.path(), files);
  ASSERT_OK(digests);
  EXPECT_EQ(digests->at("a.bin"), Sha256Hex("alpha"));
  EXPECT_OK(CheckFileDigests(dir.path(), files, *digests));

  // A changed byte names the file.
  ASSERT_OK(WriteStringToFileAtomic(dir.path() + "/b.tsv", "betA\n"));
  EXPECT_THAT(CheckFileDigests(dir.path(), files, *digests),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("/b.tsv: SHA-256")));
  ASSERT_OK(WriteStringToFileAtomic(dir.path() + "/b.tsv", "beta\n"));
  // A dropped entry would skip a check; an extra one names a path the loader must not open.
  std::map<std::string, std::string> partial = *digests;
  partial.erase("b.tsv");
  EXPECT_THAT(CheckFileDigests(dir.path(), files, partial),
              StatusIs(absl::StatusCode::kDataLoss,
                       ::testing::HasSubstr("file_sha256 has no entry for b.tsv")));
  std::map<std::string, std::string> extra = *digests;
  extra["../../etc/passwd"] = "00";
  EXPECT_THAT(CheckFileDigests(dir.path(), files, extra),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr("'../../etc/passwd'")));
  // A missing file is NOT_FOUND naming it.
  fs::remove(dir.path() + "/a.bin");
  EXPECT_THAT(CheckFileDigests(dir.path(), files, *digests),
              StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("/a.bin: missing")));
}

}  // namespace
}  // namespace ibgraphrag::common
