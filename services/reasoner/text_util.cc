#include "services/reasoner/text_util.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/text_words.h"

namespace ibgraphrag::reasoner {

using common::IsWordByte;

std::string NormalizeText(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (unsigned char c : text) {
    if (IsWordByte(c)) {
      if (pending_space && !out.empty()) out.push_back(' ');
      pending_space = false;
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : static_cast<char>(c));
    } else {
      pending_space = true;
    }
  }
  return out;
}

std::vector<std::string> Words(absl::string_view text) {
  return absl::StrSplit(NormalizeText(text), ' ', absl::SkipEmpty());
}

bool IsStopWord(absl::string_view word) {
  // On top of the shared English list: the boilerplate of true/false statements and questions
  // ("statement", "true", "false", "about") and modal verbs, which carry no content the
  // extractive backend could match against evidence. Negation ("not", "no") is kept on purpose.
  static const auto* const kReasonerStopWords = new absl::flat_hash_set<absl::string_view>(
      {"whom", "whose", "could", "might", "would", "should", "shall", "more", "true", "false",
       "statement", "about", "also", "each", "between"});
  return common::IsEnglishStopWord(word) || kReasonerStopWords->contains(word);
}

std::string StemWord(absl::string_view word) {
  if (word.size() <= 4) return std::string(word);
  // Longest suffixes first so "associations" loses "ations" rather than "s".
  static constexpr absl::string_view kSuffixes[] = {
      "ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "ies", "es", "ed", "s"};
  for (absl::string_view suffix : kSuffixes) {
    if (word.size() >= suffix.size() + 4 && absl::EndsWith(word, suffix)) {
      return std::string(word.substr(0, word.size() - suffix.size()));
    }
  }
  return std::string(word);
}

std::vector<std::string> ContentWords(absl::string_view text) {
  std::vector<std::string> words = Words(text);
  std::vector<std::string> out;
  out.reserve(words.size());
  for (const std::string& word : words) {
    if (IsStopWord(word)) continue;
    out.push_back(StemWord(word));
  }
  return out;
}

bool ContainsPhrase(absl::string_view haystack, absl::string_view needle) {
  if (needle.empty() || needle.size() > haystack.size()) return false;
  size_t pos = 0;
  while ((pos = haystack.find(needle, pos)) != absl::string_view::npos) {
    const bool starts_word = pos == 0 || haystack[pos - 1] == ' ';
    const size_t end = pos + needle.size();
    const bool ends_word = end == haystack.size() || haystack[end] == ' ';
    if (starts_word && ends_word) return true;
    ++pos;
  }
  return false;
}

bool IsNumberWord(absl::string_view word) {
  return !word.empty() &&
         std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace ibgraphrag::reasoner
