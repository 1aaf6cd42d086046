// KgStore traversals on hand-checked graphs: Neighbors, ExtractSubgraph, ShortestPaths.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
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
using ::testing::UnorderedElementsAreArray;
using namespace testing;  // NOLINT: the small graph's ids read better unqualified

std::tuple<EntityId, RelationId, EntityId> Key(const Triple& t) {
  return {t.head, t.relation, t.tail};
}

std::vector<std::tuple<EntityId, RelationId, EntityId>> Keys(const std::vector<Triple>& ts) {
  std::vector<std::tuple<EntityId, RelationId, EntityId>> keys;
  for (const Triple& t : ts) keys.push_back(Key(t));
  return keys;
}

std::vector<std::tuple<EntityId, RelationId, EntityId>> Keys(const Subgraph& g) {
  std::vector<std::tuple<EntityId, RelationId, EntityId>> keys;
  for (const SubgraphTriple& t : g.triples) keys.push_back(Key(t.triple));
  return keys;
}

// (head, relation, tail, forward) per step.
std::vector<std::tuple<EntityId, RelationId, EntityId, bool>> Steps(const Path& p) {
  std::vector<std::tuple<EntityId, RelationId, EntityId, bool>> steps;
  for (const PathStep& s : p.steps) {
    steps.emplace_back(s.triple.head, s.triple.relation, s.triple.tail, s.forward);
  }
  return steps;
}

class KgStoreQueryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir();
    KgStoreOptions options;
    options.read_only = true;
    store_ = WriteAndOpen(SmallKg(), dir_->path(), options).release();
  }
  static void TearDownTestSuite() {
    delete store_;
    delete dir_;
  }
  void SetUp() override { ASSERT_NE(store_, nullptr); }

  static ScratchDir* dir_;
  static KgStore* store_;
};
ScratchDir* KgStoreQueryTest::dir_ = nullptr;
KgStore* KgStoreQueryTest::store_ = nullptr;

// ---- Neighbors ----

TEST_F(KgStoreQueryTest, NeighborsListsOutEdgesThenInEdgesByRelation) {
  NeighborQuery q;
  q.entity = kDiabetes;
  auto page = store_->Neighbors(q);
  ASSERT_OK(page);
  EXPECT_EQ(page->total, 7);
  EXPECT_EQ(page->next_offset, 0);
  EXPECT_THAT(
      Keys(page->triples),
      ElementsAre(Key({kDiabetes, kAssociates, kIns}), Key({kDiabetes, kAssociates, kPparg}),
                  Key({kDiabetes, kPresents, kPolyuria}), Key({kDiabetes, kLocalizes, kPancreas}),
                  Key({kMetformin, kTreats, kDiabetes}), Key({kPioglitazone, kTreats, kDiabetes}),
                  Key({kObesity, kResembles, kDiabetes})));
  // Provenance comes along: polyuria was asserted by "doid" (source 1) alone.
  EXPECT_THAT(store_->provenance().at(page->triples[2].provenance), ElementsAre(1));
}

TEST_F(KgStoreQueryTest, NeighborsPagesCoverEveryEdgeExactlyOnce) {
  NeighborQuery q;
  q.entity = kDiabetes;
  q.limit = 3;
  std::vector<Triple> all;
  std::vector<int64_t> offsets;
  for (int guard = 0; guard < 10; ++guard) {
    auto page = store_->Neighbors(q);
    ASSERT_OK(page);
    EXPECT_EQ(page->total, 7);
    all.insert(all.end(), page->triples.begin(), page->triples.end());
    offsets.push_back(page->next_offset);
    if (page->next_offset == 0) break;
    q.offset = page->next_offset;
  }
  EXPECT_THAT(offsets, ElementsAre(3, 6, 0));
  NeighborQuery whole;
  whole.entity = kDiabetes;
  EXPECT_EQ(Keys(all), Keys(store_->Neighbors(whole)->triples));
}

TEST_F(KgStoreQueryTest, NeighborsFiltersByDirectionAndRelation) {
  NeighborQuery q;
  q.entity = kPparg;
  q.direction = Direction::kIn;
  EXPECT_EQ(store_->Neighbors(q)->total, 3);
  q.direction = Direction::kOut;
  EXPECT_EQ(store_->Neighbors(q)->total, 0);

  q.entity = kDiabetes;
  q.direction = Direction::kBoth;
  q.relations = {kTreats, kLocalizes, kTreats};
  auto page = store_->Neighbors(q);
  ASSERT_OK(page);
  EXPECT_THAT(Keys(page->triples), ElementsAre(Key({kDiabetes, kLocalizes, kPancreas}),
                                               Key({kMetformin, kTreats, kDiabetes}),
                                               Key({kPioglitazone, kTreats, kDiabetes})));
}

