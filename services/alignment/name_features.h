// Hashed sparse features of a name or question for the trained name encoder: character n-grams of
// the normalised words, whole words and adjacent-word pairs, each a bucket id of an embedding
// table. Training (LibTorch) and serving (plain C++) featurize through this one class, so a
// trained table is always indexed the way it was trained.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_NAME_FEATURES_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_NAME_FEATURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/alignment/text_normalize.h"

namespace ibgraphrag::alignment {

// Stable 64-bit hash of one feature: FNV-1a over a kind byte ('c' character n-gram, 'w' word,
// 'b' word pair), `a`, and " " + `b` when `b` is not empty, then a splitmix64 finaliser. Fixed
// constants (not absl::Hash): bundles store vectors and encoders store tables indexed by it, so
// it must be the same across builds and machines. The hashed n-gram encoder uses it too.
uint64_t StableFeatureHash(char kind, absl::string_view a, absl::string_view b = {});

// Calls visit(kind, hash) for every feature of `text`, in a fixed order: per normalised token
// (services/alignment/text_normalize.h Token::key) its character n-grams of length
// min_ngram..max_ngram inside "<key>" ('c'), then the word ('w', when `words`), then the pair
// with the next token ('b', when `bigrams`).
template <typename Visit>
void VisitTextFeatures(absl::string_view text, int min_ngram, int max_ngram, bool words,
                       bool bigrams, Visit&& visit) {
  const std::vector<Token> tokens = Tokenize(text);
  std::string padded;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& w = tokens[i].key;
    padded.assign("<");
    padded += w;
    padded += '>';
    const absl::string_view p(padded);
    const int len = static_cast<int>(p.size());
    for (int n = min_ngram; n <= max_ngram; ++n) {
      for (int s = 0; s + n <= len; ++s) visit('c', StableFeatureHash('c', p.substr(s, n)));
    }
    if (words) visit('w', StableFeatureHash('w', w));
    if (bigrams && i + 1 < tokens.size()) visit('b', StableFeatureHash('b', w, tokens[i + 1].key));
  }
}

struct NameFeaturizerOptions {
  // Hash space of the embedding table (rows), 1024..(1 << 22).
  int buckets = 1 << 17;
  // Character n-gram lengths inside "<word>" of normalised tokens; 1 <= min <= max <= 16.
  int min_ngram = 3, max_ngram = 5;
  // Weight of one character n-gram; >= 0.
  float ngram_weight = 1.0f;
  // Weight of a whole word (normalised, plural-folded); >= 0, 0 drops word features.
  float word_weight = 2.0f;
  // Weight of an adjacent-word pair; >= 0, 0 drops pair features.
  float bigram_weight = 1.0f;
};

// INVALID_ARGUMENT naming the field and its limit.
absl::Status ValidateNameFeaturizerOptions(const NameFeaturizerOptions& o);

class NameFeaturizer {
 public:
  // `o` must be valid (ValidateNameFeaturizerOptions); the trained encoder checks it on load.
  explicit NameFeaturizer(const NameFeaturizerOptions& o);
  // Appends the hashed features of `text` (ids in [0, buckets), possibly repeated; one entry per
  // occurrence) and their weights. Word, n-gram and pair features hash with different seeds (the
  // kind byte of StableFeatureHash). Appends nothing for text with no word. Thread-safe.
  void Featurize(absl::string_view text, std::vector<int32_t>* ids,
                 std::vector<float>* weights) const;
  const NameFeaturizerOptions& options() const { return options_; }

 private:
  NameFeaturizerOptions options_;
};

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_NAME_FEATURES_H_
