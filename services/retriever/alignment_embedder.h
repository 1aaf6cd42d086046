// Adapts the suite's text encoders (services/alignment/text_encoder.h) to the retriever's
// TextEmbedder seam. The servers and the training tool embed through this, so the retriever's
// artifacts and the alignment bundle can share one encoder (and its id).
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_ALIGNMENT_EMBEDDER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_ALIGNMENT_EMBEDDER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "services/alignment/text_encoder.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever {

// Wraps `encoder` (shared; must be thread-safe, as alignment encoders are). An encoding error
// (remote encoders) yields an all-zero vector: cosine 0, never a crash on the request path.
TextEmbedder EmbedderFromEncoder(std::shared_ptr<const alignment::TextEncoder> encoder);

// The default encoder of the suite: alignment's hashed n-gram encoder, default options.
absl::StatusOr<TextEmbedder> DefaultTextEmbedder();

// Alignment's hashed n-gram encoder with `dim` dimensions (16..65536) and default n-gram options.
absl::StatusOr<TextEmbedder> HashNgramEmbedder(int dim);

// The encoder a model manifest names, opened by its id (alignment::SharedEncoderById: one copy
// per process, which the all-in-one's alignment shares): hashed n-gram ids are rebuilt, trained
// ids ("trained-name-v1-...") are loaded from `<base_path>/encoder/<version>/`; NOT_FOUND naming
// the id and where it looked otherwise (word-vector or remote encoders must be configured and
// passed in explicitly).
absl::StatusOr<TextEmbedder> EmbedderForId(const std::string& base_path, std::string_view id);

// The encoder an operator names with `--encoder`, spelled as for `ibgr align build --encoder`:
// "hash-ngram" (alignment's hashed n-gram encoder, default options), "trained" (the newest
// `<base_path>/encoder/<version>/`), or an encoder id (EmbedderForId). Errors name `field`.
absl::StatusOr<TextEmbedder> EmbedderForSpelling(const std::string& base_path,
                                                 std::string_view spelling, std::string_view field);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_ALIGNMENT_EMBEDDER_H_
