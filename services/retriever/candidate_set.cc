#include "services/retriever/candidate_set.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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

using TripleKey = std::tuple<uint32_t, uint32_t, uint32_t>;

// Appends each of `candidates`, in order, as a hop-1 triple unless `sg` or an earlier candidate
// has it; returns how many were appended. Only the candidates are hashed (a few hundred): `sg`
// (up to ~10,000 triples) is scanned once against them instead of being put in a set itself.
int64_t AppendMissingHopOne(const std::vector<TripleKey>& candidates, CandidateSubgraph* sg) {
  if (candidates.empty()) return 0;
  const absl::flat_hash_set<TripleKey> wanted(candidates.begin(), candidates.end());
  absl::flat_hash_set<TripleKey> present;  // of `wanted`, what `sg` holds or was appended
  for (size_t i = 0; i < sg->heads.size(); ++i) {
    TripleKey key{sg->heads[i], sg->relations[i], sg->tails[i]};
    if (wanted.contains(key)) present.insert(key);
  }
  int64_t added = 0;
  for (const TripleKey& key : candidates) {
    if (!present.insert(key).second) continue;
    sg->heads.push_back(std::get<0>(key));
    sg->relations.push_back(std::get<1>(key));
    sg->tails.push_back(std::get<2>(key));
    sg->hops.push_back(1);
    ++added;
  }
  return added;
}

// Adds the relations of `infos` that `sg` does not list yet.
void MergeRelationInfo(const std::vector<RelationInfo>& infos, CandidateSubgraph* sg) {
  for (const RelationInfo& info : infos) {
    const bool listed = std::any_of(sg->relation_info.begin(), sg->relation_info.end(),
                                    [&](const RelationInfo& r) { return r.id == info.id; });
    if (!listed) sg->relation_info.push_back(info);
  }
}

// Adds step 0's anchors to `sg`: every triple touching a subtype anchor becomes hop 1 (a
// subtype's facts are near-topic), then the anchors' is_a links and the subtypes' own facts (one
// call, at most max_anchor_triples) are appended as hop-1 triples, each triple once. Parents
// add only their link: their other facts are the topic's 2-hop neighbourhood already, and a
// hub parent's other children (the topic's siblings) are not near-topic.
absl::Status AddAnchorFacts(SubgraphSource& source, const OntologyExpansion& ontology,
                            const CandidateSetOptions& options, CandidateSubgraph* sg) {
  // The subtypes' facts are read first, so a failed read leaves `sg` untouched.
  SubgraphRequest request;
  for (const OntologyAnchor& a : ontology.anchors) {
    if (a.subtype && request.seed_ids.size() < static_cast<size_t>(kgstore::kMaxSubgraphSeeds)) {
      request.seed_ids.push_back(a.id);
    }
  }
  CandidateSubgraph facts;
  if (!request.seed_ids.empty()) {
    request.max_hops = 1;
    request.max_triples = std::max(1, options.ontology.max_anchor_triples);
    request.max_fanout_per_node = options.max_fanout_per_node;
    request.deadline = options.deadline;
    IBGR_ASSIGN_OR_RETURN(facts, source.Extract(request));
  }
  absl::flat_hash_set<uint32_t> anchors;
  for (const OntologyAnchor& a : ontology.anchors) {
    if (a.subtype) anchors.insert(a.id);
  }
  for (size_t i = 0; i < sg->heads.size(); ++i) {
    if (anchors.contains(sg->heads[i]) || anchors.contains(sg->tails[i])) sg->hops[i] = 1;
  }
  std::vector<TripleKey> candidates;
  candidates.reserve(ontology.anchors.size() + facts.heads.size());
  for (const OntologyAnchor& a : ontology.anchors)
    candidates.emplace_back(a.head, a.relation, a.tail);
  for (size_t i = 0; i < facts.heads.size(); ++i) {
    candidates.emplace_back(facts.heads[i], facts.relations[i], facts.tails[i]);
  }
  AppendMissingHopOne(candidates, sg);
  MergeRelationInfo(ontology.relation_info, sg);
  MergeRelationInfo(facts.relation_info, sg);
  return absl::OkStatus();
}

