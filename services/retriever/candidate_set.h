// The candidate set of one question: the triples the scorer sees and every feature it reads.
// Retrieve and the trainer both build it here, so a model is trained on exactly the candidates
// (and DDE / structure features) it is served with. Plain C++, no LibTorch, no gRPC.
//
//   0. ontology expansion (ontology_expansion.h): the topics' is_a subtypes and parents
//      ("anchors"), when the KG has is_a relations and options.ontology.enabled
//   1. extract the subgraph around the topic entities (SubgraphSource, ≤ max_candidates triples);
//      with anchors, add their is_a chains and the subtypes' own facts (≤ max_anchor_triples)
//      as near-topic triples (kgstore hop 1)
//   2. number its nodes (LocalGraph), compute DDE over the whole subgraph (subtype anchors count
//      as topic entities for DDE: a subtype's facts are the topic's own; the shortest topic-topic
//      path features still use the question's topic entities only)
//   3. the shortest-path prior per triple (SHORTEST_PATH score) and, when asked, the structure
//      features (PriorFeatures), from one shortest-path pass over the whole subgraph
//   1b. the question's intent (common/question_intent.h): the triples of the relations it asks
//      about at the topic entities, from one more subgraph call (1 hop, only those relations, at
//      most intent_budget), join the candidates as hop-1 triples: at a hub (type 2 diabetes has
//      hundreds of gene associations) the relation-blind extraction and prior keep few or none
//      of them, and the answer must be among the candidates to be retrieved; and every triple of
//      an asked relation between two topic entities (a question entity and an option), probed
//      by one provenance read, since the budgeted call samples a hub's edges
//   1c. a topic the asked relations do not reach borrows from its is_a anchors: a topic with no
//      triple of an asked relation at its answer end after 1b ("Which gene causes hemochromatosis
//      type 1?": the KG files HFE, TFR2, HJV under hemochromatosis, the parent, and no gene
//      under type 1) gets its anchors' triples of those relations (one more subgraph call, 1 hop,
//      at most intent_budget), joined as hop-1 triples; those anchors then count as topics for
//      the intent's answer triples (kept through pruning, feature 7). A topic with answers of its
//      own does not borrow: hemophilia A's F8 is its answer, and its parent's SERPINC1 and F5 are
//      not
//   4. prune: keep only the `max_scored` triples the prior ranks best (ties: BFS order), so the
//      MLP scores fewer candidates; pruned triples are dropped, not scored (the anchors' is_a
//      chains and the intent's answer triples (relation asked for, touching a topic) are always
//      kept: a relation-aware budget on top of the prior's)
//   5. the intent features (MarkIntentFeatures) of the kept candidates
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_CANDIDATE_SET_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_CANDIDATE_SET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/question_intent.h"
#include "services/retriever/dde.h"
#include "services/retriever/ontology_expansion.h"
#include "services/retriever/prior_features.h"
#include "services/retriever/subgraph_source.h"

