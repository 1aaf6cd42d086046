// The candidate set shared by Retrieve and the trainer: extraction request, features over the
// whole subgraph, pruning by the shortest-path prior.
#include "services/retriever/candidate_set.h"

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

}  // namespace
}  // namespace ibgraphrag::retriever
