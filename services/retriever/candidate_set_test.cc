// The candidate set shared by Retrieve and the trainer: extraction request, features over the
// whole subgraph, pruning by the shortest-path prior.
#include "services/retriever/candidate_set.h"

#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gtest/gtest.h"
#include "services/retriever/retriever_test_util.h"

namespace ibgraphrag::retriever {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;

// The hand-checked graph of prior_features_test: A = 10, B = 11 (topics), X = 12, Y = 13,
// Z = 14, C = 15, D = 16, E = 17.
//   t0 A->X  t1 X->B  (the A-B path, prior 0.98)   t2 A->Y (0.5)  t3 Y->Z (0.25)
//   t4 C->A (0.5)  t5 D->E (kgstore hop 3: 0.5 / 3)
CandidateSubgraph Subgraph() {
  CandidateSubgraph sg;
  sg.heads = {10, 12, 10, 13, 15, 16};
  sg.relations = {0, 1, 0, 1, 2, 2};
  sg.tails = {12, 11, 13, 14, 10, 17};
  sg.hops = {1, 1, 1, 2, 1, 3};
  sg.resolved_seeds = {10, 11};
  sg.relation_info = {{0, "r0", ""}, {1, "r1", ""}, {2, "r2", ""}};
  sg.truncated = true;
  sg.kg_version = "7";
  return sg;
}

// Returns Subgraph() and remembers the request.
class RecordingSource : public SubgraphSource {
 public:
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override {
    last = request;
    return Subgraph();
  }
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t>,
                                                   absl::Time) override {
    return std::vector<EntityInfo>();
  }
  SubgraphRequest last;
};

