#include "services/retriever/alignment_embedder.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
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
  e.embed_batch = [encoder](const std::vector<std::string>& texts) {
    const size_t dim = static_cast<size_t>(encoder->dim());
    std::vector<float> out(texts.size() * dim, 0.0f);
    if (encoder->EncodeBatch(texts, absl::MakeSpan(out)).ok()) return out;
    // A failed batch is encoded text by text, so only a text that fails on its own is a zero row
    // (cosine 0), as `embed` gives for it.
    for (size_t i = 0; i < texts.size(); ++i) {
      absl::StatusOr<std::vector<float>> v = encoder->Encode(texts[i]);
      if (v.ok() && v->size() == dim) {
        std::copy(v->begin(), v->end(), out.begin() + static_cast<std::ptrdiff_t>(i * dim));
      } else {
        std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(i * dim), dim, 0.0f);
      }
    }
    return out;
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
  absl::StatusOr<std::shared_ptr<const alignment::TextEncoder>> encoder =
      alignment::SharedEncoderById(base_path, absl::string_view(id.data(), id.size()));
  if (!encoder.ok()) return encoder.status();
  return EmbedderFromEncoder(*std::move(encoder));
}

absl::StatusOr<TextEmbedder> EmbedderForSpelling(const std::string& base_path,
                                                 std::string_view spelling,
                                                 std::string_view field) {
  const std::string name(spelling), flag(field);
  absl::StatusOr<TextEmbedder> embedder;
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": empty (hash-ngram, trained or an encoder id)"));
  } else if (name == "hash-ngram") {
    embedder = DefaultTextEmbedder();
  } else if (name == "trained") {
    absl::StatusOr<std::string> dir = alignment::EncoderArtifacts(base_path).Resolve(std::nullopt);
    if (!dir.ok())
      return absl::Status(dir.status().code(), absl::StrCat(flag, ": ", dir.status().message()));
    absl::StatusOr<std::string> id = alignment::ReadTrainedEncoderId(*dir);
    if (!id.ok()) return id.status();
    embedder = EmbedderForId(base_path, *id);
  } else {
    embedder = EmbedderForId(base_path, name);
  }
  if (!embedder.ok()) {
    return absl::Status(embedder.status().code(),
                        absl::StrCat(flag, ": ", embedder.status().message()));
  }
  return embedder;
}

}  // namespace ibgraphrag::retriever
