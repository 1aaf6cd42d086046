#include "services/retriever/ontology_expansion.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::retriever {
namespace {

// The entities one walk direction expands next: entity -> its index in the anchors (-1 for a
// topic entity itself).
using Frontier = absl::flat_hash_map<uint32_t, int>;

// The walk's state across levels.
struct Walk {
  const OntologyOptions& options;
  OntologyExpansion out;
  absl::flat_hash_set<uint32_t> taken;  // topics and anchors: never taken twice
  absl::flat_hash_map<uint32_t, int> subtypes_of, supertypes_of;  // per topic: anchors kept
};

uint32_t TopicOf(const Walk& walk, uint32_t id, int anchor) {
  return anchor < 0 ? id : walk.out.anchors[anchor].topic;
}

// Takes `to` as an anchor reached from `from` (in `frontier`) by is_a triple (h, r, t), unless
// taken already or its topic's cap for the direction is full.
void TakeAnchor(uint32_t from, uint32_t to, bool subtype, uint32_t h, uint32_t r, uint32_t t,
                int level, const Frontier& frontier, Walk* walk, Frontier* next) {
  if (walk->taken.contains(to)) return;
  const int previous = frontier.at(from);
  const uint32_t topic = TopicOf(*walk, from, previous);
  int& count = subtype ? walk->subtypes_of[topic] : walk->supertypes_of[topic];
  const int cap =
      subtype ? walk->options.max_subtypes_per_topic : walk->options.max_supertypes_per_topic;
  if (count >= cap) return;
  ++count;
  walk->taken.insert(to);
  (*next)[to] = static_cast<int>(walk->out.anchors.size());
  walk->out.anchors.push_back({to, topic, level, subtype, previous, h, r, t});
}

// One level: the is_a edges of both frontiers, in kgstore's order, turned into new anchors.
void TakeLevel(const CandidateSubgraph& sg, int level, const Frontier& down, const Frontier& up,
               Walk* walk, Frontier* next_down, Frontier* next_up) {
  for (size_t i = 0; i < sg.heads.size(); ++i) {
    const uint32_t h = sg.heads[i], r = sg.relations[i], t = sg.tails[i];
    if (down.contains(t)) TakeAnchor(t, h, /*subtype=*/true, h, r, t, level, down, walk, next_down);
    if (up.contains(h)) TakeAnchor(h, t, /*subtype=*/false, h, r, t, level, up, walk, next_up);
  }
  for (const RelationInfo& info : sg.relation_info) {
    const bool known = std::any_of(walk->out.relation_info.begin(), walk->out.relation_info.end(),
                                   [&](const RelationInfo& r) { return r.id == info.id; });
    if (!known) walk->out.relation_info.push_back(info);
  }
}

// The level's request: the frontier entities (at most kMaxSubgraphSeeds), is_a edges only.
SubgraphRequest LevelRequest(const Frontier& down, const Frontier& up,
                             const std::vector<std::string>& relations,
                             const OntologyOptions& options, absl::Time deadline) {
  SubgraphRequest request;
  for (const Frontier* f : {&down, &up}) {
    for (const auto& [id, anchor] : *f) request.seed_ids.push_back(id);
  }
  std::sort(request.seed_ids.begin(), request.seed_ids.end());
  request.seed_ids.erase(std::unique(request.seed_ids.begin(), request.seed_ids.end()),
                         request.seed_ids.end());
  if (request.seed_ids.size() > static_cast<size_t>(kgstore::kMaxSubgraphSeeds)) {
    request.seed_ids.resize(kgstore::kMaxSubgraphSeeds);
  }
  request.max_hops = 1;
  request.max_fanout_per_node = options.max_fanout_per_node;
  request.max_triples =
      std::min<int>(100000, std::max<int>(1, static_cast<int>(request.seed_ids.size())) *
                                options.max_fanout_per_node);
  request.allow_relations = relations;
  request.deadline = deadline;
  return request;
}

}  // namespace

absl::StatusOr<OntologyExpansion> ExpandOntology(SubgraphSource& source,
                                                 absl::Span<const uint32_t> topic_ids,
                                                 absl::Span<const std::string> topic_external_ids,
                                                 const OntologyOptions& options,
                                                 absl::Time deadline) {
  const absl::Time start = absl::Now();
  Walk walk{options, {}, {}, {}, {}};
  if (!options.enabled) return walk.out;
  IBGR_ASSIGN_OR_RETURN(const std::vector<std::string> relations,
                        source.KnownRelations(options.is_a_relations, deadline));
  if (relations.empty()) return walk.out;
  // Level 1 starts from the topics as given, so the call also resolves their external ids.
  SubgraphRequest first = LevelRequest({}, {}, relations, options, deadline);
  first.seed_ids.assign(topic_ids.begin(), topic_ids.end());
  first.seed_external_ids.assign(topic_external_ids.begin(), topic_external_ids.end());
  const int topics = static_cast<int>(topic_ids.size() + topic_external_ids.size());
  first.max_triples = std::min(100000, std::max(1, topics) * options.max_fanout_per_node);
  IBGR_ASSIGN_OR_RETURN(CandidateSubgraph sg, source.Extract(first));
  walk.out.topic_ids = sg.resolved_seeds;
  Frontier down, up;
  for (uint32_t t : walk.out.topic_ids) {
    walk.taken.insert(t);
    if (options.max_subtype_depth > 0) down[t] = -1;
    if (options.max_supertype_depth > 0) up[t] = -1;
  }
  const int levels = std::max(options.max_subtype_depth, options.max_supertype_depth);
  for (int level = 1; level <= levels && (!down.empty() || !up.empty()); ++level) {
    if (level > 1) {
      IBGR_ASSIGN_OR_RETURN(sg,
                            source.Extract(LevelRequest(down, up, relations, options, deadline)));
    }
    Frontier next_down, next_up;
    TakeLevel(sg, level, down, up, &walk, &next_down, &next_up);
    down = level < options.max_subtype_depth ? std::move(next_down) : Frontier();
    up = level < options.max_supertype_depth ? std::move(next_up) : Frontier();
  }
  walk.out.walk_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  return std::move(walk.out);
}

}  // namespace ibgraphrag::retriever
