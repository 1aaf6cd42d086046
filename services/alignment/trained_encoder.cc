#include "services/alignment/trained_encoder.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"

namespace ibgraphrag::alignment {
namespace {

namespace fs = std::filesystem;
namespace artifacts_pb = ::ibgraphrag::artifacts::v1;

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "weights.bin is little-endian and read with memcpy");

constexpr char kWeightsMagic[8] = {'I', 'B', 'G', 'R', 'T', 'N', 'E', '1'};
constexpr uint32_t kWeightsFileVersion = 1;
// Layout version of the artifact directory (EncoderManifest.format_version).
constexpr int32_t kTrainedEncoderFormatVersion = 1;
constexpr int kMinDim = 8, kMaxDim = 4096, kMaxHidden = 8192;

// Fixed-width little-endian header of weights.bin; the float arrays follow it.
struct WeightsHeader {
  char magic[8];
  uint32_t version;
  int32_t buckets, dim, hidden, min_ngram, max_ngram;
  float ngram_weight, word_weight, bigram_weight;
};
static_assert(sizeof(WeightsHeader) == 44, "weights.bin header must stay 44 bytes");

absl::Status CheckSize(absl::string_view field, size_t got, size_t want) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", got, " floats, expected ", want, " for the given dims"));
}

// y += a * x over n floats: the gather-add of one embedding row into the bag.
void AxpyPortable(float a, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void AxpyAvx2(float a, const float* x, float* y, int n) {
  const __m256 va = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; ++i) y[i] += a * x[i];
}
const bool kAxpyHasAvx2Fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif

void Axpy(float a, const float* x, float* y, int n) {
#if defined(__x86_64__)
  if (kAxpyHasAvx2Fma) return AxpyAvx2(a, x, y, n);
#endif
  AxpyPortable(a, x, y, n);
}

void AppendFloats(const std::vector<float>& v, std::string* out) {
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Copies `n` floats at *offset of `bytes` into `v`; the caller checked the total size.
void TakeFloats(absl::string_view bytes, size_t n, size_t* offset, std::vector<float>* v) {
  v->resize(n);
  if (n > 0) std::memcpy(v->data(), bytes.data() + *offset, n * sizeof(float));
  *offset += n * sizeof(float);
}

void FeaturizerToProto(const NameFeaturizerOptions& o, artifacts_pb::EncoderFeaturizerOptions* p) {
  p->set_buckets(o.buckets);
  p->set_min_ngram(o.min_ngram);
  p->set_max_ngram(o.max_ngram);
  p->set_ngram_weight(o.ngram_weight);
  p->set_word_weight(o.word_weight);
  p->set_bigram_weight(o.bigram_weight);
}

bool SameFeaturizer(const NameFeaturizerOptions& o,
                    const artifacts_pb::EncoderFeaturizerOptions& p) {
  return o.buckets == p.buckets() && o.min_ngram == p.min_ngram() && o.max_ngram == p.max_ngram() &&
         o.ngram_weight == p.ngram_weight() && o.word_weight == p.word_weight() &&
         o.bigram_weight == p.bigram_weight();
}

artifacts_pb::EncoderManifest MakeManifest(const TrainedEncoderWeights& w,
                                           const TrainedEncoderArtifactInfo& info,
                                           const std::string& sha256, int64_t bytes) {
  artifacts_pb::EncoderManifest m;
  m.set_format_version(kTrainedEncoderFormatVersion);
  m.set_encoder_id(TrainedEncoderId(w.dim, sha256));
  m.set_kind(kTrainedEncoderKind);
  m.set_dim(w.dim);
  m.set_hidden(w.hidden);
  FeaturizerToProto(w.features, m.mutable_featurizer());
  m.set_weights_sha256(sha256);
  m.set_weights_bytes(bytes);
  m.set_training_data_digest(info.training_data_digest);
  m.set_training_config_json(info.training_config_json);
  m.set_metrics_json(info.metrics_json);
  m.set_training_seconds(info.training_seconds);
  m.set_lexicon_source(info.lexicon_source);
  m.set_created_at(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()));
  (*m.mutable_files())["weights"] = kTrainedEncoderWeightsFile;
  return m;
}

