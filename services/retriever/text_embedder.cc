#include "services/retriever/text_embedder.h"

#include <cctype>
#include <cmath>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ibgraphrag::retriever {
namespace {

uint64_t Fnv1a(std::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void AddFeature(std::string_view feature, float weight, std::vector<float>* v) {
  const uint64_t h = Fnv1a(feature, 0x9e3779b97f4a7c15ull);
  const size_t bucket = static_cast<size_t>(h % v->size());
  const float sign = (h >> 63) != 0 ? -1.0f : 1.0f;
  (*v)[bucket] += sign * weight;
}

}  // namespace

TextEmbedder MakeHashedNgramEmbedder(int dim) {
  if (dim < 8) dim = 8;
  TextEmbedder embedder;
  embedder.id = absl::StrCat("hashed-ngram-v1-d", dim);
  embedder.dim = dim;
  embedder.embed = [dim](std::string_view text) {
    std::vector<float> v(dim, 0.0f);
    std::string word;
    auto flush = [&]() {
      if (word.empty()) return;
      AddFeature(absl::StrCat("w:", word), 1.0f, &v);
      const std::string padded = absl::StrCat("<", word, ">");
      for (size_t i = 0; i + 3 <= padded.size(); ++i) {
        AddFeature(std::string_view(padded).substr(i, 3), 0.5f, &v);
      }
      word.clear();
    };
    for (char c : text) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (std::isalnum(u) || u >= 0x80) {
        word.push_back(static_cast<char>(std::tolower(u)));
      } else {
        flush();
      }
    }
    flush();
    double norm = 0;
    for (float x : v) norm += static_cast<double>(x) * x;
    if (norm > 0) {
      const float inv = static_cast<float>(1.0 / std::sqrt(norm));
      for (float& x : v) x *= inv;
    }
    return v;
  };
  return embedder;
}

absl::StatusOr<TextEmbedder> BuiltinEmbedderForId(std::string_view id) {
  absl::string_view rest(id.data(), id.size());
  int dim = 0;
  if (absl::ConsumePrefix(&rest, "hashed-ngram-v1-d") && absl::SimpleAtoi(rest, &dim) && dim >= 8 &&
      dim <= 65536) {
    return MakeHashedNgramEmbedder(dim);
  }
  return absl::NotFoundError(absl::StrCat("encoder \"", absl::string_view(id.data(), id.size()),
                                          "\" is not built into the retriever"));
}

}  // namespace ibgraphrag::retriever
