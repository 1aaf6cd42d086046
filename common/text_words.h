// What a word is, and the English function words, for every piece of code that matches names in
// text (alignment's mention tagger and normaliser, the reasoner's answer parser and extractive
// backend, the reasoner's offline KG tagger), so that they split and filter text alike.
#ifndef IBGRAPHRAG_COMMON_TEXT_WORDS_H_
#define IBGRAPHRAG_COMMON_TEXT_WORDS_H_

#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

// Word bytes are ASCII letters and digits and every non-ASCII byte, so UTF-8 letters stay inside
// words; everything else (spaces, punctuation, hyphens, slashes, apostrophes) separates words.
inline bool IsWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

// True for a common English function word ("the", "of", "with", "which", "following", ...),
// given lower-case. The one shared list: callers that must drop more words for their own job
// (alignment: pronouns, negation and clinical-vignette filler; the reasoner: true/false
// statement boilerplate and modal verbs) add those on top, next to the reason.
bool IsEnglishStopWord(absl::string_view lower_word);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_TEXT_WORDS_H_