// The intent's relations among the subgraph's relations, by id, with their answer ends.
IntentRelationIds IntentIds(const std::vector<RelationInfo>& relation_info,
                            const std::vector<CandidateSetOptions::AskedRelation>& asked) {
  IntentRelationIds ids;
  for (const RelationInfo& r : relation_info) {
    for (const CandidateSetOptions::AskedRelation& a : asked) {
      if (a.name == r.name) ids[r.id] = AnswerEnds{a.answer_at_head, a.answer_at_tail};
    }
  }
  return ids;
}

// Step 1b, second part: every triple of an asked relation between two topic entities that the KG
// holds, appended when `sg` lacks it. The budgeted call above samples a hub's edges: with the
// options of "What are the adverse effects of metformin?" as topics, the 400 triples went to the
// hundreds of drugs that cause diarrhea, tremor and bleeding, and "Metformin -[drug causes side
// effect]-> Diarrhea", the triple that decides the question, was not among them. One provenance
// read says which of the probes exist: for each pair of topics (earlier topics first: the
// gateway sends the question's entities before the options'), both directions, each asked
// relation, at most kMaxTopicLinkProbes; `*truncated` says how many pairs were left out.
// Relations the subgraph has not met yet have no id here and are skipped.
absl::StatusOr<int64_t> AddTopicLinks(SubgraphSource& source, const CandidateSetOptions& options,
                                      CandidateSubgraph* sg, std::string* truncated) {
  const std::vector<uint32_t>& topics = sg->resolved_seeds;
  if (topics.size() < 2 || options.intent_budget <= 0) return 0;
  std::vector<uint32_t> relation_ids;
  for (const auto& [id, ends] : IntentIds(sg->relation_info, options.intent_relations)) {
    relation_ids.push_back(id);
  }
  if (relation_ids.empty()) return 0;
  std::sort(relation_ids.begin(), relation_ids.end());  // the map's order is not stable
  std::vector<uint32_t> heads, relations, tails;
  const size_t per_pair = 2 * relation_ids.size();
  int64_t pairs = 0;
  int64_t pairs_left_out = 0;
  for (size_t b = 1; b < topics.size(); ++b) {
    for (size_t a = 0; a < b; ++a) {
      if (topics[a] == topics[b]) continue;
      ++pairs;
      if (heads.size() + per_pair > static_cast<size_t>(kMaxTopicLinkProbes)) {
        ++pairs_left_out;
        continue;
      }
      for (uint32_t r : relation_ids) {
        for (const auto& [h, t] : {std::pair{topics[a], topics[b]}, {topics[b], topics[a]}}) {
          heads.push_back(h);
          relations.push_back(r);
          tails.push_back(t);
        }
      }
    }
  }
  if (pairs_left_out > 0) {
    *truncated = absl::StrCat("topic links: ", pairs_left_out, " of ", pairs,
                              " topic pairs not probed (at most ", kMaxTopicLinkProbes, " probes)");
  }
  if (heads.empty()) return 0;
  IBGR_ASSIGN_OR_RETURN(std::vector<TripleSources> found,
                        source.DescribeTriples(heads, relations, tails, options.deadline));
  if (found.size() != heads.size()) {
    return absl::InternalError(
        absl::StrCat("provenance read: ", found.size(), " answers to ", heads.size(), " probes"));
  }
  std::vector<TripleKey> links;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i].found) links.emplace_back(heads[i], relations[i], tails[i]);
  }
  return AppendMissingHopOne(links, sg);
}

// The triples of the intent's relations 1 hop from `seeds` (at most kgstore::kMaxSubgraphSeeds of
// them, at most intent_budget triples), as (head, relation, tail) keys; none when the KG has none
// of the relations. Their relations are merged into `sg`'s.
absl::StatusOr<std::vector<TripleKey>> ReadAskedTriples(SubgraphSource& source,
                                                        const CandidateSetOptions& options,
                                                        absl::Span<const uint32_t> seeds,
                                                        CandidateSubgraph* sg) {
  std::vector<std::string> names;
  for (const CandidateSetOptions::AskedRelation& r : options.intent_relations) {
    names.push_back(r.name);
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<std::string> known,
                        source.KnownRelations(names, options.deadline));
  if (known.empty()) return std::vector<TripleKey>();
  SubgraphRequest request;
  request.seed_ids.assign(
      seeds.begin(),
      seeds.begin() +
          std::min<size_t>(seeds.size(), static_cast<size_t>(kgstore::kMaxSubgraphSeeds)));
  request.max_hops = 1;
  request.max_triples = options.intent_budget;
  request.max_fanout_per_node = 0;
  request.allow_relations = std::move(known);
  request.deadline = options.deadline;
  IBGR_ASSIGN_OR_RETURN(CandidateSubgraph facts, source.Extract(request));
  std::vector<TripleKey> triples;
  triples.reserve(facts.heads.size());
  for (size_t i = 0; i < facts.heads.size(); ++i) {
    triples.emplace_back(facts.heads[i], facts.relations[i], facts.tails[i]);
  }
  MergeRelationInfo(facts.relation_info, sg);
  return triples;
}

