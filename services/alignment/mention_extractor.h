// Dictionary mention tagging: longest match over the normalised tokens of every lexicon name
// (a token trie, equivalent to Aho-Corasick for leftmost-longest matching on token boundaries),
// case-sensitive matching of abbreviations, and NegEx-style negation/uncertainty flags.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_MENTION_EXTRACTOR_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_MENTION_EXTRACTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "services/alignment/lexicon.h"

namespace ibgraphrag::alignment {

// A lexicon name: entry index and position in LexiconEntry::AllNames().
struct NameRef {
  uint32_t entry = 0;
  uint32_t name_index = 0;
};

struct Mention {
  // Byte offsets into the text: [begin, end).
  uint32_t begin = 0;
  uint32_t end = 0;
  // The span as written.
  std::string text;
  // Normalised form that matched (NormalizeForMatch of the span).
  std::string normalized;
  bool negated = false;
  bool uncertain = false;
  // "dictionary" or "llm".
  std::string origin = "dictionary";
  // For abbreviation matches: the abbreviation as written; the entries' names expand it.
  std::string expanded_from;
  // Lexicon names the span matched exactly (empty for LLM mentions not in the lexicon).
  std::vector<NameRef> matches;
};

struct MentionExtractorOptions {
  // Names whose normalised form is shorter than this (in bytes) are not tagged: "ab", "x" fire
  // everywhere. Abbreviations have their own minimum (2, "MI").
  int min_name_bytes = 3;
  // Tokens before a mention (same sentence) searched for a negation or uncertainty trigger.
  int trigger_window_tokens = 6;
  // Names with more tokens than this are not indexed (long definitions masquerading as names).
  int max_name_tokens = 12;
};

class MentionExtractor {
 public:
  // Indexes every name of every entry. Names made only of stop words, or too short, are skipped.
  MentionExtractor(const Lexicon& lexicon, const MentionExtractorOptions& options = {});

  // Non-overlapping mentions, left to right; at each position the longest name wins.
  std::vector<Mention> Extract(absl::string_view text) const;

  // Sets negated/uncertain on `mentions` from trigger words in `text` (exposed for LLM mentions).
  void FlagContext(absl::string_view text, std::vector<Mention>* mentions) const;

  int64_t indexed_names() const { return indexed_names_; }

 private:
  struct Trie {
    // (node << 32 | token id) -> child node; node 0 is the root.
    absl::flat_hash_map<uint64_t, uint32_t> edges;
    absl::flat_hash_map<uint32_t, std::vector<NameRef>> terminals;
    uint32_t num_nodes = 1;
    void Insert(const std::vector<uint32_t>& tokens, NameRef ref);
  };
  // Token id of `s`, or -1 when the vocabulary does not hold it (then nothing can match).
  int64_t Lookup(const absl::flat_hash_map<std::string, uint32_t>& vocab,
                 const std::string& s) const;

  MentionExtractorOptions options_;
  absl::flat_hash_map<std::string, uint32_t> key_vocab_;   // folded lower-case tokens
  absl::flat_hash_map<std::string, uint32_t> case_vocab_;  // tokens as written (abbreviations)
  Trie folded_;
  Trie exact_case_;
  int64_t indexed_names_ = 0;
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_MENTION_EXTRACTOR_H_