TEST_F(KgStoreQueryTest, NeighborsOffsetPastTheEndIsAnEmptyLastPage) {
  NeighborQuery q;
  q.entity = kDiabetes;
  q.offset = 50;
  auto page = store_->Neighbors(q);
  ASSERT_OK(page);
  EXPECT_TRUE(page->triples.empty());
  EXPECT_EQ(page->total, 7);
  EXPECT_EQ(page->next_offset, 0);
}

TEST_F(KgStoreQueryTest, NeighborsValidatesLimitsAndIds) {
  NeighborQuery q;
  q.entity = kDiabetes;
  q.limit = 0;
  auto s = store_->Neighbors(q).status();
  EXPECT_THAT(
      s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit must be in [1, 10000]")));
  q.limit = kMaxNeighborLimit + 1;
  EXPECT_THAT(store_->Neighbors(q), StatusIs(absl::StatusCode::kInvalidArgument));
  q.limit = 10;
  q.offset = -1;
  EXPECT_THAT(store_->Neighbors(q), StatusIs(absl::StatusCode::kInvalidArgument));
  q.offset = 0;
  q.entity = 77;
  s = store_->Neighbors(q).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, HasSubstr("77")));
  q.entity = kDiabetes;
  q.relations = {3, 40};
  s = store_->Neighbors(q).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, HasSubstr("relations: 40")));
}

// ---- ExtractSubgraph ----

TEST_F(KgStoreQueryTest, SubgraphOneHopTakesEveryEdgeOfTheSeed) {
  SubgraphQuery q;
  q.seeds = {kDiabetes};
  q.max_hops = 1;
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_EQ(g->triples.size(), 7u);
  for (const SubgraphTriple& t : g->triples) EXPECT_EQ(t.hop, 1);
  ASSERT_EQ(g->entities.size(), 8u);
  EXPECT_EQ(g->entities[0].id, kDiabetes);
  EXPECT_EQ(g->entities[0].hop, 0);
  for (size_t i = 1; i < g->entities.size(); ++i) EXPECT_EQ(g->entities[i].hop, 1);
  EXPECT_FALSE(g->truncated);
  EXPECT_EQ(g->capped_nodes, 0);
}

TEST_F(KgStoreQueryTest, SubgraphTwoHopsPutsNearerTriplesFirstWithoutDuplicates) {
  SubgraphQuery q;
  q.seeds = {kDiabetes};
  q.max_hops = 2;
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  // All ten triples, each once: the three hop-2 edges join hop-1 nodes to each other and must
  // not be reported from both ends.
  ASSERT_EQ(g->triples.size(), 10u);
  const auto keys = Keys(*g);
  const std::set<std::tuple<EntityId, RelationId, EntityId>> unique(keys.begin(), keys.end());
  EXPECT_EQ(unique.size(), 10u);
  std::vector<int> hops;
  for (const SubgraphTriple& t : g->triples) hops.push_back(t.hop);
  EXPECT_TRUE(std::is_sorted(hops.begin(), hops.end()));
  std::vector<std::tuple<EntityId, RelationId, EntityId>> hop2;
  for (const SubgraphTriple& t : g->triples) {
    if (t.hop == 2) hop2.push_back(Key(t.triple));
  }
  EXPECT_THAT(hop2, UnorderedElementsAre(Key({kPioglitazone, kBinds, kPparg}),
                                         Key({kPancreas, kExpresses, kIns}),
                                         Key({kObesity, kAssociates, kPparg})));
  EXPECT_EQ(g->entities.size(), 8u);  // "isolated" is unreachable
}

