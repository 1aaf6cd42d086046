#include "services/alignment/mention_extractor.h"

#include <algorithm>

#include "absl/strings/ascii.h"
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

void MentionExtractor::Trie::Insert(const std::vector<uint32_t>& tokens, NameRef ref) {
  uint32_t node = 0;
  for (const uint32_t t : tokens) {
    const uint64_t key = (uint64_t{node} << 32) | t;
    auto [it, inserted] = edges.try_emplace(key, num_nodes);
    if (inserted) ++num_nodes;
    node = it->second;
  }
  std::vector<NameRef>& refs = terminals[node];
  for (const NameRef& r : refs) {
    if (r.entry == ref.entry) return;  // one ref per entry and surface form is enough
  }
  refs.push_back(ref);
}

int64_t MentionExtractor::Lookup(const absl::flat_hash_map<std::string, uint32_t>& vocab,
                                 const std::string& s) const {
  auto it = vocab.find(s);
  return it == vocab.end() ? -1 : static_cast<int64_t>(it->second);
}

MentionExtractor::MentionExtractor(const Lexicon& lexicon, const MentionExtractorOptions& options)
    : options_(options) {
  auto intern = [](absl::flat_hash_map<std::string, uint32_t>& vocab, const std::string& s) {
    return vocab.try_emplace(s, static_cast<uint32_t>(vocab.size())).first->second;
  };
  std::vector<uint32_t> ids;
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    const std::vector<std::string> names = lexicon.entries[e].AllNames();
    for (uint32_t n = 0; n < names.size(); ++n) {
      const std::string& name = names[n];
      const std::vector<Token> tokens = Tokenize(name);
      if (tokens.empty() || static_cast<int>(tokens.size()) > options_.max_name_tokens) continue;
      ids.clear();
      if (IsAbbreviationLike(name)) {
        for (const Token& t : tokens) {
          ids.push_back(intern(case_vocab_, name.substr(t.begin, t.end - t.begin)));
        }
        exact_case_.Insert(ids, NameRef{e, n});
        ++indexed_names_;
        continue;
      }
      bool all_stop = true;
      size_t bytes = 0;
      for (const Token& t : tokens) {
        all_stop = all_stop && IsStopWord(t.lower);
        bytes += t.key.size();
      }
      if (all_stop || static_cast<int>(bytes + tokens.size() - 1) < options_.min_name_bytes) {
        continue;
      }
      for (const Token& t : tokens) ids.push_back(intern(key_vocab_, t.key));
      folded_.Insert(ids, NameRef{e, n});
      ++indexed_names_;
    }
  }
}

std::vector<Mention> MentionExtractor::Extract(absl::string_view text) const {
  const std::vector<Token> tokens = Tokenize(text);
  std::vector<Mention> mentions;
  size_t i = 0;
  while (i < tokens.size()) {
    // Longest match in either trie, never crossing a sentence boundary.
    size_t best_len = 0;
    const std::vector<NameRef>* best_refs = nullptr;
    bool best_is_abbreviation = false;
    for (int pass = 0; pass < 2; ++pass) {
      const Trie& trie = pass == 0 ? folded_ : exact_case_;
      const auto& vocab = pass == 0 ? key_vocab_ : case_vocab_;
      uint32_t node = 0;
      for (size_t j = i; j < tokens.size() && tokens[j].sentence == tokens[i].sentence; ++j) {
        const int64_t id =
            pass == 0 ? Lookup(vocab, tokens[j].key)
                      : Lookup(vocab, std::string(text.substr(tokens[j].begin,
                                                              tokens[j].end - tokens[j].begin)));
        if (id < 0) break;
        auto edge = trie.edges.find((uint64_t{node} << 32) | static_cast<uint64_t>(id));
        if (edge == trie.edges.end()) break;
        node = edge->second;
        auto term = trie.terminals.find(node);
        if (term != trie.terminals.end() && j + 1 - i > best_len) {
          best_len = j + 1 - i;
          best_refs = &term->second;
          best_is_abbreviation = pass == 1;
        }
      }
    }
    if (best_len == 0) {
      ++i;
      continue;
    }
    Mention m;
    m.begin = tokens[i].begin;
    m.end = tokens[i + best_len - 1].end;
    m.text = std::string(text.substr(m.begin, m.end - m.begin));
    for (size_t k = i; k < i + best_len; ++k) {
      if (!m.normalized.empty()) m.normalized.push_back(' ');
      m.normalized += tokens[k].key;
    }
    if (best_is_abbreviation) m.expanded_from = m.text;
    m.matches = *best_refs;
    mentions.push_back(std::move(m));
    i += best_len;
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
