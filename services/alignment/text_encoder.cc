#include "services/alignment/text_encoder.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "services/alignment/name_features.h"
#include "services/alignment/text_normalize.h"
#include "services/alignment/trained_encoder.h"
#include "services/kgstore/import/line_reader.h"

namespace ibgraphrag::alignment {
namespace {

void AddFeature(uint64_t h, float weight, float* out, int dim) {
  const float sign = (h >> 63) != 0 ? -1.0f : 1.0f;
  out[h % static_cast<uint64_t>(dim)] += sign * weight;
}

}  // namespace

void L2Normalize(absl::Span<float> v) {
  double norm = 0;
  for (const float x : v) norm += static_cast<double>(x) * x;
  if (norm <= 0) return;
  const float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (float& x : v) x *= inv;
}

namespace {

// Four independent sums let the compiler pipeline (and vectorise) the loop.
float DotPortable(const float* a, const float* b, int dim) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 4 <= dim; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < dim; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

#if defined(__x86_64__)
// The horizontal sum of two accumulators, in one fixed order (DotAvx2 and Dot4Avx2 share it, so
// both give the same float for the same row).
__attribute__((target("avx2,fma"))) inline float SumLanes(__m256 acc0, __m256 acc1) {
  acc0 = _mm256_add_ps(acc0, acc1);
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
  sum = _mm_add_ss(sum, _mm_shuffle_ps(sum, sum, 1));
  return _mm_cvtss_f32(sum);
}

__attribute__((target("avx2,fma"))) float DotAvx2(const float* a, const float* b, int dim) {
  __m256 acc0 = _mm256_setzero_ps();
  __m256 acc1 = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= dim; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= dim; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  float s = SumLanes(acc0, acc1);
  for (; i < dim; ++i) s += a[i] * b[i];
  return s;
}

// DotAvx2 of one query with four rows at once, for dim a multiple of 16: each row's sum is built
// by the same operations in the same order as DotAvx2's (so the same float), but the four
// independent chains of fused multiply-adds overlap instead of waiting on each other.
__attribute__((target("avx2,fma"))) void Dot4Avx2(const float* q, const float* const rows[4],
                                                  int dim, float out[4]) {
  __m256 a0 = _mm256_setzero_ps(), b0 = _mm256_setzero_ps();
  __m256 a1 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
  __m256 a2 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps();
  __m256 a3 = _mm256_setzero_ps(), b3 = _mm256_setzero_ps();
  for (int i = 0; i < dim; i += 16) {
    const __m256 lo = _mm256_loadu_ps(q + i), hi = _mm256_loadu_ps(q + i + 8);
    a0 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(rows[0] + i), a0);
    b0 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(rows[0] + i + 8), b0);
    a1 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(rows[1] + i), a1);
    b1 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(rows[1] + i + 8), b1);
    a2 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(rows[2] + i), a2);
    b2 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(rows[2] + i + 8), b2);
    a3 = _mm256_fmadd_ps(lo, _mm256_loadu_ps(rows[3] + i), a3);
    b3 = _mm256_fmadd_ps(hi, _mm256_loadu_ps(rows[3] + i + 8), b3);
  }
  out[0] = SumLanes(a0, b0);
  out[1] = SumLanes(a1, b1);
  out[2] = SumLanes(a2, b2);
  out[3] = SumLanes(a3, b3);
}

const bool kHasAvx2Fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif

}  // namespace

void Dot4(const float* q, const float* const rows[4], int dim, float out[4]) {
#if defined(__x86_64__)
  if (kHasAvx2Fma && dim % 16 == 0) {
    Dot4Avx2(q, rows, dim, out);
    return;
  }
#endif
  for (int r = 0; r < 4; ++r) out[r] = Dot(q, rows[r], dim);
}

float Dot(const float* a, const float* b, int dim) {
  // MSCA and the HNSW search (candidate_index.cc) compute thousands of these per request; the
  // Debian FAISS build only has a scalar kernel.
#if defined(__x86_64__)
  if (kHasAvx2Fma) return DotAvx2(a, b, dim);
#endif
  return DotPortable(a, b, dim);
}

absl::StatusOr<std::vector<float>> TextEncoder::Encode(absl::string_view text) const {
  std::vector<float> out(static_cast<size_t>(dim()));
  const std::string copy(text);
  IBGR_RETURN_IF_ERROR(EncodeBatch(absl::MakeConstSpan(&copy, 1), absl::MakeSpan(out)));
  return out;
}

// ---- HashNgramEncoder ----

