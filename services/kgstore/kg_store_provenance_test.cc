// Provenance through the store: sources with licences, provenance groups, per-triple scores and
// notes survive a snapshot, are read back on request, counted in Stats and kept by Ingest; older
// snapshots without provenance metadata still open.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "services/kgstore/kg_builder.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_codec.h"
#include "services/kgstore/kg_store_test_util.h"

namespace ibgraphrag::kgstore {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::Pair;
using testing::ScratchDir;
using ::testing::UnorderedElementsAre;
using testing::WriteAndOpen;

// gene -associates-> disease from GWAS and DISEASES (merged, scored, noted); drug -causes->
// nausea from SIDER only.
KgData ProvenanceKg() {
  KgBuilder b;
  const SourceId gwas = b.AddSource("gwas-catalog", "CC BY 4.0");
  const SourceId diseases = b.AddSource("jensenlab-diseases", "CC BY 4.0");
  const SourceId sider = b.AddSource("sider", "CC BY-NC-SA 4.0");
  const EntityId gene = b.AddEntity("Entrez:3630", "gene", "INS");
  const EntityId disease = b.AddEntity("DOID:9352", "disease", "type 2 diabetes mellitus");
  const EntityId drug = b.AddEntity("DrugBank:DB00331", "compound", "Metformin");
  const EntityId nausea = b.AddEntity("UMLS:C0027497", "side_effect", "Nausea");
  const RelationId associates = b.AddRelation("gene associated with disease", "", "", "");
  const RelationId causes = b.AddRelation("drug causes side effect", "", "", "");
  b.AddTriple(gene, associates, disease, gwas, 0.62f, "trait 'type 2 diabetes' (exact)");
  b.AddTriple(gene, associates, disease, diseases, 0.8f, "z=4.1");
  b.AddTriple(drug, causes, nausea, sider);
  return b.Finish();
}

// The store of snapshot 1 under `base`, opened afresh (the ingest log replayed).
std::unique_ptr<KgStore> Reopen(const std::string& base) {
  KgStoreOptions options;
  options.snapshot_dir = SnapshotDir(base, 1);
  auto reopened = KgStore::Open(options);
  EXPECT_OK(reopened);
  return reopened.ok() ? *std::move(reopened) : nullptr;
}

IngestTriple Fact(std::string head, std::string relation, std::string tail) {
  IngestTriple t;
  t.head = std::move(head);
  t.relation = std::move(relation);
  t.tail = std::move(tail);
  return t;
}

IngestTriple Sourced(IngestTriple t, std::string source, std::string license) {
  t.source = std::move(source);
  t.license = std::move(license);
  return t;
}

TEST(KgStoreProvenanceTest, SnapshotKeepsSourcesLicencesGroupsScoresAndNotes) {
  ScratchDir tmp;
  auto store = WriteAndOpen(ProvenanceKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  std::vector<std::string> sources;
  for (const SourceInfo& s : store->sources()) sources.push_back(s.name + "|" + s.license);
  EXPECT_THAT(sources, ElementsAre("gwas-catalog|CC BY 4.0", "jensenlab-diseases|CC BY 4.0",
                                   "sider|CC BY-NC-SA 4.0"));
  NeighborQuery q;
  q.entity = 0;  // INS
  auto page = store->Neighbors(q);
  ASSERT_OK(page);
  ASSERT_EQ(page->triples.size(), 1u);
  EXPECT_THAT(store->provenance().at(page->triples[0].provenance), ElementsAre(0, 1));

  auto annotations = store->GetTripleAnnotations(page->triples);
  ASSERT_OK(annotations);
  ASSERT_EQ(annotations->size(), 1u);
  EXPECT_FLOAT_EQ((*annotations)[0].score, 0.8f);
  EXPECT_EQ((*annotations)[0].note, "trait 'type 2 diabetes' (exact); z=4.1");

  // The unannotated SIDER triple reads back as "no score, no note".
  q.entity = 2;  // metformin
  page = store->Neighbors(q);
  ASSERT_OK(page);
  annotations = store->GetTripleAnnotations(page->triples);
  ASSERT_OK(annotations);
  EXPECT_TRUE(std::isnan((*annotations)[0].score));
  EXPECT_EQ((*annotations)[0].note, "");
}

TEST(KgStoreProvenanceTest, CountsAndManifestReportTriplesBySourceAndLicence) {
  ScratchDir tmp;
  auto store = WriteAndOpen(ProvenanceKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  const KgCounts counts = store->counts();
  EXPECT_THAT(counts.triples_by_source,
              UnorderedElementsAre(Pair("gwas-catalog", 1), Pair("jensenlab-diseases", 1),
                                   Pair("sider", 1)));
  EXPECT_THAT(counts.triples_by_license,
              UnorderedElementsAre(Pair("CC BY 4.0", 1), Pair("CC BY-NC-SA 4.0", 1)));
  EXPECT_THAT(store->manifest().source_licenses,
              ElementsAre("CC BY 4.0", "CC BY 4.0", "CC BY-NC-SA 4.0"));
  EXPECT_EQ(store->manifest().counts.triples_by_license.at("CC BY 4.0"), 1);
}

TEST(KgStoreProvenanceTest, LicenceFilteredSnapshotRecordsTheFilter) {
  ScratchDir tmp;
  KgData kg = ProvenanceKg();
  LicenseFilter filter;
  filter.exclude = {"NC"};
  ApplyLicenseFilter(filter, &kg);
  auto store = WriteAndOpen(kg, tmp.path());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->counts().triples, 1);
  EXPECT_EQ(store->num_entities(), 4);  // no entity names its sources here, so all stay
  EXPECT_EQ(store->manifest().license_filter, "exclude=NC");
  EXPECT_EQ(store->counts().triples_by_license.count("CC BY-NC-SA 4.0"), 0u);
}

TEST(KgStoreProvenanceTest, IngestKeepsLicenceScoreAndNoteOfNewTriples) {
  ScratchDir tmp;
  auto store = WriteAndOpen(ProvenanceKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  IngestBatch batch;
  batch.batch_id = "curation-1";
  IngestTriple t = Fact("DrugBank:DB00331", "gene associated with disease", "DOID:9352");
  t.source = "curation";
  t.license = "CC0";
  t.score = 0.5f;
  t.note = "reviewed";
  batch.triples.push_back(t);
  // A second licence under the same name is a separate source.
  IngestTriple again = t;
  again.head = "Entrez:3630";
  again.tail = "UMLS:C0027497";
  again.license = "CC BY 4.0";
  again.score = kNoTripleScore;
  again.note = "";
  batch.triples.push_back(again);
  auto result = store->Ingest(batch);
  ASSERT_OK(result);
  EXPECT_EQ(result->triples_added, 2);

  const std::vector<SourceInfo> sources = store->sources();
  ASSERT_EQ(sources.size(), 5u);
  EXPECT_EQ(sources[3].name, "curation");
  EXPECT_EQ(sources[3].license, "CC0");
  EXPECT_EQ(sources[4].license, "CC BY 4.0");
  EXPECT_EQ(store->counts().triples_by_license.at("CC0"), 1);
  EXPECT_EQ(store->counts().triples_by_source.at("curation"), 2);

  NeighborQuery q;
  q.entity = 2;  // metformin
  q.direction = Direction::kOut;
  auto page = store->Neighbors(q);
  ASSERT_OK(page);
  ASSERT_EQ(page->triples.size(), 2u);
  auto annotations = store->GetTripleAnnotations(page->triples);
  ASSERT_OK(annotations);
  for (size_t i = 0; i < page->triples.size(); ++i) {
    const std::vector<SourceId> group = store->provenance().at(page->triples[i].provenance);
    ASSERT_EQ(group.size(), 1u);
    if (sources[group[0]].name != "curation") continue;
    EXPECT_FLOAT_EQ((*annotations)[i].score, 0.5f);
    EXPECT_EQ((*annotations)[i].note, "reviewed");
  }

  // The tables lent under the lock are the ones the copying accessors return, after the ingest
  // appended to both; VisitRelations walks relations() in id order.
  const std::vector<std::vector<SourceId>> groups = store->provenance();
  size_t visits = 0;
  store->VisitProvenanceTables([&](const std::vector<SourceInfo>& lent_sources,
                                   const std::vector<std::vector<SourceId>>& lent_groups) {
    ++visits;
    ASSERT_EQ(lent_sources.size(), 5u);
    for (size_t i = 0; i < lent_sources.size(); ++i) {
      EXPECT_EQ(lent_sources[i].name, sources[i].name);
      EXPECT_EQ(lent_sources[i].license, sources[i].license);
    }
    EXPECT_EQ(lent_groups, groups);
  });
  EXPECT_EQ(visits, 1u);
  std::vector<std::string> visited_relations;
  store->VisitRelations([&](const Relation& r) {
    EXPECT_EQ(r.id, visited_relations.size());
    visited_relations.push_back(r.name);
  });
  std::vector<std::string> relation_names;
  for (const Relation& r : store->relations()) relation_names.push_back(r.name);
  EXPECT_FALSE(relation_names.empty());
  EXPECT_EQ(visited_relations, relation_names);

  // Reopening replays the ingest log with the same provenance.
  store.reset();
  const std::unique_ptr<KgStore> reopened = Reopen(tmp.path());
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->sources().size(), 5u);
  // {gwas, diseases}, {sider}, then the singleton groups of the two new sources.
  EXPECT_EQ(reopened->provenance().size(), 4u);
  EXPECT_EQ(reopened->counts().triples_by_license.at("CC0"), 1);
}

TEST(KgStoreProvenanceTest, IngestReusesAStoredSourceSeenOnlyInMergedGroups) {
  ScratchDir tmp;
  auto store = WriteAndOpen(ProvenanceKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  // gwas-catalog is stored, but only inside the merged group {gwas, diseases}.
  IngestBatch batch;
  batch.batch_id = "gwas-extra";
  IngestTriple t = Fact("DrugBank:DB00331", "gene associated with disease", "DOID:9352");
  t.source = "gwas-catalog";
  t.license = "CC BY 4.0";
  batch.triples.push_back(t);
  // A published licence spelling is stored normalised ("CC0 1.0" -> "CC0").
  IngestTriple pid = Fact("Entrez:3630", "drug causes side effect", "UMLS:C0027497");
  pid.source = "pathways";
  pid.license = "CC0 1.0";
  batch.triples.push_back(pid);
  auto result = store->Ingest(batch);
  ASSERT_OK(result);
  std::vector<std::string> sources;
  for (const SourceInfo& s : store->sources()) sources.push_back(s.name + "|" + s.license);
  EXPECT_THAT(sources, ElementsAre("gwas-catalog|CC BY 4.0", "jensenlab-diseases|CC BY 4.0",
                                   "sider|CC BY-NC-SA 4.0", "pathways|CC0"));
  // {gwas, diseases}, {sider}, then the new singleton groups {gwas} and {pathways}.
  EXPECT_THAT(store->provenance(),
              ElementsAre(ElementsAre(0, 1), ElementsAre(2), ElementsAre(0), ElementsAre(3)));
  EXPECT_EQ(store->counts().triples_by_source.at("gwas-catalog"), 2);

  store.reset();
  const std::unique_ptr<KgStore> reopened = Reopen(tmp.path());
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->sources().size(), 4u);
  EXPECT_EQ(reopened->provenance().size(), 4u);
}

TEST(KgStoreProvenanceTest, IngestMatchesAStoredSourceWhoseLicenceWasNotNormalised) {
  ScratchDir tmp;
  KgData kg = ProvenanceKg();
  // As a snapshot written before licences were normalised stores it.
  ASSERT_EQ(kg.sources[2].name, "sider");
  kg.sources[2].license = "CC0 1.0";
  auto store = WriteAndOpen(std::move(kg), tmp.path());
  ASSERT_NE(store, nullptr);
  IngestBatch batch;
  batch.batch_id = "sider-extra";
  batch.triples.push_back(Sourced(
      Fact("DrugBank:DB00331", "gene associated with disease", "DOID:9352"), "sider", "CC0 1.0"));
  auto result = store->Ingest(batch);
  ASSERT_OK(result);
  // The stored source and its singleton group {sider} are reused, not duplicated.
  EXPECT_EQ(store->sources().size(), 3u);
  EXPECT_THAT(store->provenance(), ElementsAre(ElementsAre(0, 1), ElementsAre(2)));
  EXPECT_EQ(store->counts().triples_by_source.at("sider"), 2);
}

TEST(KgStoreProvenanceTest, IngestRejectsOverlongNotesAndInfiniteScoresNamingTheField) {
  ScratchDir tmp;
  auto store = WriteAndOpen(ProvenanceKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  IngestBatch batch;
  batch.batch_id = "bad";
  IngestTriple t = Fact("Entrez:3630", "r", "DOID:9352");
  t.note = std::string(kMaxTripleNoteBytes + 1, 'x');
  batch.triples.push_back(t);
  auto result = store->Ingest(batch);
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::HasSubstr("triples[0].note")));
  batch.triples[0].note = "";
  batch.triples[0].score = INFINITY;
  result = store->Ingest(batch);
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::HasSubstr("triples[0].score")));
}

