// KgStore::Ingest and CompactOverlay: atomic, idempotent, validated before writing, visible to
// queries at once, durable across reopen and kill -9.
#include <signal.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_store_test_util.h"

namespace ibgraphrag::kgstore {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using namespace testing;  // NOLINT: the small graph's ids read better unqualified

Entity NewEntity(std::string external_id, std::string type, std::string name) {
  Entity e;
  e.external_id = std::move(external_id);
  e.type = std::move(type);
  e.name = std::move(name);
  return e;
}

// Adds sitagliptin (new) treating diabetes, and a new relation linking it to PPARG.
IngestBatch SitagliptinBatch(std::string batch_id = "batch-1") {
  IngestBatch b;
  b.batch_id = std::move(batch_id);
  Entity sita = NewEntity("DrugBank:DB01261", "compound", "Sitagliptin");
  sita.xrefs = {"CHEBI:40237"};
  sita.synonyms = {"Januvia"};
  b.entities.push_back(sita);
  b.triples.push_back({"DrugBank:DB01261", "treats", "UMLS:C0011860", "drugcentral"});
  b.triples.push_back({"CHEBI:40237", "inhibits", "Entrez:5468", ""});
  return b;
}

class KgStoreIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KgStoreOptions options;
    options.compact_overlay_at_open_edges = 0;  // keep the overlay so replay is exercised
    store_ = WriteAndOpen(SmallKg(), dir_.path(), options);
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<KgStore> Reopen(KgStoreOptions options = {}) {
    store_.reset();
    options.snapshot_dir = SnapshotDir(dir_.path(), 1);
    auto store = KgStore::Open(options);
    EXPECT_OK(store);
    return store.ok() ? std::move(store).value() : nullptr;
  }
  static int64_t Total(const KgStore& store, EntityId id) {
    NeighborQuery q;
    q.entity = id;
    auto page = store.Neighbors(q);
    return page.ok() ? page->total : -1;
  }

  ScratchDir dir_;
  std::unique_ptr<KgStore> store_;
};

TEST_F(KgStoreIngestTest, IngestAddsEntitiesRelationsSourcesAndTriples) {
  auto r = store_->Ingest(SitagliptinBatch());
  ASSERT_OK(r);
  EXPECT_FALSE(r->already_applied);
  EXPECT_EQ(r->generation, 1);
  EXPECT_EQ(r->entities_added, 1);
  EXPECT_EQ(r->relations_added, 1);
  EXPECT_EQ(r->triples_added, 2);
  EXPECT_EQ(r->triples_existing, 0);
  ASSERT_EQ(r->entity_ids.size(), 1u);
  const EntityId sita = r->entity_ids[0];
  EXPECT_EQ(sita, 9u);  // the next dense id

  EXPECT_EQ(*store_->ResolveExternalId("DrugBank:DB01261"), sita);
  EXPECT_EQ(*store_->ResolveExternalId("CHEBI:40237"), sita);
  auto e = store_->GetEntity(sita);
  ASSERT_OK(e);
  EXPECT_EQ(e->name, "Sitagliptin");
  EXPECT_THAT(e->synonyms, ElementsAre("Januvia"));
  EXPECT_THAT(e->xrefs, ElementsAre("CHEBI:40237"));
  EXPECT_EQ((*store_->DescribeEntities({sita}))[0].type, "compound");

  auto inhibits = store_->FindRelation("inhibits");
  ASSERT_OK(inhibits);
  EXPECT_EQ(inhibits->id, 7u);
  EXPECT_THAT(testing::SourceNames(*store_),
              ElementsAre("hetionet", "doid", "drugcentral", "ingest"));

  const KgCounts c = store_->counts();
  EXPECT_EQ(c.entities, 10);
  EXPECT_EQ(c.relations, 8);
  EXPECT_EQ(c.triples, 12);
  EXPECT_EQ(c.entities_by_type.at("compound"), 3);
  EXPECT_EQ(c.triples_by_relation.at("treats"), 3);
  EXPECT_EQ(c.triples_by_relation.at("inhibits"), 1);
  EXPECT_EQ(store_->manifest().counts.triples, 10);  // the manifest describes the snapshot
}

