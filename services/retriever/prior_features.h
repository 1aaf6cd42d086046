// The structure of a candidate subgraph: the shortest-path prior (the SHORTEST_PATH scoring
// mode) and the per-triple structure features the trained scorer adds to its logit (residual
// over the prior, scorer_params.h). Plain C++, no LibTorch.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_PRIOR_FEATURES_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_PRIOR_FEATURES_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "services/retriever/scorer_params.h"

namespace ibgraphrag::retriever {

// Local node numbering of a triple set: topic entities first, then entities in triple order.
struct LocalGraph {
  absl::flat_hash_map<uint32_t, int32_t> index;  // global id -> local
  std::vector<uint32_t> nodes;                   // local -> global
  std::vector<int32_t> heads, tails;             // per triple
  std::vector<int32_t> topics;                   // local indices of the topic entities
};
LocalGraph BuildLocalGraph(absl::Span<const uint32_t> topic_ids, absl::Span<const uint32_t> heads,
                           absl::Span<const uint32_t> tails);

// Per triple, the length of the shortest topic-topic path (within the triples, walked
// undirected) it lies on; 0 when it lies on none (or there are fewer than two topics).
std::vector<int> ShortestPathLengths(const LocalGraph& graph);

// Per triple, 1 + the undirected distance (within the triples) from the nearest topic entity
// to the nearer of its ends: 1 = touches a topic. Unreachable triples get 1 + node count.
// Equals kgstore's hop for triples of an extracted subgraph (used when the caller gives
// triples without hops, e.g. ScoreTriples).
std::vector<uint32_t> LocalHops(const LocalGraph& graph);

// SHORTEST_PATH scores: 1 - 0.01 * length for triples on a shortest path between two topic
// entities; 0.5 / hop for the rest. `hops` may be empty (then LocalHops).
std::vector<float> ShortestPathPriorScores(const LocalGraph& graph,
                                           absl::Span<const uint32_t> hops);

// The kPriorFeatureDim structure features of every triple, row-major [triples x 8]:
//   0  logit of the SHORTEST_PATH score (so a scorer with only this weight = 1 ranks exactly
//      like SHORTEST_PATH)
//   1  1 if on a shortest topic-topic path
//   2  1 / that path's length (0 when on none)
//   3  hop == 1, 4  hop == 2, 5  hop >= 3 (indicators)
//   6, 7  the question's intent (MarkIntentFeatures; 0 here)
// `hops` may be empty (then LocalHops).
std::vector<float> PriorFeatures(const LocalGraph& graph, absl::Span<const uint32_t> hops);

// The SHORTEST_PATH scores and (when `with_features`) the structure features of every
// triple from one shortest-path pass (what ShortestPathPriorScores and PriorFeatures return;
// the candidate set needs both: scores to prune by, features for the scorer).
struct StructurePrior {
  std::vector<float> scores;    // per triple
  std::vector<float> features;  // [triples x kPriorFeatureDim], empty unless asked for
};
StructurePrior ComputeStructurePrior(const LocalGraph& graph, absl::Span<const uint32_t> hops,
                                     bool with_features);

// The relations a question asks about, by relation id, with the ends that can be its answer
// (the other end a topic entity): "What are the symptoms of asthma?" takes the tail of "disease
// presents symptom", not the head (the diseases presenting asthma's phenotype twin).
struct AnswerEnds {
  bool head = true;
  bool tail = true;
};
using IntentRelationIds = absl::flat_hash_map<uint32_t, AnswerEnds>;

// The intent features of every triple into `features` ([triples x kPriorFeatureDim], columns 6
// and 7; the others untouched):
//   6  the triple's relation is one the question asks about (`intent_relations`;
//      common::QuestionIntent's relations resolved in the KG)
//   7  it is, and a topic entity is at one end with an answer end at the other: it names a
//      direct answer. `lenders` (local nodes) count as topic entities here: the is_a anchors
//      that lend their answers to a topic the asked relations do not reach (candidate_set.h,
//      step 1c)
// A model conditioned on these learns to prefer the relation the question names over the
// topic's other facts. Returns the triples feature 7 marks (IntentAnswerTriples), ascending;
// `features` too short for the triples (none asked for) marks nothing and returns them still.
std::vector<uint32_t> MarkIntentFeatures(const LocalGraph& graph,
                                         absl::Span<const uint32_t> relations,
                                         const IntentRelationIds& intent_relations,
                                         absl::Span<float> features,
                                         absl::Span<const int32_t> lenders = {});
// Indices of the triples that feature 7 marks, ascending.
std::vector<uint32_t> IntentAnswerTriples(const LocalGraph& graph,
                                          absl::Span<const uint32_t> relations,
                                          const IntentRelationIds& intent_relations,
                                          absl::Span<const int32_t> lenders = {});

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_PRIOR_FEATURES_H_