TEST(CandidateSetTest, TopByPriorKeepsTheBestInIndexOrderAndBreaksTiesByIndex) {
  const std::vector<float> prior = {0.25f, 0.5f, 0.98f, 0.5f, 0.5f, 0.1f};
  EXPECT_EQ(TopByPrior(prior, 3), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(TopByPrior(prior, 1), (std::vector<uint32_t>{2}));
  EXPECT_EQ(TopByPrior(prior, 0), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(TopByPrior(prior, 6), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(CandidateSetTest, UnprunedSetHasEveryTripleAndTheFeaturesOfTheWholeSubgraph) {
  CandidateSetOptions options;
  absl::StatusOr<CandidateSet> set = CandidateSetFromSubgraph(Subgraph(), options);
  ASSERT_OK(set);
  const CandidateSubgraph sg = Subgraph();
  EXPECT_EQ(set->heads, sg.heads);
  EXPECT_EQ(set->relations, sg.relations);
  EXPECT_EQ(set->tails, sg.tails);
  EXPECT_EQ(set->hops, sg.hops);
  EXPECT_EQ(set->topic_ids, sg.resolved_seeds);
  EXPECT_EQ(set->subgraph_triples, 6);
  EXPECT_TRUE(set->truncated);
  EXPECT_EQ(set->kg_version, "7");
  EXPECT_EQ(set->relation_info.size(), 3u);
  const LocalGraph g = BuildLocalGraph(sg.resolved_seeds, sg.heads, sg.tails);
  EXPECT_EQ(set->graph.heads, g.heads);
  EXPECT_EQ(set->graph.tails, g.tails);
  EXPECT_EQ(set->prior_scores, ShortestPathPriorScores(g, sg.hops));
  EXPECT_EQ(set->structure_features, PriorFeatures(g, sg.hops));
  absl::StatusOr<DdeFeatures> dde =
      ComputeDde(static_cast<int>(g.nodes.size()), g.heads, g.tails, g.topics, options.dde);
  ASSERT_OK(dde);
  EXPECT_EQ(set->dde.num_nodes, 8);
  EXPECT_EQ(set->dde.values, dde->values);
}

TEST(CandidateSetTest, PruningKeepsTheBestByPriorWithUnchangedFeatures) {
  CandidateSetOptions options;
  absl::StatusOr<CandidateSet> whole = CandidateSetFromSubgraph(Subgraph(), options);
  options.max_scored = 3;
  absl::StatusOr<CandidateSet> pruned = CandidateSetFromSubgraph(Subgraph(), options);
  ASSERT_OK(whole);
  ASSERT_OK(pruned);
  // Priors 0.98, 0.98, 0.5, 0.25, 0.5, 0.167: t0, t1 and the first 0.5 (t2) survive.
  const std::vector<uint32_t> kept = {0, 1, 2};
  ASSERT_EQ(pruned->size(), kept.size());
  EXPECT_EQ(pruned->subgraph_triples, 6);
  for (size_t j = 0; j < kept.size(); ++j) {
    const uint32_t i = kept[j];
    EXPECT_EQ(pruned->heads[j], whole->heads[i]);
    EXPECT_EQ(pruned->relations[j], whole->relations[i]);
    EXPECT_EQ(pruned->tails[j], whole->tails[i]);
    EXPECT_EQ(pruned->hops[j], whole->hops[i]);
    EXPECT_EQ(pruned->graph.heads[j], whole->graph.heads[i]);
    EXPECT_EQ(pruned->graph.tails[j], whole->graph.tails[i]);
    EXPECT_EQ(pruned->prior_scores[j], whole->prior_scores[i]);
    for (int k = 0; k < kPriorFeatureDim; ++k) {
      EXPECT_EQ(pruned->structure_features[j * kPriorFeatureDim + k],
                whole->structure_features[i * kPriorFeatureDim + k]);
    }
  }
  // The node numbering and DDE stay those of the whole subgraph.
  EXPECT_EQ(pruned->graph.nodes, whole->graph.nodes);
  EXPECT_EQ(pruned->dde.values, whole->dde.values);
}

TEST(CandidateSetTest, FeaturesCanBeLeftOut) {
  CandidateSetOptions options;
  options.with_dde = false;
  options.with_structure_features = false;
  absl::StatusOr<CandidateSet> set = CandidateSetFromSubgraph(Subgraph(), options);
  ASSERT_OK(set);
  EXPECT_EQ(set->dde.num_nodes, 0);
  EXPECT_TRUE(set->structure_features.empty());
  EXPECT_EQ(set->prior_scores.size(), 6u);
}

TEST(CandidateSetTest, BuildPassesTheLimitsToTheSource) {
  RecordingSource source;
  CandidateSetOptions options;
  options.max_hops = 3;
  options.max_candidates = 1234;
  options.max_fanout_per_node = 9;
  options.deadline = absl::FromUnixSeconds(2000000000);
  const std::vector<uint32_t> ids = {10};
  const std::vector<std::string> external = {"DOID:1"};
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, ids, external, options);
  ASSERT_OK(set);
  EXPECT_EQ(source.last.seed_ids, ids);
  EXPECT_EQ(source.last.seed_external_ids, external);
  EXPECT_EQ(source.last.max_hops, 3);
  EXPECT_EQ(source.last.max_triples, 1234);
  EXPECT_EQ(source.last.max_fanout_per_node, 9);
  EXPECT_EQ(source.last.deadline, options.deadline);
  EXPECT_EQ(set->size(), 6u);
}

TEST(CandidateSetTest, SourceErrorsComeBackUnchanged) {
  testing::FailingSource source(absl::UnavailableError("kgstore down"));
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, {10}, {}, CandidateSetOptions());
  EXPECT_EQ(set.status(), absl::UnavailableError("kgstore down"));
}

TEST(CandidateSetTest, NegativeMaxScoredIsRejectedNamingTheField) {
  CandidateSetOptions options;
  options.max_scored = -1;
  absl::StatusOr<CandidateSet> set = CandidateSetFromSubgraph(Subgraph(), options);
  EXPECT_THAT(set, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(set.status().message().find("max_scored"), std::string::npos);
}

// A hub topic (10) whose relation-blind subgraph is mostly "disease associated with gene" (genes
// 40..47) and holds one of its three "drug treats disease" triples (drug 30); the intent's call
// (1 hop, only the relations asked for) returns all three (drugs 30, 31, 32).
class HubSource : public SubgraphSource {
 public:
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override {
    requests.push_back(request);
    CandidateSubgraph sg;
    sg.resolved_seeds = {10};
    sg.kg_version = "7";
    auto add = [&](uint32_t h, uint32_t r, uint32_t t, uint32_t hop) {
      sg.heads.push_back(h);
      sg.relations.push_back(r);
      sg.tails.push_back(t);
      sg.hops.push_back(hop);
    };
    if (request.allow_relations.empty()) {
      for (uint32_t g = 40; g < 48; ++g) add(10, 0, g, 1);
      add(30, 1, 10, 1);
      sg.relation_info = {{0, "disease associated with gene", ""}, {1, "drug treats disease", ""}};
    } else {
      for (uint32_t d = 30; d < 33; ++d) add(d, 1, 10, 1);
      sg.relation_info = {{1, "drug treats disease", ""}};
    }
    return sg;
  }
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t>,
                                                   absl::Time) override {
    return std::vector<EntityInfo>();
  }
  absl::StatusOr<std::vector<std::string>> KnownRelations(absl::Span<const std::string> names,
                                                          absl::Time) override {
    std::vector<std::string> known;
    for (const std::string& n : names) {
      if (n == "drug treats disease" || n == "disease associated with gene") known.push_back(n);
    }
    return known;
  }
  std::vector<SubgraphRequest> requests;
};

TEST(CandidateSetTest, IntentAddsTheAskedRelationAtAHubAndPruningKeepsIt) {
  HubSource source;
  CandidateSetOptions options;
  options.max_scored = 3;  // the prior alone would keep three of the nine (BFS order: genes)
  options.intent_relations = {{"drug treats disease"}, {"drug indicated for condition"}};
  options.intent_budget = 50;
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, {10}, {}, options);
  ASSERT_OK(set);
  ASSERT_EQ(source.requests.size(), 2u);
  // The second call asks for the relations the KG has, one hop from the topics, within budget.
  EXPECT_EQ(source.requests[1].allow_relations, std::vector<std::string>{"drug treats disease"});
  EXPECT_EQ(source.requests[1].max_hops, 1);
  EXPECT_EQ(source.requests[1].max_triples, 50);
  EXPECT_EQ(source.requests[1].seed_ids, std::vector<uint32_t>{10});
  EXPECT_EQ(set->intent_added, 2);  // drug 30's triple was there already
  EXPECT_EQ(set->subgraph_triples, 11);
  EXPECT_EQ(set->intent_triples, 3);
  std::vector<uint32_t> drugs;
  for (size_t i = 0; i < set->size(); ++i) {
    const float* row = set->structure_features.data() + i * kPriorFeatureDim;
    const bool treats = set->relations[i] == 1;
    EXPECT_EQ(row[6], treats ? 1.0f : 0.0f) << i;
    EXPECT_EQ(row[7], treats ? 1.0f : 0.0f) << i;
    if (treats) drugs.push_back(set->heads[i]);
  }
  EXPECT_EQ(drugs, (std::vector<uint32_t>{30, 31, 32}));
  // Three by the prior plus the three protected answer triples.
  EXPECT_EQ(set->size(), 6u);
}

// "What drugs treat X?" reads the answer at the head (the drug): the treats triples of the
// question's other topic seen from its tail side are no answer. Here the topic (10) is the
// tail, so asking for answers at the tail only marks none.
TEST(CandidateSetTest, AnswerEndsDecideWhichTriplesAnswer) {
  HubSource source;
  CandidateSetOptions options;
  options.intent_relations = {{"drug treats disease", /*answer_at_head=*/false,
                               /*answer_at_tail=*/true}};
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, {10}, {}, options);
  ASSERT_OK(set);
  EXPECT_EQ(set->intent_triples, 0);
  for (size_t i = 0; i < set->size(); ++i) {
    EXPECT_EQ(set->structure_features[i * kPriorFeatureDim + 6],
              set->relations[i] == 1 ? 1.0f : 0.0f);
    EXPECT_EQ(set->structure_features[i * kPriorFeatureDim + 7], 0.0f);
  }
  // IntentRelations reads the ends from the intent: drugs asked for are heads.
  const auto asked = IntentRelations(common::ReadQuestionIntent("What drugs treat asthma?"));
  ASSERT_FALSE(asked.empty());
  EXPECT_EQ(asked[0].name, "drug treats disease");
  EXPECT_TRUE(asked[0].answer_at_head);
  EXPECT_FALSE(asked[0].answer_at_tail);
}

