// Ontology expansion of topic entities (issue 14, ontology-aware evidence): a fact about a
// subtype supports its parent. A question about "diabetes mellitus" should see the genes the KG
// ties to "type 2 diabetes mellitus", but a 2-hop subgraph reaches a subtype's facts only one
// level down, two hops out, where the hop decay and pruning drop them.
//
// The walk follows the is_a relations (head = subtype, tail = parent: Disease Ontology's
// "disease is a subtype of disease", HPO's "phenotype is a subtype of phenotype") from each
// topic entity, level by level with one SubgraphSource::Extract per level restricted to those
// relations: down to max_subtype_depth levels (at most max_subtypes_per_topic subtypes per
// topic) and up to max_supertype_depth levels (at most max_supertypes_per_topic). Down and up
// are separate walks, so siblings are never taken. Each entity found (an "anchor") keeps the
// is_a triple linking it to the previous entity of its chain, so the chain from the topic can
// be shown as evidence: gene -associated with-> subtype -is a subtype of-> disease.
// candidate_set.h adds the anchors' own facts to the candidate set as near-topic triples.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_ONTOLOGY_EXPANSION_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_ONTOLOGY_EXPANSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "services/retriever/subgraph_source.h"

namespace ibgraphrag::retriever {

struct OntologyOptions {
  // Expand at all. Serving sets it from the served model's manifest (TrainedOntologyExpansion:
  // train/serve parity); RetrieveRequest.ontology_expansion and the servers'
  // --ontology_expansion can only turn it off (retriever.h, Retriever::Options::ontology).
  bool enabled = true;
  // The is_a relations walked (head = subtype, tail = parent); those the KG lacks are skipped,
  // and a KG with none of them is not expanded.
  std::vector<std::string> is_a_relations = {"disease is a subtype of disease",
                                             "phenotype is a subtype of phenotype"};
  // is_a levels walked down from each topic entity, and the subtypes kept per topic (BFS
  // order: nearer levels first). 32 covers the subtypes of most DO terms two levels down.
  int max_subtype_depth = 3;
  int max_subtypes_per_topic = 32;
  // Levels walked up, and the parents kept per topic. A parent's facts are weaker evidence
  // for the topic (the reasoner weighs them lower), so few.
  int max_supertype_depth = 1;
  int max_supertypes_per_topic = 2;
  // Cap on the subtypes' own facts added to the candidate set (triples, 1 hop from them),
  // on top of the topic subgraph's max_candidates.
  int max_anchor_triples = 500;
  // is_a edges read per entity per level (a hub term such as "cancer" has hundreds of
  // subtypes; kgstore takes an even spread of them).
  int max_fanout_per_node = 256;
};

// An entity reached from a topic entity along is_a.
struct OntologyAnchor {
  uint32_t id = 0;
  uint32_t topic = 0;   // the topic entity its chain starts at
  int depth = 0;        // is_a steps from the topic, >= 1
  bool subtype = true;  // below the topic (false: above it)
  int previous = -1;    // index of the previous anchor of its chain; -1: the topic
  // The is_a triple linking it to the previous entity of its chain.
  uint32_t head = 0, relation = 0, tail = 0;
};

struct OntologyExpansion {
  // The topic entities after resolving external ids (seed_ids first); empty when the walk did
  // not run (disabled, or no is_a relation in the KG).
  std::vector<uint32_t> topic_ids;
  std::vector<OntologyAnchor> anchors;  // walk order: nearer levels first
  std::vector<RelationInfo> relation_info;
  double walk_ms = 0;  // wall time of the walk
};

// The walk above. `max_fanout_per_node` of the options caps each level's call; the source's
// errors are returned unchanged (NOT_FOUND for unknown topics, UNAVAILABLE / DEADLINE_EXCEEDED).
absl::StatusOr<OntologyExpansion> ExpandOntology(SubgraphSource& source,
                                                 absl::Span<const uint32_t> topic_ids,
                                                 absl::Span<const std::string> topic_external_ids,
                                                 const OntologyOptions& options,
                                                 absl::Time deadline);

// The candidate-set triples of anchor `i`'s chain, topic end first: `link_index(a)` gives the
// index of anchor a's is_a triple (or -1 when it is not among the candidates; the chain is then
// empty, as it cannot be shown whole).
template <typename LinkIndex>
std::vector<uint32_t> AnchorChain(const std::vector<OntologyAnchor>& anchors, int i,
                                  const LinkIndex& link_index) {
  std::vector<uint32_t> chain;
  for (int a = i; a >= 0; a = anchors[a].previous) {
    const int64_t index = link_index(a);
    if (index < 0) return {};
    chain.push_back(static_cast<uint32_t>(index));
  }
  return std::vector<uint32_t>(chain.rbegin(), chain.rend());
}

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_ONTOLOGY_EXPANSION_H_
