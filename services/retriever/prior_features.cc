#include "services/retriever/prior_features.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numeric>

namespace ibgraphrag::retriever {
namespace {

constexpr int kUnreached = std::numeric_limits<int>::max();

// Undirected adjacency (CSR) over the triples.
struct Adjacency {
  std::vector<int32_t> offsets, adj;
};

Adjacency BuildAdjacency(const LocalGraph& g) {
  const size_t m = g.heads.size();
  Adjacency a;
  a.offsets.assign(g.nodes.size() + 1, 0);
  a.adj.resize(2 * m);
  for (size_t i = 0; i < m; ++i) {
    ++a.offsets[g.heads[i] + 1];
    ++a.offsets[g.tails[i] + 1];
  }
  std::partial_sum(a.offsets.begin(), a.offsets.end(), a.offsets.begin());
  std::vector<int32_t> fill(a.offsets.begin(), a.offsets.end() - 1);
  for (size_t i = 0; i < m; ++i) {
    a.adj[fill[g.heads[i]]++] = g.tails[i];
    a.adj[fill[g.tails[i]]++] = g.heads[i];
  }
  return a;
}

// BFS distances from `sources` (all at distance 0).
std::vector<int> Distances(const Adjacency& a, int nodes, absl::Span<const int32_t> sources) {
  std::vector<int> d(nodes, kUnreached);
  std::deque<int32_t> queue;
  for (int32_t s : sources) {
    if (d[s] == 0) continue;
    d[s] = 0;
    queue.push_back(s);
  }
  while (!queue.empty()) {
    const int32_t u = queue.front();
    queue.pop_front();
    for (int32_t k = a.offsets[u]; k < a.offsets[u + 1]; ++k) {
      if (d[a.adj[k]] == kUnreached) {
        d[a.adj[k]] = d[u] + 1;
        queue.push_back(a.adj[k]);
      }
    }
  }
  return d;
}

uint32_t HopOf(absl::Span<const uint32_t> hops, const std::vector<uint32_t>& local, size_t i) {
  const uint32_t h = i < hops.size() ? hops[i] : local[i];
  return std::max<uint32_t>(1, h);
}

}  // namespace

LocalGraph BuildLocalGraph(absl::Span<const uint32_t> topic_ids, absl::Span<const uint32_t> heads,
                           absl::Span<const uint32_t> tails) {
  LocalGraph g;
  g.index.reserve(topic_ids.size() + heads.size());
  auto local = [&g](uint32_t id) {
    auto [it, inserted] = g.index.try_emplace(id, static_cast<int32_t>(g.nodes.size()));
    if (inserted) g.nodes.push_back(id);
    return it->second;
  };
  for (uint32_t t : topic_ids) {
    const int32_t l = local(t);
    if (std::find(g.topics.begin(), g.topics.end(), l) == g.topics.end()) g.topics.push_back(l);
  }
  g.heads.resize(heads.size());
  g.tails.resize(tails.size());
  for (size_t i = 0; i < heads.size(); ++i) {
    g.heads[i] = local(heads[i]);
    g.tails[i] = local(tails[i]);
  }
  return g;
}

std::vector<int> ShortestPathLengths(const LocalGraph& g) {
  const size_t m = g.heads.size();
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> lengths(m, 0);
  if (g.topics.size() < 2 || m == 0) return lengths;
  const Adjacency a = BuildAdjacency(g);
  std::vector<std::vector<int>> dist(g.topics.size());
  for (size_t t = 0; t < g.topics.size(); ++t) {
    dist[t] = Distances(a, n, absl::MakeConstSpan(&g.topics[t], 1));
  }
  for (size_t x = 0; x < g.topics.size(); ++x) {
    for (size_t y = x + 1; y < g.topics.size(); ++y) {
      const int len = dist[x][g.topics[y]];
      if (len == kUnreached || len == 0) continue;
      const std::vector<int>& dx = dist[x];
      const std::vector<int>& dy = dist[y];
      for (size_t i = 0; i < m; ++i) {
        const int h = g.heads[i], t = g.tails[i];
        const bool on = (dx[h] != kUnreached && dy[t] != kUnreached && dx[h] + 1 + dy[t] == len) ||
                        (dx[t] != kUnreached && dy[h] != kUnreached && dx[t] + 1 + dy[h] == len);
        if (on && (lengths[i] == 0 || len < lengths[i])) lengths[i] = len;
      }
    }
  }
  return lengths;
}

std::vector<uint32_t> LocalHops(const LocalGraph& g) {
  const size_t m = g.heads.size();
  const int n = static_cast<int>(g.nodes.size());
  std::vector<uint32_t> hops(m, 1);
  if (m == 0) return hops;
  const std::vector<int> d = Distances(BuildAdjacency(g), n, g.topics);
  for (size_t i = 0; i < m; ++i) {
    const int near = std::min(d[g.heads[i]], d[g.tails[i]]);
    hops[i] = near == kUnreached ? static_cast<uint32_t>(n) + 1 : static_cast<uint32_t>(near) + 1;
  }
  return hops;
}

std::vector<float> ShortestPathPriorScores(const LocalGraph& g, absl::Span<const uint32_t> hops) {
  return ComputeStructurePrior(g, hops, /*with_features=*/false).scores;
}

std::vector<float> PriorFeatures(const LocalGraph& g, absl::Span<const uint32_t> hops) {
  return ComputeStructurePrior(g, hops, /*with_features=*/true).features;
}

StructurePrior ComputeStructurePrior(const LocalGraph& g, absl::Span<const uint32_t> hops,
                                     bool with_features) {
  const size_t m = g.heads.size();
  const std::vector<uint32_t> local = hops.size() >= m ? std::vector<uint32_t>() : LocalHops(g);
  const std::vector<int> lengths = ShortestPathLengths(g);
  StructurePrior out;
  out.scores.resize(m);
  if (with_features) out.features.assign(m * kPriorFeatureDim, 0.0f);
  for (size_t i = 0; i < m; ++i) {
    const uint32_t hop = HopOf(hops, local, i);
    const float prior = lengths[i] > 0 ? 1.0f - 0.01f * static_cast<float>(lengths[i])
                                       : 0.5f / static_cast<float>(hop);
    out.scores[i] = prior;
    if (!with_features) continue;
    float* row = out.features.data() + i * kPriorFeatureDim;
    row[0] = std::log(prior / (1.0f - prior));
    row[1] = lengths[i] > 0 ? 1.0f : 0.0f;
    row[2] = lengths[i] > 0 ? 1.0f / static_cast<float>(lengths[i]) : 0.0f;
    row[3] = hop == 1 ? 1.0f : 0.0f;
    row[4] = hop == 2 ? 1.0f : 0.0f;
    row[5] = hop >= 3 ? 1.0f : 0.0f;
  }
  return out;
}

std::vector<uint32_t> IntentAnswerTriples(const LocalGraph& g, absl::Span<const uint32_t> relations,
                                          const IntentRelationIds& intent_relations,
                                          absl::Span<const int32_t> lenders) {
  std::vector<uint32_t> out;
  if (intent_relations.empty()) return out;
  absl::flat_hash_set<int32_t> topics(g.topics.begin(), g.topics.end());
  topics.insert(lenders.begin(), lenders.end());
  for (size_t i = 0; i < relations.size(); ++i) {
    auto it = intent_relations.find(relations[i]);
    if (it == intent_relations.end()) continue;
    const bool head_topic = topics.contains(g.heads[i]);
    const bool tail_topic = topics.contains(g.tails[i]);
    if ((tail_topic && it->second.head) || (head_topic && it->second.tail)) {
      out.push_back(static_cast<uint32_t>(i));
    }
  }
  return out;
}

std::vector<uint32_t> MarkIntentFeatures(const LocalGraph& g, absl::Span<const uint32_t> relations,
                                         const IntentRelationIds& intent_relations,
                                         absl::Span<float> features,
                                         absl::Span<const int32_t> lenders) {
  std::vector<uint32_t> answers = IntentAnswerTriples(g, relations, intent_relations, lenders);
  // Without feature rows (a scorer without structure features) only the rows are returned.
  if (intent_relations.empty() || features.size() < relations.size() * kPriorFeatureDim) {
    return answers;
  }
  for (size_t i = 0; i < relations.size(); ++i) {
    features[i * kPriorFeatureDim + 6] = intent_relations.contains(relations[i]) ? 1.0f : 0.0f;
  }
  for (uint32_t i : answers) features[i * kPriorFeatureDim + 7] = 1.0f;
  return answers;
}

}  // namespace ibgraphrag::retriever
