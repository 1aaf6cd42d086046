#include "services/alignment/mention_extractor.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {
namespace {

using Phrase = std::vector<std::string>;

// NegEx-style triggers (Chapman et al. 2001), matched on lower-case tokens before the mention.
// "ruled out" (done) negates; "rule out" (to do) only hedges.
const std::vector<Phrase>& NegationPreTriggers() {
  static const auto* const kTriggers = new std::vector<Phrase>{
      {"no"},         {"not"},           {"denies"},          {"denied"},
      {"deny"},       {"without"},       {"negative", "for"}, {"ruled", "out"},
      {"free", "of"}, {"absence", "of"}, {"never"},           {"nor"},
      {"resolved"}};
  return *kTriggers;
}
const std::vector<Phrase>& UncertainPreTriggers() {
  static const auto* const kTriggers = new std::vector<Phrase>{
      {"rule", "out"},  {"r", "o"},         {"possible"},          {"possibly"},
      {"suspected"},    {"suspect"},        {"suspicion", "of"},   {"probable"},
      {"questionable"}, {"concern", "for"}, {"cannot", "exclude"}, {"may", "have"},
      {"might", "have"}};
  return *kTriggers;
}
// After the mention ("pneumonia was ruled out", "MI unlikely").
const std::vector<Phrase>& NegationPostTriggers() {
  static const auto* const kTriggers =
      new std::vector<Phrase>{{"ruled", "out"}, {"was", "ruled", "out"}, {"absent"}};
  return *kTriggers;
}
const std::vector<Phrase>& UncertainPostTriggers() {
  static const auto* const kTriggers =
      new std::vector<Phrase>{{"unlikely"}, {"is", "unlikely"}, {"not", "excluded"}};
  return *kTriggers;
}
// Words that end a trigger's scope ("no fever but cough": cough is not negated).
bool IsTerminator(absl::string_view w) {
  return w == "but" || w == "however" || w == "although" || w == "though" || w == "except" ||
         w == "yet" || w == "which" || w == "presents" || w == "presented" || w == "reports";
}

// Whether `phrase` occurs in tokens[from, to) (lower-case).
bool PhraseIn(const std::vector<Token>& tokens, size_t from, size_t to, const Phrase& phrase) {
  if (to < from + phrase.size()) return false;
  for (size_t s = from; s + phrase.size() <= to; ++s) {
    bool ok = true;
    for (size_t k = 0; k < phrase.size() && ok; ++k) ok = tokens[s + k].lower == phrase[k];
    if (ok) return true;
  }
  return false;
}

bool AnyPhraseIn(const std::vector<Token>& tokens, size_t from, size_t to,
                 const std::vector<Phrase>& phrases) {
  for (const Phrase& p : phrases) {
    if (PhraseIn(tokens, from, to, p)) return true;
  }
  return false;
}

}  // namespace

void MentionExtractor::NameDictionary::Add(const std::vector<std::string>& tokens, NameRef ref) {
  const uint32_t phrase = trie.Insert(tokens);
  if (phrase >= refs.size()) refs.resize(phrase + 1);
  for (const NameRef& r : refs[phrase]) {
    if (r.entry == ref.entry) return;  // one ref per entry and surface form is enough
  }
  refs[phrase].push_back(ref);
}

bool MentionExtractor::IndexName(const std::string& name, NameRef ref) {
  const std::vector<Token> tokens = Tokenize(name);
  if (tokens.empty() || static_cast<int>(tokens.size()) > options_.max_name_tokens) return false;
  std::vector<std::string> words;
  words.reserve(tokens.size());
  if (IsAbbreviationLike(name)) {
    for (const Token& t : tokens) words.push_back(name.substr(t.begin, t.end - t.begin));
    exact_case_.Add(words, ref);
    return true;
  }
  bool all_stop = true;
  size_t bytes = 0;
  for (const Token& t : tokens) {
    all_stop = all_stop && IsStopWord(t.lower);
    bytes += t.key.size();
  }
  if (all_stop || static_cast<int>(bytes + tokens.size() - 1) < options_.min_name_bytes) {
    return false;
  }
  for (const Token& t : tokens) words.push_back(t.key);
  folded_.Add(words, ref);
  return true;
}

MentionExtractor::MentionExtractor(const Lexicon& lexicon, const MentionExtractorOptions& options)
    : options_(options) {
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    const std::vector<std::string> names = lexicon.entries[e].AllNames();
    for (uint32_t n = 0; n < names.size(); ++n) {
      if (IndexName(names[n], NameRef{e, n})) ++indexed_names_;
    }
  }
  MarkGenericPhrases();
}

