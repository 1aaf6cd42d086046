// The trained biomedical name encoder (issue 12), served in plain C++ (no LibTorch):
//   bag = sum_i w_i * E[id_i] / sum_i w_i      over the NameFeaturizer features of the text
//   h   = bag + W2 * relu(W1 * bag + b1) + b2  (hidden == 0: h = bag)
//   v   = h / ||h||                            (all zero when there are no features or h == 0)
// The weights are trained by services/alignment/encoder_training (LibTorch) so that all names of
// one concept sit together, and shipped as a versioned artifact
//   <base>/encoder/<version>/{manifest.json, weights.bin}
// whose manifest (ibgraphrag.artifacts.v1.EncoderManifest) names the encoder id that alignment
// bundles and retriever models record.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_TRAINED_ENCODER_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_TRAINED_ENCODER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/versioned_artifacts.h"
#include "services/alignment/name_features.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

// Manifest `kind` and id prefix of this architecture.
inline constexpr char kTrainedEncoderKind[] = "trained-name-v1";
// Artifact kind directory under the base path: <base>/encoder/<version>/.
inline constexpr char kEncoderArtifactKind[] = "encoder";
// The weights file inside a version directory.
inline constexpr char kTrainedEncoderWeightsFile[] = "weights.bin";

struct TrainedEncoderWeights {
  NameFeaturizerOptions features;
  int dim = 0;                        // D, 8..4096
  int hidden = 0;                     // H (0 = no MLP), 0..8192
  std::vector<float> embedding;       // buckets * dim, row-major
  std::vector<float> w1, b1, w2, b2;  // hidden*dim, hidden, dim*hidden, dim (empty when hidden==0)
};

// Validates options and sizes (INVALID_ARGUMENT naming the field, its size and the expected one).
absl::Status ValidateTrainedEncoderWeights(const TrainedEncoderWeights& w);

struct TrainedEncoderArtifactInfo {  // what the trainer knows and the manifest records
  std::string training_data_digest;  // SHA-256 hex of the training pairs/concept lists, fixed order
  std::string training_config_json;  // the trainer's options as JSON (seed, epochs, lr, ...)
  std::string metrics_json;          // validation/test figures, JSON object
  double training_seconds = 0;
  std::string lexicon_source;  // Lexicon::source
};

// The weights file bytes: a little-endian header (magic "IBGRTNE1", format version, buckets, dim,
// hidden, featurizer options) followed by the float32 arrays embedding, w1, b1, w2, b2.
absl::StatusOr<std::string> SerializeTrainedEncoderWeights(const TrainedEncoderWeights& w);
// Parses SerializeTrainedEncoderWeights' bytes; DATA_LOSS naming `what` (the file) on a bad magic,
// an unknown version, truncation or trailing bytes; INVALID_ARGUMENT from validation.
absl::StatusOr<TrainedEncoderWeights> ParseTrainedEncoderWeights(absl::string_view bytes,
                                                                 absl::string_view what);

// "trained-name-v1-d<D>-<first 12 hex of SHA-256 of the weights file bytes>".
std::string TrainedEncoderId(int dim, absl::string_view weights_sha256_hex);

// Publishes <base_path>/encoder/<next version>/ (manifest.json + weights.bin) atomically with
// common::ArtifactStaging; returns the directory. Encoder id as TrainedEncoderId.
absl::StatusOr<std::string> PublishTrainedEncoder(const std::string& base_path,
                                                  const TrainedEncoderWeights& w,
                                                  const TrainedEncoderArtifactInfo& info);

// The encoder id a version directory's manifest names, without reading the weights (DATA_LOSS /
// FAILED_PRECONDITION for an unreadable or foreign manifest).
absl::StatusOr<std::string> ReadTrainedEncoderId(const std::string& artifact_dir);

// The versioned encoder folder <base_path>/encoder.
common::VersionedArtifactDir EncoderArtifacts(const std::string& base_path);