absl::StatusOr<artifacts_pb::EncoderManifest> ReadEncoderManifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / common::kArtifactManifestFile).string();
  IBGR_ASSIGN_OR_RETURN(const std::string text, common::ReadFileToString(path));
  artifacts_pb::EncoderManifest m;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(text, path, &m));
  if (m.format_version() != kTrainedEncoderFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": encoder format ", m.format_version(),
                                                      ", this build reads ",
                                                      kTrainedEncoderFormatVersion));
  }
  if (m.kind() != kTrainedEncoderKind || m.encoder_id().empty()) {
    return absl::DataLossError(absl::StrCat(path, ": kind \"", m.kind(), "\" (want \"",
                                            kTrainedEncoderKind, "\") or encoder_id missing"));
  }
  return m;
}

// The weights file's bytes agree with what the manifest recorded (digest, size, shape).
absl::Status CheckWeightsAgainstManifest(const artifacts_pb::EncoderManifest& m,
                                         const TrainedEncoderWeights& w, absl::string_view bytes,
                                         const std::string& path) {
  const std::string sha = common::Sha256Hex(bytes);
  if (sha != m.weights_sha256() || static_cast<int64_t>(bytes.size()) != m.weights_bytes()) {
    return absl::DataLossError(absl::StrCat(path, ": ", bytes.size(), " bytes with SHA-256 ", sha,
                                            ", manifest says ", m.weights_bytes(), " bytes, ",
                                            m.weights_sha256()));
  }
  if (w.dim != m.dim() || w.hidden != m.hidden() || !SameFeaturizer(w.features, m.featurizer())) {
    return absl::DataLossError(
        absl::StrCat(path, ": dim/hidden/featurizer differ from the manifest's"));
  }
  if (m.encoder_id() != TrainedEncoderId(w.dim, sha)) {
    return absl::DataLossError(absl::StrCat(path, ": manifest encoder_id \"", m.encoder_id(),
                                            "\" does not match the weights (",
                                            TrainedEncoderId(w.dim, sha), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateTrainedEncoderWeights(const TrainedEncoderWeights& w) {
  IBGR_RETURN_IF_ERROR(ValidateNameFeaturizerOptions(w.features));
  if (w.dim < kMinDim || w.dim > kMaxDim) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim: ", w.dim, " outside ", kMinDim, "..", kMaxDim));
  }
  if (w.hidden < 0 || w.hidden > kMaxHidden) {
    return absl::InvalidArgumentError(
        absl::StrCat("hidden: ", w.hidden, " outside 0..", kMaxHidden));
  }
  const size_t d = w.dim, h = w.hidden;
  IBGR_RETURN_IF_ERROR(
      CheckSize("embedding", w.embedding.size(), static_cast<size_t>(w.features.buckets) * d));
  IBGR_RETURN_IF_ERROR(CheckSize("w1", w.w1.size(), h * d));
  IBGR_RETURN_IF_ERROR(CheckSize("b1", w.b1.size(), h));
  IBGR_RETURN_IF_ERROR(CheckSize("w2", w.w2.size(), d * h));
  IBGR_RETURN_IF_ERROR(CheckSize("b2", w.b2.size(), h == 0 ? 0 : d));
  return absl::OkStatus();
}

absl::StatusOr<std::string> SerializeTrainedEncoderWeights(const TrainedEncoderWeights& w) {
  IBGR_RETURN_IF_ERROR(ValidateTrainedEncoderWeights(w));
  WeightsHeader header;
  std::memcpy(header.magic, kWeightsMagic, sizeof(header.magic));
  header.version = kWeightsFileVersion;
  header.buckets = w.features.buckets;
  header.dim = w.dim;
  header.hidden = w.hidden;
  header.min_ngram = w.features.min_ngram;
  header.max_ngram = w.features.max_ngram;
  header.ngram_weight = w.features.ngram_weight;
  header.word_weight = w.features.word_weight;
  header.bigram_weight = w.features.bigram_weight;
  std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
  out.reserve(sizeof(header) + sizeof(float) * (w.embedding.size() + w.w1.size() + w.b1.size() +
                                                w.w2.size() + w.b2.size()));
  for (const std::vector<float>* v : {&w.embedding, &w.w1, &w.b1, &w.w2, &w.b2}) {
    AppendFloats(*v, &out);
  }
  return out;
}

absl::StatusOr<TrainedEncoderWeights> ParseTrainedEncoderWeights(absl::string_view bytes,
                                                                 absl::string_view what) {
  WeightsHeader header;
  if (bytes.size() < sizeof(header)) {
    return absl::DataLossError(
        absl::StrCat(what, ": ", bytes.size(), " bytes, shorter than the weights header"));
  }
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.magic, kWeightsMagic, sizeof(header.magic)) != 0) {
    return absl::DataLossError(absl::StrCat(what, ": not a trained encoder weights file"));
  }
  if (header.version != kWeightsFileVersion) {
    return absl::DataLossError(absl::StrCat(what, ": weights format ", header.version,
                                            ", this build reads ", kWeightsFileVersion));
  }
  TrainedEncoderWeights w;
  w.features = {header.buckets,      header.min_ngram,   header.max_ngram,
                header.ngram_weight, header.word_weight, header.bigram_weight};
  w.dim = header.dim;
  w.hidden = header.hidden;
  if (ValidateNameFeaturizerOptions(w.features).ok() && w.dim >= kMinDim && w.dim <= kMaxDim &&
      w.hidden >= 0 && w.hidden <= kMaxHidden) {
    const size_t d = w.dim, h = w.hidden, b = w.features.buckets;
    const size_t floats = b * d + 2 * h * d + h + (h == 0 ? 0 : d);
    const size_t want = sizeof(header) + floats * sizeof(float);
    if (bytes.size() != want) {
      return absl::DataLossError(absl::StrCat(what, ": ", bytes.size(), " bytes, header implies ",
                                              want, " (truncated or trailing data)"));
    }
    size_t offset = sizeof(header);
    TakeFloats(bytes, b * d, &offset, &w.embedding);
    TakeFloats(bytes, h * d, &offset, &w.w1);
    TakeFloats(bytes, h, &offset, &w.b1);
    TakeFloats(bytes, d * h, &offset, &w.w2);
    TakeFloats(bytes, h == 0 ? 0 : d, &offset, &w.b2);
  }
  absl::Status valid = ValidateTrainedEncoderWeights(w);
  if (!valid.ok()) return absl::DataLossError(absl::StrCat(what, ": header: ", valid.message()));
  return w;
}

std::string TrainedEncoderId(int dim, absl::string_view weights_sha256_hex) {
  return absl::StrCat(kTrainedEncoderKind, "-d", dim, "-", weights_sha256_hex.substr(0, 12));
}

absl::StatusOr<std::string> ReadTrainedEncoderId(const std::string& artifact_dir) {
  IBGR_ASSIGN_OR_RETURN(const artifacts_pb::EncoderManifest manifest,
                        ReadEncoderManifest(artifact_dir));
  return manifest.encoder_id();
}

common::VersionedArtifactDir EncoderArtifacts(const std::string& base_path) {
  return common::VersionedArtifactDir({base_path, kEncoderArtifactKind, "trained encoder",
                                       "(rebuild with `ibgr artifacts build`)"});
}

absl::StatusOr<std::string> PublishTrainedEncoder(const std::string& base_path,
                                                  const TrainedEncoderWeights& w,
                                                  const TrainedEncoderArtifactInfo& info) {
  if (base_path.empty()) return absl::InvalidArgumentError("base_path: required");
  IBGR_ASSIGN_OR_RETURN(const std::string bytes, SerializeTrainedEncoderWeights(w));
  const artifacts_pb::EncoderManifest manifest =
      MakeManifest(w, info, common::Sha256Hex(bytes), static_cast<int64_t>(bytes.size()));
  IBGR_ASSIGN_OR_RETURN(common::ArtifactStaging staging,
                        common::ArtifactStaging::CreateVersion(EncoderArtifacts(base_path)));
  const fs::path tmp = staging.dir();
  IBGR_RETURN_IF_ERROR(
      common::WriteStringToFileAtomic((tmp / kTrainedEncoderWeightsFile).string(), bytes));
  // The manifest last: it marks the version complete once published.
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(
      (tmp / common::kArtifactManifestFile).string(), common::ProtoToJson(manifest)));
  IBGR_RETURN_IF_ERROR(staging.Publish());  // fsyncs every file; never replaces a version
  return staging.final_dir();
}

