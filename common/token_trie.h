// A dictionary of token sequences (phrases) for leftmost-longest matching on token boundaries:
// the core of every dictionary tagger in the suite (alignment's MentionExtractor over lexicon
// names, the reasoner's offline KgEvidenceIndex over KG names). Equivalent to Aho-Corasick for
// leftmost-longest matching when matches must start and end on tokens; callers bring their own
// normalisation (which token strings they insert and look up) and their own payload per phrase.
#ifndef IBGRAPHRAG_COMMON_TOKEN_TRIE_H_
#define IBGRAPHRAG_COMMON_TOKEN_TRIE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ibgraphrag::common {

class TokenTrie {
 public:
  // The longest phrase found at a position: `length` tokens (0 = none) and its phrase id.
  struct Match {
    size_t length = 0;
    uint32_t phrase = 0;
  };

  // Adds a non-empty phrase; returns its id. Ids are dense (0, 1, ...) in order of first insertion
  // and the same token sequence always gets the same id, so callers keep payloads in a vector
  // indexed by phrase id.
  uint32_t Insert(absl::Span<const std::string> tokens);

  // The longest phrase that equals tokens 0..length-1 of the sequence `token(k)`, k < `count`.
  // `token(k)` returns something convertible to absl::string_view; it is called for increasing k
  // and only while a phrase can still continue, so taggers stop at the first unknown token.
  template <typename TokenAt>
  Match LongestMatch(size_t count, TokenAt&& token) const {
    Match best;
    uint32_t node = kRoot;
    for (size_t k = 0; k < count; ++k) {
      if (!Step(absl::string_view(token(k)), &node)) break;
      auto terminal = phrase_of_node_.find(node);
      if (terminal != phrase_of_node_.end()) best = Match{k + 1, terminal->second};
    }
    return best;
  }

  size_t num_phrases() const { return phrase_of_node_.size(); }

 private:
  static constexpr uint32_t kRoot = 0;

  // Moves `node` along the edge labelled `token`; false when there is none.
  bool Step(absl::string_view token, uint32_t* node) const;

  // Token string -> token id; looked up with string_view (absl's heterogeneous lookup).
  absl::flat_hash_map<std::string, uint32_t> vocab_;
  // (node << 32 | token id) -> child node.
  absl::flat_hash_map<uint64_t, uint32_t> edges_;
  // Node where a phrase ends -> phrase id.
  absl::flat_hash_map<uint32_t, uint32_t> phrase_of_node_;
  uint32_t num_nodes_ = 1;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_TOKEN_TRIE_H_