HashNgramEncoder::HashNgramEncoder(const HashNgramEncoderOptions& options)
    : options_(options),
      id_(absl::StrCat("hash-ngram-v1-d", options.dim,
                       options.min_ngram == 3 && options.max_ngram == 5 &&
                               options.unigram_weight == 2.0f && options.bigram_weight == 1.5f
                           ? ""
                           : absl::StrCat("-n", options.min_ngram, "-", options.max_ngram, "-u",
                                          options.unigram_weight, "-b", options.bigram_weight))) {}

absl::StatusOr<std::unique_ptr<HashNgramEncoder>> HashNgramEncoder::Create(
    const HashNgramEncoderOptions& options) {
  if (options.dim < 16 || options.dim > 65536) {
    return absl::InvalidArgumentError(absl::StrCat("dim: ", options.dim, " outside 16..65536"));
  }
  if (options.min_ngram < 1 || options.max_ngram < options.min_ngram || options.max_ngram > 16) {
    return absl::InvalidArgumentError("min_ngram/max_ngram: need 1 <= min <= max <= 16");
  }
  if (options.unigram_weight < 0 || options.bigram_weight < 0) {
    return absl::InvalidArgumentError("unigram_weight/bigram_weight: must be >= 0");
  }
  return std::unique_ptr<HashNgramEncoder>(new HashNgramEncoder(options));
}

void HashNgramEncoder::EncodeInto(absl::string_view text, float* out) const {
  const int dim = options_.dim;
  std::fill(out, out + dim, 0.0f);
  VisitTextFeatures(text, options_.min_ngram, options_.max_ngram, options_.unigram_weight > 0,
                    options_.bigram_weight > 0, [&](char kind, uint64_t hash) {
                      const float weight = kind == 'c'   ? 1.0f
                                           : kind == 'w' ? options_.unigram_weight
                                                         : options_.bigram_weight;
                      AddFeature(hash, weight, out, dim);
                    });
  L2Normalize(absl::MakeSpan(out, dim));
}

absl::Status HashNgramEncoder::EncodeBatch(absl::Span<const std::string> texts,
                                           absl::Span<float> out) const {
  if (out.size() != texts.size() * static_cast<size_t>(options_.dim)) {
    return absl::InvalidArgumentError("EncodeBatch: output size != texts * dim");
  }
  for (size_t i = 0; i < texts.size(); ++i) EncodeInto(texts[i], out.data() + i * options_.dim);
  return absl::OkStatus();
}

// ---- WordVectorEncoder ----

void WordVectorEncoder::AddWord(absl::string_view word, const float* v) {
  const std::string key = options_.lowercase ? absl::AsciiStrToLower(word) : std::string(word);
  if (index_.contains(key)) return;  // first (most frequent) spelling wins
  const int64_t row = static_cast<int64_t>(index_.size());
  index_.emplace(key, row);
  vectors_.insert(vectors_.end(), v, v + dim_);
  L2Normalize(absl::MakeSpan(vectors_.data() + row * dim_, dim_));
}

absl::Status WordVectorEncoder::LoadBinary(const std::string& path, int64_t max_words) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::unique_ptr<FILE, int (*)(FILE*)> closer(f, &std::fclose);
  long long count = 0;
  int dim = 0;
  if (std::fscanf(f, "%lld %d", &count, &dim) != 2 || count < 0 || dim <= 0 || dim > 65536) {
    return absl::DataLossError(absl::StrCat(path, ": bad word2vec binary header"));
  }
  dim_ = dim;
  std::vector<float> v(dim);
  std::string word;
  for (long long n = 0; n < count && (max_words <= 0 || n < max_words); ++n) {
    word.clear();
    int c;
    while ((c = std::fgetc(f)) != EOF && (c == '\n' || c == ' ')) {
    }
    while (c != EOF && c != ' ') {
      word.push_back(static_cast<char>(c));
      c = std::fgetc(f);
    }
    if (c == EOF || std::fread(v.data(), sizeof(float), dim, f) != static_cast<size_t>(dim)) {
      return absl::DataLossError(absl::StrCat(path, ": truncated at word ", n + 1, " of ", count));
    }
    AddWord(word, v.data());
  }
  return absl::OkStatus();
}