// ---- TrainedNameEncoder ----

TrainedNameEncoder::TrainedNameEncoder(TrainedEncoderWeights w, std::string id)
    : weights_(std::move(w)), featurizer_(weights_.features), id_(std::move(id)) {}

absl::StatusOr<std::unique_ptr<TrainedNameEncoder>> TrainedNameEncoder::FromWeights(
    TrainedEncoderWeights w, std::string id) {
  IBGR_RETURN_IF_ERROR(ValidateTrainedEncoderWeights(w));
  if (id.empty()) return absl::InvalidArgumentError("id: required");
  return std::unique_ptr<TrainedNameEncoder>(new TrainedNameEncoder(std::move(w), std::move(id)));
}

absl::StatusOr<std::unique_ptr<TrainedNameEncoder>> TrainedNameEncoder::Open(
    const std::string& artifact_dir) {
  IBGR_ASSIGN_OR_RETURN(const artifacts_pb::EncoderManifest manifest,
                        ReadEncoderManifest(artifact_dir));
  const std::string path = (fs::path(artifact_dir) / kTrainedEncoderWeightsFile).string();
  IBGR_ASSIGN_OR_RETURN(const std::string bytes, common::ReadFileToString(path));
  IBGR_ASSIGN_OR_RETURN(TrainedEncoderWeights w, ParseTrainedEncoderWeights(bytes, path));
  IBGR_RETURN_IF_ERROR(CheckWeightsAgainstManifest(manifest, w, bytes, path));
  return FromWeights(std::move(w), manifest.encoder_id());
}