class TrainedNameEncoder final : public TextEncoder {  // thread-safe, plain C++ (no LibTorch)
 public:
  // INVALID_ARGUMENT from ValidateTrainedEncoderWeights, or for an empty id.
  static absl::StatusOr<std::unique_ptr<TrainedNameEncoder>> FromWeights(TrainedEncoderWeights w,
                                                                         std::string id);
  // Reads <artifact_dir>/manifest.json and weights.bin; checks the weights' SHA-256 and sizes
  // against the manifest: DATA_LOSS naming the file on mismatch or truncation.
  static absl::StatusOr<std::unique_ptr<TrainedNameEncoder>> Open(const std::string& artifact_dir);

  const std::string& id() const override { return id_; }
  int dim() const override { return weights_.dim; }
  absl::Status EncodeBatch(absl::Span<const std::string> texts,
                           absl::Span<float> out) const override;
  // Encodes one text into `out` (dim() floats); never fails.
  void EncodeInto(absl::string_view text, float* out) const;
  // The model on already featurized input (what the trainer's parity test compares against the
  // torch forward): `ids` in [0, buckets), `weights` the same length.
  void EncodeFeatures(absl::Span<const int32_t> ids, absl::Span<const float> weights,
                      float* out) const;
  const TrainedEncoderWeights& weights() const { return weights_; }
  const NameFeaturizer& featurizer() const { return featurizer_; }

 private:
  TrainedNameEncoder(TrainedEncoderWeights w, std::string id);
  void ApplyMlp(float* h) const;

  TrainedEncoderWeights weights_;
  NameFeaturizer featurizer_;
  std::string id_;
};

// Opens the encoder an alignment bundle or retriever model names:
//  - "hash-ngram-v1-d<dim>" (and the "-n<min>-<max>-u<w>-b<w>" variants) is rebuilt from the id;
//  - "trained-name-v1-..." is found by scanning <base_path>/encoder/<version>/manifest.json for
//    that encoder_id (newest version first);
//  - anything else, or a trained id no version holds: NOT_FOUND naming the id, where it looked,
//    the versions present and "rebuild with `ibgr artifacts build`".
absl::StatusOr<std::unique_ptr<TextEncoder>> OpenEncoderById(const std::string& base_path,
                                                             absl::string_view id);

// OpenEncoderById, but one encoder per (base path, id) in the process while anyone holds it:
// the all-in-one's alignment and retriever (and the gateway aligning locally beside a retriever
// in process) name the same trained encoder, a 128 MiB table that was loaded twice, and a
// question the retriever encodes right after alignment did now reads rows still in cache.
// Encoders are immutable once open, so sharing one is safe. Opens are serialised.
absl::StatusOr<std::shared_ptr<const TextEncoder>> SharedEncoderById(const std::string& base_path,
                                                                     absl::string_view id);

// True for the id families OpenEncoderById can open (hashed n-gram and trained encoders).
bool CanOpenEncoderById(absl::string_view id);

// The artifact base a version directory `<base>/<kind>/<version>[/]` lives in, for artifacts
// opened by directory whose encoder lives beside them under `<base>/encoder/`.
std::string ArtifactBaseOfVersionDir(const std::string& version_dir);

// The encoder to open an artifact (alignment bundle, retriever model) with, whose manifest names
// `manifest_encoder_id`: spec kind "bundle" opens that id (OpenEncoderById under
// spec.base_path; FAILED_PRECONDITION naming the id when CanOpenEncoderById is false, since the
// configuration must then name the encoder); "trained" without a dir or version does the same but
// refuses an id that is not a trained encoder's (FAILED_PRECONDITION naming both); any other spec
// is created as configured (CreateTextEncoder), and callers compare its id with the manifest's as
// before. An encoder opened by id is shared (SharedEncoderById).
absl::StatusOr<std::shared_ptr<const TextEncoder>> EncoderForManifest(
    const EncoderSpec& spec, absl::string_view manifest_encoder_id);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_TRAINED_ENCODER_H_
