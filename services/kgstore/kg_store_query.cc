// KgStore traversals: Neighbors, ExtractSubgraph, ShortestPaths.
//
// All three run under a shared lock on CSR runs (plus overlay runs after ingests). Per-query
// state lives in a thread-local Scratch: a visited array stamped with a per-query epoch (so
// "clearing" it is one increment, not an O(N) fill, and membership is one array load instead of
// a hash probe), plus reusable frontier and segment buffers. Output vectors are reserved once;
// nothing allocates per triple.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::kgstore {
namespace {

struct NodeMark {
  uint32_t epoch = 0;
  uint32_t value = 0;  // discovery index (subgraph) or BFS distance (paths)
};

// A contiguous group of one node's edges: one (direction, relation) group when sampling.
struct Segment {
  const uint64_t* edges;
  const SourceId* sources;
  uint32_t size;
  bool out;
};

struct Scratch {
  std::vector<NodeMark> marks;
  uint32_t epoch = 0;
  std::vector<uint8_t> relation_ok;
  std::vector<Segment> segments;
  std::vector<uint32_t> order;
  std::vector<uint32_t> quota;
  std::vector<EntityId> frontier;
  std::vector<EntityId> next;

  // Starts a traversal over `num_nodes` nodes; returns the epoch that marks "visited".
  uint32_t Begin(size_t num_nodes) {
    if (marks.size() < num_nodes) marks.resize(num_nodes);
    if (++epoch == 0) {  // wrapped after 2^32 traversals: stale stamps could collide
      for (NodeMark& m : marks) m.epoch = 0;
      epoch = 1;
    }
    return epoch;
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Fills `ok` (indexed by relation id) and returns true when some relation is excluded.
bool BuildRelationFilter(const std::vector<RelationId>& allow, const std::vector<RelationId>& deny,
                         size_t num_relations, std::vector<uint8_t>* ok) {
  if (allow.empty() && deny.empty()) return false;
  ok->assign(num_relations, allow.empty() ? 1 : 0);
  for (RelationId r : allow) (*ok)[r] = 1;
  for (RelationId r : deny) (*ok)[r] = 0;
  return true;
}

inline Triple MakeTriple(EntityId node, uint64_t packed, SourceId source, bool node_is_head) {
  return node_is_head ? Triple{node, EdgeRelation(packed), EdgeOther(packed), source}
                      : Triple{EdgeOther(packed), EdgeRelation(packed), node, source};
}

template <typename T>
std::vector<T> DedupKeepOrder(const std::vector<T>& in) {
  std::vector<T> out;
  out.reserve(in.size());
  for (const T& x : in) {
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

absl::Status CheckRange(int64_t value, int64_t lo, int64_t hi, std::string_view field) {
  if (value < lo || value > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(AsAbsl(field), " must be in [", lo, ", ", hi, "], got ", value));
  }
  return absl::OkStatus();
}

// Splits a run into its relation groups (allowed ones only).
void AppendRelationSegments(const EdgeRun& run, bool out, bool filtered,
                            const std::vector<uint8_t>& ok, std::vector<Segment>* segments) {
  size_t i = 0;
  while (i < run.size) {
    const RelationId r = EdgeRelation(run.edges[i]);
    const uint64_t* end =
        std::lower_bound(run.edges + i, run.edges + run.size, PackEdge(r, 0) + (uint64_t{1} << 32));
    const size_t j = static_cast<size_t>(end - run.edges);
    if (!filtered || ok[r]) {
      segments->push_back(
          Segment{run.edges + i, run.sources + i, static_cast<uint32_t>(j - i), out});
    }
    i = j;
  }
}

// Water-filling: every segment gets an equal share of `cap`; segments smaller than their share
// are taken whole and the unused share goes to the others. Requires cap < total size.
void BalancedQuotas(const std::vector<Segment>& segments, size_t cap, std::vector<uint32_t>* order,
                    std::vector<uint32_t>* quota) {
  const size_t m = segments.size();
  order->resize(m);
  quota->assign(m, 0);
  for (size_t k = 0; k < m; ++k) (*order)[k] = static_cast<uint32_t>(k);
  std::stable_sort(order->begin(), order->end(), [&segments](uint32_t a, uint32_t b) {
    return segments[a].size < segments[b].size;
  });
  size_t remaining = cap;
  for (size_t k = 0; k < m; ++k) {
    const size_t left = m - k;
    const size_t share = remaining / left;
    const uint32_t seg = (*order)[k];
    if (segments[seg].size <= share) {
      (*quota)[seg] = segments[seg].size;
      remaining -= segments[seg].size;
      continue;
    }
    // Every segment from here on is larger than the share: split what is left evenly, the
    // remainder going to the smaller ones first.
    const size_t extra = remaining % left;
    for (size_t j = k; j < m; ++j) {
      (*quota)[(*order)[j]] = static_cast<uint32_t>(share + (j - k < extra ? 1 : 0));
    }
    break;
  }
}

}  // namespace

// ---- Neighbors ----

absl::StatusOr<NeighborPage> KgStore::Neighbors(const NeighborQuery& query) const {
  IBGR_RETURN_IF_ERROR(CheckRange(query.limit, 1, kMaxNeighborLimit, "limit"));
  if (query.offset < 0) {
    return absl::InvalidArgumentError(absl::StrCat("offset must be >= 0, got ", query.offset));
  }
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities({query.entity}, "entity"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.relations, "relations"));
  std::vector<RelationId> relations = query.relations;
  std::sort(relations.begin(), relations.end());
  relations.erase(std::unique(relations.begin(), relations.end()), relations.end());

  const NodeRuns nr = GatherRuns(query.entity, query.direction);
  std::vector<Segment> segments;
  for (int c = 0; c < nr.count; ++c) {
    const EdgeRun& run = nr.runs[c];
    if (relations.empty()) {
      segments.push_back({run.edges, run.sources, static_cast<uint32_t>(run.size), nr.out[c]});
      continue;
    }
    for (RelationId r : relations) {
      const EdgeRun sub = run.RelationRange(r);
      if (sub.size > 0) {
        segments.push_back({sub.edges, sub.sources, static_cast<uint32_t>(sub.size), nr.out[c]});
      }
    }
  }
  NeighborPage page;
  for (const Segment& s : segments) page.total += s.size;
  int64_t skip = query.offset;
  page.triples.reserve(static_cast<size_t>(
      std::max<int64_t>(0, std::min<int64_t>(query.limit, page.total - query.offset))));
  for (const Segment& s : segments) {
    if (skip >= s.size) {
      skip -= s.size;
      continue;
    }
    for (size_t i = static_cast<size_t>(skip);
         i < s.size && page.triples.size() < static_cast<size_t>(query.limit); ++i) {
      page.triples.push_back(MakeTriple(query.entity, s.edges[i], s.sources[i], s.out));
    }
    skip = 0;
    if (page.triples.size() == static_cast<size_t>(query.limit)) break;
  }
  const int64_t end = query.offset + static_cast<int64_t>(page.triples.size());
  page.next_offset = end < page.total ? end : 0;
  return page;
}

// ---- ExtractSubgraph ----

absl::StatusOr<Subgraph> KgStore::ExtractSubgraph(const SubgraphQuery& query) const {
  IBGR_RETURN_IF_ERROR(CheckRange(static_cast<int64_t>(query.seeds.size()), 1, kMaxSubgraphSeeds,
                                  "seeds (count)"));
  IBGR_RETURN_IF_ERROR(CheckRange(query.max_hops, 1, kMaxSubgraphHops, "max_hops"));
  IBGR_RETURN_IF_ERROR(CheckRange(query.max_triples, 1, kMaxSubgraphTriples, "max_triples"));
  IBGR_RETURN_IF_ERROR(
      CheckRange(query.max_fanout_per_node, 0, kMaxFanoutPerNode, "max_fanout_per_node"));
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities(query.seeds, "seeds"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.allow_relations, "allow_relations"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.deny_relations, "deny_relations"));