void TrainedNameEncoder::ApplyMlp(float* h) const {
  const int d = weights_.dim, hidden = weights_.hidden;
  thread_local std::vector<float> act;
  act.resize(static_cast<size_t>(hidden));
  for (int j = 0; j < hidden; ++j) {
    act[j] =
        std::max(0.0f, Dot(weights_.w1.data() + static_cast<size_t>(j) * d, h, d) + weights_.b1[j]);
  }
  // Residual: h += W2 * act + b2 (h is still the bag here).
  for (int i = 0; i < d; ++i) {
    h[i] += Dot(weights_.w2.data() + static_cast<size_t>(i) * hidden, act.data(), hidden) +
            weights_.b2[i];
  }
}

void TrainedNameEncoder::EncodeFeatures(absl::Span<const int32_t> ids,
                                        absl::Span<const float> weights, float* out) const {
  const int d = weights_.dim;
  std::fill(out, out + d, 0.0f);
  double total = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    Axpy(weights[i], weights_.embedding.data() + static_cast<size_t>(ids[i]) * d, out, d);
    total += weights[i];
  }
  if (ids.empty() || total <= 0) {
    std::fill(out, out + d, 0.0f);  // no features: cosine 0 to everything
    return;
  }
  const float inv = static_cast<float>(1.0 / total);
  for (int i = 0; i < d; ++i) out[i] *= inv;
  if (weights_.hidden > 0) ApplyMlp(out);
  L2Normalize(absl::MakeSpan(out, d));
}

