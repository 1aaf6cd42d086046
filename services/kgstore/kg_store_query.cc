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
#include "services/kgstore/kg_store_strings.h"

namespace ibgraphrag::kgstore {
namespace {

struct NodeMark {
  uint32_t epoch = 0;
  uint32_t value = 0;  // discovery index (subgraph) or BFS distance (paths)
};

// A contiguous group of one node's edges: one (direction, relation) group when sampling.
struct Segment {
  const uint64_t* edges;
  uint32_t size;
  bool out;
};

// A chosen edge of a capped node, visited after all picks are chosen and prefetched.
struct Pick {
  const uint64_t* edge;
  bool out;
};

// The per-edge step of the traversal loops; GCC otherwise keeps the lambda out of line.
#if defined(__GNUC__)
#define IBGR_ALWAYS_INLINE __attribute__((always_inline))
#else
#define IBGR_ALWAYS_INLINE
#endif

// How far ahead (in level positions / run positions) traversal loops prefetch.
constexpr size_t kPrefetchOffsetsAhead = 16;
constexpr size_t kPrefetchRunAhead = 8;
constexpr size_t kPrefetchMarksAhead = 8;

struct Scratch {
  std::vector<NodeMark> marks;
  std::vector<NodeMark> back_marks;  // the target side of a bidirectional search
  std::vector<EntityId> back_frontier;
  std::vector<EntityId> meets;
  uint32_t epoch = 0;
  std::vector<uint8_t> relation_ok;
  std::vector<Segment> segments;
  std::vector<uint32_t> quota;
  std::vector<Pick> picks;
  std::vector<EntityId> frontier;
  std::vector<EntityId> next;