void MentionExtractor::MarkGenericPhrases() {
  folded_.generic.assign(folded_.refs.size(), false);
  for (const std::string& key : options_.generic_terms) {
    const std::vector<std::string> words = absl::StrSplit(key, ' ', absl::SkipEmpty());
    if (words.empty()) continue;
    const common::TokenTrie::Match m = folded_.trie.LongestMatch(
        words.size(), [&](size_t k) -> const std::string& { return words[k]; });
    if (m.length != words.size() || folded_.generic[m.phrase]) continue;
    folded_.generic[m.phrase] = true;
    ++generic_phrases_;
  }
  options_.generic_terms.clear();  // only needed here
  options_.generic_terms.shrink_to_fit();
}

std::vector<Mention> MentionExtractor::Extract(absl::string_view text, bool include_generic) const {
  const std::vector<Token> tokens = Tokenize(text);
  std::vector<Mention> mentions;
  size_t sentence_end = 0;  // one past the last token of tokens[i]'s sentence
  size_t i = 0;
  while (i < tokens.size()) {
    if (i >= sentence_end) {
      sentence_end = i;
      while (sentence_end < tokens.size() && tokens[sentence_end].sentence == tokens[i].sentence) {
        ++sentence_end;
      }
    }
    // Longest match in either dictionary, never crossing a sentence boundary; on a tie the
    // folded match wins.
    const size_t count = sentence_end - i;
    common::TokenTrie::Match folded = folded_.trie.LongestMatch(
        count, [&](size_t k) -> const std::string& { return tokens[i + k].key; });
    // A generic name is no mention by itself; an abbreviation spelled the same way still is
    // ("ALL" the leukemia, "all" the HPO root).
    const bool generic = folded.length > 0 && folded_.generic[folded.phrase] && !include_generic;
    if (generic) folded = common::TokenTrie::Match{};
    const common::TokenTrie::Match cased = exact_case_.trie.LongestMatch(count, [&](size_t k) {
      return text.substr(tokens[i + k].begin, tokens[i + k].end - tokens[i + k].begin);
    });
    const bool is_abbreviation = cased.length > folded.length;
    const common::TokenTrie::Match& best = is_abbreviation ? cased : folded;
    if (best.length == 0) {
      ++i;
      continue;
    }
    Mention m;
    m.begin = tokens[i].begin;
    m.end = tokens[i + best.length - 1].end;
    m.text = std::string(text.substr(m.begin, m.end - m.begin));
    for (size_t k = i; k < i + best.length; ++k) {
      if (!m.normalized.empty()) m.normalized.push_back(' ');
      m.normalized += tokens[k].key;
    }
    if (is_abbreviation) m.expanded_from = m.text;
    m.matches = (is_abbreviation ? exact_case_ : folded_).refs[best.phrase];
    mentions.push_back(std::move(m));
    i += best.length;
  }
  FlagContext(text, &mentions);
  return mentions;
}

void MentionExtractor::FlagContext(absl::string_view text, std::vector<Mention>* mentions) const {
  const std::vector<Token> tokens = Tokenize(text);
  for (Mention& m : *mentions) {
    auto first = std::lower_bound(tokens.begin(), tokens.end(), m.begin,
                                  [](const Token& t, uint32_t b) { return t.end <= b; });
    if (first == tokens.end()) continue;
    const size_t s = static_cast<size_t>(first - tokens.begin());
    size_t e = s;
    while (e < tokens.size() && tokens[e].begin < m.end) ++e;
    const uint32_t sentence = tokens[s].sentence;
    // Scope before the mention: same sentence, within the window, after the last terminator.
    size_t from = s;
    while (from > 0 && s - from < static_cast<size_t>(options_.trigger_window_tokens) &&
           tokens[from - 1].sentence == sentence && !IsTerminator(tokens[from - 1].lower)) {
      --from;
    }
    // Scope after: up to 3 tokens in the same sentence.
    size_t to = e;
    while (to < tokens.size() && to < e + 3 && tokens[to].sentence == sentence &&
           !IsTerminator(tokens[to].lower)) {
      ++to;
    }
    // "ruled out" before the mention outranks the "rule out" hedge it does not contain.
    m.negated = AnyPhraseIn(tokens, from, s, NegationPreTriggers()) ||
                AnyPhraseIn(tokens, e, to, NegationPostTriggers());
    m.uncertain = !m.negated && (AnyPhraseIn(tokens, from, s, UncertainPreTriggers()) ||
                                 AnyPhraseIn(tokens, e, to, UncertainPostTriggers()));
    // Clinical shorthand "?PE" / "? pneumonia": a question mark right before the mention that
    // does not itself end a word ("fibrosis? CFTR" is a question, not a hedge).
    size_t p = m.begin;
    while (p > 0 && text[p - 1] == ' ') --p;
    if (p > 0 && text[p - 1] == '?' && !m.negated) {
      const bool ends_word =
          p > 1 && (absl::ascii_isalnum(static_cast<unsigned char>(text[p - 2])) ||
                    static_cast<unsigned char>(text[p - 2]) >= 0x80);
      if (!ends_word) m.uncertain = true;
    }
  }
}

}  // namespace ibgraphrag::alignment