  Scratch& sc = ThreadScratch();
  const uint32_t epoch = sc.Begin(entities_.size());
  NodeMark* const marks = sc.marks.data();
  const bool filtered = BuildRelationFilter(query.allow_relations, query.deny_relations,
                                            relations_.size(), &sc.relation_ok);
  const uint8_t* const ok = sc.relation_ok.data();
  const size_t max_triples = static_cast<size_t>(query.max_triples);

  Subgraph g;
  g.triples.reserve(std::min<size_t>(max_triples, 16384));
  g.entities.reserve(std::min<size_t>(max_triples + query.seeds.size(), entities_.size()));
  for (EntityId s : query.seeds) {
    if (marks[s].epoch == epoch) continue;
    marks[s] = NodeMark{epoch, static_cast<uint32_t>(g.entities.size())};
    g.entities.push_back(SubgraphEntity{s, 0});
  }

  bool done = false;
  size_t level_begin = 0;
  for (int hop = 1; hop <= query.max_hops && !done; ++hop) {
    const size_t level_end = g.entities.size();
    if (level_begin == level_end) break;
    size_t fanout = static_cast<size_t>(query.max_fanout_per_node);
    if (fanout == 0) {
      const size_t per_node = (max_triples - g.triples.size()) / (level_end - level_begin);
      fanout = std::clamp<size_t>(per_node, kAutoFanoutMin, kAutoFanoutMax);
    }
    const int32_t parent_hop = hop - 1;
    for (size_t idx = level_begin; idx < level_end && !done; ++idx) {
      const EntityId u = g.entities[idx].id;
      // Emits the edge unless it was (or will be) emitted from its other end: edges back to an
      // earlier hop were handled when that node was expanded, and an edge inside this hop
      // belongs to whichever end was discovered first. Returns false once the budget is spent.
      auto visit = [&](uint64_t packed, SourceId source, bool out) -> bool {
        const EntityId v = EdgeOther(packed);
        NodeMark& m = marks[v];
        const bool seen = m.epoch == epoch;
        if (seen) {
          const int32_t other_hop = g.entities[m.value].hop;
          if (other_hop < parent_hop || (other_hop == parent_hop && m.value < idx)) return true;
        }
        if (g.triples.size() >= max_triples) {
          g.truncated = true;
          return false;
        }
        g.triples.push_back(SubgraphTriple{MakeTriple(u, packed, source, out), hop});
        if (!seen) {
          m = NodeMark{epoch, static_cast<uint32_t>(g.entities.size())};
          g.entities.push_back(SubgraphEntity{v, hop});
        }
        return true;
      };

      const NodeRuns nr = GatherRuns(u, Direction::kBoth);
      size_t degree = 0;
      for (int c = 0; c < nr.count; ++c) degree += nr.runs[c].size;
      if (degree <= fanout) {  // common case: take every eligible edge
        for (int c = 0; c < nr.count && !done; ++c) {
          const EdgeRun& run = nr.runs[c];
          for (size_t i = 0; i < run.size; ++i) {
            if (filtered && !ok[EdgeRelation(run.edges[i])]) continue;
            if (!visit(run.edges[i], run.sources[i], nr.out[c])) {
              done = true;
              break;
            }
          }
        }
        continue;
      }
      sc.segments.clear();
      for (int c = 0; c < nr.count; ++c) {
        AppendRelationSegments(nr.runs[c], nr.out[c], filtered, sc.relation_ok, &sc.segments);
      }
      size_t eligible = 0;
      for (const Segment& s : sc.segments) eligible += s.size;
      if (eligible <= fanout) {
        for (const Segment& s : sc.segments) {
          for (uint32_t i = 0; i < s.size && !done; ++i) {
            done = !visit(s.edges[i], s.sources[i], s.out);
          }
          if (done) break;
        }
        continue;
      }
      ++g.capped_nodes;
      BalancedQuotas(sc.segments, fanout, &sc.order, &sc.quota);
      for (size_t k = 0; k < sc.segments.size() && !done; ++k) {
        const Segment& s = sc.segments[k];
        const uint64_t q = sc.quota[k];
        // Evenly strided positions (centred in each stride) across the relation group.
        for (uint64_t j = 0; j < q && !done; ++j) {
          const size_t i = static_cast<size_t>(((2 * j + 1) * s.size) / (2 * q));
          done = !visit(s.edges[i], s.sources[i], s.out);
        }
      }
    }
    level_begin = level_end;
  }
  return g;
}

// ---- ShortestPaths ----

namespace {

// Walks back from a target along BFS distances, emitting every path of minimal length.
template <typename RunsFn>
class PathEnumerator {
 public:
  PathEnumerator(RunsFn runs_of, const NodeMark* marks, uint32_t epoch, bool filtered,
                 const uint8_t* ok, int64_t cap, int64_t* scans, bool* truncated)
      : runs_of_(runs_of),
        marks_(marks),
        epoch_(epoch),
        filtered_(filtered),
        ok_(ok),
        cap_(cap),
        scans_(scans),
        truncated_(truncated) {}