void TrainedNameEncoder::EncodeInto(absl::string_view text, float* out) const {
  // Per-thread scratch keeps the request path free of allocations after warm-up.
  thread_local std::vector<int32_t> ids;
  thread_local std::vector<float> weights;
  ids.clear();
  weights.clear();
  featurizer_.Featurize(text, &ids, &weights);
  EncodeFeatures(ids, weights, out);
}

absl::Status TrainedNameEncoder::EncodeBatch(absl::Span<const std::string> texts,
                                             absl::Span<float> out) const {
  if (out.size() != texts.size() * static_cast<size_t>(weights_.dim)) {
    return absl::InvalidArgumentError("EncodeBatch: output size != texts * dim");
  }
  for (size_t i = 0; i < texts.size(); ++i) EncodeInto(texts[i], out.data() + i * weights_.dim);
  return absl::OkStatus();
}

// ---- Opening by id ----

namespace {

constexpr char kHashIdPrefix[] = "hash-ngram-v1-d";

// "hash-ngram-v1-d<dim>[-n<min>-<max>-u<w>-b<w>]" back into options; nullopt when malformed.
std::optional<HashNgramEncoderOptions> ParseHashEncoderId(absl::string_view id) {
  if (!absl::ConsumePrefix(&id, kHashIdPrefix)) return std::nullopt;
  const std::vector<absl::string_view> parts = absl::StrSplit(id, '-');
  HashNgramEncoderOptions o;
  if (!absl::SimpleAtoi(parts[0], &o.dim)) return std::nullopt;
  if (parts.size() == 1) return o;
  if (parts.size() != 5) return std::nullopt;
  absl::string_view n = parts[1], u = parts[3], b = parts[4];
  if (!absl::ConsumePrefix(&n, "n") || !absl::SimpleAtoi(n, &o.min_ngram) ||
      !absl::SimpleAtoi(parts[2], &o.max_ngram) || !absl::ConsumePrefix(&u, "u") ||
      !absl::SimpleAtof(u, &o.unigram_weight) || !absl::ConsumePrefix(&b, "b") ||
      !absl::SimpleAtof(b, &o.bigram_weight)) {
    return std::nullopt;
  }
  return o;
}

absl::StatusOr<std::unique_ptr<TextEncoder>> OpenHashEncoderById(absl::string_view id) {
  std::optional<HashNgramEncoderOptions> options = ParseHashEncoderId(id);
  if (!options) {
    return absl::InvalidArgumentError(absl::StrCat("encoder id \"", id, "\": malformed, expected ",
                                                   kHashIdPrefix,
                                                   "<dim>[-n<min>-<max>-u<w>-b<w>]"));
  }
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<HashNgramEncoder> encoder,
                        HashNgramEncoder::Create(*options));
  if (encoder->id() != id) {  // e.g. "1.50" vs "1.5": the id would not round-trip
    return absl::InvalidArgumentError(absl::StrCat("encoder id \"", id, "\": rebuilds as \"",
                                                   encoder->id(), "\", not the same encoder"));
  }
  return std::unique_ptr<TextEncoder>(std::move(encoder));
}

absl::StatusOr<std::unique_ptr<TextEncoder>> OpenTrainedEncoderById(const std::string& base_path,
                                                                    absl::string_view id) {
  const common::VersionedArtifactDir artifacts = EncoderArtifacts(base_path);
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, artifacts.ListVersions());
  std::vector<std::string> seen;
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    const std::string dir = artifacts.VersionDir(*it);
    absl::StatusOr<artifacts_pb::EncoderManifest> manifest = ReadEncoderManifest(dir);
    if (!manifest.ok()) {
      seen.push_back(absl::StrCat(*it, " (unreadable: ", manifest.status().message(), ")"));
      continue;
    }
    if (manifest->encoder_id() != id) {
      seen.push_back(absl::StrCat(*it, " (", manifest->encoder_id(), ")"));
      continue;
    }
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TrainedNameEncoder> encoder,
                          TrainedNameEncoder::Open(dir));
    return std::unique_ptr<TextEncoder>(std::move(encoder));
  }
  return absl::NotFoundError(absl::StrCat(
      "encoder \"", id, "\" not found: looked in ", artifacts.root(), "/<version>/",
      common::kArtifactManifestFile, ", versions present: ",
      seen.empty() ? "none" : absl::StrJoin(seen, ", "), "; rebuild with `ibgr artifacts build`"));
}

}  // namespace

