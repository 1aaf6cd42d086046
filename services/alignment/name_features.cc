#include "services/alignment/name_features.h"

#include "absl/strings/str_cat.h"

namespace ibgraphrag::alignment {

uint64_t StableFeatureHash(char kind, absl::string_view a, absl::string_view b) {
  // FNV-1a, then a splitmix64 finaliser so that low bits (the bucket) and the top bit (the hash
  // encoder's sign) are both well mixed.
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ULL;
  };
  mix(static_cast<unsigned char>(kind));
  for (const char c : a) mix(static_cast<unsigned char>(c));
  if (!b.empty()) {
    mix(' ');
    for (const char c : b) mix(static_cast<unsigned char>(c));
  }
  h += 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return h ^ (h >> 31);
}

absl::Status ValidateNameFeaturizerOptions(const NameFeaturizerOptions& o) {
  if (o.buckets < 1024 || o.buckets > (1 << 22)) {
    return absl::InvalidArgumentError(
        absl::StrCat("features.buckets: ", o.buckets, " outside 1024..", 1 << 22));
  }
  if (o.min_ngram < 1 || o.max_ngram < o.min_ngram || o.max_ngram > 16) {
    return absl::InvalidArgumentError(absl::StrCat("features.min_ngram/max_ngram: ", o.min_ngram,
                                                   "/", o.max_ngram,
                                                   ", need 1 <= min <= max <= 16"));
  }
  if (!(o.ngram_weight >= 0) || !(o.word_weight >= 0) || !(o.bigram_weight >= 0)) {
    return absl::InvalidArgumentError(
        "features.ngram_weight/word_weight/bigram_weight: must be finite and >= 0");
  }
  return absl::OkStatus();
}

NameFeaturizer::NameFeaturizer(const NameFeaturizerOptions& o) : options_(o) {}

void NameFeaturizer::Featurize(absl::string_view text, std::vector<int32_t>* ids,
                               std::vector<float>* weights) const {
  const uint64_t buckets = static_cast<uint64_t>(options_.buckets);
  const bool ngrams = options_.ngram_weight > 0;
  VisitTextFeatures(text, options_.min_ngram, ngrams ? options_.max_ngram : options_.min_ngram - 1,
                    options_.word_weight > 0, options_.bigram_weight > 0,
                    [&](char kind, uint64_t hash) {
                      ids->push_back(static_cast<int32_t>(hash % buckets));
                      weights->push_back(kind == 'c'   ? options_.ngram_weight
                                         : kind == 'w' ? options_.word_weight
                                                       : options_.bigram_weight);
                    });
}

}  // namespace ibgraphrag::alignment
