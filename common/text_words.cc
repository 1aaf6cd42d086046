#include "common/text_words.h"

#include "absl/container/flat_hash_set.h"

namespace ibgraphrag::common {

bool IsEnglishStopWord(absl::string_view lower_word) {
  static const auto* const kStopWords = new absl::flat_hash_set<absl::string_view>({
      "a",     "all",   "an",    "and",   "any",   "are",   "as",        "at",   "be",   "been",
      "being", "by",    "can",   "did",   "do",    "does",  "following", "for",  "from", "had",
      "has",   "have",  "how",   "in",    "into",  "is",    "it",        "its",  "may",  "most",
      "of",    "on",    "one",   "or",    "other", "some",  "such",      "than", "that", "the",
      "their", "then",  "there", "these", "this",  "those", "to",        "was",  "were", "what",
      "when",  "where", "which", "who",   "why",   "will",  "with",
  });
  return kStopWords->contains(lower_word);
}

}  // namespace ibgraphrag::common
