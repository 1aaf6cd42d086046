#include "services/retriever/alignment_embedder.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace ibgraphrag::retriever {

TextEmbedder EmbedderFromEncoder(std::shared_ptr<const alignment::TextEncoder> encoder) {
  TextEmbedder e;
  e.id = encoder->id();
  e.dim = encoder->dim();
  e.embed = [encoder](std::string_view text) {
    absl::StatusOr<std::vector<float>> v =
        encoder->Encode(absl::string_view(text.data(), text.size()));
    if (!v.ok()) return std::vector<float>(encoder->dim(), 0.0f);
    return *std::move(v);
  };
  return e;
}

absl::StatusOr<TextEmbedder> HashNgramEmbedder(int dim) {
  alignment::HashNgramEncoderOptions options;
  options.dim = dim;
  absl::StatusOr<std::unique_ptr<alignment::HashNgramEncoder>> encoder =
      alignment::HashNgramEncoder::Create(options);
  if (!encoder.ok()) return encoder.status();
  return EmbedderFromEncoder(std::shared_ptr<const alignment::TextEncoder>(std::move(*encoder)));
}

absl::StatusOr<TextEmbedder> DefaultTextEmbedder() {
  return HashNgramEmbedder(alignment::HashNgramEncoderOptions().dim);
}

absl::StatusOr<TextEmbedder> EmbedderForId(std::string_view id) {
  absl::string_view rest(id.data(), id.size());
  int dim = 0;
  if (absl::ConsumePrefix(&rest, "hash-ngram-v1-d") && absl::SimpleAtoi(rest, &dim)) {
    absl::StatusOr<TextEmbedder> embedder = HashNgramEmbedder(dim);
    if (embedder.ok() && embedder->id == id) return embedder;
  }
  return absl::NotFoundError(
      absl::StrCat("encoder \"", absl::string_view(id.data(), id.size()),
                   "\" cannot be rebuilt from its id; configure it and pass it to the retriever"));
}

}  // namespace ibgraphrag::retriever
