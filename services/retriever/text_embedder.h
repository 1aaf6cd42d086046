// The seam through which the retriever embeds entity, relation and question texts. The encoders
// themselves are the suite's (services/alignment/text_encoder.h); alignment_embedder.h adapts them,
// so the retriever's artifacts and the alignment bundle share one encoder and one encoder id.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TEXT_EMBEDDER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TEXT_EMBEDDER_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ibgraphrag::retriever {

struct TextEmbedder {
  // Stable id recorded in artifact manifests ("hash-ngram-v1-d256"); a model refuses
  // embeddings built by a different encoder.
  std::string id;
  // Length of every vector `embed` returns.
  int dim = 0;
  // Thread-safe; returns an L2-normalised vector of `dim` floats (all zero for empty text).
  std::function<std::vector<float>(std::string_view)> embed;

  // Many texts at once, row i at [i * dim, (i + 1) * dim): one call of the encoder's batch form
  // where it has one (no per-text call overhead; the trained encoder still runs its MLP per
  // text), `embed` per text otherwise.
  std::vector<float> EmbedBatch(const std::vector<std::string>& texts) const {
    if (embed_batch) return embed_batch(texts);
    std::vector<float> out;
    out.reserve(texts.size() * static_cast<size_t>(dim));
    for (const std::string& text : texts) {
      const std::vector<float> row = embed(text);
      out.insert(out.end(), row.begin(), row.end());
    }
    return out;
  }
  // Optional batched form of `embed` (same rows); unset = `embed` per text.
  std::function<std::vector<float>(const std::vector<std::string>&)> embed_batch;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TEXT_EMBEDDER_H_
