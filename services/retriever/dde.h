// Directional distance encoding (DDE) of a candidate subgraph, the structural half of the triple
// features (SubgraphRAG; see docs/retriever.md). Plain C++, no allocation beyond the output.
//
// For a subgraph over local node indices 0..num_nodes-1 and topic nodes T:
//   s^(0)_e = 1 if e in T else 0
//   forward round:  s^(l+1)_e = mean of s^(l)_{e'} over predecessors e' (triples e' -> e)
//   reverse round:  s^(l+1)_e = mean of s^(l)_{e'} over successors e' (triples e -> e')
// Forward rounds chain from s^(0); reverse rounds chain from s^(0) as well. A node with no
// predecessors (successors) gets 0 in a forward (reverse) round. The node feature is
// [s^(0), forward_1..forward_F, reverse_1..reverse_R], i.e. 1 + F + R floats; a triple's
// structural feature is s_head ‖ s_tail.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_DDE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_DDE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ibgraphrag::retriever {

struct DdeOptions {
  // Forward (head -> tail) propagation rounds, 0..8.
  int forward_rounds = 2;
  // Reverse (tail -> head) propagation rounds, 0..8.
  int reverse_rounds = 2;

  // Floats per node: s^(0) plus one per round.
  int node_dim() const { return 1 + forward_rounds + reverse_rounds; }
};

// Node features, row-major [num_nodes x options.node_dim()].
struct DdeFeatures {
  int num_nodes = 0;
  int dim = 0;
  std::vector<float> values;

  const float* row(int node) const { return values.data() + static_cast<size_t>(node) * dim; }
};

// Computes DDE features. `heads[i] -> tails[i]` are the subgraph's edges (relations do not
// matter); `topics` are local node indices. INVALID_ARGUMENT when arrays differ in length, an
// index is out of range or the round counts are outside 0..8.
absl::StatusOr<DdeFeatures> ComputeDde(int num_nodes, absl::Span<const int32_t> heads,
                                       absl::Span<const int32_t> tails,
                                       absl::Span<const int32_t> topics, const DdeOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_DDE_H_