TEST_F(KgStoreIngestTest, IngestedEdgesAreVisibleToEveryQuery) {
  auto r = store_->Ingest(SitagliptinBatch());
  ASSERT_OK(r);
  const EntityId sita = r->entity_ids[0];
  EXPECT_EQ(Total(*store_, kDiabetes), 8);
  EXPECT_EQ(Total(*store_, kPparg), 4);

  NeighborQuery nq;
  nq.entity = sita;
  auto page = store_->Neighbors(nq);
  ASSERT_OK(page);
  ASSERT_EQ(page->triples.size(), 2u);
  EXPECT_EQ(page->triples[0].relation, kTreats);
  EXPECT_THAT(store_->provenance().at(page->triples[0].provenance),
              ::testing::ElementsAre(2));  // "drugcentral"

  SubgraphQuery sq;
  sq.seeds = {kDiabetes};
  sq.max_hops = 2;
  auto g = store_->ExtractSubgraph(sq);
  ASSERT_OK(g);
  EXPECT_EQ(g->triples.size(), 12u);

  PathQuery pq;
  pq.sources = {sita};
  pq.targets = {kPparg};
  auto paths = store_->ShortestPaths(pq);
  ASSERT_OK(paths);
  ASSERT_EQ(paths->paths.size(), 1u);
  EXPECT_EQ(paths->paths[0].steps.size(), 1u);
  EXPECT_EQ(paths->paths[0].steps[0].triple.relation, 7u);
}