TEST_F(KgStoreQueryTest, SubgraphEntitiesCarryTheirBfsDistance) {
  SubgraphQuery q;
  q.seeds = {kMetformin};
  q.max_hops = 3;
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  std::map<EntityId, int> hop;
  for (const SubgraphEntity& e : g->entities) hop[e.id] = e.hop;
  EXPECT_EQ(hop[kMetformin], 0);
  EXPECT_EQ(hop[kDiabetes], 1);
  EXPECT_EQ(hop[kPparg], 2);
  EXPECT_EQ(hop[kPioglitazone], 2);
  EXPECT_EQ(hop[kIns], 2);
  EXPECT_EQ(g->triples.size(), 10u);
  // Discovery order is BFS order.
  std::vector<int> hops;
  for (const SubgraphEntity& e : g->entities) hops.push_back(e.hop);
  EXPECT_TRUE(std::is_sorted(hops.begin(), hops.end()));
}

TEST_F(KgStoreQueryTest, SubgraphHonoursAllowAndDenyRelations) {
  SubgraphQuery q;
  q.seeds = {kDiabetes};
  q.max_hops = 2;
  q.allow_relations = {kTreats, kBinds};
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_THAT(Keys(*g), UnorderedElementsAre(Key({kMetformin, kTreats, kDiabetes}),
                                             Key({kPioglitazone, kTreats, kDiabetes}),
                                             Key({kPioglitazone, kBinds, kPparg})));
  q.allow_relations.clear();
  q.deny_relations = {kAssociates, kTreats};
  g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_THAT(Keys(*g), UnorderedElementsAre(Key({kDiabetes, kPresents, kPolyuria}),
                                             Key({kDiabetes, kLocalizes, kPancreas}),
                                             Key({kObesity, kResembles, kDiabetes}),
                                             Key({kPancreas, kExpresses, kIns})));
}

TEST_F(KgStoreQueryTest, SubgraphStopsAtMaxTriplesAndSaysSo) {
  SubgraphQuery q;
  q.seeds = {kDiabetes};
  q.max_hops = 2;
  q.max_triples = 3;
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_EQ(g->triples.size(), 3u);
  EXPECT_TRUE(g->truncated);
  EXPECT_EQ(g->entities.size(), 4u);  // the seed and one new node per triple
  q.max_triples = 10;                 // exactly enough: not truncated
  g = store_->ExtractSubgraph(q);
  EXPECT_EQ(g->triples.size(), 10u);
  EXPECT_FALSE(g->truncated);
}

TEST_F(KgStoreQueryTest, SubgraphWithSeveralSeedsDeduplicatesSeeds) {
  SubgraphQuery q;
  q.seeds = {kIns, kPparg, kIns};
  q.max_hops = 1;
  auto g = store_->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_EQ(g->entities[0].id, kIns);
  EXPECT_EQ(g->entities[1].id, kPparg);
  EXPECT_EQ(g->entities[2].hop, 1);
  EXPECT_THAT(Keys(*g), UnorderedElementsAre(Key({kDiabetes, kAssociates, kIns}),
                                             Key({kPancreas, kExpresses, kIns}),
                                             Key({kDiabetes, kAssociates, kPparg}),
                                             Key({kPioglitazone, kBinds, kPparg}),
                                             Key({kObesity, kAssociates, kPparg})));
}

TEST_F(KgStoreQueryTest, SubgraphValidatesSeedsAndLimits) {
  SubgraphQuery q;
  q.seeds = {kDiabetes, 1234, 999};
  auto s = store_->ExtractSubgraph(q).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, HasSubstr("seeds: 1234, 999")));
  q.seeds = {};
  EXPECT_THAT(store_->ExtractSubgraph(q), StatusIs(absl::StatusCode::kInvalidArgument));
  q.seeds = {kDiabetes};
  for (int hops : {0, 5}) {
    q.max_hops = hops;
    s = store_->ExtractSubgraph(q).status();
    EXPECT_THAT(
        s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_hops must be in [1, 4]")));
  }
  q.max_hops = 2;
  for (int triples : {0, 100001}) {
    q.max_triples = triples;
    s = store_->ExtractSubgraph(q).status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                            HasSubstr("max_triples must be in [1, 100000]")));
  }
  q.max_triples = 10;
  q.max_fanout_per_node = -1;
  EXPECT_THAT(store_->ExtractSubgraph(q), StatusIs(absl::StatusCode::kInvalidArgument));
  q.max_fanout_per_node = 0;
  q.deny_relations = {99};
  EXPECT_THAT(store_->ExtractSubgraph(q), StatusIs(absl::StatusCode::kNotFound));
}