// Step 1b: the triples of the intent's relations at the topic entities that `sg` lacks, appended
// as hop-1 triples (one call; its failure leaves `sg` untouched). Returns how many were added.
absl::StatusOr<int64_t> AddIntentFacts(SubgraphSource& source, const CandidateSetOptions& options,
                                       CandidateSubgraph* sg) {
  if (options.intent_relations.empty() || options.intent_budget <= 0 ||
      sg->resolved_seeds.empty()) {
    return 0;
  }
  IBGR_ASSIGN_OR_RETURN(const std::vector<TripleKey> triples,
                        ReadAskedTriples(source, options, sg->resolved_seeds, sg));
  return AppendMissingHopOne(triples, sg);
}

// Step 1c: the anchors of every topic that `sg` holds no triple of an asked relation for (at the
// relation's answer end), parents first, then subtypes by depth; empty when every topic has one.
std::vector<uint32_t> LendingAnchors(const CandidateSubgraph& sg,
                                     const CandidateSetOptions& options,
                                     const OntologyExpansion& ontology) {
  if (options.intent_relations.empty() || ontology.anchors.empty()) return {};
  const IntentRelationIds ids = IntentIds(sg.relation_info, options.intent_relations);
  const absl::flat_hash_set<uint32_t> topics(sg.resolved_seeds.begin(), sg.resolved_seeds.end());
  absl::flat_hash_set<uint32_t> answered;  // topics with a triple of an asked relation
  for (size_t i = 0; i < sg.heads.size(); ++i) {
    const auto it = ids.find(sg.relations[i]);
    if (it == ids.end()) continue;
    if (it->second.head && topics.contains(sg.tails[i])) answered.insert(sg.tails[i]);
    if (it->second.tail && topics.contains(sg.heads[i])) answered.insert(sg.heads[i]);
  }
  std::vector<const OntologyAnchor*> lending;
  for (const OntologyAnchor& a : ontology.anchors) {
    if (topics.contains(a.topic) && !answered.contains(a.topic)) lending.push_back(&a);
  }
  std::stable_sort(lending.begin(), lending.end(),
                   [](const OntologyAnchor* a, const OntologyAnchor* b) {
                     if (a->subtype != b->subtype) return !a->subtype;
                     return a->depth < b->depth;
                   });
  std::vector<uint32_t> out;
  absl::flat_hash_set<uint32_t> seen;
  for (const OntologyAnchor* a : lending) {
    if (out.size() >= static_cast<size_t>(kgstore::kMaxSubgraphSeeds)) break;
    if (seen.insert(a->id).second) out.push_back(a->id);
  }
  return out;
}

// Step 1c's call: the asked relations' triples at `anchors`, hop 1 (a parent's answers were two
// hops out, behind its is_a link), appended when `sg` lacks them (its failure leaves `sg`
// untouched). Returns how many were added.
absl::StatusOr<int64_t> AddLentFacts(SubgraphSource& source, const CandidateSetOptions& options,
                                     const std::vector<uint32_t>& anchors, CandidateSubgraph* sg) {
  if (anchors.empty() || options.intent_budget <= 0) return 0;
  IBGR_ASSIGN_OR_RETURN(const std::vector<TripleKey> triples,
                        ReadAskedTriples(source, options, anchors, sg));
  const absl::flat_hash_set<TripleKey> lent(triples.begin(), triples.end());
  for (size_t i = 0; i < sg->heads.size(); ++i) {
    if (lent.contains(TripleKey{sg->heads[i], sg->relations[i], sg->tails[i]})) sg->hops[i] = 1;
  }
  return AppendMissingHopOne(triples, sg);
}

