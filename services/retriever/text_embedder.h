// The seam through which the retriever embeds entity, relation and question texts. The suite's
// encoders live in services/alignment (TextEncoder); until the retriever is switched to that
// interface it takes any function of this shape, and ships a small deterministic hashed
// word + character-trigram encoder (the same family as alignment's default) so it is never
// blocked on weights.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TEXT_EMBEDDER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TEXT_EMBEDDER_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace ibgraphrag::retriever {

struct TextEmbedder {
  // Stable id recorded in artifact manifests ("hashed-ngram-v1-d256"); a model refuses
  // embeddings built by a different encoder.
  std::string id;
  // Length of every vector `embed` returns.
  int dim = 0;
  // Thread-safe; returns an L2-normalised vector of `dim` floats (all zero for empty text).
  std::function<std::vector<float>(std::string_view)> embed;
};

// Deterministic, weight-free encoder: lower-cased words and character trigrams (with word
// boundaries) hashed with FNV-1a into `dim` signed buckets, then L2-normalised. dim >= 8.
TextEmbedder MakeHashedNgramEmbedder(int dim = 256);

// The built-in encoder with this id ("hashed-ngram-v1-d<dim>"); NOT_FOUND for other ids (those
// encoders must be passed in explicitly, e.g. through alignment_embedder.h).
absl::StatusOr<TextEmbedder> BuiltinEmbedderForId(std::string_view id);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TEXT_EMBEDDER_H_