// Overwrites (or with nullopt deletes) one metadata key of the snapshot in `dir`.
void SetMeta(const std::string& dir, std::string_view key, std::optional<std::string> value) {
  rocksdb::DB* raw = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ASSERT_TRUE(
      rocksdb::DB::Open(internal::MakeDbOptions(), dir + "/db",
                        internal::MakeColumnFamilyDescriptors(rocksdb::NewLRUCache(1 << 20)),
                        &handles, &raw)
          .ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  auto* meta = handles[internal::kCfMeta];
  const std::string k(key);
  if (value.has_value()) {
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), meta, k, *value).ok());
  } else {
    ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), meta, k).ok());
  }
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
}

TEST(KgStoreProvenanceTest, CorruptProvenanceMetadataFailsOpenWithDataLossNamingTheKey) {
  struct Case {
    std::string_view key;
    std::string value;
    std::string expected;
  };
  const std::string too_many_groups =
      "[" + absl::StrJoin(std::vector<std::string>(kMaxProvenanceGroups + 1, "[0]"), ",") + "]";
  const std::vector<Case> cases = {
      {internal::kMetaProvenance, "[[0,1],[70000]]", "not an id in [0, 65535]"},
      {internal::kMetaProvenance, "[[0],[-1]]", "not an id in [0, 65535]"},
      {internal::kMetaProvenance, "[[0],[]]", "group 1 is not a non-empty array"},
      {internal::kMetaProvenance, "[[0],[7]]", "group 1 names source 7 of 3"},
      {internal::kMetaProvenance, too_many_groups, "more than the limit of 65536"},
      {internal::kMetaSourceLicenses, "[\"CC0\"]", "1 licences for 3 sources"},
  };
  for (const Case& c : cases) {
    ScratchDir tmp;
    const std::string dir = SnapshotDir(tmp.path(), 1);
    { ASSERT_NE(WriteAndOpen(ProvenanceKg(), tmp.path()), nullptr); }
    SetMeta(dir, c.key, c.value);
    KgStoreOptions options;
    options.snapshot_dir = dir;
    options.read_only = true;
    auto store = KgStore::Open(options);
    ASSERT_THAT(store, StatusIs(absl::StatusCode::kDataLoss,
                                ::testing::AllOf(::testing::HasSubstr(std::string(c.key)),
                                                 ::testing::HasSubstr(c.expected))))
        << c.value.substr(0, 40);
  }
}

