#include "services/retriever/dde.h"

#include "absl/strings/str_cat.h"

namespace ibgraphrag::retriever {
namespace {

// One propagation round: next[to] = mean over edges (from -> to) of prev[from]. `degree` holds
// the in-degree of each `to` node.
void Propagate(absl::Span<const int32_t> from, absl::Span<const int32_t> to,
               const std::vector<int32_t>& degree, const std::vector<float>& prev,
               std::vector<float>* next) {
  next->assign(prev.size(), 0.0f);
  for (size_t i = 0; i < from.size(); ++i) (*next)[to[i]] += prev[from[i]];
  for (size_t n = 0; n < next->size(); ++n) {
    if (degree[n] > 0) (*next)[n] /= static_cast<float>(degree[n]);
  }
}

}  // namespace

absl::StatusOr<DdeFeatures> ComputeDde(int num_nodes, absl::Span<const int32_t> heads,
                                       absl::Span<const int32_t> tails,
                                       absl::Span<const int32_t> topics,
                                       const DdeOptions& options) {
  if (options.forward_rounds < 0 || options.forward_rounds > 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("dde.forward_rounds: ", options.forward_rounds, " outside 0..8"));
  }
  if (options.reverse_rounds < 0 || options.reverse_rounds > 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("dde.reverse_rounds: ", options.reverse_rounds, " outside 0..8"));
  }
  if (num_nodes < 0) return absl::InvalidArgumentError("num_nodes: negative");
  if (heads.size() != tails.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("heads/tails: lengths differ (", heads.size(), " vs ", tails.size(), ")"));
  }
  std::vector<int32_t> in_degree(num_nodes, 0), out_degree(num_nodes, 0);
  for (size_t i = 0; i < heads.size(); ++i) {
    if (heads[i] < 0 || heads[i] >= num_nodes || tails[i] < 0 || tails[i] >= num_nodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("triple ", i, ": node index outside 0..", num_nodes - 1));
    }
    ++out_degree[heads[i]];
    ++in_degree[tails[i]];
  }
  DdeFeatures out;
  out.num_nodes = num_nodes;
  out.dim = options.node_dim();
  out.values.assign(static_cast<size_t>(num_nodes) * out.dim, 0.0f);

  std::vector<float> s0(num_nodes, 0.0f);
  for (int32_t t : topics) {
    if (t < 0 || t >= num_nodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("topics: node index ", t, " outside 0..", num_nodes - 1));
    }
    s0[t] = 1.0f;
  }
  auto store = [&](int column, const std::vector<float>& s) {
    for (int n = 0; n < num_nodes; ++n)
      out.values[static_cast<size_t>(n) * out.dim + column] = s[n];
  };
  store(0, s0);
  std::vector<float> prev, next;
  prev = s0;
  for (int r = 0; r < options.forward_rounds; ++r) {
    Propagate(heads, tails, in_degree, prev, &next);  // predecessors: head -> tail
    store(1 + r, next);
    prev.swap(next);
  }
  prev = s0;
  for (int r = 0; r < options.reverse_rounds; ++r) {
    Propagate(tails, heads, out_degree, prev, &next);  // successors: tail -> head
    store(1 + options.forward_rounds + r, next);
    prev.swap(next);
  }
  return out;
}

}  // namespace ibgraphrag::retriever
