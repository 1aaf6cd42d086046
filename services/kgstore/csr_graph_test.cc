#include "services/kgstore/csr_graph.h"

#include <cstring>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::kgstore {
namespace {

using ::testing::ElementsAre;

// 0 -r1-> 1, 0 -r0-> 2, 0 -r1-> 3, 2 -r0-> 1, 3 -r1-> 1 (sorted by head, relation, tail)
std::vector<Triple> Triples() {
  std::vector<Triple> t = {{0, 1, 1, 0}, {0, 0, 2, 1}, {0, 1, 3, 2}, {2, 0, 1, 3}, {3, 1, 1, 4}};
  std::sort(t.begin(), t.end());
  return t;
}

std::vector<uint64_t> Edges(const EdgeRun& run) {
  return std::vector<uint64_t>(run.edges, run.edges + run.size);
}

TEST(CsrGraphTest, OutRunsAreSortedByRelationThenTail) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  EXPECT_EQ(g.num_nodes(), 5u);
  EXPECT_EQ(g.num_edges(), 5u);
  EXPECT_THAT(Edges(g.out().Run(0)), ElementsAre(PackEdge(0, 2), PackEdge(1, 1), PackEdge(1, 3)));
  EXPECT_THAT(Edges(g.out().Run(1)), ElementsAre());
  EXPECT_THAT(Edges(g.out().Run(4)), ElementsAre());
}

TEST(CsrGraphTest, InRunsAreSortedByRelationThenHeadWithTheirSources) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  const EdgeRun run = g.in().Run(1);
  EXPECT_THAT(Edges(run), ElementsAre(PackEdge(0, 2), PackEdge(1, 0), PackEdge(1, 3)));
  EXPECT_THAT(std::vector<SourceId>(run.sources, run.sources + run.size), ElementsAre(3, 0, 4));
}

TEST(CsrGraphTest, NodesBeyondTheArraysHaveNoEdges) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  EXPECT_EQ(g.out().Run(5).size, 0u);
  EXPECT_EQ(g.in().Run(1000).size, 0u);
}

TEST(CsrGraphTest, RelationRangeAndContainsUseBinarySearch) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  const EdgeRun r1 = g.out().Run(0).RelationRange(1);
  EXPECT_THAT(Edges(r1), ElementsAre(PackEdge(1, 1), PackEdge(1, 3)));
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
  EXPECT_TRUE(copy.Validate(2, 5).ok());
  EXPECT_EQ(copy.out().edges, g.out().edges);
  EXPECT_EQ(copy.in().offsets, g.in().offsets);
  EXPECT_EQ(copy.in().sources, g.in().sources);
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
  EXPECT_EQ(g.Validate(2, 5).code(), absl::StatusCode::kDataLoss);
}

TEST(CsrGraphTest, ValidateRejectsOutOfRangeRelationsAndSources) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  EXPECT_EQ(g.Validate(1, 5).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(g.Validate(2, 4).code(), absl::StatusCode::kDataLoss);
}

TEST(CsrGraphTest, MergeInterleavesExtraEdgesInOrderAndGrowsNodes) {
  const CsrGraph g = CsrGraph::Build(5, 2, Triples());
  const std::vector<uint64_t> extra_edges = {PackEdge(0, 9), PackEdge(1, 2)};
  const std::vector<SourceId> extra_sources = {7, 8};
  auto extra = [&](EntityId node) -> EdgeRun {
    if (node == 0 || node == 6) return {extra_edges.data(), extra_sources.data(), 2};
    return {};
  };
  const CsrAdjacency merged = CsrGraph::Merge(g.out(), 7, extra);
  EXPECT_EQ(merged.num_nodes(), 7u);
  EXPECT_THAT(Edges(merged.Run(0)), ElementsAre(PackEdge(0, 2), PackEdge(0, 9), PackEdge(1, 1),
                                                PackEdge(1, 2), PackEdge(1, 3)));
  const EdgeRun six = merged.Run(6);
  EXPECT_THAT(Edges(six), ElementsAre(PackEdge(0, 9), PackEdge(1, 2)));
  EXPECT_THAT(std::vector<SourceId>(six.sources, six.sources + six.size), ElementsAre(7, 8));
  EXPECT_EQ(merged.edges.size(), 9u);
}

TEST(CsrGraphTest, EmptyGraphIsValid) {
  const CsrGraph g = CsrGraph::Build(0, 0, {});
  EXPECT_EQ(g.num_nodes(), 0u);
  EXPECT_TRUE(g.Validate(0, 0).ok());
}

}  // namespace
}  // namespace ibgraphrag::kgstore