TEST(CandidateSetTest, NoIntentMeansOneCallAndNoIntentFeatures) {
  HubSource source;
  CandidateSetOptions options;
  options.max_scored = 3;
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, {10}, {}, options);
  ASSERT_OK(set);
  EXPECT_EQ(source.requests.size(), 1u);
  EXPECT_EQ(set->size(), 3u);
  EXPECT_EQ(set->intent_triples, 0);
  for (size_t i = 0; i < set->size(); ++i) {
    EXPECT_EQ(set->structure_features[i * kPriorFeatureDim + 6], 0.0f);
    EXPECT_EQ(set->structure_features[i * kPriorFeatureDim + 7], 0.0f);
  }
}

// The intent's call failing (kgstore down for it) serves the topic subgraph, saying why.
class IntentCallFails : public HubSource {
 public:
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override {
    if (!request.allow_relations.empty()) return absl::UnavailableError("kgstore gone");
    return HubSource::Extract(request);
  }
};

TEST(CandidateSetTest, AFailedIntentCallIsSkippedNotFatal) {
  IntentCallFails source;
  CandidateSetOptions options;
  options.intent_relations = {{"drug treats disease"}};
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, {10}, {}, options);
  ASSERT_OK(set);
  EXPECT_EQ(set->size(), 9u);
  EXPECT_EQ(set->intent_added, 0);
  EXPECT_EQ(set->intent_triples, 1);  // drug 30's triple, present in the topic subgraph
  EXPECT_NE(set->intent_skipped.find("kgstore gone"), std::string::npos);
}