TEST_F(KgStoreIngestTest, RepeatedBatchIdIsANoOpReportingTheFirstResult) {
  auto first = store_->Ingest(SitagliptinBatch());
  ASSERT_OK(first);
  // Same id, even with different content: nothing happens.
  IngestBatch again = SitagliptinBatch();
  again.entities.push_back(NewEntity("X:1", "gene", "x"));
  auto second = store_->Ingest(again);
  ASSERT_OK(second);
  EXPECT_TRUE(second->already_applied);
  EXPECT_EQ(second->generation, first->generation);
  EXPECT_EQ(second->triples_added, first->triples_added);
  EXPECT_EQ(second->entity_ids, first->entity_ids);
  EXPECT_EQ(store_->counts().triples, 12);
  EXPECT_EQ(store_->counts().entities, 10);
  EXPECT_THAT(store_->ResolveExternalId("X:1"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(store_->stats().generation, 1);
}

TEST_F(KgStoreIngestTest, ExistingTriplesAreCountedNotDuplicated) {
  IngestBatch b;
  b.batch_id = "dups";
  b.triples.push_back({"DrugBank:DB00331", "treats", "DOID:9352", "hetionet"});  // in snapshot
  b.triples.push_back({"DOID:9970", "treats", "DOID:9352", ""});
  b.triples.push_back({"DOID:9970", "treats", "MESH:D003924", ""});  // same triple via alias
  auto r = store_->Ingest(b);
  ASSERT_OK(r);
  EXPECT_EQ(r->triples_added, 1);
  EXPECT_EQ(r->triples_existing, 2);
  EXPECT_EQ(Total(*store_, kDiabetes), 8);
}

TEST_F(KgStoreIngestTest, UpsertMergesIntoTheExistingEntity) {
  IngestBatch b;
  b.batch_id = "merge";
  Entity e = NewEntity("MESH:D003924", "", "diabetes mellitus type 2");  // resolves via alias
  e.synonyms = {"T2DM", "NIDDM"};
  e.xrefs = {"ICD10:E11", "UMLS:C0011860"};
  e.sources = {"mesh"};
  b.entities.push_back(e);
  b.triples.push_back({"ICD10:E11", "presents", "HP:0000103", "mesh"});  // already there
  auto r = store_->Ingest(b);
  ASSERT_OK(r);
  EXPECT_EQ(r->entities_added, 0);
  EXPECT_EQ(r->entities_updated, 1);
  EXPECT_THAT(r->entity_ids, ElementsAre(kDiabetes));
  EXPECT_EQ(r->triples_existing, 1);
  auto d = store_->GetEntity(kDiabetes);
  ASSERT_OK(d);
  EXPECT_EQ(d->name, "type 2 diabetes mellitus");  // the name stays; the other becomes a synonym
  EXPECT_THAT(d->synonyms,
              ElementsAre("T2DM", "adult-onset diabetes", "diabetes mellitus type 2", "NIDDM"));
  EXPECT_THAT(d->xrefs, ElementsAre("UMLS:C0011860", "MESH:D003924", "ICD10:E11"));
  EXPECT_THAT(d->sources, ElementsAre("doid", "hetionet", "mesh"));
  EXPECT_EQ(*store_->ResolveExternalId("ICD10:E11"), kDiabetes);
  EXPECT_EQ(store_->counts().entities, 9);
}

TEST_F(KgStoreIngestTest, AliasBoundToAnotherEntityKeepsItsFirstBinding) {
  IngestBatch b;
  b.batch_id = "alias-clash";
  Entity e = NewEntity("DOID:1", "disease", "new disease");
  e.xrefs = {"UMLS:C0011860"};  // belongs to diabetes already
  b.entities.push_back(e);
  auto r = store_->Ingest(b);
  ASSERT_OK(r);
  EXPECT_EQ(*store_->ResolveExternalId("UMLS:C0011860"), kDiabetes);
  EXPECT_TRUE(store_->GetEntity(r->entity_ids[0])->xrefs.empty());
}

TEST_F(KgStoreIngestTest, InvalidBatchWritesNothing) {
  IngestBatch b = SitagliptinBatch("bad");
  b.entities.push_back(NewEntity("Entrez:1", "gene", "fine on its own"));
  b.triples.push_back({"DrugBank:DB01261", "treats", "DOID:nope", ""});
  b.triples.push_back({"CHEBI:nope", "treats", "DOID:9352", ""});
  auto r = store_->Ingest(b);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kNotFound,
                          ::testing::AllOf(HasSubstr("triples[2].tail 'DOID:nope'"),
                                           HasSubstr("triples[3].head 'CHEBI:nope'"))));
  // Nothing from the batch is visible, and the id was not consumed.
  EXPECT_THAT(store_->ResolveExternalId("DrugBank:DB01261"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(store_->ResolveExternalId("Entrez:1"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(store_->counts().triples, 10);
  EXPECT_EQ(store_->stats().generation, 0);
  EXPECT_THAT(store_->FindRelation("inhibits"), StatusIs(absl::StatusCode::kNotFound));
  // Still nothing after a reopen, and the batch id is still free.
  store_ = Reopen();
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->counts().triples, 10);
  auto ok = store_->Ingest(SitagliptinBatch("bad"));
  ASSERT_OK(ok);
  EXPECT_FALSE(ok->already_applied);
}

TEST_F(KgStoreIngestTest, ValidationNamesTheFieldAndTheLimit) {
  IngestBatch b;
  auto s = store_->Ingest(b).status();
  EXPECT_THAT(
      s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch_id must not be empty")));
  b.batch_id = std::string(129, 'x');
  s = store_->Ingest(b).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("batch_id has 129 bytes; the limit is 128")));
  b.batch_id = "v";
  b.entities.push_back(NewEntity("New:1", "", "no type"));
  s = store_->Ingest(b).status();
  EXPECT_THAT(
      s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entities[0].type is required")));
  b.entities.clear();
  b.triples.push_back({"DOID:9352", "resembles", "MESH:D003924", ""});
  s = store_->Ingest(b).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("self-loops")));
  b.triples = {{"DOID:9352", "", "DOID:9970", ""}};
  s = store_->Ingest(b).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("triples[0].relation must not be empty")));
  EXPECT_EQ(store_->stats().generation, 0);
}