absl::Status WordVectorEncoder::LoadText(const std::string& path, int64_t max_words) {
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<kgstore::import_::LineReader> reader,
                        kgstore::import_::LineReader::Open(path));
  absl::string_view line;
  std::vector<float> v;
  int64_t words = 0;
  while (reader->Next(&line) && (max_words <= 0 || words < max_words)) {
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipWhitespace());
    if (f.empty()) continue;
    if (reader->line_number() == 1 && f.size() == 2) {
      int64_t count;
      int dim;
      if (absl::SimpleAtoi(f[0], &count) && absl::SimpleAtoi(f[1], &dim)) {
        if (dim <= 0 || dim > 65536) {
          return absl::DataLossError(absl::StrCat(path, ":1: bad dimension ", f[1]));
        }
        dim_ = dim;
        continue;
      }
    }
    if (dim_ == 0) dim_ = static_cast<int>(f.size()) - 1;
    if (dim_ <= 0 || static_cast<int>(f.size()) != dim_ + 1) {
      return absl::DataLossError(absl::StrCat(path, ":", reader->line_number(), ": expected ",
                                              dim_ + 1, " fields, got ", f.size()));
    }
    v.resize(dim_);
    for (int i = 0; i < dim_; ++i) {
      if (!absl::SimpleAtof(f[i + 1], &v[i])) {
        return absl::DataLossError(
            absl::StrCat(path, ":", reader->line_number(), ": bad number \"", f[i + 1], "\""));
      }
    }
    AddWord(f[0], v.data());
    ++words;
  }
  IBGR_RETURN_IF_ERROR(reader->status());
  if (dim_ == 0) return absl::DataLossError(absl::StrCat(path, ": no vectors"));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<WordVectorEncoder>> WordVectorEncoder::Create(
    const WordVectorEncoderOptions& options) {
  std::error_code ec;
  if (options.path.empty() || !std::filesystem::exists(options.path, ec)) {
    return absl::NotFoundError(absl::StrCat("word vector file not found: \"", options.path, "\""));
  }
  std::unique_ptr<WordVectorEncoder> enc(new WordVectorEncoder());
  enc->options_ = options;
  WordVectorFormat format = options.format;
  if (format == WordVectorFormat::kAuto) {
    format = absl::EndsWith(options.path, ".bin") ? WordVectorFormat::kWord2VecBinary
                                                  : WordVectorFormat::kText;
  }
  if (format == WordVectorFormat::kWord2VecBinary) {
    IBGR_RETURN_IF_ERROR(enc->LoadBinary(options.path, options.max_words));
  } else {
    IBGR_RETURN_IF_ERROR(enc->LoadText(options.path, options.max_words));
  }
  std::string stem = std::filesystem::path(options.path).filename().string();
  stem = stem.substr(0, stem.find('.'));
  enc->id_ = absl::StrCat("wordvec-", stem, "-n", enc->index_.size(), "-d", enc->dim_);
  return enc;
}

void WordVectorEncoder::EncodeInto(absl::string_view text, float* out) const {
  std::fill(out, out + dim_, 0.0f);
  for (const Token& t : Tokenize(text)) {
    auto it = index_.end();
    if (!options_.lowercase) it = index_.find(text.substr(t.begin, t.end - t.begin));
    if (it == index_.end()) it = index_.find(t.lower);
    if (it == index_.end() && t.key != t.lower) it = index_.find(t.key);
    if (it == index_.end()) continue;
    const float* v = vectors_.data() + it->second * dim_;
    for (int i = 0; i < dim_; ++i) out[i] += v[i];
  }
  L2Normalize(absl::MakeSpan(out, dim_));
}

absl::Status WordVectorEncoder::EncodeBatch(absl::Span<const std::string> texts,
                                            absl::Span<float> out) const {
  if (out.size() != texts.size() * static_cast<size_t>(dim_)) {
    return absl::InvalidArgumentError("EncodeBatch: output size != texts * dim");
  }
  for (size_t i = 0; i < texts.size(); ++i) EncodeInto(texts[i], out.data() + i * dim_);
  return absl::OkStatus();
}

// ---- RemoteEmbeddingEncoder ----

