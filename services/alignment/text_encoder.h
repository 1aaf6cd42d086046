// Text encoders behind one interface: every vector is L2-normalised so an inner product is a
// cosine, and every encoder has an id that bundles record so a bundle is never queried with
// vectors from a different encoder.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_TEXT_ENCODER_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_TEXT_ENCODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/openai_client.h"

namespace ibgraphrag::alignment {

class TextEncoder {
 public:
  virtual ~TextEncoder() = default;
  // Stable identifier of the encoder and its parameters, e.g. "hash-ngram-v1-d256". Two encoders
  // with the same id produce the same vectors.
  virtual const std::string& id() const = 0;
  // Vector length.
  virtual int dim() const = 0;
  // Encodes texts.size() texts into out[i * dim() .. (i + 1) * dim()). Each row has L2 norm 1,
  // or is all zero when the encoder knows nothing of the text (cosine 0 to everything).
  // Thread-safe.
  virtual absl::Status EncodeBatch(absl::Span<const std::string> texts,
                                   absl::Span<float> out) const = 0;
  // One text.
  absl::StatusOr<std::vector<float>> Encode(absl::string_view text) const;
};

// ---- Hashed character n-gram + word encoder (the default; no weights, deterministic). ----
struct HashNgramEncoderOptions {
  // Vector length; more dimensions mean fewer hash collisions. 16..65536.
  int dim = 256;
  // Character n-gram lengths taken inside each "<word>" (the brackets mark word boundaries, so
  // prefixes and suffixes get their own features).
  int min_ngram = 3;
  int max_ngram = 5;
  // Weights of whole-word and adjacent-word-pair features relative to one character n-gram.
  // Words carry more meaning than any single n-gram; pairs keep "heart failure" apart from
  // "failure of the heart valve".
  float unigram_weight = 2.0f;
  float bigram_weight = 1.5f;
};

class HashNgramEncoder final : public TextEncoder {
 public:
  static absl::StatusOr<std::unique_ptr<HashNgramEncoder>> Create(
      const HashNgramEncoderOptions& options);
  const std::string& id() const override { return id_; }
  int dim() const override { return options_.dim; }
  absl::Status EncodeBatch(absl::Span<const std::string> texts,
                           absl::Span<float> out) const override;
  // Encodes one text into `out` (dim() floats); never fails.
  void EncodeInto(absl::string_view text, float* out) const;

 private:
  explicit HashNgramEncoder(const HashNgramEncoderOptions& options);
  HashNgramEncoderOptions options_;
  std::string id_;
};

// ---- Word-vector file encoder: the mean of the vectors of the words of the text. ----
enum class WordVectorFormat {
  // word2vec binary when the file name ends in ".bin", text otherwise.
  kAuto,
  // word2vec binary: "<count> <dim>\n" then per word "<word> " and dim little-endian float32s.
  kWord2VecBinary,
  // One "<word> <v1> ... <vdim>" line per word: word2vec text and fastText .vec (both with a
  // "<count> <dim>" first line) and GloVe .txt (no header line).
  kText,
};

struct WordVectorEncoderOptions {
  // The vector file (BioWordVec, fastText crawl vectors, GloVe, ...).
  std::string path;
  WordVectorFormat format = WordVectorFormat::kAuto;
  // Stop after this many words (files are sorted by frequency, so the first words matter
  // most); 0 reads them all. Bounds memory for multi-GB files.
  int64_t max_words = 0;
  // Look words up lower-cased (BioWordVec and GloVe are lower-case). When false the word as
  // written is tried first and the lower-cased one second.
  bool lowercase = true;
};

class WordVectorEncoder final : public TextEncoder {
 public:
  // NOT_FOUND when the file is missing, DATA_LOSS naming the line for a malformed file.
  static absl::StatusOr<std::unique_ptr<WordVectorEncoder>> Create(
      const WordVectorEncoderOptions& options);
  const std::string& id() const override { return id_; }
  int dim() const override { return dim_; }
  absl::Status EncodeBatch(absl::Span<const std::string> texts,
                           absl::Span<float> out) const override;
  int64_t vocabulary_size() const { return static_cast<int64_t>(index_.size()); }

 private:
  WordVectorEncoder() = default;
  absl::Status LoadBinary(const std::string& path, int64_t max_words);
  absl::Status LoadText(const std::string& path, int64_t max_words);
  void AddWord(absl::string_view word, const float* v);
  void EncodeInto(absl::string_view text, float* out) const;