TEST_F(KgStoreIngestTest, IngestedDataSurvivesReopenByLogReplay) {
  ASSERT_OK(store_->Ingest(SitagliptinBatch()));
  IngestBatch second;
  second.batch_id = "batch-2";
  second.triples.push_back({"DOID:9970", "presents", "HP:0000103", "doid"});
  ASSERT_OK(store_->Ingest(second));
  KgStoreOptions options;
  options.compact_overlay_at_open_edges = 0;
  store_ = Reopen(options);
  ASSERT_NE(store_, nullptr);
  const KgStoreStats stats = store_->stats();
  EXPECT_EQ(stats.generation, 2);
  EXPECT_EQ(stats.csr_generation, 0);  // blobs are the snapshot's; 3 edges replayed from the log
  EXPECT_EQ(stats.overlay_edges, 3);
  EXPECT_EQ(Total(*store_, kDiabetes), 8);
  EXPECT_EQ(Total(*store_, kPolyuria), 2);
  EXPECT_EQ(*store_->ResolveExternalId("CHEBI:40237"), 9u);
  EXPECT_EQ(store_->counts().triples, 13);
  EXPECT_THAT(testing::SourceNames(*store_),
              ElementsAre("hetionet", "doid", "drugcentral", "ingest"));
  auto again = store_->Ingest(SitagliptinBatch());
  ASSERT_OK(again);
  EXPECT_TRUE(again->already_applied);
}

TEST_F(KgStoreIngestTest, CompactOverlayPersistsFreshBlobsWithTheSameAnswers) {
  ASSERT_OK(store_->Ingest(SitagliptinBatch()));
  SubgraphQuery sq;
  sq.seeds = {kPparg};
  sq.max_hops = 3;
  auto before = store_->ExtractSubgraph(sq);
  ASSERT_OK(before);
  ASSERT_OK(store_->CompactOverlay());
  EXPECT_EQ(store_->stats().overlay_edges, 0);
  EXPECT_EQ(store_->stats().csr_generation, 1);
  auto after = store_->ExtractSubgraph(sq);
  ASSERT_OK(after);
  EXPECT_EQ(after->triples.size(), before->triples.size());
  EXPECT_EQ(after->entities.size(), before->entities.size());

  // Reopen read-only: the new blobs already hold the ingested edges; nothing to replay.
  KgStoreOptions options;
  options.read_only = true;
  store_ = Reopen(options);
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->stats().csr_generation, 1);
  EXPECT_EQ(store_->stats().overlay_edges, 0);
  EXPECT_EQ(Total(*store_, kDiabetes), 8);
  // A later ingest on a read-write reopen replays only what came after the compaction.
  store_ = Reopen();
  IngestBatch next;
  next.batch_id = "after-compaction";
  next.triples.push_back({"DOID:9970", "presents", "HP:0000103", ""});
  ASSERT_OK(store_->Ingest(next));
  KgStoreOptions keep_overlay;
  keep_overlay.compact_overlay_at_open_edges = 0;
  store_ = Reopen(keep_overlay);
  EXPECT_EQ(store_->stats().overlay_edges, 1);
  EXPECT_EQ(Total(*store_, kPolyuria), 2);
}

TEST_F(KgStoreIngestTest, OpenCompactsALargeOverlayAutomatically) {
  ASSERT_OK(store_->Ingest(SitagliptinBatch()));
  KgStoreOptions options;
  options.compact_overlay_at_open_edges = 1;
  store_ = Reopen(options);
  ASSERT_NE(store_, nullptr);
  EXPECT_EQ(store_->stats().overlay_edges, 0);
  EXPECT_EQ(store_->stats().csr_generation, 1);
  EXPECT_EQ(Total(*store_, kPparg), 4);
}

TEST_F(KgStoreIngestTest, BatchesAreNeverHalfVisibleToConcurrentReaders) {
  // Each batch adds a new gene and links it to PPARG. A reader that can resolve a gene must also
  // see its edge, and neighbour totals only grow.
  constexpr int kBatches = 12;
  std::atomic<bool> stop{false};
  std::atomic<int> violations{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      int64_t last_total = 0;
      while (!stop.load()) {
        for (int i = 0; i < kBatches; ++i) {
          auto id = store_->ResolveExternalId(absl::StrCat("Gene:", i));
          if (!id.ok()) continue;
          NeighborQuery q;
          q.entity = *id;
          auto page = store_->Neighbors(q);
          if (!page.ok() || page->total != 1) ++violations;
        }
        const int64_t total = Total(*store_, kPparg);
        if (total < last_total) ++violations;
        last_total = total;
        SubgraphQuery sq;
        sq.seeds = {kPparg};
        if (!store_->ExtractSubgraph(sq).ok()) ++violations;
      }
    });
  }
  for (int i = 0; i < kBatches; ++i) {
    IngestBatch b;
    b.batch_id = absl::StrCat("gene-", i);
    b.entities.push_back(NewEntity(absl::StrCat("Gene:", i), "gene", absl::StrCat("G", i)));
    b.triples.push_back({absl::StrCat("Gene:", i), "interacts", "Entrez:5468", ""});
    ASSERT_OK(store_->Ingest(b));
  }
  stop = true;
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(Total(*store_, kPparg), 3 + kBatches);
}

