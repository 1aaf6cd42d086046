// KgStore snapshot writing, opening and point accessors.
#include "services/kgstore/kg_store.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "services/kgstore/kg_store_codec.h"
#include "services/kgstore/kg_store_test_util.h"

namespace ibgraphrag::kgstore {
namespace {

namespace fs = std::filesystem;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::SmallKg;
using ::testing::UnorderedElementsAre;
using testing::WriteAndOpen;

std::vector<std::string> DirEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

SnapshotManifestInfo Info(int64_t version) {
  SnapshotManifestInfo info;
  info.version = version;
  info.created_unix_seconds = 1700000000;
  return info;
}

TEST(KgStoreTest, SnapshotRoundTripKeepsEntitiesWithAllFields) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  auto e = store->GetEntity(testing::kDiabetes);
  ASSERT_OK(e);
  EXPECT_EQ(e->id, testing::kDiabetes);
  EXPECT_EQ(e->external_id, "DOID:9352");
  EXPECT_EQ(e->type, "disease");
  EXPECT_EQ(e->name, "type 2 diabetes mellitus");
  EXPECT_THAT(e->synonyms, ElementsAre("T2DM", "adult-onset diabetes"));
  EXPECT_THAT(e->xrefs, ElementsAre("UMLS:C0011860", "MESH:D003924"));
  EXPECT_EQ(e->definition, "A diabetes characterized by insulin resistance.");
  EXPECT_THAT(e->sources, ElementsAre("doid", "hetionet"));
  EXPECT_EQ(store->num_entities(), 9);
}

TEST(KgStoreTest, ResolvesCanonicalIdsAndAliases) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->ResolveExternalId("DOID:9352"), testing::kDiabetes);
  EXPECT_EQ(*store->ResolveExternalId("UMLS:C0011860"), testing::kDiabetes);
  EXPECT_EQ(*store->ResolveExternalId("MESH:D003924"), testing::kDiabetes);
  EXPECT_EQ(*store->ResolveExternalId("Entrez:5468"), testing::kPparg);
  auto many = store->ResolveExternalIds({"DrugBank:DB00331", "UBERON:0001264"});
  ASSERT_OK(many);
  EXPECT_THAT(*many, ElementsAre(testing::kMetformin, testing::kPancreas));
}

TEST(KgStoreTest, UnknownIdsAreNotFoundAndNamed) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  auto missing = store->ResolveExternalId("DOID:404");
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound, HasSubstr("DOID:404")));
  auto some_missing = store->ResolveExternalIds({"DOID:9352", "X:1", "X:2"});
  EXPECT_THAT(some_missing, StatusIs(absl::StatusCode::kNotFound, HasSubstr("'X:1', 'X:2'")));
  EXPECT_THAT(store->ResolveExternalId(""), StatusIs(absl::StatusCode::kInvalidArgument));
  auto entity = store->GetEntity(42);
  EXPECT_THAT(entity, StatusIs(absl::StatusCode::kNotFound, HasSubstr("42")));
  auto entities = store->GetEntities({1, 99, 100});
  EXPECT_THAT(entities, StatusIs(absl::StatusCode::kNotFound, HasSubstr("99, 100")));
  EXPECT_THAT(store->GetRelation(7), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store->FindRelation("cures"), StatusIs(absl::StatusCode::kNotFound));
}

TEST(KgStoreTest, GetEntitiesAndDescribeEntitiesKeepRequestOrder) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  auto entities = store->GetEntities({testing::kPparg, testing::kMetformin});
  ASSERT_OK(entities);
  ASSERT_EQ(entities->size(), 2u);
  EXPECT_EQ((*entities)[0].name, "PPARG");
  EXPECT_EQ((*entities)[1].name, "Metformin");
  auto summaries = store->DescribeEntities({testing::kPancreas, testing::kDiabetes});
  ASSERT_OK(summaries);
  EXPECT_EQ((*summaries)[0].external_id, "UBERON:0001264");
  EXPECT_EQ((*summaries)[0].type, "anatomy");
  EXPECT_EQ((*summaries)[0].name, "pancreas");
  EXPECT_EQ((*summaries)[1].name, "type 2 diabetes mellitus");
}