// Per anchor, its is_a chain as indices into the subgraph's triples (AnchorChain).
std::vector<std::vector<uint32_t>> ChainsInSubgraph(const OntologyExpansion& ontology,
                                                    const CandidateSubgraph& sg) {
  // The first row of each anchor link in `sg` (-1: not there), found in one scan of `sg`.
  absl::flat_hash_map<TripleKey, int64_t> index;
  for (const OntologyAnchor& a : ontology.anchors)
    index.try_emplace(TripleKey{a.head, a.relation, a.tail}, -1);
  for (size_t i = 0; i < sg.heads.size(); ++i) {
    auto it = index.find(TripleKey{sg.heads[i], sg.relations[i], sg.tails[i]});
    if (it != index.end() && it->second < 0) it->second = static_cast<int64_t>(i);
  }
  auto link_index = [&](int a) -> int64_t {
    const OntologyAnchor& anchor = ontology.anchors[a];
    return index.at(TripleKey{anchor.head, anchor.relation, anchor.tail});
  };
  std::vector<std::vector<uint32_t>> chains;
  for (size_t a = 0; a < ontology.anchors.size(); ++a) {
    chains.push_back(AnchorChain(ontology.anchors, static_cast<int>(a), link_index));
  }
  return chains;
}

// The local nodes DDE counts as topics: the topic entities, then the subtype anchors.
std::vector<int32_t> DdeTopics(const LocalGraph& graph, const OntologyExpansion* ontology) {
  std::vector<int32_t> topics = graph.topics;
  if (ontology == nullptr) return topics;
  for (const OntologyAnchor& a : ontology->anchors) {
    auto it = graph.index.find(a.id);
    if (a.subtype && it != graph.index.end()) topics.push_back(it->second);
  }
  return topics;
}

// Rows to keep: the best max_scored by prior plus every chain triple and every `protected_rows`
// triple (ascending), and the chains renumbered to the kept rows.
std::vector<uint32_t> KeepWithChains(absl::Span<const float> prior_scores, int max_scored,
                                     const std::vector<uint32_t>& protected_rows,
                                     std::vector<std::vector<uint32_t>>* chains) {
  std::vector<uint32_t> keep = TopByPrior(prior_scores, max_scored);
  keep.insert(keep.end(), protected_rows.begin(), protected_rows.end());
  for (const std::vector<uint32_t>& chain : *chains) {
    keep.insert(keep.end(), chain.begin(), chain.end());
  }
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  for (std::vector<uint32_t>& chain : *chains) {
    for (uint32_t& i : chain) {
      i = static_cast<uint32_t>(std::lower_bound(keep.begin(), keep.end(), i) - keep.begin());
    }
  }
  return keep;
}

}  // namespace