// A hub with 100 "common" out-edges, 10 "rare" out-edges and 5 "inbound" in-edges.
KgData HubKg() {
  KgBuilder b;
  const SourceId src = b.AddSource("test");
  const EntityId hub = b.AddEntity("T:hub", "disease", "hub");
  const RelationId common = b.AddRelation("common", "", "", "");
  const RelationId rare = b.AddRelation("rare", "", "", "");
  const RelationId inbound = b.AddRelation("inbound", "", "", "");
  for (int i = 0; i < 100; ++i) {
    b.AddTriple(hub, common, b.AddEntity(absl::StrCat("T:c", i), "gene", ""), src);
  }
  for (int i = 0; i < 10; ++i) {
    b.AddTriple(hub, rare, b.AddEntity(absl::StrCat("T:r", i), "gene", ""), src);
  }
  for (int i = 0; i < 5; ++i) {
    b.AddTriple(b.AddEntity(absl::StrCat("T:i", i), "compound", ""), inbound, hub, src);
  }
  return b.Finish();
}

TEST(KgStoreSubgraphFanoutTest, FanoutCapSpreadsAcrossRelationsAndAlongEachRelation) {
  ScratchDir tmp;
  auto store = WriteAndOpen(HubKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  SubgraphQuery q;
  q.seeds = {0};
  q.max_hops = 1;
  q.max_fanout_per_node = 15;
  auto g = store->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_EQ(g->triples.size(), 15u);
  EXPECT_EQ(g->capped_nodes, 1);
  EXPECT_FALSE(g->truncated);  // the fan-out cap is not the triple budget
  std::map<RelationId, std::vector<EntityId>> by_relation;
  for (const SubgraphTriple& t : g->triples) {
    by_relation[t.triple.relation].push_back(t.triple.relation == 2 ? t.triple.head
                                                                    : t.triple.tail);
  }
  // Equal shares: 5 each, though "common" has 20x the edges of "inbound".
  EXPECT_EQ(by_relation[0].size(), 5u);
  EXPECT_EQ(by_relation[1].size(), 5u);
  EXPECT_EQ(by_relation[2].size(), 5u);
  // Within "common" the five are spread over the whole list (c10, c30, c50, c70, c90), not the
  // first five.
  auto names = store->DescribeEntities(by_relation[0]);
  ASSERT_OK(names);
  std::vector<std::string> ids;
  for (const EntitySummary& s : *names) ids.push_back(s.external_id);
  EXPECT_THAT(ids, ElementsAre("T:c10", "T:c30", "T:c50", "T:c70", "T:c90"));
}

TEST(KgStoreSubgraphFanoutTest, SmallGroupsAreTakenWholeAndTheRestSharesTheCap) {
  ScratchDir tmp;
  auto store = WriteAndOpen(HubKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  SubgraphQuery q;
  q.seeds = {0};
  q.max_hops = 1;
  q.max_fanout_per_node = 40;
  auto g = store->ExtractSubgraph(q);
  ASSERT_OK(g);
  std::map<RelationId, int> per_relation;
  for (const SubgraphTriple& t : g->triples) ++per_relation[t.triple.relation];
  EXPECT_EQ(per_relation[2], 5);   // inbound: all 5
  EXPECT_EQ(per_relation[1], 10);  // rare: all 10
  EXPECT_EQ(per_relation[0], 25);  // common: what is left
  // Deterministic: the same query gives the same subgraph.
  auto again = store->ExtractSubgraph(q);
  EXPECT_EQ(Keys(*g), Keys(*again));
}

TEST(KgStoreSubgraphFanoutTest, AutoFanoutTakesAllEdgesOfASmallHub) {
  ScratchDir tmp;
  auto store = WriteAndOpen(HubKg(), tmp.path());
  ASSERT_NE(store, nullptr);
  SubgraphQuery q;
  q.seeds = {0};
  q.max_hops = 2;
  auto g = store->ExtractSubgraph(q);
  ASSERT_OK(g);
  EXPECT_EQ(g->triples.size(), 115u);
  EXPECT_EQ(g->capped_nodes, 0);
}

// ---- ShortestPaths ----

TEST_F(KgStoreQueryTest, ShortestPathFollowsForwardEdges) {
  PathQuery q;
  q.sources = {kMetformin};
  q.targets = {kPparg};
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->paths.size(), 1u);
  EXPECT_EQ(r->paths[0].source, kMetformin);
  EXPECT_EQ(r->paths[0].target, kPparg);
  EXPECT_THAT(Steps(r->paths[0]), ElementsAre(std::tuple{kMetformin, kTreats, kDiabetes, true},
                                              std::tuple{kDiabetes, kAssociates, kPparg, true}));
  EXPECT_FALSE(r->truncated);
}

TEST_F(KgStoreQueryTest, ShortestPathMarksStepsWalkedAgainstTheEdge) {
  PathQuery q;
  q.sources = {kIns};
  q.targets = {kPioglitazone};
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->paths.size(), 1u);
  // INS <-associates- diabetes <-treats- pioglitazone: both steps walked backwards.
  EXPECT_THAT(Steps(r->paths[0]),
              ElementsAre(std::tuple{kDiabetes, kAssociates, kIns, false},
                          std::tuple{kPioglitazone, kTreats, kDiabetes, false}));
}

