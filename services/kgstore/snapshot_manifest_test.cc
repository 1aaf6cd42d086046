#include "services/kgstore/snapshot_manifest.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store_test_util.h"

namespace ibgraphrag::kgstore {
namespace {

namespace fs = std::filesystem;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;

void MakeVersionDir(const std::string& base, const std::string& name, bool with_manifest) {
  const fs::path dir = fs::path(base) / "kg" / name;
  fs::create_directories(dir);
  if (with_manifest) std::ofstream(dir / "manifest.json") << "{}";
}

TEST(SnapshotManifestTest, JsonRoundTripKeepsEveryField) {
  SnapshotManifestInfo info;
  info.version = 7;
  info.created_unix_seconds = 1700000000;
  info.created_by = "test";
  const SnapshotManifest m = BuildSnapshotManifest(testing::SmallKg(), info);
  EXPECT_EQ(m.created_time, "2023-11-14T22:13:20Z");
  auto parsed = SnapshotManifestFromJson(SnapshotManifestToJson(m));
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->version, 7);
  EXPECT_EQ(parsed->format_version, kSnapshotFormatVersion);
  EXPECT_EQ(parsed->created_unix_seconds, 1700000000);
  EXPECT_EQ(parsed->created_time, m.created_time);
  EXPECT_EQ(parsed->created_by, "test");
  ASSERT_EQ(parsed->sources.size(), 1u);
  EXPECT_EQ(parsed->sources[0].path, "/data/kg/hetionet-v1.0-edges.sif.gz");
  EXPECT_EQ(parsed->sources[0].sha256, "ab12cd34");
  EXPECT_EQ(parsed->sources[0].rows_read, 12);
  EXPECT_EQ(parsed->sources[0].rows_skipped, 1);
  EXPECT_EQ(parsed->sources[0].unmapped_ids, 2);
  EXPECT_TRUE(parsed->sources[0].errors.empty());
  EXPECT_THAT(parsed->source_names, ElementsAre("hetionet", "doid"));
  EXPECT_EQ(parsed->counts.entities, 9);
  EXPECT_EQ(parsed->counts.triples, 10);
  EXPECT_EQ(parsed->counts.entities_by_type.at("disease"), 3);
  EXPECT_EQ(parsed->counts.triples_by_relation.at("associates"), 3);
}

// Manifests written before the proto schema (hand-mapped JSON: numbers, not strings, for 64-bit
// fields) still open.
TEST(SnapshotManifestTest, ReadsManifestsWrittenBeforeTheProtoSchema) {
  auto parsed = SnapshotManifestFromJson(R"({
    "format_version": 2, "version": 3, "created_unix_seconds": 1700000000,
    "created_time": "2023-11-14T22:13:20Z", "created_by": "ibgr kg build",
    "sources": [{"source": "doid", "path": "/d/doid.obo", "sha256": "ff", "rows_read": 5,
                 "triples_added": 4, "rows_skipped": 1, "unmapped_ids": 0}],
    "source_names": ["doid"],
    "counts": {"entities": 9, "relations": 2, "triples": 10,
               "entities_by_type": {"disease": 3}, "triples_by_relation": {"isa": 4}}})");
  ASSERT_OK(parsed);
  EXPECT_EQ(parsed->version, 3);
  EXPECT_EQ(parsed->sources[0].rows_read, 5);
  EXPECT_EQ(parsed->counts.triples_by_relation.at("isa"), 4);
  // Written back through the schema, it reads the same.
  auto again = SnapshotManifestFromJson(SnapshotManifestToJson(*parsed));
  ASSERT_OK(again);
  EXPECT_EQ(again->counts.entities_by_type.at("disease"), 3);
  EXPECT_THAT(SnapshotManifestFromJson("{}"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(SnapshotManifestTest, MalformedJsonIsDataLossNotACrash) {
  EXPECT_THAT(SnapshotManifestFromJson("not json"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(SnapshotManifestFromJson("{\"version\": \"x\"}"),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(SnapshotManifestFromJson("[]"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(SnapshotManifestTest, ListsOnlyCompleteNumericVersionsInNumericOrder) {
  ScratchDir tmp;
  MakeVersionDir(tmp.path(), "2", true);
  MakeVersionDir(tmp.path(), "10", true);
  MakeVersionDir(tmp.path(), "9", true);
  MakeVersionDir(tmp.path(), "11", false);          // no manifest: incomplete
  MakeVersionDir(tmp.path(), "12.tmp-1-2", false);  // build in progress
  MakeVersionDir(tmp.path(), "latest", true);       // not a number
  MakeVersionDir(tmp.path(), "007", true);          // leading zero: not a canonical version
  auto versions = ListSnapshotVersions(tmp.path());
  ASSERT_OK(versions);
  EXPECT_THAT(*versions, ElementsAre(2, 9, 10));
}

TEST(SnapshotManifestTest, ResolvePicksNewestOrPinnedVersion) {
  ScratchDir tmp;
  MakeVersionDir(tmp.path(), "2", true);
  MakeVersionDir(tmp.path(), "10", true);
  MakeVersionDir(tmp.path(), "9", true);
  auto newest = ResolveSnapshotDir(tmp.path(), std::nullopt);
  ASSERT_OK(newest);
  EXPECT_EQ(*newest, tmp.path() + "/kg/10");
  auto pinned = ResolveSnapshotDir(tmp.path(), 9);
  ASSERT_OK(pinned);
  EXPECT_EQ(*pinned, tmp.path() + "/kg/9");
  auto missing = ResolveSnapshotDir(tmp.path(), 3);
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound, HasSubstr("version 3")));
}

TEST(SnapshotManifestTest, ResolveWithoutSnapshotsIsNotFound) {
  ScratchDir tmp;
  EXPECT_THAT(ResolveSnapshotDir(tmp.path(), std::nullopt), StatusIs(absl::StatusCode::kNotFound));
}

TEST(SnapshotManifestTest, NextVersionSkipsBuildsInProgress) {
  ScratchDir tmp;
  auto first = NextSnapshotVersion(tmp.path());
  ASSERT_OK(first);
  EXPECT_EQ(*first, 1);
  MakeVersionDir(tmp.path(), "4", true);
  EXPECT_EQ(*NextSnapshotVersion(tmp.path()), 5);
  MakeVersionDir(tmp.path(), "5.tmp-123-456", false);
  EXPECT_EQ(*NextSnapshotVersion(tmp.path()), 6);
}

}  // namespace
}  // namespace ibgraphrag::kgstore
