#include "services/alignment/text_normalize.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/text_words.h"
#include "common/utf8.h"

namespace ibgraphrag::alignment {
namespace {

using common::IsWordByte;

bool EndsSentence(char c) { return c == '.' || c == '!' || c == '?' || c == ';' || c == '\n'; }

}  // namespace

std::string FoldPlural(absl::string_view w) {
  if (w.size() <= 4) return std::string(w);
  if (absl::EndsWith(w, "ss") || absl::EndsWith(w, "us") || absl::EndsWith(w, "is")) {
    return std::string(w);
  }
  if (absl::EndsWith(w, "ies")) return absl::StrCat(w.substr(0, w.size() - 3), "y");
  if (absl::EndsWith(w, "ches") || absl::EndsWith(w, "shes") || absl::EndsWith(w, "xes")) {
    return std::string(w.substr(0, w.size() - 2));
  }
  if (absl::EndsWith(w, "s")) return std::string(w.substr(0, w.size() - 1));
  return std::string(w);
}

std::vector<Token> Tokenize(absl::string_view text) {
  std::vector<Token> tokens;
  uint32_t sentence = 0;
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (!IsWordByte(c)) {
      // A period between digits ("2.5") does not end a sentence.
      const bool decimal_point = c == '.' && i > 0 && i + 1 < text.size() &&
                                 absl::ascii_isdigit(static_cast<unsigned char>(text[i - 1])) &&
                                 absl::ascii_isdigit(static_cast<unsigned char>(text[i + 1]));
      if (EndsSentence(static_cast<char>(c)) && !decimal_point && !tokens.empty() &&
          tokens.back().sentence == sentence) {
        ++sentence;
      }
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && IsWordByte(static_cast<unsigned char>(text[j]))) ++j;
    Token t;
    t.begin = static_cast<uint32_t>(i);
    t.end = static_cast<uint32_t>(j);
    t.sentence = sentence;
    t.lower = absl::AsciiStrToLower(text.substr(i, j - i));
    t.key = FoldPlural(t.lower);
    tokens.push_back(std::move(t));
    i = j;
  }
  return tokens;
}

std::string NormalizeForMatch(absl::string_view text) {
  std::vector<Token> tokens = Tokenize(text);
  std::string out;
  for (const Token& t : tokens) {
    if (!out.empty()) out.push_back(' ');
    out += t.key;
  }
  return out;
}

bool IsAbbreviationLike(absl::string_view name) {
  if (name.size() < 2 || name.size() > 10) return false;
  bool upper = false;
  for (const char c : name) {
    if (c == ' ' || absl::ascii_islower(static_cast<unsigned char>(c))) return false;
    if (static_cast<unsigned char>(c) >= 0x80) return false;
    upper = upper || absl::ascii_isupper(static_cast<unsigned char>(c));
  }
  return upper;
}

bool IsValidUtf8(absl::string_view s) { return common::IsValidUtf8(s); }

bool IsStopWord(absl::string_view w) {
  // On top of the shared English list: pronouns, negation, prepositions of place and the filler
  // of clinical vignettes ("a 45-year-old man", "left", "patient", "type"), none of which may on
  // its own be tagged as an entity name.
  static const auto* const kAlignmentStopWords = new absl::flat_hash_set<absl::string_view>{
      "but",   "he",  "her",  "his",  "she",   "not",  "no",   "out",  "up",  "down",  "over",
      "under", "if",  "i",    "you",  "we",    "they", "him",  "them", "our", "your",  "my",
      "me",    "two", "type", "left", "right", "old",  "year", "day",  "man", "woman", "patient"};
  return common::IsEnglishStopWord(w) || kAlignmentStopWords->contains(w);
}

}  // namespace ibgraphrag::alignment