TEST_F(KgStoreQueryTest, ShortestPathsReturnsEveryPathOfMinimalLength) {
  PathQuery q;
  q.sources = {kPioglitazone};
  q.targets = {kObesity};
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  std::vector<std::vector<std::tuple<EntityId, RelationId, EntityId, bool>>> paths;
  for (const Path& p : r->paths) paths.push_back(Steps(p));
  EXPECT_THAT(paths,
              UnorderedElementsAre(ElementsAre(std::tuple{kPioglitazone, kTreats, kDiabetes, true},
                                               std::tuple{kObesity, kResembles, kDiabetes, false}),
                                   ElementsAre(std::tuple{kPioglitazone, kBinds, kPparg, true},
                                               std::tuple{kObesity, kAssociates, kPparg, false})));
  q.max_paths = 1;
  r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  EXPECT_EQ(r->paths.size(), 1u);
}

TEST_F(KgStoreQueryTest, DirectedSearchOnlyFollowsEdgesHeadToTail) {
  PathQuery q;
  q.sources = {kPioglitazone};
  q.targets = {kObesity};
  q.undirected = false;
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  EXPECT_TRUE(r->paths.empty());
  q.sources = {kMetformin};
  q.targets = {kIns};
  r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->paths.size(), 1u);
  EXPECT_THAT(Steps(r->paths[0]), ElementsAre(std::tuple{kMetformin, kTreats, kDiabetes, true},
                                              std::tuple{kDiabetes, kAssociates, kIns, true}));
}

TEST_F(KgStoreQueryTest, ShortestPathsRespectsMaxLengthAndRelationFilters) {
  PathQuery q;
  q.sources = {kMetformin};
  q.targets = {kPparg};
  q.max_length = 1;
  EXPECT_TRUE(store_->ShortestPaths(q)->paths.empty());
  q.max_length = 4;
  q.deny_relations = {kAssociates};
  // Without "associates": metformin -> diabetes <- pioglitazone -> PPARG (3 steps).
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->paths.size(), 1u);
  EXPECT_THAT(Steps(r->paths[0]), ElementsAre(std::tuple{kMetformin, kTreats, kDiabetes, true},
                                              std::tuple{kPioglitazone, kTreats, kDiabetes, false},
                                              std::tuple{kPioglitazone, kBinds, kPparg, true}));
  q.deny_relations = {};
  q.allow_relations = {kResembles};
  EXPECT_TRUE(store_->ShortestPaths(q)->paths.empty());
}

TEST_F(KgStoreQueryTest, ShortestPathsOrdersPairsByLengthAndSharesTheBudget) {
  PathQuery q;
  q.sources = {kPioglitazone, kMetformin};
  q.targets = {kObesity, kDiabetes, kIsolated};
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  // Length 1 first: pioglitazone-diabetes, metformin-diabetes; then length 2: pioglitazone-
  // obesity (2 paths) and metformin-obesity (1 path). "isolated" is unreachable.
  std::vector<std::tuple<EntityId, EntityId, size_t>> summary;
  for (const Path& p : r->paths) summary.emplace_back(p.source, p.target, p.steps.size());
  EXPECT_THAT(
      summary,
      ElementsAre(std::tuple{kPioglitazone, kDiabetes, 1u}, std::tuple{kMetformin, kDiabetes, 1u},
                  std::tuple{kPioglitazone, kObesity, 2u}, std::tuple{kPioglitazone, kObesity, 2u},
                  std::tuple{kMetformin, kObesity, 2u}));
  // With 4 paths allowed, the length-2 pairs get one each before either gets a second.
  q.max_paths = 4;
  r = store_->ShortestPaths(q);
  summary.clear();
  for (const Path& p : r->paths) summary.emplace_back(p.source, p.target, p.steps.size());
  EXPECT_THAT(
      summary,
      ElementsAre(std::tuple{kPioglitazone, kDiabetes, 1u}, std::tuple{kMetformin, kDiabetes, 1u},
                  std::tuple{kPioglitazone, kObesity, 2u}, std::tuple{kMetformin, kObesity, 2u}));
}