  // Starts a traversal over `num_nodes` nodes; returns the epoch that marks "visited".
  uint32_t Begin(size_t num_nodes) {
    if (marks.size() < num_nodes) marks.resize(num_nodes);
    if (back_marks.size() < num_nodes) back_marks.resize(num_nodes);
    if (++epoch == 0) {  // wrapped after 2^32 traversals: stale stamps could collide
      for (NodeMark& m : marks) m.epoch = 0;
      for (NodeMark& m : back_marks) m.epoch = 0;
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

inline Triple MakeTriple(EntityId node, uint64_t packed, bool node_is_head) {
  return node_is_head ? Triple{node, EdgeRelation(packed), EdgeOther(packed), EdgeSource(packed)}
                      : Triple{EdgeOther(packed), EdgeRelation(packed), node, EdgeSource(packed)};
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

// End of the relation group that starts at `i`. Galloping rather than a binary search over the
// rest of the run: groups are usually short, so this is O(log group size).
inline size_t GroupEnd(const EdgeRun& run, size_t i) {
  const uint64_t last = run.edges[i] | ((uint64_t{1} << 48) - 1);  // largest of this relation
  size_t lo = i;
  size_t step = 1;
  while (lo + step < run.size && run.edges[lo + step] <= last) {
    lo += step;
    step <<= 1;
  }
  const size_t hi = std::min(lo + step, run.size);
  return static_cast<size_t>(std::upper_bound(run.edges + lo + 1, run.edges + hi, last) -
                             run.edges);
}

// Splits a run into its relation groups (allowed ones only).
void AppendRelationSegments(const EdgeRun& run, bool out, bool filtered, const uint8_t* ok,
                            std::vector<Segment>* segments) {
  for (size_t i = 0; i < run.size;) {
    const size_t j = GroupEnd(run, i);
    if (!filtered || ok[EdgeRelation(run.edges[i])]) {
      segments->push_back(Segment{run.edges + i, static_cast<uint32_t>(j - i), out});
    }
    i = j;
  }
}

// The same from a CSR run's precomputed group index: no search through the run at all.
void AppendIndexedSegments(const EdgeRun& run, GroupStarts groups, bool out, bool filtered,
                           const uint8_t* ok, std::vector<Segment>* segments) {
  for (size_t k = 0; k < groups.count; ++k) {
    const size_t begin = groups.starts[k];
    const size_t end = k + 1 < groups.count ? groups.starts[k + 1] : run.size;
    // The relation is only read when filtering, which touches the run; unfiltered sampling
    // reads nothing but the index until the picks.
    if (filtered && !ok[EdgeRelation(run.edges[begin])]) continue;
    segments->push_back(Segment{run.edges + begin, static_cast<uint32_t>(end - begin), out});
  }
}

// Water-filling: every group gets an equal share of `cap`; groups smaller than their share are
// taken whole and what they leave goes to the others, until the rest all exceed the share and
// split it evenly (the remainder to the earliest groups). Requires cap < total size. Each round
// is O(groups) and the water level only rises, so no sort is needed.
void BalancedQuotas(const std::vector<Segment>& segments, size_t cap,
                    std::vector<uint32_t>* quota) {
  constexpr uint32_t kOpen = UINT32_MAX;
  const size_t m = segments.size();
  quota->assign(m, kOpen);
  size_t budget = cap;
  size_t open = m;
  for (bool progress = true; progress && open > 0;) {
    progress = false;
    const size_t share = budget / open;
    for (size_t k = 0; k < m; ++k) {
      if ((*quota)[k] == kOpen && segments[k].size <= share) {
        (*quota)[k] = segments[k].size;
        budget -= segments[k].size;
        --open;
        progress = true;
      }
    }
  }
  if (open == 0) return;
  const size_t share = budget / open;
  size_t extra = budget % open;
  for (size_t k = 0; k < m; ++k) {
    if ((*quota)[k] != kOpen) continue;
    (*quota)[k] = static_cast<uint32_t>(share + (extra > 0 ? 1 : 0));
    if (extra > 0) --extra;
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
      segments.push_back({run.edges, static_cast<uint32_t>(run.size), nr.out[c]});
      continue;
    }
    for (RelationId r : relations) {
      const EdgeRun sub = run.RelationRange(r);
      if (sub.size > 0) {
        segments.push_back({sub.edges, static_cast<uint32_t>(sub.size), nr.out[c]});
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
      page.triples.push_back(MakeTriple(query.entity, s.edges[i], s.out));
    }
    skip = 0;
    if (page.triples.size() == static_cast<size_t>(query.limit)) break;
  }
  const int64_t end = query.offset + static_cast<int64_t>(page.triples.size());
  page.next_offset = end < page.total ? end : 0;
  return page;
}

// ---- ExtractSubgraph ----

namespace {

// The per-edge step of ExtractSubgraph while one node is expanded. Passed by value so that its
// fields live in registers, not behind `this`, in the loops over a node's edges.
struct SubgraphEdgeVisitor {
  Subgraph* g;
  NodeMark* marks;
  uint32_t epoch;
  size_t max_triples;
  EntityId u;   // the node being expanded
  size_t idx;   // its index in g->entities
  int32_t hop;  // the hop its new edges land on
  // Emits the edge unless it was (or will be) emitted from its other end: edges back to an
  // earlier hop were handled when that node was expanded, and an edge inside this hop belongs to
  // whichever end was discovered first. False once the budget is spent.
  IBGR_ALWAYS_INLINE bool operator()(uint64_t packed, bool out) const {
    const EntityId v = EdgeOther(packed);
    NodeMark& m = marks[v];
    const bool seen = m.epoch == epoch;
    if (seen) {
      const int32_t other_hop = g->entities[m.value].hop;
      const int32_t parent_hop = hop - 1;
      if (other_hop < parent_hop || (other_hop == parent_hop && m.value < idx)) return true;
    }
    if (g->triples.size() >= max_triples) {
      g->truncated = true;
      return false;
    }
    g->triples.push_back(SubgraphTriple{MakeTriple(u, packed, out), hop});
    if (!seen) {
      m = NodeMark{epoch, static_cast<uint32_t>(g->entities.size())};
      g->entities.push_back(SubgraphEntity{v, hop});
    }
    return true;
  }
};

}  // namespace

// One ExtractSubgraph traversal, breadth-first by hop over the thread's Scratch. Each edge is
// emitted once, from the end discovered first, until the triple budget is spent; nodes with more
// eligible edges than the fan-out get a sample balanced over their relation groups. Runs under
// the caller's shared lock of the store's `mu_`.
class KgStore::SubgraphExpander {
 public:
  SubgraphExpander(const KgStore& store, const SubgraphQuery& query, Scratch* sc, Subgraph* g)
      : store_(store),
        sc_(*sc),
        g_(*g),
        epoch_(sc->Begin(store.entities_.size())),
        marks_(sc->marks.data()),
        filtered_(BuildRelationFilter(query.allow_relations, query.deny_relations,
                                      store.relations_.size(), &sc->relation_ok)),
        ok_(sc->relation_ok.data()),
        max_triples_(static_cast<size_t>(query.max_triples)),
        csr_out_(store.csr_.out()),
        csr_in_(store.csr_.in()),
        indexed_(csr_out_.has_group_index() && csr_in_.has_group_index()) {}

  void AddSeeds(const std::vector<EntityId>& seeds);
  // Expands the nodes g.entities[level_begin, level_end) discovered at hop-1; false once the
  // triple budget is spent.
  bool ExpandLevel(int hop, size_t level_begin, size_t level_end, int64_t max_fanout_per_node);

 private:
  // A level is a list of nodes scattered over the CSR: start fetching the offsets of a node a
  // few steps ahead and the first edges of a nearer one, so those cache misses overlap.
  void PrefetchAhead(size_t idx, size_t level_end) const;
  // Expands node g.entities[idx]; false once the budget is spent.
  bool ExpandNode(size_t idx, int32_t hop, size_t fanout);
  // The common case, degree <= fan-out: every eligible edge of the runs.
  bool TakeAllEdges(const NodeRuns& nr, SubgraphEdgeVisitor visit) const;
  // The node's eligible edges as relation-group segments in sc_.segments.
  void CollectSegments(EntityId u, const NodeRuns& nr);
  bool TakeAllSegments(SubgraphEdgeVisitor visit) const;
  bool TakeBalancedSample(size_t fanout, SubgraphEdgeVisitor visit);

  const KgStore& store_;
  Scratch& sc_;
  Subgraph& g_;
  const uint32_t epoch_;
  NodeMark* const marks_;
  const bool filtered_;
  const uint8_t* const ok_;
  const size_t max_triples_;
  const CsrAdjacency& csr_out_;
  const CsrAdjacency& csr_in_;
  const bool indexed_;
};

void KgStore::SubgraphExpander::AddSeeds(const std::vector<EntityId>& seeds) {
  g_.triples.reserve(std::min<size_t>(max_triples_, 16384));
  g_.entities.reserve(std::min<size_t>(max_triples_ + seeds.size(), store_.entities_.size()));
  for (EntityId s : seeds) {
    if (marks_[s].epoch == epoch_) continue;
    marks_[s] = NodeMark{epoch_, static_cast<uint32_t>(g_.entities.size())};
    g_.entities.push_back(SubgraphEntity{s, 0});
  }
}

bool KgStore::SubgraphExpander::ExpandLevel(int hop, size_t level_begin, size_t level_end,
                                            int64_t max_fanout_per_node) {
  size_t fanout = static_cast<size_t>(max_fanout_per_node);
  if (fanout == 0) {
    const size_t per_node = (max_triples_ - g_.triples.size()) / (level_end - level_begin);
    fanout = std::clamp<size_t>(per_node, kAutoFanoutMin, kAutoFanoutMax);
  }
  for (size_t idx = level_begin; idx < level_end; ++idx) {
    PrefetchAhead(idx, level_end);
    if (!ExpandNode(idx, hop, fanout)) return false;
  }
  return true;
}

void KgStore::SubgraphExpander::PrefetchAhead(size_t idx, size_t level_end) const {
  const size_t csr_nodes = csr_out_.num_nodes();
  if (idx + kPrefetchOffsetsAhead < level_end) {
    const EntityId w = g_.entities[idx + kPrefetchOffsetsAhead].id;
    if (w < csr_nodes) {
      __builtin_prefetch(csr_out_.offsets.data() + w);
      __builtin_prefetch(csr_in_.offsets.data() + w);
      if (indexed_) {
        __builtin_prefetch(csr_out_.group_offsets.data() + w);
        __builtin_prefetch(csr_in_.group_offsets.data() + w);
      }
    }
  }
  if (idx + kPrefetchRunAhead < level_end) {
    const EntityId w = g_.entities[idx + kPrefetchRunAhead].id;
    if (w < csr_nodes) {
      __builtin_prefetch(csr_out_.edges.data() + csr_out_.offsets[w]);
      __builtin_prefetch(csr_in_.edges.data() + csr_in_.offsets[w]);
      if (indexed_) {
        __builtin_prefetch(csr_out_.group_starts.data() + csr_out_.group_offsets[w]);
        __builtin_prefetch(csr_in_.group_starts.data() + csr_in_.group_offsets[w]);
      }
    }
  }
}

bool KgStore::SubgraphExpander::ExpandNode(size_t idx, int32_t hop, size_t fanout) {
  const EntityId u = g_.entities[idx].id;
  const SubgraphEdgeVisitor visit{&g_, marks_, epoch_, max_triples_, u, idx, hop};
  const NodeRuns nr = store_.GatherRuns(u, Direction::kBoth);
  size_t degree = 0;
  for (int c = 0; c < nr.count; ++c) degree += nr.runs[c].size;
  if (degree <= fanout) return TakeAllEdges(nr, visit);
  CollectSegments(u, nr);
  size_t eligible = 0;
  for (const Segment& s : sc_.segments) eligible += s.size;
  if (eligible <= fanout) return TakeAllSegments(visit);
  ++g_.capped_nodes;
  return TakeBalancedSample(fanout, visit);
}

bool KgStore::SubgraphExpander::TakeAllEdges(const NodeRuns& nr, SubgraphEdgeVisitor visit) const {
  const bool filtered = filtered_;
  const uint8_t* const ok = ok_;
  const NodeMark* const marks = marks_;
  for (int c = 0; c < nr.count; ++c) {
    const EdgeRun& run = nr.runs[c];
    for (size_t i = 0; i < run.size; ++i) {
      if (i + kPrefetchMarksAhead < run.size) {
        __builtin_prefetch(marks + EdgeOther(run.edges[i + kPrefetchMarksAhead]));
      }
      if (filtered && !ok[EdgeRelation(run.edges[i])]) continue;
      if (!visit(run.edges[i], nr.out[c])) return false;
    }
  }
  return true;
}

void KgStore::SubgraphExpander::CollectSegments(EntityId u, const NodeRuns& nr) {
  sc_.segments.clear();
  for (int c = 0; c < nr.count; ++c) {
    const CsrAdjacency& adj = nr.out[c] ? csr_out_ : csr_in_;
    if (nr.csr[c] && indexed_) {
      AppendIndexedSegments(nr.runs[c], adj.Groups(u), nr.out[c], filtered_, ok_, &sc_.segments);
    } else {
      AppendRelationSegments(nr.runs[c], nr.out[c], filtered_, ok_, &sc_.segments);
    }
  }
}

bool KgStore::SubgraphExpander::TakeAllSegments(SubgraphEdgeVisitor visit) const {
  for (const Segment& s : sc_.segments) {
    for (uint32_t i = 0; i < s.size; ++i) {
      if (!visit(s.edges[i], s.out)) return false;
    }
  }
  return true;
}

bool KgStore::SubgraphExpander::TakeBalancedSample(size_t fanout, SubgraphEdgeVisitor visit) {
  BalancedQuotas(sc_.segments, fanout, &sc_.quota);
  // Positions first (arithmetic only, each prefetched as it is chosen), visits second: the
  // picks are far apart in a hub's run, and this way their cache misses overlap.
  sc_.picks.clear();
  for (size_t k = 0; k < sc_.segments.size(); ++k) {
    const Segment& s = sc_.segments[k];
    const uint64_t q = sc_.quota[k];
    // Evenly strided positions, centred in each stride, across the relation group.
    for (uint64_t j = 0; j < q; ++j) {
      const size_t i = static_cast<size_t>(((2 * j + 1) * s.size) / (2 * q));
      __builtin_prefetch(s.edges + i);
      sc_.picks.push_back(Pick{s.edges + i, s.out});
    }
  }
  for (const Pick& p : sc_.picks) {
    if (!visit(*p.edge, p.out)) return false;
  }
  return true;
}

namespace {

absl::Status CheckSubgraphLimits(const SubgraphQuery& query) {
  IBGR_RETURN_IF_ERROR(
      CheckRange(static_cast<int64_t>(query.seeds.size()), 1, kMaxSubgraphSeeds, "seeds (count)"));
  IBGR_RETURN_IF_ERROR(CheckRange(query.max_hops, 1, kMaxSubgraphHops, "max_hops"));
  IBGR_RETURN_IF_ERROR(CheckRange(query.max_triples, 1, kMaxSubgraphTriples, "max_triples"));
  return CheckRange(query.max_fanout_per_node, 0, kMaxFanoutPerNode, "max_fanout_per_node");
}

}  // namespace

absl::StatusOr<Subgraph> KgStore::ExtractSubgraph(const SubgraphQuery& query) const {
  IBGR_RETURN_IF_ERROR(CheckSubgraphLimits(query));
  absl::ReaderMutexLock lock(&mu_);
  IBGR_RETURN_IF_ERROR(CheckEntities(query.seeds, "seeds"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.allow_relations, "allow_relations"));
  IBGR_RETURN_IF_ERROR(CheckRelations(query.deny_relations, "deny_relations"));
  Subgraph g;
  SubgraphExpander expander(*this, query, &ThreadScratch(), &g);
  expander.AddSeeds(query.seeds);
  size_t level_begin = 0;
  for (int hop = 1; hop <= query.max_hops; ++hop) {
    const size_t level_end = g.entities.size();
    if (level_begin == level_end) break;
    if (!expander.ExpandLevel(hop, level_begin, level_end, query.max_fanout_per_node)) break;
    level_begin = level_end;
  }
  return g;
}

// ---- ShortestPaths ----

namespace {

// Enumerates step sequences that walk a BFS labelling down from a node at distance k to the
// node at distance 0, one step per label. Used twice per meeting node of a bidirectional
// search: towards the source (prefixes, returned in source-to-meet order) and towards the
// target (suffixes, meet-to-target order).
template <typename RunsFn>
class LabelWalker {
 public:
  // `runs_of(x)` yields the runs to step along from x; `to_source` says the walk runs against
  // the search direction (prefix) rather than with it (suffix).
  LabelWalker(RunsFn runs_of, const NodeMark* marks, uint32_t epoch, bool to_source, bool filtered,
              const uint8_t* ok, int64_t cap, int64_t* scans, bool* truncated)
      : runs_of_(runs_of),
        marks_(marks),
        epoch_(epoch),
        to_source_(to_source),
        filtered_(filtered),
        ok_(ok),
        cap_(cap),
        scans_(scans),
        truncated_(truncated) {}

  void Collect(EntityId from, uint32_t k, size_t max_sequences,
               std::vector<std::vector<PathStep>>* out) {
    out->clear();
    max_ = max_sequences;
    out_ = out;
    stack_.clear();
    Walk(from, k);
  }

 private:
  void Walk(EntityId x, uint32_t k) {
    if (k == 0) {
      if (to_source_) {
        out_->emplace_back(stack_.rbegin(), stack_.rend());
      } else {
        out_->push_back(stack_);
      }
      return;
    }
    const auto nr = runs_of_(x);
    for (int c = 0; c < nr.count; ++c) {
      const EdgeRun& run = nr.runs[c];
      for (size_t i = 0; i < run.size; ++i) {
        if (out_->size() >= max_ || *truncated_) return;
        if (++*scans_ > cap_) {
          *truncated_ = true;
          return;
        }
        const uint64_t packed = run.edges[i];
        if (filtered_ && !ok_[EdgeRelation(packed)]) continue;
        const NodeMark& m = marks_[EdgeOther(packed)];
        if (m.epoch != epoch_ || m.value != k - 1) continue;
        // Towards the source, an in-edge of x (other -> x) is walked forward in the final
        // path; towards the target, an out-edge of x (x -> other) is.
        const bool forward = to_source_ ? !nr.out[c] : nr.out[c];
        stack_.push_back(PathStep{MakeTriple(x, packed, nr.out[c]), forward});
        Walk(EdgeOther(packed), k - 1);
        stack_.pop_back();
      }
    }
  }

  RunsFn runs_of_;
  const NodeMark* marks_;
  uint32_t epoch_;
  bool to_source_;
  bool filtered_;
  const uint8_t* ok_;
  int64_t cap_;
  int64_t* scans_;
  bool* truncated_;
  size_t max_ = 0;
  std::vector<std::vector<PathStep>>* out_ = nullptr;
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
  Scratch& sc = ThreadScratch();
  const bool filtered = BuildRelationFilter(query.allow_relations, query.deny_relations,
                                            relations_.size(), &sc.relation_ok);
  const uint8_t* const ok = sc.relation_ok.data();
  // The source side follows edges as a path does; the target side walks them backwards.
  const Direction with_path = query.undirected ? Direction::kBoth : Direction::kOut;
  const Direction against_path = query.undirected ? Direction::kBoth : Direction::kIn;
  const int64_t cap = options_.max_path_edge_scans;
  const size_t max_paths = static_cast<size_t>(query.max_paths);
  const uint32_t max_length = static_cast<uint32_t>(query.max_length);

  PathResult result;
  int64_t scans = 0;
  std::vector<PairPaths> pairs;
  std::vector<std::vector<PathStep>> prefixes, suffixes;
  for (EntityId s : sources) {
    for (EntityId t : targets) {
      if (s == t) continue;
      if (result.truncated) break;
      // Bidirectional BFS: grow whichever frontier is smaller by one level until the two
      // labellings touch. If the source side is at depth a and the target side at depth b when
      // they first touch, every shortest path has length a + b and passes through exactly one
      // node labelled (a, b): its meeting node. Enumerating prefixes and suffixes per meeting
      // node therefore yields each shortest path once.
      const uint32_t epoch = sc.Begin(entities_.size());
      NodeMark* const fwd = sc.marks.data();
      NodeMark* const bwd = sc.back_marks.data();
      fwd[s] = NodeMark{epoch, 0};
      bwd[t] = NodeMark{epoch, 0};
      sc.frontier.assign(1, s);
      sc.back_frontier.assign(1, t);
      sc.meets.clear();
      uint32_t a = 0, b = 0;
      while (sc.meets.empty() && a + b < max_length && !sc.frontier.empty() &&
             !sc.back_frontier.empty() && !result.truncated) {
        const bool grow_source_side = sc.frontier.size() <= sc.back_frontier.size();
        std::vector<EntityId>& frontier = grow_source_side ? sc.frontier : sc.back_frontier;
        NodeMark* const mine = grow_source_side ? fwd : bwd;
        const NodeMark* const theirs = grow_source_side ? bwd : fwd;
        const uint32_t depth = (grow_source_side ? a : b) + 1;
        const Direction direction = grow_source_side ? with_path : against_path;
        sc.next.clear();
        for (size_t f = 0; f < frontier.size() && !result.truncated; ++f) {
          const NodeRuns nr = GatherRuns(frontier[f], direction);
          for (int c = 0; c < nr.count && !result.truncated; ++c) {
            const EdgeRun& run = nr.runs[c];
            for (size_t i = 0; i < run.size; ++i) {
              if (++scans > cap) {
                result.truncated = true;
                break;
              }
              if (filtered && !ok[EdgeRelation(run.edges[i])]) continue;
              const EntityId v = EdgeOther(run.edges[i]);
              if (mine[v].epoch == epoch) continue;
              mine[v] = NodeMark{epoch, depth};
              sc.next.push_back(v);
              if (theirs[v].epoch == epoch) sc.meets.push_back(v);
            }
          }
        }
        std::swap(frontier, sc.next);
        (grow_source_side ? a : b) = depth;
      }
      if (sc.meets.empty()) continue;

      auto toward_source = [this, against_path](EntityId node) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return GatherRuns(node, against_path);
      };
      auto toward_target = [this, with_path](EntityId node) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return GatherRuns(node, with_path);
      };
      LabelWalker<decltype(toward_source)> prefix_walker(toward_source, fwd, epoch,
                                                         /*to_source=*/true, filtered, ok, cap,
                                                         &scans, &result.truncated);
      LabelWalker<decltype(toward_target)> suffix_walker(toward_target, bwd, epoch,
                                                         /*to_source=*/false, filtered, ok, cap,
                                                         &scans, &result.truncated);
      PairPaths pair;
      pair.length = a + b;
      std::sort(sc.meets.begin(), sc.meets.end());  // deterministic order
      for (EntityId m : sc.meets) {
        if (pair.paths.size() >= max_paths || result.truncated) break;
        prefix_walker.Collect(m, a, max_paths - pair.paths.size(), &prefixes);
        suffix_walker.Collect(m, b, max_paths - pair.paths.size(), &suffixes);
        for (const auto& prefix : prefixes) {
          for (const auto& suffix : suffixes) {
            if (pair.paths.size() >= max_paths) break;
            Path p;
            p.source = s;
            p.target = t;
            p.steps.reserve(prefix.size() + suffix.size());
            p.steps.insert(p.steps.end(), prefix.begin(), prefix.end());
            p.steps.insert(p.steps.end(), suffix.begin(), suffix.end());
            pair.paths.push_back(std::move(p));
          }
        }
      }
      if (!pair.paths.empty()) pairs.push_back(std::move(pair));
    }
  }
  result.edges_scanned = std::min(scans, cap);

  // Shorter pairs first; pairs of equal length share the budget round-robin.
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const PairPaths& x, const PairPaths& y) { return x.length < y.length; });
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