TEST(KgStoreTest, RelationsSourcesCountsAndManifestRoundTrip) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  auto treats = store->FindRelation("treats");
  ASSERT_OK(treats);
  EXPECT_EQ(treats->id, testing::kTreats);
  EXPECT_EQ(treats->head_type, "compound");
  EXPECT_EQ(treats->description, "the drug is indicated for the disease");
  EXPECT_EQ(store->GetRelation(testing::kResembles)->name, "resembles");
  EXPECT_EQ(store->relations().size(), 7u);
  EXPECT_THAT(testing::SourceNames(*store), ElementsAre("hetionet", "doid"));

  const KgCounts counts = store->counts();
  EXPECT_EQ(counts.entities, 9);
  EXPECT_EQ(counts.relations, 7);
  EXPECT_EQ(counts.triples, 10);
  EXPECT_EQ(counts.entities_by_type.at("gene"), 2);
  EXPECT_EQ(counts.triples_by_relation.at("treats"), 2);

  const SnapshotManifest& m = store->manifest();
  EXPECT_EQ(m.version, 1);
  EXPECT_EQ(m.created_by, "kg_store_test");
  ASSERT_EQ(m.sources.size(), 1u);
  EXPECT_EQ(m.sources[0].sha256, "ab12cd34");
  EXPECT_EQ(m.counts.triples, 10);
  EXPECT_THAT(m.source_names, ElementsAre("hetionet", "doid"));

  // The human-readable copy on disk says the same.
  auto on_disk = ReadSnapshotManifest(SnapshotDir(tmp.path(), 1));
  ASSERT_OK(on_disk);
  EXPECT_EQ(SnapshotManifestToJson(*on_disk), SnapshotManifestToJson(m));
}

TEST(KgStoreTest, SnapshotDirectoryHoldsDbAndManifestOnly) {
  ScratchDir tmp;
  ASSERT_OK(KgStore::WriteSnapshot(SmallKg(), Info(3), SnapshotDir(tmp.path(), 3)));
  EXPECT_THAT(DirEntries(tmp.path() + "/kg"), ElementsAre("3"));
  EXPECT_THAT(DirEntries(tmp.path() + "/kg/3"), UnorderedElementsAre("db", "manifest.json"));
  auto resolved = ResolveSnapshotDir(tmp.path(), std::nullopt);
  ASSERT_OK(resolved);
  EXPECT_EQ(*resolved, SnapshotDir(tmp.path(), 3));
}

TEST(KgStoreTest, WriteSnapshotRefusesAnExistingDirectory) {
  ScratchDir tmp;
  const std::string dir = SnapshotDir(tmp.path(), 1);
  ASSERT_OK(KgStore::WriteSnapshot(SmallKg(), Info(1), dir));
  const absl::Status again = KgStore::WriteSnapshot(SmallKg(), Info(1), dir);
  EXPECT_THAT(again, StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr(dir)));
  // Even an empty directory is not overwritten.
  fs::create_directories(SnapshotDir(tmp.path(), 2));
  EXPECT_THAT(KgStore::WriteSnapshot(SmallKg(), Info(2), SnapshotDir(tmp.path(), 2)),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(DirEntries(tmp.path() + "/kg"), UnorderedElementsAre("1", "2"));
}

TEST(KgStoreTest, FailedSnapshotLeavesNoTempDirectory) {
  ScratchDir tmp;
  KgData kg = SmallKg();
  // A canonical id used twice is only detected while building the external-id index, i.e.
  // after the temp directory exists.
  kg.entities[testing::kObesity].external_id = "DOID:9352";
  const absl::Status s = KgStore::WriteSnapshot(kg, Info(1), SnapshotDir(tmp.path(), 1));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DOID:9352")));
  EXPECT_THAT(DirEntries(tmp.path() + "/kg"), ElementsAre());
}

