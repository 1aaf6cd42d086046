// Shortest-path prior and structure features on a hand-checked small graph.
#include "services/retriever/prior_features.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ibgraphrag::retriever {
namespace {

// Global ids: A = 10, B = 11 (topics), X = 12, Y = 13, Z = 14, C = 15, D = 16, E = 17.
//   t0 A->X  t1 X->B  (the only A-B path: length 2)
//   t2 A->Y  t3 Y->Z  t4 C->A  t5 D->E (not connected to a topic)
// Undirected distance to the nearest topic: A, B 0; X, Y, C 1; Z 2; D, E unreachable.
LocalGraph Graph(std::vector<uint32_t> topics) {
  return BuildLocalGraph(topics, {10, 12, 10, 13, 15, 16}, {12, 11, 13, 14, 10, 17});
}

TEST(PriorFeaturesTest, ShortestPathLengthsMarkOnlyTopicToTopicPaths) {
  EXPECT_EQ(ShortestPathLengths(Graph({10, 11})), (std::vector<int>{2, 2, 0, 0, 0, 0}));
  // One topic: no topic-topic path at all.
  EXPECT_EQ(ShortestPathLengths(Graph({10})), (std::vector<int>(6, 0)));
}

TEST(PriorFeaturesTest, LocalHopsCountFromTheNearestTopic) {
  // 8 nodes: an unreachable triple gets 1 + 8.
  EXPECT_EQ(LocalHops(Graph({10, 11})), (std::vector<uint32_t>{1, 1, 1, 2, 1, 9}));
  EXPECT_EQ(LocalHops(Graph({10})), (std::vector<uint32_t>{1, 2, 1, 2, 1, 9}));
}

TEST(PriorFeaturesTest, PriorScoresUseGivenHopsOrLocalOnes) {
  const LocalGraph g = Graph({10, 11});
  const std::vector<float> local = ShortestPathPriorScores(g, {});
  const std::vector<float> want = {0.98f, 0.98f, 0.5f, 0.25f, 0.5f, 0.5f / 9};
  ASSERT_EQ(local.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(local[i], want[i]) << i;
  // kgstore's hops win when given (t5 at hop 3 here).
  const std::vector<uint32_t> hops = {1, 1, 1, 2, 1, 3};
  EXPECT_FLOAT_EQ(ShortestPathPriorScores(g, hops)[5], 0.5f / 3);
}

TEST(PriorFeaturesTest, FeaturesEncodePriorLogitPathAndHop) {
  const std::vector<float> f = PriorFeatures(Graph({10, 11}), {});
  ASSERT_EQ(f.size(), 6u * kPriorFeatureDim);
  auto row = [&](int i) {
    return std::vector<float>(f.begin() + i * kPriorFeatureDim,
                              f.begin() + (i + 1) * kPriorFeatureDim);
  };
  const float on_path = std::log(0.98f / 0.02f);
  const std::vector<float> t0 = row(0);
  EXPECT_NEAR(t0[0], on_path, 1e-4);
  EXPECT_EQ(std::vector<float>(t0.begin() + 1, t0.end()),
            (std::vector<float>{1, 0.5f, 1, 0, 0, 0, 0}));
  const std::vector<float> t2 = row(2);
  EXPECT_NEAR(t2[0], 0.0f, 1e-6);  // logit(0.5)
  EXPECT_EQ(std::vector<float>(t2.begin() + 1, t2.end()),
            (std::vector<float>{0, 0, 1, 0, 0, 0, 0}));
  const std::vector<float> t3 = row(3);
  EXPECT_NEAR(t3[0], std::log(1.0f / 3.0f), 1e-5);  // logit(0.25)
  EXPECT_EQ(std::vector<float>(t3.begin() + 1, t3.end()),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0}));
  const std::vector<float> t5 = row(5);
  EXPECT_EQ(std::vector<float>(t5.begin() + 1, t5.end()),
            (std::vector<float>{0, 0, 0, 0, 1, 0, 0}));
  // The logit feature orders triples exactly like the SHORTEST_PATH scores.
  const std::vector<float> prior = ShortestPathPriorScores(Graph({10, 11}), {});
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      EXPECT_EQ(prior[i] < prior[j], row(i)[0] < row(j)[0]) << i << " " << j;
    }
  }
}

// Columns 6 and 7: the relation asked about, and that relation touching a topic entity.
TEST(PriorFeaturesTest, IntentFeaturesMarkTheAskedRelationAndItsAnswerTriples) {
  const LocalGraph g = Graph({10, 11});
  // Triples t0 A->X (r0), t1 X->B (r1), t2 A->Y (r0), t3 Y->Z (r1), t4 C->A (r2), t5 D->E (r2).
  const std::vector<uint32_t> relations = {0, 1, 0, 1, 2, 2};
  std::vector<float> f = PriorFeatures(g, {});
  const std::vector<float> before = f;
  EXPECT_EQ(MarkIntentFeatures(g, relations, {}, absl::MakeSpan(f)).size(), 0u);
  EXPECT_EQ(f, before);  // no intent: nothing marked
  EXPECT_EQ(MarkIntentFeatures(g, relations, IntentRelationIds{{1, {}}}, absl::MakeSpan(f)).size(),
            1u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(f[i * kPriorFeatureDim + 6], relations[i] == 1 ? 1.0f : 0.0f) << i;
    // t1 X->B touches topic B; t3 Y->Z touches none.
    EXPECT_EQ(f[i * kPriorFeatureDim + 7], i == 1 ? 1.0f : 0.0f) << i;
    for (int k = 0; k < 6; ++k)
      EXPECT_EQ(f[i * kPriorFeatureDim + k], before[i * kPriorFeatureDim + k]);
  }
  EXPECT_EQ(IntentAnswerTriples(g, relations, IntentRelationIds{{0, {}}, {2, {}}}),
            (std::vector<uint32_t>{0, 2, 4}));
  // Answer ends: t0 A->X has its topic A at the head, so only an answer at the tail counts; t4
  // C->A has A at the tail, so only an answer at the head.
  EXPECT_EQ(
      IntentAnswerTriples(g, relations, IntentRelationIds{{0, {false, true}}, {2, {false, true}}}),
      (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(
      IntentAnswerTriples(g, relations, IntentRelationIds{{0, {true, false}}, {2, {true, false}}}),
      (std::vector<uint32_t>{4}));
}

TEST(PriorFeaturesTest, OnePassGivesTheSameScoresAndFeatures) {
  const LocalGraph g = Graph({10, 11});
  const std::vector<uint32_t> hops = {1, 1, 1, 2, 1, 3};
  const StructurePrior both = ComputeStructurePrior(g, hops, /*with_features=*/true);
  EXPECT_EQ(both.scores, ShortestPathPriorScores(g, hops));
  EXPECT_EQ(both.features, PriorFeatures(g, hops));
  EXPECT_TRUE(ComputeStructurePrior(g, hops, /*with_features=*/false).features.empty());
}

TEST(PriorFeaturesTest, EmptyGraphGivesNoFeatures) {
  const LocalGraph g = BuildLocalGraph({10}, {}, {});
  EXPECT_TRUE(PriorFeatures(g, {}).empty());
  EXPECT_TRUE(ShortestPathPriorScores(g, {}).empty());
}

}  // namespace
}  // namespace ibgraphrag::retriever