  void Enumerate(EntityId source, EntityId target, uint32_t length, size_t max_paths,
                 std::vector<Path>* out) {
    source_ = source;
    target_ = target;
    max_paths_ = max_paths;
    out_ = out;
    stack_.clear();
    Walk(target, length);
  }

 private:
  void Walk(EntityId x, uint32_t k) {
    if (k == 0) {
      Path p;
      p.source = source_;
      p.target = target_;
      p.steps.assign(stack_.rbegin(), stack_.rend());
      out_->push_back(std::move(p));
      return;
    }
    const auto nr = runs_of_(x);
    for (int c = 0; c < nr.count; ++c) {
      const EdgeRun& run = nr.runs[c];
      for (size_t i = 0; i < run.size; ++i) {
        if (out_->size() >= max_paths_ || *truncated_) return;
        if (++*scans_ > cap_) {
          *truncated_ = true;
          return;
        }
        const uint64_t packed = run.edges[i];
        if (filtered_ && !ok_[EdgeRelation(packed)]) continue;
        const NodeMark& m = marks_[EdgeOther(packed)];
        if (m.epoch != epoch_ || m.value != k - 1) continue;
        // x's in-edge (other -> x) is walked forward; x's out-edge (x -> other) backward.
        stack_.push_back(PathStep{MakeTriple(x, packed, run.sources[i], nr.out[c]), !nr.out[c]});
        Walk(EdgeOther(packed), k - 1);
        stack_.pop_back();
      }
    }
  }

