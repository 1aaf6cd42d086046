#include "services/retriever/alignment_embedder.h"

#include <string>
#include <vector>

#include "services/alignment/trained_encoder.h"

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

absl::StatusOr<TextEmbedder> EmbedderForId(const std::string& base_path, std::string_view id) {
  absl::StatusOr<std::unique_ptr<alignment::TextEncoder>> encoder =
      alignment::OpenEncoderById(base_path, absl::string_view(id.data(), id.size()));
  if (!encoder.ok()) return encoder.status();
  return EmbedderFromEncoder(std::shared_ptr<const alignment::TextEncoder>(std::move(*encoder)));
}

}  // namespace ibgraphrag::retriever