// Two topics: the hub (10) and an option's drug (33). The intent's call, budgeted, returns the
// hub's treats triples of drugs 30-32 and not 33's; the KG holds "33 treats 10" (and "10 treats
// 33" is no triple), so one provenance probe of the topic pairs adds it.
class TwoTopicSource : public HubSource {
 public:
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest& request) override {
    absl::StatusOr<CandidateSubgraph> sg = HubSource::Extract(request);
    if (sg.ok()) sg->resolved_seeds = seeds;
    return sg;
  }
  absl::StatusOr<std::vector<TripleSources>> DescribeTriples(absl::Span<const uint32_t> heads,
                                                             absl::Span<const uint32_t> relations,
                                                             absl::Span<const uint32_t> tails,
                                                             absl::Time) override {
    if (fail) return absl::UnavailableError("provenance gone");
    probes.clear();
    std::vector<TripleSources> out(heads.size());
    for (size_t i = 0; i < heads.size(); ++i) {
      probes.push_back({heads[i], relations[i], tails[i]});
      out[i].found = heads[i] == 33 && relations[i] == 1 && tails[i] == 10;
    }
    return out;
  }
  std::vector<std::vector<uint32_t>> probes;
  std::vector<uint32_t> seeds = {10, 33};
  bool fail = false;
};

TEST(CandidateSetTest, AskedLinksBetweenTopicsAreProbedAndAdded) {
  TwoTopicSource source;
  CandidateSetOptions options;
  options.intent_relations = {{"drug treats disease"}};
  absl::StatusOr<CandidateSet> set = BuildCandidateSet(source, {10, 33}, {}, options);
  ASSERT_OK(set);
  // Both directions of the one pair, for the one asked relation the subgraph has an id for.
  EXPECT_EQ(source.probes, (std::vector<std::vector<uint32_t>>{{10, 1, 33}, {33, 1, 10}}));
  EXPECT_EQ(set->intent_added, 3);  // drugs 31, 32 from the call, 33 from the probe
  bool linked = false;
  for (size_t i = 0; i < set->size(); ++i) {
    if (set->heads[i] == 33 && set->relations[i] == 1 && set->tails[i] == 10) {
      linked = true;
      EXPECT_EQ(set->hops[i], 1u);
    }
  }
  EXPECT_TRUE(linked);
  EXPECT_TRUE(set->intent_skipped.empty()) << set->intent_skipped;

  // A failed probe serves what the intent's call found, and says why.
  source.fail = true;
  set = BuildCandidateSet(source, {10, 33}, {}, options);
  ASSERT_OK(set);
  EXPECT_EQ(set->intent_added, 2);
  EXPECT_NE(set->intent_skipped.find("topic links: UNAVAILABLE: provenance gone"),
            std::string::npos);
  // More pairs than probes: earlier topics' pairs, both directions, and the rest said.
  source.fail = false;
  source.seeds.clear();
  for (uint32_t t = 100; t < 150; ++t) source.seeds.push_back(t);  // 1,225 pairs, 2 probes each
  set = BuildCandidateSet(source, {10, 33}, {}, options);
  ASSERT_OK(set);
  ASSERT_EQ(source.probes.size(), static_cast<size_t>(kMaxTopicLinkProbes));
  EXPECT_EQ(source.probes[0], (std::vector<uint32_t>{100, 1, 101}));
  EXPECT_EQ(source.probes[1], (std::vector<uint32_t>{101, 1, 100}));
  EXPECT_NE(set->intent_skipped.find("topic links: 201 of 1225 topic pairs not probed"),
            std::string::npos)
      << set->intent_skipped;
  source.seeds = {10, 33};
  // No asked relation: no probe.
  source.probes.clear();
  options.intent_relations.clear();
  ASSERT_OK(BuildCandidateSet(source, {10, 33}, {}, options));
  EXPECT_TRUE(source.probes.empty());
}

}  // namespace
}  // namespace ibgraphrag::retriever