namespace ibgraphrag::retriever {

// Candidates the model scores per question after pruning by the prior; 0 = no pruning. The
// serving default and the trainer's default (they must agree). 500 of the ~1,750 a 2,000-cap
// subgraph holds on average: Retrieve 1.8x faster on the gateway's true/false questions, with
// validation hit@10/50/100 no lower than unpruned (docs/retriever.md "Speed").
inline constexpr int kDefaultMaxScoredCandidates = 500;
// Triples of the intent's relations fetched at the topic entities (step 1b). 400: type 2
// diabetes, the embedded KG's biggest disease hub, has ~100 treating drugs and ~600 associated
// genes; kgstore's fan-out sampling spreads the 400 over the relations asked about.
inline constexpr int kIntentCandidateBudget = 400;
// Step 1b's probes for asked-relation triples between two topic entities (ordered topic pairs x
// asked relations); pairs past it are not probed.
inline constexpr int kMaxTopicLinkProbes = 2048;

struct CandidateSetOptions {
  // Hops from the topic entities, 1..4.
  int max_hops = 2;
  // Cap on the extracted subgraph (triples), 1..100,000.
  int max_candidates = 2000;
  // Edges kgstore follows per node; 0 = its automatic spread.
  int max_fanout_per_node = 0;
  // Keep only this many candidates, the best by the shortest-path prior (ties: BFS order, i.e.
  // nearer hops first); 0 = keep all. DDE and structure features are still computed over the
  // whole subgraph, so a kept triple's features do not depend on the pruning.
  int max_scored = kDefaultMaxScoredCandidates;
  // Compute DDE (false when nothing reads it: SHORTEST_PATH and COSINE scoring).
  bool with_dde = true;
  // DDE rounds; must be the model's (its manifest records them).
  DdeOptions dde;
  // Compute the kPriorFeatureDim structure features (models with prior_dim > 0).
  bool with_structure_features = true;
  // Step 0. On by default in training (recorded in the manifest); serving expands only for a
  // model whose manifest records it, so a model sees the candidates it was trained on.
  OntologyOptions ontology;
  // Step 1b: the KG relations the question asks about and their answer ends (IntentRelations of a
  // common::QuestionIntent; names the KG lacks are ignored); empty = no intent, the topic
  // neighbourhood only.
  struct AskedRelation {
    std::string name;
    bool answer_at_head = true;
    bool answer_at_tail = true;
  };
  std::vector<AskedRelation> intent_relations;
  // Step 1b's cap on triples, 0..100,000 (0 = no extra call: the intent only marks features and
  // protects from pruning what the topic subgraph already holds).
  int intent_budget = kIntentCandidateBudget;
  // The subgraph call gives up after this.
  absl::Time deadline = absl::InfiniteFuture();
};

struct CandidateSet {
  // The kept candidates (global ids and kgstore hop), in subgraph BFS order.
  std::vector<uint32_t> heads, relations, tails, hops;
  // Local numbering of the whole subgraph: nodes/index/topics cover every extracted entity;
  // graph.heads / graph.tails are the kept candidates' local nodes (rows of `dde`).
  LocalGraph graph;
  // Per local node; empty (num_nodes 0) when !with_dde.
  DdeFeatures dde;
  // Per kept candidate: the SHORTEST_PATH score (what pruning ranks by).
  std::vector<float> prior_scores;
  // [kept x kPriorFeatureDim] structure features; empty when !with_structure_features.
  std::vector<float> structure_features;
  // Topic entities after resolving external ids (= CandidateSubgraph::resolved_seeds).
  std::vector<uint32_t> topic_ids;
  // Every relation of the extracted subgraph.
  std::vector<RelationInfo> relation_info;
  // Step 0's anchors (global ids, walk order) and per anchor the kept candidates of its is_a
  // chain, topic end first (empty when the chain is not whole in the subgraph).
  std::vector<uint32_t> anchors;
  std::vector<std::vector<uint32_t>> anchor_chains;
  // Step 1c's anchors (global ids): those of the topics the asked relations do not reach, whose
  // triples of those relations were read (none may exist); empty when every topic had answers of
  // its own, when there was no anchor or no intent, or when the read failed.
  std::vector<uint32_t> lending_anchors;
  // Kept candidates of the intent's relations that touch a topic entity or a lending anchor
  // (feature 7): their indices, ascending, and how many.
  std::vector<uint32_t> intent_answers;
  int64_t intent_triples = 0;
  // Step 1b's and 1c's triples that the topic subgraph lacked (added before pruning): the
  // intent's call's, the topic-link probe's and the lending anchors' together.
  int64_t intent_added = 0;
  // What steps 1b and 1c left out, as text; empty when nothing: the intent's call's status when
  // it failed, "topic links: <status>" when the probe failed, "topic links: N of M topic pairs
  // not probed ..." when there were more pairs than kMaxTopicLinkProbes allows, "anchors'
  // answers: <status>" when step 1c's call failed ("; " between).
  std::string intent_skipped;
  int64_t subgraph_triples = 0;  // extracted, before pruning
  bool truncated = false;        // the subgraph hit max_candidates
  std::string kg_version;
  // Why step 0 was skipped (its status, as text) when the walk or the subtypes' facts read
  // failed: the set is then the unexpanded one. Empty when expansion ran or was off.
  std::string ontology_skipped;
  double extract_ms = 0;   // wall time of the subgraph call
  double features_ms = 0;  // wall time of steps 2-4

  size_t size() const { return heads.size(); }
};

// Steps 1-4. The topic entities are `topic_ids` plus `topic_external_ids` (resolved by the
// source). The topic subgraph call's errors are returned unchanged (NOT_FOUND for unknown
// topics, UNAVAILABLE / DEADLINE_EXCEEDED); step 0's errors skip expansion instead
// (CandidateSet::ontology_skipped); INVALID_ARGUMENT for max_scored < 0 or bad DDE rounds.
absl::StatusOr<CandidateSet> BuildCandidateSet(SubgraphSource& source,
                                               absl::Span<const uint32_t> topic_ids,
                                               absl::Span<const std::string> topic_external_ids,
                                               const CandidateSetOptions& options);

// Steps 2-4 for a subgraph already extracted (consumed), with step 0's anchors when given
// (their chains and facts already in `subgraph`) and step 1c's lending anchors (global ids;
// their answer triples already in `subgraph`).
absl::StatusOr<CandidateSet> CandidateSetFromSubgraph(
    CandidateSubgraph subgraph, const CandidateSetOptions& options,
    const OntologyExpansion* ontology = nullptr, absl::Span<const uint32_t> lending_anchors = {});

// The relations of `intent` with their answer ends (QuestionIntent::AnswerEndsOf), for
// CandidateSetOptions::intent_relations.
std::vector<CandidateSetOptions::AskedRelation> IntentRelations(
    const common::QuestionIntent& intent);

// Indices (ascending) of the `max_scored` best triples by `prior_scores` (ties: lower index
// first); all indices when max_scored is 0 or not below the count.
std::vector<uint32_t> TopByPrior(absl::Span<const float> prior_scores, int max_scored);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_CANDIDATE_SET_H_