TEST(KgStoreProvenanceTest, AdjacencyValuesOfThreeToFiveBytesAreDataLoss) {
  for (size_t size : {0, 1, 3, 4, 5}) {
    const auto decoded = internal::DecodeAdjacencyValue(std::string(size, '\0'));
    EXPECT_THAT(decoded, StatusIs(absl::StatusCode::kDataLoss)) << size;
  }
  EXPECT_OK(internal::DecodeAdjacencyValue(std::string(2, '\0')));
  EXPECT_OK(internal::DecodeAdjacencyValue(std::string(6, '\0')));
}

// A snapshot written before provenance groups existed has only source names in its metadata and
// a 2-byte source id per edge; it opens with one singleton group per source, licences unknown.
TEST(KgStoreProvenanceTest, SnapshotWithoutProvenanceMetadataOpensWithSingletonGroups) {
  ScratchDir tmp;
  const std::string dir = SnapshotDir(tmp.path(), 1);
  { ASSERT_NE(WriteAndOpen(testing::SmallKg(), tmp.path()), nullptr); }
  SetMeta(dir, internal::kMetaProvenance, std::nullopt);
  SetMeta(dir, internal::kMetaSourceLicenses, std::nullopt);
  KgStoreOptions options;
  options.snapshot_dir = dir;
  options.read_only = true;
  auto store = KgStore::Open(options);
  ASSERT_OK(store);
  EXPECT_THAT((*store)->provenance(), ElementsAre(ElementsAre(0), ElementsAre(1)));
  for (const SourceInfo& s : (*store)->sources()) EXPECT_EQ(s.license, "");
  NeighborQuery q;
  q.entity = testing::kPolyuria;
  auto page = (*store)->Neighbors(q);
  ASSERT_OK(page);
  EXPECT_EQ((*store)->sources().at(page->triples.at(0).provenance).name, "doid");
}

TEST(KgStoreProvenanceTest, TooManyProvenanceGroupsFailNamingTheLimit) {
  KgData kg = ProvenanceKg();
  kg.provenance.assign(kMaxProvenanceGroups + 1, std::vector<SourceId>{0});
  ScratchDir tmp;
  SnapshotManifestInfo info;
  info.version = 1;
  const absl::Status s = KgStore::WriteSnapshot(kg, info, SnapshotDir(tmp.path(), 1));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::HasSubstr("65536")));
}

}  // namespace
}  // namespace ibgraphrag::kgstore