  RunsFn runs_of_;
  const NodeMark* marks_;
  uint32_t epoch_;
  bool filtered_;
  const uint8_t* ok_;
  int64_t cap_;
  int64_t* scans_;
  bool* truncated_;
  EntityId source_ = kInvalidEntity;
  EntityId target_ = kInvalidEntity;
  size_t max_paths_ = 0;
  std::vector<Path>* out_ = nullptr;
  std::vector<PathStep> stack_;
};

struct PairPaths {
  uint32_t length;
  std::vector<Path> paths;
};

}  // namespace

absl::StatusOr<PathResult> KgStore::ShortestPaths(const PathQuery& query) const {
  IBGR_RETURN_IF_ERROR(CheckRange(static_cast<int64_t>(query.sources.size()), 1, kMaxPathEndpoints,
                                  "sources (count)"));
  IBGR_RETURN_IF_ERROR(CheckRange(static_cast<int64_t>(query.targets.size()), 1, kMaxPathEndpoints,
                                  "targets (count)"));
  IBGR_RETURN_IF_ERROR(CheckRange(query.max_length, 1, kMaxPathLength, "max_length"));
  IBGR_RETURN_IF_ERROR(CheckRange(query.max_paths, 1, kMaxPaths, "max_paths"));
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities(query.sources, "sources"));
  IBGR_RETURN_IF_ERROR(CheckEntities(query.targets, "targets"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.allow_relations, "allow_relations"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.deny_relations, "deny_relations"));

  const std::vector<EntityId> sources = DedupKeepOrder(query.sources);
  const std::vector<EntityId> targets = DedupKeepOrder(query.targets);
  std::vector<std::pair<EntityId, uint32_t>> target_index;  // sorted (id, position)
  for (size_t t = 0; t < targets.size(); ++t) {
    target_index.emplace_back(targets[t], static_cast<uint32_t>(t));
  }
  std::sort(target_index.begin(), target_index.end());