  WordVectorEncoderOptions options_;
  std::string id_;
  int dim_ = 0;
  absl::flat_hash_map<std::string, int64_t> index_;  // word -> row in vectors_
  std::vector<float> vectors_;                       // rows of dim_ floats, L2-normalised
};

// ---- Remote OpenAI-compatible `/v1/embeddings` endpoint (vLLM, TEI, Ollama, hosted). ----
struct RemoteEmbeddingEncoderOptions {
  // Base URL up to and including the API version, "http://127.0.0.1:8080/v1"; "/embeddings" is
  // appended. http:// or https:// only.
  std::string base_url;
  // Model name sent with every request.
  std::string model;
  // Vector length the model returns; responses of another length are refused (DATA_LOSS), so a
  // changed model behind the same URL cannot silently corrupt scores. Required, > 0.
  int dim = 0;
  // Environment variable holding the API key (sent as a Bearer token); empty sends none.
  std::string api_key_env;
  // Texts per HTTP request; bundle builds encode every entity, so batching matters.
  int batch_size = 64;
  // Limit on one HTTP attempt.
  absl::Duration timeout = absl::Seconds(30);
  // Limit on establishing the connection, within `timeout`.
  absl::Duration connect_timeout = absl::Seconds(5);
  // Retries after the first attempt on connection errors, 408, 429 and 5xx (the policy of
  // common::OpenAiClient, whose backoff defaults apply). 0..10.
  int max_retries = 2;
};

class RemoteEmbeddingEncoder final : public TextEncoder {
 public:
  // INVALID_ARGUMENT naming a bad field, FAILED_PRECONDITION when api_key_env is unset.
  static absl::StatusOr<std::unique_ptr<RemoteEmbeddingEncoder>> Create(
      const RemoteEmbeddingEncoderOptions& options);
  const std::string& id() const override { return id_; }
  int dim() const override { return options_.dim; }
  // Each batch goes through common::OpenAiClient::Embed (retries, timeouts, kept-alive
  // connections). UNAVAILABLE on connection failures and 5xx after retries, DEADLINE_EXCEEDED
  // on timeouts, DATA_LOSS on malformed responses or vectors of another length than dim,
  // INVALID_ARGUMENT/UNAUTHENTICATED/... on other HTTP errors.
  absl::Status EncodeBatch(absl::Span<const std::string> texts,
                           absl::Span<float> out) const override;

 private:
  RemoteEmbeddingEncoder(const RemoteEmbeddingEncoderOptions& options,
                         std::unique_ptr<common::OpenAiClient> client);
  absl::Status EncodeChunk(absl::Span<const std::string> texts, float* out) const;
  RemoteEmbeddingEncoderOptions options_;
  std::string id_;
  std::unique_ptr<common::OpenAiClient> client_;
};

// A trained encoder artifact (services/alignment/trained_encoder.h) to use.
struct TrainedEncoderSpec {
  // A version directory `<base>/encoder/<version>/`; wins over `version`.
  std::string dir;
  // A version under `<EncoderSpec::base_path>/encoder/`, > 0. With neither set, the trained
  // encoder the bundle (or retriever model) names by id.
  int64_t version = 0;
};

// Which encoder a bundle build or a server uses.
struct EncoderSpec {
  // "hash-ngram" (default), "trained", "word-vectors", "openai", or "bundle": the encoder whose
  // id the bundle (or retriever model) being opened names (OpenEncoderById, trained_encoder.h).
  std::string kind = "hash-ngram";
  // Artifact base holding `encoder/<version>/` (kinds "trained" and "bundle").
  std::string base_path;
  HashNgramEncoderOptions hash;
  TrainedEncoderSpec trained;
  WordVectorEncoderOptions word_vectors;
  RemoteEmbeddingEncoderOptions remote;
};
// The encoder `spec` describes. Kind "bundle", and "trained" without a dir or version, take the
// encoder from an artifact's manifest: use EncoderForManifest (trained_encoder.h) for those;
// here they are FAILED_PRECONDITION.
absl::StatusOr<std::unique_ptr<TextEncoder>> CreateTextEncoder(const EncoderSpec& spec);
// True for the specs whose encoder is named by the manifest of the artifact being opened.
bool EncoderComesFromManifest(const EncoderSpec& spec);

// Scales `v` to unit L2 norm (left all zero when it is zero).
void L2Normalize(absl::Span<float> v);
// Inner product of two dim-length vectors (cosine for unit vectors).
float Dot(const float* a, const float* b, int dim);
// out[r] = Dot(q, rows[r], dim) for four rows, bit for bit, computed together (faster: the HNSW
// name search, hnsw_search.h).
void Dot4(const float* q, const float* const rows[4], int dim, float out[4]);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_TEXT_ENCODER_H_
