// Text normalisation shared by the encoders, the lexicon and the mention tagger, so that a name
// and the same words in a question always fold to the same tokens.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_TEXT_NORMALIZE_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_TEXT_NORMALIZE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::alignment {

// One word of a text. Words are maximal runs of ASCII letters/digits and non-ASCII bytes (so
// UTF-8 letters stay inside words); everything else (spaces, punctuation, hyphens, slashes)
// separates words, which makes "Crohn's", "Crohn s" and "crohns" differ only in the last token.
struct Token {
  // Byte offsets into the original text: [begin, end).
  uint32_t begin = 0;
  uint32_t end = 0;
  // Index of the sentence holding the token (split at . ! ? ; and newlines).
  uint32_t sentence = 0;
  // Lower-cased ASCII, otherwise as written.
  std::string lower;
  // `lower` with simple English plural folding ("diseases" -> "disease", "arteries" ->
  // "artery"); the key dictionary matching uses.
  std::string key;
};

// Splits `text` into tokens with offsets and sentence numbers.
std::vector<Token> Tokenize(absl::string_view text);

// Plural folding of one lower-cased word (see Token::key). Words of 4 bytes or fewer, and words
// ending in "ss", "us", "is" or "sis", are kept as they are.
std::string FoldPlural(absl::string_view lower_word);

// Space-joined keys of the tokens of `text`: the normalised form names are matched on.
std::string NormalizeForMatch(absl::string_view text);

// True for a name that reads as an abbreviation or symbol: 2..10 bytes, no spaces, no lower-case
// ASCII letter and at least one upper-case one ("MI", "COPD", "T2DM", "BRCA1"). Such names are
// matched case-sensitively so "MI" does not fire on "mi" and gene symbols such as "CAT" or "SET"
// do not fire on ordinary words.
bool IsAbbreviationLike(absl::string_view name);

// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, <= U+10FFFF).
bool IsValidUtf8(absl::string_view text);

// True for a word a name made only of such words must not be tagged for: the shared English list
// (common::IsEnglishStopWord) plus pronouns, negation and clinical-vignette filler; lower-case.
bool IsStopWord(absl::string_view lower_word);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_TEXT_NORMALIZE_H_