TEST_F(KgStoreQueryTest, ShortestPathsValidatesEndpointsAndLimits) {
  PathQuery q;
  q.sources = {kMetformin};
  q.targets = {500};
  auto s = store_->ShortestPaths(q).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, HasSubstr("targets: 500")));
  q.targets = {};
  EXPECT_THAT(store_->ShortestPaths(q), StatusIs(absl::StatusCode::kInvalidArgument));
  q.targets = {kPparg};
  for (int length : {0, 7}) {
    q.max_length = length;
    s = store_->ShortestPaths(q).status();
    EXPECT_THAT(
        s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_length must be in [1, 6]")));
  }
  q.max_length = 3;
  q.max_paths = 1001;
  EXPECT_THAT(store_->ShortestPaths(q), StatusIs(absl::StatusCode::kInvalidArgument));
  q.max_paths = 10;
  q.sources.assign(kMaxPathEndpoints + 1, kMetformin);
  EXPECT_THAT(store_->ShortestPaths(q), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(KgStoreQueryTest, ShortestPathsSkipsPairsOfTheSameEntity) {
  PathQuery q;
  q.sources = {kDiabetes};
  q.targets = {kDiabetes, kPolyuria};
  auto r = store_->ShortestPaths(q);
  ASSERT_OK(r);
  ASSERT_EQ(r->paths.size(), 1u);
  EXPECT_EQ(r->paths[0].target, kPolyuria);
}

TEST(KgStorePathCapTest, ScanCapStopsTheSearchAndReportsTruncation) {
  ScratchDir tmp;
  KgStoreOptions options;
  options.max_path_edge_scans = 20;
  auto store = WriteAndOpen(HubKg(), tmp.path(), options);
  ASSERT_NE(store, nullptr);
  PathQuery q;
  q.sources = {1};    // T:c0
  q.targets = {115};  // T:i4, two steps away through the hub's 115 edges
  auto r = store->ShortestPaths(q);
  ASSERT_OK(r);
  EXPECT_TRUE(r->truncated);
  EXPECT_LE(r->edges_scanned, 20);
}

// ---- Property checks against brute force on random graphs ----

KgData RandomKg(uint32_t seed, int num_entities, int num_triples, int num_relations) {
  std::mt19937 rng(seed);
  KgBuilder b;
  const SourceId src = b.AddSource("random");
  for (int i = 0; i < num_entities; ++i) b.AddEntity(absl::StrCat("R:", i), "node", "");
  for (int r = 0; r < num_relations; ++r) b.AddRelation(absl::StrCat("rel", r), "", "", "");
  for (int k = 0; k < num_triples; ++k) {
    b.AddTriple(rng() % num_entities, rng() % num_relations, rng() % num_entities, src);
  }
  return b.Finish();
}

// Every shortest path by exhaustive search: BFS distances from the source, then all walks that
// step from distance d to d+1 and end at the target.
std::set<std::vector<std::tuple<EntityId, RelationId, EntityId, bool>>> BruteForcePaths(
    const KgData& kg, EntityId s, EntityId t, bool undirected, int max_length) {
  const size_t n = kg.entities.size();
  std::vector<int> dist(n, -1);
  dist[s] = 0;
  for (int d = 0; d < max_length; ++d) {
    for (const Triple& tr : kg.triples) {
      if (dist[tr.head] == d && dist[tr.tail] < 0) dist[tr.tail] = d + 1;
      if (undirected && dist[tr.tail] == d && dist[tr.head] < 0) dist[tr.head] = d + 1;
    }
  }
  std::set<std::vector<std::tuple<EntityId, RelationId, EntityId, bool>>> paths;
  if (dist[t] <= 0) return paths;
  std::vector<std::tuple<EntityId, RelationId, EntityId, bool>> steps;
  std::function<void(EntityId)> walk = [&](EntityId x) {
    if (x == t) {
      paths.insert(steps);
      return;
    }
    for (const Triple& tr : kg.triples) {
      if (tr.head == x && dist[tr.tail] == dist[x] + 1 && dist[tr.tail] <= dist[t]) {
        steps.emplace_back(tr.head, tr.relation, tr.tail, true);
        walk(tr.tail);
        steps.pop_back();
      }
      if (undirected && tr.tail == x && dist[tr.head] == dist[x] + 1 && dist[tr.head] <= dist[t]) {
        steps.emplace_back(tr.head, tr.relation, tr.tail, false);
        walk(tr.head);
        steps.pop_back();
      }
    }
  };
  walk(s);
  return paths;
}

TEST(KgStorePropertyTest, ShortestPathsMatchExhaustiveSearch) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const KgData kg = RandomKg(seed, 40, 90, 3);
    ScratchDir tmp;
    auto store = WriteAndOpen(kg, tmp.path());
    ASSERT_NE(store, nullptr);
    std::mt19937 rng(seed * 7919);
    for (int trial = 0; trial < 40; ++trial) {
      const EntityId s = rng() % 40;
      const EntityId t = rng() % 40;
      if (s == t) continue;
      for (bool undirected : {true, false}) {
        PathQuery q;
        q.sources = {s};
        q.targets = {t};
        q.undirected = undirected;
        q.max_length = 5;
        q.max_paths = kMaxPaths;
        auto r = store->ShortestPaths(q);
        ASSERT_OK(r);
        std::set<std::vector<std::tuple<EntityId, RelationId, EntityId, bool>>> got;
        for (const Path& p : r->paths) {
          EXPECT_TRUE(got.insert(Steps(p)).second) << "duplicate path";
        }
        EXPECT_EQ(got, BruteForcePaths(kg, s, t, undirected, 5))
            << "seed " << seed << " " << s << " -> " << t << " undirected " << undirected;
      }
    }
  }
}