std::vector<CandidateSetOptions::AskedRelation> IntentRelations(
    const common::QuestionIntent& intent) {
  std::vector<CandidateSetOptions::AskedRelation> out;
  for (const std::string& name : intent.relations) {
    const common::QuestionIntent::AnswerEnds ends = intent.AnswerEndsOf(name);
    out.push_back({name, ends.head, ends.tail});
  }
  return out;
}

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
                                                      const CandidateSetOptions& options,
                                                      const OntologyExpansion* ontology,
                                                      absl::Span<const uint32_t> lending_anchors) {
  if (options.max_scored < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_scored: ", options.max_scored, ", must be >= 0 (0 = no pruning)"));
  }
  const absl::Time t0 = absl::Now();
  CandidateSet set;
  set.graph = BuildLocalGraph(sg.resolved_seeds, sg.heads, sg.tails);
  if (ontology != nullptr) {
    for (const OntologyAnchor& a : ontology->anchors) set.anchors.push_back(a.id);
    set.anchor_chains = ChainsInSubgraph(*ontology, sg);
  }
  if (options.with_dde) {
    IBGR_ASSIGN_OR_RETURN(set.dde,
                          ComputeDde(static_cast<int>(set.graph.nodes.size()), set.graph.heads,
                                     set.graph.tails, DdeTopics(set.graph, ontology), options.dde));
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
  const IntentRelationIds intent_ids = IntentIds(set.relation_info, options.intent_relations);
  // Step 1c's anchors, as local nodes: their answer triples are the answerless topics' own.
  std::vector<int32_t> lenders;
  for (uint32_t id : lending_anchors) {
    if (auto it = set.graph.index.find(id); it != set.graph.index.end()) {
      lenders.push_back(it->second);
    }
  }
  set.lending_anchors.assign(lending_anchors.begin(), lending_anchors.end());
  if (options.max_scored > 0 && set.size() > static_cast<size_t>(options.max_scored)) {
    const std::vector<uint32_t> answers =
        IntentAnswerTriples(set.graph, set.relations, intent_ids, lenders);
    Prune(KeepWithChains(set.prior_scores, options.max_scored, answers, &set.anchor_chains), &set);
  }
  // The intent features of the kept candidates (their local nodes are the whole subgraph's).
  set.intent_answers = MarkIntentFeatures(set.graph, set.relations, intent_ids,
                                          absl::MakeSpan(set.structure_features), lenders);
  set.intent_triples = static_cast<int64_t>(set.intent_answers.size());
  set.features_ms = MsSince(t0);
  return set;
}

namespace {

// Step 0, optional: the walk's failure (the KG unreachable for it, its deadline share spent, an
// is_a relation gone after a KG swap) skips expansion, with the reason in `*skipped`, rather
// than failing the retrieval. Caller errors (unknown topics) fail the topic subgraph call that
// follows as well, which reports them.
OntologyExpansion ExpansionOrSkip(SubgraphSource& source, absl::Span<const uint32_t> topic_ids,
                                  absl::Span<const std::string> topic_external_ids,
                                  const CandidateSetOptions& options, std::string* skipped) {
  absl::StatusOr<OntologyExpansion> walked =
      ExpandOntology(source, topic_ids, topic_external_ids, options.ontology, options.deadline);
  if (walked.ok()) return *std::move(walked);
  *skipped = walked.status().ToString();
  return OntologyExpansion();
}

}  // namespace

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
  std::string skipped;
  OntologyExpansion ontology =
      ExpansionOrSkip(source, topic_ids, topic_external_ids, options, &skipped);
  if (!ontology.topic_ids.empty()) {  // the walk resolved the external ids already
    request.seed_ids = ontology.topic_ids;
    request.seed_external_ids.clear();
  }
  IBGR_ASSIGN_OR_RETURN(CandidateSubgraph sg, source.Extract(request));
  if (!ontology.anchors.empty()) {
    const absl::Status added = AddAnchorFacts(source, ontology, options, &sg);
    if (!added.ok()) {  // the subgraph is unexpanded still: serve it so
      skipped = added.ToString();
      ontology.anchors.clear();
    }
  }
  // Step 1b, optional like step 0: a failed call serves the topic subgraph alone.
  int64_t intent_added = 0;
  std::string intent_skipped;
  if (absl::StatusOr<int64_t> added = AddIntentFacts(source, options, &sg); added.ok()) {
    intent_added = *added;
  } else {
    intent_skipped = added.status().ToString();
  }
  std::string links_truncated;
  if (absl::StatusOr<int64_t> links = AddTopicLinks(source, options, &sg, &links_truncated);
      links.ok()) {
    intent_added += *links;
  } else {
    absl::StrAppend(&intent_skipped, intent_skipped.empty() ? "" : "; ",
                    "topic links: ", links.status().ToString());
  }
  if (!links_truncated.empty()) {
    absl::StrAppend(&intent_skipped, intent_skipped.empty() ? "" : "; ", links_truncated);
  }
  // Step 1c, optional too: a failed call serves the topics' own answers alone.
  std::vector<uint32_t> lenders = LendingAnchors(sg, options, ontology);
  if (absl::StatusOr<int64_t> lent = AddLentFacts(source, options, lenders, &sg); lent.ok()) {
    intent_added += *lent;
  } else {
    lenders.clear();
    absl::StrAppend(&intent_skipped, intent_skipped.empty() ? "" : "; ",
                    "anchors' answers: ", lent.status().ToString());
  }
  const double extract_ms = MsSince(t0);
  IBGR_ASSIGN_OR_RETURN(CandidateSet set,
                        CandidateSetFromSubgraph(std::move(sg), options, &ontology, lenders));
  set.extract_ms = extract_ms;
  set.ontology_skipped = std::move(skipped);
  set.intent_added = intent_added;
  set.intent_skipped = std::move(intent_skipped);
  return set;
}

}  // namespace ibgraphrag::retriever
