#include "services/retriever/candidate_set.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"

namespace ibgraphrag::retriever {
namespace {

double MsSince(absl::Time start) { return absl::ToDoubleMilliseconds(absl::Now() - start); }

// Keeps the rows `keep` (ascending) of a per-triple column of `width` values.
template <typename T>
std::vector<T> KeepRows(std::vector<T> column, const std::vector<uint32_t>& keep, size_t width) {
  if (column.empty()) return column;
  std::vector<T> out;
  out.reserve(keep.size() * width);
  for (uint32_t i : keep) {
    out.insert(out.end(), column.begin() + i * width, column.begin() + (i + 1) * width);
  }
  return out;
}

// Drops every candidate not in `keep` from the per-candidate columns; the node numbering (and
// so the DDE rows) stays that of the whole subgraph.
void Prune(const std::vector<uint32_t>& keep, CandidateSet* set) {
  set->heads = KeepRows(std::move(set->heads), keep, 1);
  set->relations = KeepRows(std::move(set->relations), keep, 1);
  set->tails = KeepRows(std::move(set->tails), keep, 1);
  set->hops = KeepRows(std::move(set->hops), keep, 1);
  set->graph.heads = KeepRows(std::move(set->graph.heads), keep, 1);
  set->graph.tails = KeepRows(std::move(set->graph.tails), keep, 1);
  set->prior_scores = KeepRows(std::move(set->prior_scores), keep, 1);
  set->structure_features =
      KeepRows(std::move(set->structure_features), keep, static_cast<size_t>(kPriorFeatureDim));
}

}  // namespace

std::vector<uint32_t> TopByPrior(absl::Span<const float> prior_scores, int max_scored) {
  std::vector<uint32_t> order(prior_scores.size());
  std::iota(order.begin(), order.end(), 0u);
  if (max_scored <= 0 || static_cast<size_t>(max_scored) >= order.size()) return order;
  auto better = [&](uint32_t a, uint32_t b) {
    if (prior_scores[a] != prior_scores[b]) return prior_scores[a] > prior_scores[b];
    return a < b;
  };
  std::nth_element(order.begin(), order.begin() + max_scored, order.end(), better);
  order.resize(max_scored);
  std::sort(order.begin(), order.end());
  return order;
}

absl::StatusOr<CandidateSet> CandidateSetFromSubgraph(CandidateSubgraph sg,
                                                      const CandidateSetOptions& options) {
  if (options.max_scored < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_scored: ", options.max_scored, ", must be >= 0 (0 = no pruning)"));
  }
  const absl::Time t0 = absl::Now();
  CandidateSet set;
  set.graph = BuildLocalGraph(sg.resolved_seeds, sg.heads, sg.tails);
  if (options.with_dde) {
    IBGR_ASSIGN_OR_RETURN(set.dde,
                          ComputeDde(static_cast<int>(set.graph.nodes.size()), set.graph.heads,
                                     set.graph.tails, set.graph.topics, options.dde));
  }
  StructurePrior prior = ComputeStructurePrior(set.graph, sg.hops, options.with_structure_features);
  set.prior_scores = std::move(prior.scores);
  set.structure_features = std::move(prior.features);
  set.subgraph_triples = static_cast<int64_t>(sg.heads.size());
  set.heads = std::move(sg.heads);
  set.relations = std::move(sg.relations);
  set.tails = std::move(sg.tails);
  set.hops = std::move(sg.hops);
  set.topic_ids = std::move(sg.resolved_seeds);
  set.relation_info = std::move(sg.relation_info);
  set.truncated = sg.truncated;
  set.kg_version = std::move(sg.kg_version);
  if (options.max_scored > 0 && set.size() > static_cast<size_t>(options.max_scored)) {
    Prune(TopByPrior(set.prior_scores, options.max_scored), &set);
  }
  set.features_ms = MsSince(t0);
  return set;
}

absl::StatusOr<CandidateSet> BuildCandidateSet(SubgraphSource& source,
                                               absl::Span<const uint32_t> topic_ids,
                                               absl::Span<const std::string> topic_external_ids,
                                               const CandidateSetOptions& options) {
  const absl::Time t0 = absl::Now();
  SubgraphRequest request;
  request.seed_ids.assign(topic_ids.begin(), topic_ids.end());
  request.seed_external_ids.assign(topic_external_ids.begin(), topic_external_ids.end());
  request.max_hops = options.max_hops;
  request.max_triples = options.max_candidates;
  request.max_fanout_per_node = options.max_fanout_per_node;
  request.deadline = options.deadline;
  IBGR_ASSIGN_OR_RETURN(CandidateSubgraph sg, source.Extract(request));
  const double extract_ms = MsSince(t0);
  IBGR_ASSIGN_OR_RETURN(CandidateSet set, CandidateSetFromSubgraph(std::move(sg), options));
  set.extract_ms = extract_ms;
  return set;
}

}  // namespace ibgraphrag::retriever
