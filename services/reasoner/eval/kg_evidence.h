// Evidence for the reasoner straight from an in-memory KG, standing in for alignment + retriever
// in offline evaluations: topic entities by dictionary longest match of entity names and
// synonyms in the text, evidence = the KG triples touching them (one hop), capped.
//
// Matching is case-insensitive on NormalizeText words (punctuation becomes a word break, so
// "Crohn's disease" matches "crohn s disease"), greedy left to right, longest key first, on word
// boundaries. Single-word keys that are stop words, numbers or shorter than min_key_chars are
// not indexed, so "is", "a" or "2" never become topics.
//
// The keys live in common::TokenTrie, the dictionary core alignment's MentionExtractor uses too;
// see services/alignment/mention_extractor.h for why the two taggers stay separate classes.
#ifndef IBGRAPHRAG_SERVICES_REASONER_EVAL_KG_EVIDENCE_H_
#define IBGRAPHRAG_SERVICES_REASONER_EVAL_KG_EVIDENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "common/token_trie.h"
#include "services/kgstore/kg_types.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner::eval {

struct KgEvidenceOptions {
  // Shortest single-word key indexed, in characters ("NF2" has 3).
  size_t min_key_chars = 3;
  // Longest key indexed, in words; longer names are never matched.
  int max_key_words = 16;
  // Entities one key may name (a name shared by a DO disease and an HPO phenotype names both);
  // keys naming more are ambiguous and skipped.
  int max_entities_per_key = 8;
};

// How evidence triples are scored.
enum class EvidenceScoring {
  // Every triple scores 1.
  kUniform,
  // Triples connecting two topic entities score 1, the other one-hop triples 0.5.
  kTopicPairsFirst,
};

// One matched topic: the entity and the words of the text that matched.
struct TopicMatch {
  kgstore::EntityId entity = kgstore::kInvalidEntity;
  std::string matched;  // normalised words, e.g. "juvenile polyposis syndrome"
};

class KgEvidenceIndex {
 public:
  // Indexes `kg`'s names, synonyms and adjacency. `kg` must outlive the index.
  KgEvidenceIndex(const kgstore::KgData& kg, const KgEvidenceOptions& options);

  // Entities named in `text`, in text order (entities sharing one matched key in id order),
  // without duplicates.
  std::vector<TopicMatch> FindTopicEntities(absl::string_view text) const;

  // At most `max_triples` triples touching a topic: first every triple connecting two topics,
  // then the other one-hop triples taken round-robin over the topics (so one hub does not crowd
  // out the rest), each in KG order. Hop 1, scored by `scoring`.
  std::vector<EvidenceTriple> Evidence(const std::vector<kgstore::EntityId>& topics,
                                       int max_triples, EvidenceScoring scoring) const;

  // The entity as the reasoner references it (external id + name).
  EntityRef Ref(kgstore::EntityId id) const;

  size_t num_keys() const { return keys_.num_phrases(); }

 private:
  // Puts the surviving keys of `keys` (normalised words joined by spaces) into `keys_`.
  void IndexKeys(const absl::flat_hash_map<std::string, std::vector<kgstore::EntityId>>& keys);
  EvidenceTriple MakeTriple(uint32_t triple, double score) const;

  const kgstore::KgData& kg_;
  const KgEvidenceOptions options_;
  // Keys as word sequences; entities_[phrase id] are the entities the key names, in id order.
  common::TokenTrie keys_;
  std::vector<std::vector<kgstore::EntityId>> entities_;
  // Triples touching each entity (as head or tail): ids in [offsets_[e], offsets_[e + 1]).
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> incident_;
};

}  // namespace ibgraphrag::reasoner::eval

#endif  // IBGRAPHRAG_SERVICES_REASONER_EVAL_KG_EVIDENCE_H_
