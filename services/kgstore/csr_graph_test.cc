#include "services/kgstore/csr_graph.h"

#include <cstring>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::kgstore {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;

// 0 -r1-> 1, 0 -r0-> 2, 0 -r1-> 3, 2 -r0-> 1, 3 -r1-> 1 (sorted by head, relation, tail)
std::vector<Triple> Triples() {
  std::vector<Triple> t = {{0, 1, 1, 0}, {0, 0, 2, 1}, {0, 1, 3, 2}, {2, 0, 1, 3}, {3, 1, 1, 4}};
  std::sort(t.begin(), t.end());
  return t;
}

// (relation, other end) of each edge, in run order.
std::vector<std::pair<RelationId, EntityId>> Edges(const EdgeRun& run) {
  std::vector<std::pair<RelationId, EntityId>> edges;
  for (size_t i = 0; i < run.size; ++i) {
    edges.emplace_back(EdgeRelation(run.edges[i]), EdgeOther(run.edges[i]));
  }
  return edges;
}

std::vector<SourceId> Sources(const EdgeRun& run) {
  std::vector<SourceId> sources;
  for (size_t i = 0; i < run.size; ++i) sources.push_back(EdgeSource(run.edges[i]));
  return sources;
}

using E = std::pair<RelationId, EntityId>;

TEST(CsrGraphTest, PackedEdgesRoundTripTheirFields) {
  const uint64_t p = PackEdge(65535, 4000000000u, 65535);
  EXPECT_EQ(EdgeRelation(p), 65535u);
  EXPECT_EQ(EdgeOther(p), 4000000000u);
  EXPECT_EQ(EdgeSource(p), 65535);
  // Sorting packed words orders by relation, then other end; the source only breaks ties.
  EXPECT_LT(PackEdge(0, 9, 65535), PackEdge(1, 0, 0));
  EXPECT_LT(PackEdge(1, 2, 65535), PackEdge(1, 3, 0));
}

TEST(CsrGraphTest, OutRunsAreSortedByRelationThenTail) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  EXPECT_EQ(g.num_nodes(), 5u);
  EXPECT_EQ(g.num_edges(), 5u);
  EXPECT_THAT(Edges(g.out().Run(0)), ElementsAre(E{0, 2}, E{1, 1}, E{1, 3}));
  EXPECT_THAT(Sources(g.out().Run(0)), ElementsAre(1, 0, 2));
  EXPECT_THAT(Edges(g.out().Run(1)), ElementsAre());
  EXPECT_THAT(Edges(g.out().Run(4)), ElementsAre());
}

TEST(CsrGraphTest, InRunsAreSortedByRelationThenHeadWithTheirSources) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  const EdgeRun run = g.in().Run(1);
  EXPECT_THAT(Edges(run), ElementsAre(E{0, 2}, E{1, 0}, E{1, 3}));
  EXPECT_THAT(Sources(run), ElementsAre(3, 0, 4));
}

TEST(CsrGraphTest, NodesBeyondTheArraysHaveNoEdges) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  EXPECT_EQ(g.out().Run(5).size, 0u);
  EXPECT_EQ(g.in().Run(1000).size, 0u);
}

TEST(CsrGraphTest, RelationRangeAndContainsUseBinarySearch) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  const EdgeRun r1 = g.out().Run(0).RelationRange(1);
  EXPECT_THAT(Edges(r1), ElementsAre(E{1, 1}, E{1, 3}));
  EXPECT_EQ(g.out().Run(0).Find(1, 3), 2u);
  EXPECT_EQ(g.out().Run(0).Find(0, 3), 3u);  // absent: size
  EXPECT_EQ(g.out().Run(0).RelationRange(7).size, 0u);
  EXPECT_TRUE(g.Contains(0, 1, 3));
  EXPECT_FALSE(g.Contains(0, 0, 3));
  EXPECT_FALSE(g.Contains(4, 0, 1));
}

TEST(CsrGraphTest, ChunksRoundTripThroughAllocate) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  // Tiny chunks force arrays to split across several values.
  const std::vector<CsrChunk> chunks = g.Chunks(16);
  CsrGraph copy = CsrGraph::Allocate(g.num_nodes(), g.num_edges());
  std::vector<CsrChunk> targets = copy.MutableChunks(16);
  ASSERT_EQ(chunks.size(), targets.size());
  EXPECT_GT(chunks.size(), 6u);
  for (size_t i = 0; i < chunks.size(); ++i) {
    ASSERT_EQ(chunks[i].name, targets[i].name);
    ASSERT_EQ(chunks[i].size, targets[i].size);
    std::memcpy(targets[i].data, chunks[i].data, chunks[i].size);
  }
  EXPECT_OK(copy.Validate(2, 5));
  EXPECT_EQ(copy.out().edges, g.out().edges);
  EXPECT_EQ(copy.in().offsets, g.in().offsets);
  EXPECT_EQ(copy.out().offsets, g.out().offsets);
}

TEST(CsrGraphTest, ValidateRejectsEdgesToUnknownNodes) {
  CsrGraph g = CsrGraph::Build(5, 2, Triples());
  std::vector<CsrChunk> chunks = g.MutableChunks();
  for (CsrChunk& c : chunks) {
    if (c.name == "out.edges/0") {
      const uint64_t bad = PackEdge(0, 99);
      std::memcpy(c.data, &bad, sizeof(bad));
    }
  }
  EXPECT_THAT(g.Validate(2, 5), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(CsrGraphTest, ValidateRejectsOutOfRangeRelationsAndSources) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  EXPECT_THAT(g.Validate(1, 5), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(g.Validate(2, 4), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(CsrGraphTest, MergeInterleavesExtraEdgesInOrderAndGrowsNodes) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  const std::vector<uint64_t> extra_edges = {PackEdge(0, 9, 7), PackEdge(1, 2, 8)};
  auto extra = [&](EntityId node) -> EdgeRun {
    if (node == 0 || node == 6) return {extra_edges.data(), 2};
    return {};
  };
  const CsrAdjacency merged = CsrGraph::Merge(g.out(), 7, extra);
  EXPECT_EQ(merged.num_nodes(), 7u);
  EXPECT_THAT(Edges(merged.Run(0)), ElementsAre(E{0, 2}, E{0, 9}, E{1, 1}, E{1, 2}, E{1, 3}));
  const EdgeRun six = merged.Run(6);
  EXPECT_THAT(Edges(six), ElementsAre(E{0, 9}, E{1, 2}));
  EXPECT_THAT(Sources(six), ElementsAre(7, 8));
  EXPECT_EQ(merged.edges.size(), 9u);
}

TEST(CsrGraphTest, GroupIndexMarksWhereEachRelationStarts) {
  CsrGraph g = CsrGraph::Build(5, 2, Triples());
  g.BuildGroupIndexes(/*parallel=*/false);
  const GroupStarts out0 = g.out().Groups(0);
  ASSERT_EQ(out0.count, 2u);
  EXPECT_EQ(out0.starts[0], 0u);
  EXPECT_EQ(out0.starts[1], 1u);
  EXPECT_EQ(g.out().Groups(1).count, 0u);
  EXPECT_EQ(g.in().Groups(1).count, 2u);
}

TEST(CsrGraphTest, EmptyGraphIsValid) {
  const CsrGraph g = CsrGraph::Build(0, 0, {});
  EXPECT_EQ(g.num_nodes(), 0u);
  EXPECT_OK(g.Validate(0, 0));
}

}  // namespace
}  // namespace ibgraphrag::kgstore
