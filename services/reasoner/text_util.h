// Text normalisation shared by the answer parser and the extractive backend: ASCII case folding,
// punctuation to spaces, a small stop-word list and a crude suffix stemmer. Non-ASCII bytes are
// kept as word characters so UTF-8 names still compare byte-exactly.
#ifndef IBGRAPHRAG_SERVICES_REASONER_TEXT_UTIL_H_
#define IBGRAPHRAG_SERVICES_REASONER_TEXT_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace ibgraphrag::reasoner {

// Lower-cases ASCII, turns every non-alphanumeric ASCII byte into a space, collapses runs of
// spaces and trims: "Type-2 Diabetes (T2D)" -> "type 2 diabetes t2d".
std::string NormalizeText(absl::string_view text);

// The words of NormalizeText(text), in order.
std::vector<std::string> Words(absl::string_view text);

// Words(text) minus stop words, each stemmed (StemWord); duplicates kept in order.
std::vector<std::string> ContentWords(absl::string_view text);

// True for English function words (common::IsEnglishStopWord) and true/false-statement
// boilerplate ("statement", "true", "false") and modal verbs.
bool IsStopWord(absl::string_view word);

// Strips one common English suffix so inflections meet: "treats"/"treatment" -> "treat",
// "associates"/"association" -> "associat". Words of 4 letters or fewer are returned unchanged.
std::string StemWord(absl::string_view word);

// True when `needle` occurs in `haystack` on word boundaries; both must be NormalizeText output.
bool ContainsPhrase(absl::string_view haystack, absl::string_view needle);

// True when a normalised word is all digits (numbers distinguish "type 1" from "type 2").
bool IsNumberWord(absl::string_view word);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_TEXT_UTIL_H_