TEST(KgStorePropertyTest, UncappedSubgraphIsEveryEdgeNearTheSeeds) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const KgData kg = RandomKg(seed, 60, 150, 4);
    ScratchDir tmp;
    auto store = WriteAndOpen(kg, tmp.path());
    ASSERT_NE(store, nullptr);
    std::mt19937 rng(seed);
    for (int trial = 0; trial < 20; ++trial) {
      SubgraphQuery q;
      q.seeds = {static_cast<EntityId>(rng() % 60), static_cast<EntityId>(rng() % 60)};
      q.max_hops = 1 + static_cast<int>(rng() % 3);
      q.max_fanout_per_node = kMaxFanoutPerNode;
      q.max_triples = kMaxSubgraphTriples;
      auto g = store->ExtractSubgraph(q);
      ASSERT_OK(g);
      // Brute force: undirected BFS distances; an edge belongs at hop min(d) + 1 when that is
      // within max_hops.
      std::vector<int> dist(60, -1);
      for (EntityId s : q.seeds) dist[s] = 0;
      for (int d = 0; d < q.max_hops; ++d) {
        for (const Triple& t : kg.triples) {
          if (dist[t.head] == d && dist[t.tail] < 0) dist[t.tail] = d + 1;
          if (dist[t.tail] == d && dist[t.head] < 0) dist[t.head] = d + 1;
        }
      }
      std::map<std::tuple<EntityId, RelationId, EntityId>, int> expected;
      for (const Triple& t : kg.triples) {
        const int near =
            std::min(dist[t.head] < 0 ? 99 : dist[t.head], dist[t.tail] < 0 ? 99 : dist[t.tail]);
        if (near < q.max_hops) expected[Key(t)] = near + 1;
      }
      std::map<std::tuple<EntityId, RelationId, EntityId>, int> got;
      for (const SubgraphTriple& t : g->triples) {
        EXPECT_TRUE(got.emplace(Key(t.triple), t.hop).second) << "duplicate triple";
      }
      EXPECT_EQ(got, expected);
      for (const SubgraphEntity& e : g->entities) EXPECT_EQ(e.hop, dist[e.id]);
      EXPECT_FALSE(g->truncated);
    }
  }
}

}  // namespace
}  // namespace ibgraphrag::kgstore