  Scratch& sc = ThreadScratch();
  const bool filtered = BuildRelationFilter(query.allow_relations, query.deny_relations,
                                            relations_.size(), &sc.relation_ok);
  const uint8_t* const ok = sc.relation_ok.data();
  const Direction forward = query.undirected ? Direction::kBoth : Direction::kOut;
  const Direction backward = query.undirected ? Direction::kBoth : Direction::kIn;
  const int64_t cap = options_.max_path_edge_scans;
  const size_t max_paths = static_cast<size_t>(query.max_paths);

  PathResult result;
  int64_t scans = 0;
  std::vector<PairPaths> pairs;
  std::vector<int32_t> target_distance(targets.size());
  for (EntityId s : sources) {
    if (result.truncated) break;
    const uint32_t epoch = sc.Begin(entities_.size());
    NodeMark* const marks = sc.marks.data();
    marks[s] = NodeMark{epoch, 0};
    std::fill(target_distance.begin(), target_distance.end(), -1);
    size_t remaining = targets.size() - (std::find(targets.begin(), targets.end(), s) != targets.end());
    sc.frontier.assign(1, s);
    // Level-synchronous BFS; it may stop mid-level (all targets found, or the scan cap), which
    // is safe: a node's distance is final when first marked and level d-1 is complete by then.
    for (uint32_t d = 1; d <= static_cast<uint32_t>(query.max_length) && remaining > 0 &&
                         !sc.frontier.empty() && !result.truncated;
         ++d) {
      sc.next.clear();
      for (size_t f = 0; f < sc.frontier.size() && remaining > 0 && !result.truncated; ++f) {
        const NodeRuns nr = GatherRuns(sc.frontier[f], forward);
        for (int c = 0; c < nr.count && remaining > 0; ++c) {
          const EdgeRun& run = nr.runs[c];
          for (size_t i = 0; i < run.size; ++i) {
            if (++scans > cap) {
              result.truncated = true;
              break;
            }
            if (filtered && !ok[EdgeRelation(run.edges[i])]) continue;
            const EntityId v = EdgeOther(run.edges[i]);
            if (marks[v].epoch == epoch) continue;
            marks[v] = NodeMark{epoch, d};
            sc.next.push_back(v);
            auto it = std::lower_bound(target_index.begin(), target_index.end(),
                                       std::pair<EntityId, uint32_t>{v, 0});
            if (it != target_index.end() && it->first == v) {
              target_distance[it->second] = static_cast<int32_t>(d);
              if (--remaining == 0) break;
            }
          }
          if (result.truncated) break;
        }
      }
      std::swap(sc.frontier, sc.next);
    }
    auto runs_of = [this, backward](EntityId node) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return GatherRuns(node, backward);
    };
    PathEnumerator<decltype(runs_of)> enumerator(runs_of, marks, epoch, filtered, ok, cap, &scans,
                                                 &result.truncated);
    for (size_t t = 0; t < targets.size(); ++t) {
      if (target_distance[t] <= 0) continue;
      PairPaths pair;
      pair.length = static_cast<uint32_t>(target_distance[t]);
      enumerator.Enumerate(s, targets[t], pair.length, max_paths, &pair.paths);
      if (!pair.paths.empty()) pairs.push_back(std::move(pair));
    }
  }
  result.edges_scanned = std::min(scans, cap);

  // Shorter pairs first; pairs of equal length share the budget round-robin.
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const PairPaths& a, const PairPaths& b) { return a.length < b.length; });
  std::vector<size_t> taken(pairs.size(), 0);
  size_t budget = max_paths;
  for (size_t begin = 0; begin < pairs.size() && budget > 0;) {
    size_t end = begin;
    while (end < pairs.size() && pairs[end].length == pairs[begin].length) ++end;
    for (bool progress = true; progress && budget > 0;) {
      progress = false;
      for (size_t p = begin; p < end && budget > 0; ++p) {
        if (taken[p] < pairs[p].paths.size()) {
          ++taken[p];
          --budget;
          progress = true;
        }
      }
    }
    begin = end;
  }
  for (size_t p = 0; p < pairs.size(); ++p) {
    for (size_t k = 0; k < taken[p]; ++k) result.paths.push_back(std::move(pairs[p].paths[k]));
  }
  return result;
}

}  // namespace ibgraphrag::kgstore