TEST(KgStoreTest, WriteSnapshotRejectsBrokenGraphsNamingTheField) {
  ScratchDir tmp;
  const std::string dir = SnapshotDir(tmp.path(), 1);
  KgData unsorted = SmallKg();
  std::swap(unsorted.triples[0], unsorted.triples[1]);
  absl::Status s = KgStore::WriteSnapshot(unsorted, Info(1), dir);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kg.triples[1]")));

  KgData out_of_range = SmallKg();
  out_of_range.triples.back().tail = 500;
  s = KgStore::WriteSnapshot(out_of_range, Info(1), dir);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));

  KgData self_loop = SmallKg();
  self_loop.triples.push_back(
      Triple{testing::kObesity, testing::kResembles + 0, testing::kObesity, 0});
  std::sort(self_loop.triples.begin(), self_loop.triples.end());
  s = KgStore::WriteSnapshot(self_loop, Info(1), dir);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("self-loop")));

  EXPECT_THAT(KgStore::WriteSnapshot(SmallKg(), Info(0), dir),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(KgStoreTest, EmptyGraphRoundTrips) {
  ScratchDir tmp;
  auto store = WriteAndOpen(KgData(), tmp.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->num_entities(), 0);
  EXPECT_EQ(store->counts().triples, 0);
}

TEST(KgStoreTest, OpenOfMissingSnapshotIsNotFound) {
  ScratchDir tmp;
  KgStoreOptions options;
  options.snapshot_dir = tmp.path() + "/kg/5";
  EXPECT_THAT(KgStore::Open(options), StatusIs(absl::StatusCode::kNotFound));
  options.snapshot_dir = "";
  EXPECT_THAT(KgStore::Open(options), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(KgStoreTest, ReadOnlyStoresServeQueriesAndRejectWrites) {
  ScratchDir tmp;
  ASSERT_OK(KgStore::WriteSnapshot(SmallKg(), Info(1), SnapshotDir(tmp.path(), 1)));
  KgStoreOptions options;
  options.snapshot_dir = SnapshotDir(tmp.path(), 1);
  options.read_only = true;
  // Replicas: several read-only handles on one snapshot at once.
  auto a = KgStore::Open(options);
  auto b = KgStore::Open(options);
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ((*a)->GetEntity(testing::kIns)->name, "INS");
  EXPECT_EQ(*(*b)->ResolveExternalId("UMLS:C0011860"), testing::kDiabetes);
  EXPECT_TRUE((*a)->stats().read_only);

  IngestBatch batch;
  batch.batch_id = "b1";
  const auto ingest = (*a)->Ingest(batch);
  EXPECT_THAT(ingest, StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT((*a)->CompactOverlay(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(KgStoreTest, SecondReadWriteOpenOfTheSameSnapshotFailsCleanly) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  KgStoreOptions options;
  options.snapshot_dir = SnapshotDir(tmp.path(), 1);
  auto second = KgStore::Open(options);
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(KgStoreTest, OpenLoadsCsrFromBlobsWithoutReplay) {
  ScratchDir tmp;
  auto store = WriteAndOpen(SmallKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  const KgStoreStats stats = store->stats();
  EXPECT_EQ(stats.generation, 0);
  EXPECT_EQ(stats.csr_generation, 0);
  EXPECT_EQ(stats.overlay_edges, 0);
  EXPECT_GT(stats.csr_bytes, 0);
}

// Drops the CSR header so the next open must rebuild from the adjacency family.
void DropCsrBlobs(const std::string& snapshot_dir) {
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(1 << 20);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(internal::MakeDbOptions(), snapshot_dir + "/db",
                                internal::MakeColumnFamilyDescriptors(cache), &handles, &raw)
                  .ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), handles[internal::kCfCsr],
                         std::string(internal::kCsrHeaderKey))
                  .ok());
  for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  ASSERT_TRUE(db->Close().ok());
}

TEST(KgStoreTest, MissingCsrBlobsAreRebuiltFromAdjacencyAndPersisted) {
  ScratchDir tmp;
  ASSERT_OK(KgStore::WriteSnapshot(SmallKg(), Info(1), SnapshotDir(tmp.path(), 1)));
  DropCsrBlobs(SnapshotDir(tmp.path(), 1));
  KgStoreOptions options;
  options.snapshot_dir = SnapshotDir(tmp.path(), 1);
  options.read_only = true;
  {
    auto ro = KgStore::Open(options);
    ASSERT_OK(ro);
    NeighborQuery q;
    q.entity = testing::kDiabetes;
    EXPECT_EQ((*ro)->Neighbors(q)->total, 7);
  }
  options.read_only = false;
  {
    auto rw = KgStore::Open(options);  // rebuilds and writes fresh blobs
    ASSERT_OK(rw);
  }
  options.read_only = true;
  auto again = KgStore::Open(options);
  ASSERT_OK(again);
  NeighborQuery q;
  q.entity = testing::kPparg;
  EXPECT_EQ((*again)->Neighbors(q)->total, 3);
}

}  // namespace
}  // namespace ibgraphrag::kgstore