TEST_F(KgStoreIngestTest, FanoutCapSamplesIngestedEdgesLikeSnapshotEdges) {
  // Diabetes has 7 snapshot edges in 6 relation groups; add 6 "comorbid" edges from the overlay.
  IngestBatch b;
  b.batch_id = "comorbid";
  for (int i = 0; i < 6; ++i) {
    b.entities.push_back(NewEntity(absl::StrCat("DOID:c", i), "disease", absl::StrCat("c", i)));
    b.triples.push_back({"DOID:9352", "comorbid", absl::StrCat("DOID:c", i), ""});
  }
  ASSERT_OK(store_->Ingest(b));
  ASSERT_GT(store_->stats().overlay_edges, 0);
  SubgraphQuery q;
  q.seeds = {kDiabetes};
  q.max_hops = 1;
  // 6 groups: out associates (2), presents (1), localizes (1), comorbid (6, overlay); in treats
  // (2), resembles (1). Water-filling: the three singletons whole, then 5 left over for three
  // groups: 2, 2, 1 in run order.
  q.max_fanout_per_node = 8;
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_EQ(g->triples.size(), 8u);
  EXPECT_EQ(g->capped_nodes, 1);
  int comorbid = 0;
  for (const SubgraphTriple& t : g->triples) comorbid += t.triple.relation == 7;
  EXPECT_EQ(comorbid, 2);  // a share like every other relation's, not 6 of 8
  // Compaction moves the edges into the CSR; the sample is the same.
  auto before = *g;
  ASSERT_OK(store_->CompactOverlay());
  g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  ASSERT_EQ(g->triples.size(), before.triples.size());
  for (size_t i = 0; i < g->triples.size(); ++i) {
    EXPECT_EQ(g->triples[i].triple, before.triples[i].triple);
  }
}

TEST(KgStoreCrashTest, AcknowledgedBatchSurvivesKillDashNine) {
  // "threadsafe" death tests re-execute this binary, so the child starts without the parent's
  // RocksDB threads. The child re-runs this body up to EXPECT_EXIT; the environment variable
  // makes it use the parent's snapshot instead of building its own.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  constexpr char kEnv[] = "IBGR_KGSTORE_KILL_TEST_SNAPSHOT";
  const char* inherited = getenv(kEnv);
  std::unique_ptr<ScratchDir> dir;
  std::string snapshot;
  if (inherited != nullptr) {
    snapshot = inherited;
  } else {
    dir = std::make_unique<ScratchDir>();
    ASSERT_NE(WriteAndOpen(SmallKg(), dir->path()), nullptr);  // written, then closed
    snapshot = SnapshotDir(dir->path(), 1);
    setenv(kEnv, snapshot.c_str(), /*overwrite=*/1);
  }
  EXPECT_EXIT(
      {
        KgStoreOptions options;
        options.snapshot_dir = snapshot;
        auto store = KgStore::Open(options);
        if (!store.ok()) _exit(1);
        if (!(*store)->Ingest(SitagliptinBatch()).ok()) _exit(2);
        raise(SIGKILL);  // no destructor, no flush, no close
      },
      ::testing::KilledBySignal(SIGKILL), "");
  unsetenv(kEnv);
  KgStoreOptions options;
  options.snapshot_dir = snapshot;
  auto store = KgStore::Open(options);
  ASSERT_OK(store);
  EXPECT_EQ((*store)->stats().generation, 1);
  EXPECT_EQ(*(*store)->ResolveExternalId("CHEBI:40237"), 9u);
  NeighborQuery q;
  q.entity = kPparg;
  EXPECT_EQ((*store)->Neighbors(q)->total, 4);
  EXPECT_TRUE((*store)->Ingest(SitagliptinBatch())->already_applied);
}

}  // namespace
}  // namespace ibgraphrag::kgstore
