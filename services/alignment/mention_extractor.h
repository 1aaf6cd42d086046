// Dictionary mention tagging: longest match over the normalised tokens of every lexicon name
// (common::TokenTrie, equivalent to Aho-Corasick for leftmost-longest matching on token
// boundaries), case-sensitive matching of abbreviations, and NegEx-style negation/uncertainty
// flags.
//
// The reasoner's offline KgEvidenceIndex (services/reasoner/eval/kg_evidence.h) is the other
// dictionary tagger of the suite; both sit on the same core (common/token_trie.h, and the word
// bytes and stop words of common/text_words.h). They stay two classes because they do different
// jobs: this one tags lexicon names in a service request with byte offsets, plural folding,
// sentence scope, case-sensitive abbreviations and negation; that one stands in for alignment in
// offline evaluations, matching KG names on the reasoner's own normalised words (no plural
// folding, so topics are found the way the extractive backend compares names), and the reasoner
// must not link the alignment service's library to get it.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_MENTION_EXTRACTOR_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_MENTION_EXTRACTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/token_trie.h"
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
  // For abbreviation matches: the sense it expands to (preferred name and external id of the
  // entity), chosen from the question's context when the abbreviation has several
  // (abbreviation_senses.h; "CRF" -> corticotropin-releasing factor or chronic renal failure).
  std::string expansion;
  std::string expansion_id;
  // Lexicon names the span matched exactly (empty for LLM mentions not in the lexicon); for an
  // abbreviation with several senses, only the chosen sense's.
  std::vector<NameRef> matches;
  // The abbreviation's other senses, kept as lower-ranked candidates (not dictionary matches).
  std::vector<NameRef> other_senses;
};

struct MentionExtractorOptions {
  // Names whose normalised form is shorter than this (in bytes) are not tagged: "ab", "x" fire
  // everywhere. Abbreviations have their own minimum (2, "MI").
  int min_name_bytes = 3;
  // Tokens before a mention (same sentence) searched for a negation or uncertainty trigger.
  int trigger_window_tokens = 6;
  // Names with more tokens than this are not indexed (long definitions masquerading as names).
  int max_name_tokens = 12;
  // Normalised names (NormalizeForMatch) that are not a mention by themselves but still match
  // inside longer names (generic_terms.h; a bundle's generic_terms.tsv).
  std::vector<std::string> generic_terms;
};

class MentionExtractor {
 public:
  // Indexes every name of every entry. Names made only of stop words, or too short, are skipped.
  MentionExtractor(const Lexicon& lexicon, const MentionExtractorOptions& options = {});

  // Non-overlapping mentions, left to right; at each position the longest name wins. A generic
  // name (options.generic_terms) is not reported unless `include_generic`; the words after its
  // first are then tried again ("severe asthma": "asthma").
  std::vector<Mention> Extract(absl::string_view text, bool include_generic = false) const;

  // Sets negated/uncertain on `mentions` from trigger words in `text` (exposed for LLM mentions).
  void FlagContext(absl::string_view text, std::vector<Mention>* mentions) const;

  int64_t indexed_names() const { return indexed_names_; }
  // Indexed phrases that are generic (a phrase is every name with one normalised form).
  int64_t generic_phrases() const { return generic_phrases_; }

 private:
  // A trie of names and, per phrase id, the lexicon names spelled that way.
  struct NameDictionary {
    common::TokenTrie trie;
    std::vector<std::vector<NameRef>> refs;
    // Per phrase id: a generic name (folded dictionary only).
    std::vector<bool> generic;
    void Add(const std::vector<std::string>& tokens, NameRef ref);
  };
  // Indexes one name in `folded_` or `exact_case_`; false when it is not indexed.
  bool IndexName(const std::string& name, NameRef ref);
  // Flags the phrases of options_.generic_terms in folded_.
  void MarkGenericPhrases();

  MentionExtractorOptions options_;
  NameDictionary folded_;      // on Token::key (lower-case, plural-folded)
  NameDictionary exact_case_;  // abbreviations, on the tokens as written
  int64_t indexed_names_ = 0;
  int64_t generic_phrases_ = 0;
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_MENTION_EXTRACTOR_H_