bool CanOpenEncoderById(absl::string_view id) {
  return absl::StartsWith(id, kHashIdPrefix) ||
         absl::StartsWith(id, absl::StrCat(kTrainedEncoderKind, "-"));
}

std::string ArtifactBaseOfVersionDir(const std::string& version_dir) {
  fs::path dir = fs::path(version_dir).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "…/3/" normalises to "…/3/" + ""
  return dir.parent_path().parent_path().string();
}

absl::StatusOr<std::unique_ptr<TextEncoder>> OpenEncoderById(const std::string& base_path,
                                                             absl::string_view id) {
  if (absl::StartsWith(id, kHashIdPrefix)) return OpenHashEncoderById(id);
  if (CanOpenEncoderById(id)) return OpenTrainedEncoderById(base_path, id);
  return absl::NotFoundError(
      absl::StrCat("encoder \"", id, "\": only hash-ngram-v1-* and ", kTrainedEncoderKind,
                   "-* ids can be opened by id (looked under ", EncoderArtifacts(base_path).root(),
                   "); configure word-vectors/openai encoders explicitly, or rebuild with "
                   "`ibgr artifacts build`"));
}

absl::StatusOr<std::shared_ptr<const TextEncoder>> SharedEncoderById(const std::string& base_path,
                                                                     absl::string_view id) {
  struct Registry {
    absl::Mutex mu;
    absl::flat_hash_map<std::string, std::weak_ptr<const TextEncoder>> open ABSL_GUARDED_BY(mu);
  };
  static Registry* const registry = new Registry();
  // A hashed encoder is rebuilt from its id alone; a trained one is read from under the base.
  std::string key(id);
  if (!absl::StartsWith(id, kHashIdPrefix)) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(fs::path(base_path), ec);
    key = absl::StrCat(ec ? base_path : canonical.string(), "\n", id);
  }
  absl::MutexLock lock(&registry->mu);
  if (auto it = registry->open.find(key); it != registry->open.end()) {
    if (std::shared_ptr<const TextEncoder> alive = it->second.lock()) return alive;
  }
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TextEncoder> opened, OpenEncoderById(base_path, id));
  std::shared_ptr<const TextEncoder> shared(std::move(opened));
  registry->open[key] = shared;
  return shared;
}

absl::StatusOr<std::shared_ptr<const TextEncoder>> EncoderForManifest(
    const EncoderSpec& spec, absl::string_view manifest_encoder_id) {
  if (!EncoderComesFromManifest(spec)) {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TextEncoder> created, CreateTextEncoder(spec));
    return std::shared_ptr<const TextEncoder>(std::move(created));
  }
  if (!CanOpenEncoderById(manifest_encoder_id)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the artifact was built with encoder \"", manifest_encoder_id,
        "\", which cannot be opened by its id; configure that encoder (encoder.kind)"));
  }
  if (spec.kind == "trained" &&
      !absl::StartsWith(manifest_encoder_id, absl::StrCat(kTrainedEncoderKind, "-"))) {
    return absl::FailedPreconditionError(
        absl::StrCat("encoder.kind is \"trained\" but the artifact was built with encoder \"",
                     manifest_encoder_id,
                     "\"; rebuild it with `ibgr artifacts build --encoder=trained` or configure "
                     "that encoder"));
  }
  return SharedEncoderById(spec.base_path, manifest_encoder_id);
}

}  // namespace ibgraphrag::alignment