namespace {

// Only failed attempts are worth a line: a bundle build encodes every entity in many batches.
void LogFailedEmbeddingAttempt(absl::string_view line) {
  if (absl::StrContains(line, " result=OK")) return;
  std::fprintf(stderr, "[alignment] %.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace

RemoteEmbeddingEncoder::RemoteEmbeddingEncoder(const RemoteEmbeddingEncoderOptions& options,
                                               std::unique_ptr<common::OpenAiClient> client)
    : options_(options),
      id_(absl::StrCat("openai-", options.model, "-d", options.dim)),
      client_(std::move(client)) {}

absl::StatusOr<std::unique_ptr<RemoteEmbeddingEncoder>> RemoteEmbeddingEncoder::Create(
    const RemoteEmbeddingEncoderOptions& options) {
  if (!absl::StartsWith(options.base_url, "http://") &&
      !absl::StartsWith(options.base_url, "https://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("base_url: \"", options.base_url, "\" is not an http(s) URL"));
  }
  if (options.model.empty()) return absl::InvalidArgumentError("model: required");
  if (options.dim <= 0 || options.dim > 65536) {
    return absl::InvalidArgumentError(absl::StrCat("dim: ", options.dim, " outside 1..65536"));
  }
  if (options.batch_size <= 0) return absl::InvalidArgumentError("batch_size: must be > 0");
  common::OpenAiClientOptions client_options;
  client_options.name = "embeddings";
  client_options.base_url = options.base_url;
  client_options.model = options.model;
  client_options.api_key_env = options.api_key_env;
  client_options.timeout = options.timeout;
  client_options.connect_timeout = options.connect_timeout;
  client_options.max_retries = options.max_retries;
  IBGR_ASSIGN_OR_RETURN(
      std::unique_ptr<common::OpenAiClient> client,
      common::OpenAiClient::Create(std::move(client_options), LogFailedEmbeddingAttempt));
  return std::unique_ptr<RemoteEmbeddingEncoder>(
      new RemoteEmbeddingEncoder(options, std::move(client)));
}

absl::Status RemoteEmbeddingEncoder::EncodeChunk(absl::Span<const std::string> texts,
                                                 float* out) const {
  // No caller deadline here (bundle builds, requests' encoders): each attempt is bounded by
  // options_.timeout and the retries by max_retries.
  IBGR_ASSIGN_OR_RETURN(common::EmbeddingsResponse response,
                        client_->Embed(texts, absl::InfiniteFuture()));
  for (size_t i = 0; i < response.vectors.size(); ++i) {
    const std::vector<float>& vector = response.vectors[i];
    if (static_cast<int>(vector.size()) != options_.dim) {
      return absl::DataLossError(absl::StrCat("embeddings response: vector of length ",
                                              vector.size(), ", configured dim is ", options_.dim));
    }
    float* row = out + i * options_.dim;
    std::copy(vector.begin(), vector.end(), row);
    L2Normalize(absl::MakeSpan(row, options_.dim));
  }
  return absl::OkStatus();
}

absl::Status RemoteEmbeddingEncoder::EncodeBatch(absl::Span<const std::string> texts,
                                                 absl::Span<float> out) const {
  if (out.size() != texts.size() * static_cast<size_t>(options_.dim)) {
    return absl::InvalidArgumentError("EncodeBatch: output size != texts * dim");
  }
  for (size_t start = 0; start < texts.size(); start += options_.batch_size) {
    const size_t n = std::min<size_t>(options_.batch_size, texts.size() - start);
    IBGR_RETURN_IF_ERROR(EncodeChunk(texts.subspan(start, n), out.data() + start * options_.dim));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TextEncoder>> CreateTextEncoder(const EncoderSpec& spec) {
  if (spec.kind.empty() || spec.kind == "hash-ngram") {
    IBGR_ASSIGN_OR_RETURN(auto enc, HashNgramEncoder::Create(spec.hash));
    return std::unique_ptr<TextEncoder>(std::move(enc));
  }
  if (spec.kind == "trained" && !EncoderComesFromManifest(spec)) {
    std::string dir = spec.trained.dir;
    if (dir.empty()) {
      IBGR_ASSIGN_OR_RETURN(dir, EncoderArtifacts(spec.base_path).Resolve(spec.trained.version));
    }
    IBGR_ASSIGN_OR_RETURN(auto enc, TrainedNameEncoder::Open(dir));
    return std::unique_ptr<TextEncoder>(std::move(enc));
  }
  if (EncoderComesFromManifest(spec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "encoder.kind: \"", spec.kind,
        "\" without a dir or version takes the encoder an artifact's manifest names; open it "
        "with EncoderForManifest"));
  }
  if (spec.kind == "word-vectors") {
    IBGR_ASSIGN_OR_RETURN(auto enc, WordVectorEncoder::Create(spec.word_vectors));
    return std::unique_ptr<TextEncoder>(std::move(enc));
  }
  if (spec.kind == "openai") {
    IBGR_ASSIGN_OR_RETURN(auto enc, RemoteEmbeddingEncoder::Create(spec.remote));
    return std::unique_ptr<TextEncoder>(std::move(enc));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("encoder.kind: \"", spec.kind,
                   "\" is not one of hash-ngram, trained, bundle, word-vectors, openai"));
}

bool EncoderComesFromManifest(const EncoderSpec& spec) {
  return spec.kind == "bundle" ||
         (spec.kind == "trained" && spec.trained.dir.empty() && spec.trained.version == 0);
}

}  // namespace ibgraphrag::alignment
