// Versioned retriever artifacts: `<base>/retriever/<version>/` holds
//   manifest.json             encoder id, dims, DDE rounds, KG version, training settings, data
//                             hash, metrics, and the SHA-256 of every file below
//   model.bin                 the default scorer variant's parameters (scorer_params.h format)
//   model_<variant>.bin       further scorer variants trained on the same data (optional)
//   entity_embeddings.f32     text embedding of every entity ("name (type)"), embedding_table.h
//   relation_embeddings.f32   text embedding of every relation ("name: description")
// Versions are listed, resolved and published by common::VersionedArtifactDir / ArtifactStaging,
// like every artifact of the suite.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_MODEL_BUNDLE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_MODEL_BUNDLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/versioned_artifacts.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_types.h"
#include "services/retriever/dde.h"
#include "services/retriever/embedding_table.h"
#include "services/retriever/scorer_params.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever {

// 2: scorer structure features (prior_dim, IBGRMLP2); 3: the question-intent features
// (prior_dim 8) and open-question training data.
inline constexpr int kRetrieverFormatVersion = 3;
inline constexpr char kModelFile[] = "model.bin";
inline constexpr char kEntityEmbeddingsFile[] = "entity_embeddings.f32";
inline constexpr char kRelationEmbeddingsFile[] = "relation_embeddings.f32";
inline constexpr char kManifestFile[] = "manifest.json";

// The trained scorers a version can hold (retriever.proto ScorerVariant): the MLP as a residual
// over the shortest-path prior (structure features), or the paper's plain MLP.
enum class ScorerVariant { kResidual, kPlain };
// "residual" / "plain".
const char* ScorerVariantName(ScorerVariant variant);
// INVALID_ARGUMENT naming `field` unless `name` is "residual" or "plain".
absl::StatusOr<ScorerVariant> ParseScorerVariant(absl::string_view name, absl::string_view field);
// The variant a scorer's dims make: residual when it has structure features (prior_dim > 0).
ScorerVariant VariantOfConfig(const ScorerConfig& config);
// Parameter file of a variant: model.bin for the version's default, model_<name>.bin otherwise.
std::string ScorerVariantFile(ScorerVariant variant, bool is_default);

// One trained scorer of a version, as the manifest records it.
struct ScorerVariantInfo {
  ScorerVariant variant = ScorerVariant::kResidual;
  std::string file;                             // in the version directory
  ScorerConfig scorer;                          // its dims (text and DDE dims are the version's)
  std::map<std::string, std::string> training;  // hyper-parameters that differ per variant
  std::map<std::string, double> metrics;        // validation metrics of its kept checkpoint
};

// The candidate cap retriever_train trains with by default, and the cap Retrieve uses when no
// model says otherwise (SHORTEST_PATH without a model, versions that predate the recorded cap):
// one value for training and serving (docs/retriever.md, "Candidate cap", says why this one).
inline constexpr int kDefaultTrainedCandidateCap = 2000;

struct RetrieverManifest {
  int format_version = kRetrieverFormatVersion;
  int64_t version = 0;
  std::string created_time;  // RFC 3339 UTC
  std::string created_by;    // command line or tool name
  std::string encoder_id;    // TextEmbedder::id of the embeddings
  ScorerConfig scorer;       // text_dim, dde_dim, hidden
  DdeOptions dde;            // rounds used in training; serving must use the same
  std::string kg_version;    // KG snapshot the ids and embeddings refer to
  int64_t num_entities = 0;
  int64_t num_relations = 0;
  std::string training_data_hash;                  // SHA-256 of the generated training questions
  std::map<std::string, std::string> training;     // hyper-parameters, as text
  std::map<std::string, double> metrics;           // dev metrics of the kept checkpoint
  std::map<std::string, std::string> file_sha256;  // file name -> hex digest
  // Candidate cap per question the scorers were trained with; 0 = not recorded.
  int max_candidates = 0;
  // The scorers of the version, the default first. Parsing always fills it (versions written
  // before variants existed: model.bin alone); empty in a manifest built in memory, where
  // `scorer` describes the only scorer.
  std::vector<ScorerVariantInfo> variants;
};

// The cap Retrieve uses when a request sends max_candidates 0: the recorded max_candidates, else
// training["max_candidates"] (recorded as text before), else kDefaultTrainedCandidateCap.
int TrainedCandidateCap(const RetrieverManifest& manifest);
// The prior pruning a model was trained with (CandidateSetOptions::max_scored): the manifest's
// training["max_scored"], else 0 (models from before pruning saw every candidate).
int TrainedMaxScored(const RetrieverManifest& manifest);
// Whether a model was trained with ontology expansion (CandidateSetOptions::ontology): the
// manifest's training["ontology_expansion"] == "true"; false when absent (models from before
// expansion existed saw unexpanded candidate sets, and serving must build the same ones).
bool TrainedOntologyExpansion(const RetrieverManifest& manifest);

std::string RetrieverManifestToJson(const RetrieverManifest& manifest);
// DATA_LOSS naming the field for malformed JSON (never throws).
absl::StatusOr<RetrieverManifest> RetrieverManifestFromJson(const std::string& json);

// The versioned folder of models, `<base>/retriever/<version>/` (common/versioned_artifacts.h).
common::VersionedArtifactDir RetrieverArtifacts(const std::string& base);
// `<base>/retriever/<version>`.
std::string RetrieverVersionDir(const std::string& base, int64_t version);
// The files of a version with this manifest whose SHA-256 the manifest lists (embeddings and
// one parameter file per scorer variant), checked at load (common::CheckFileDigests).
std::vector<std::string> RetrieverVersionFiles(const RetrieverManifest& manifest);
// Complete versions (numeric directories with manifest.json), ascending.
absl::StatusOr<std::vector<int64_t>> ListRetrieverVersions(const std::string& base);
// Pinned version (NOT_FOUND naming it) or the newest (NOT_FOUND when there is none).
absl::StatusOr<std::string> ResolveRetrieverDir(const std::string& base,
                                                std::optional<int64_t> pinned_version);
// One more than the newest version or temp build under `<base>/retriever/`, 1 when none.
absl::StatusOr<int64_t> NextRetrieverVersion(const std::string& base);

// Texts embedded for every entity and relation, indexed by internal id.
struct ArtifactTexts {
  std::vector<std::string> entities;   // "name (type)"
  std::vector<std::string> relations;  // "name: description"
};
ArtifactTexts ArtifactTextsFromKg(const kgstore::KgData& kg);
absl::StatusOr<ArtifactTexts> ArtifactTextsFromStore(const kgstore::KgStore& store);

// Embeds every text with `embedder` (on `threads` threads) and writes the two embedding tables
// into `dir` (which must exist); records dims, counts, encoder id and file hashes in `manifest`.
absl::Status BuildRetrieverArtifacts(const ArtifactTexts& texts, const TextEmbedder& embedder,
                                     const std::string& dir, RetrieverManifest* manifest,
                                     int threads = 2);

// A trained scorer to publish.
struct TrainedScorer {
  ScorerVariant variant = ScorerVariant::kResidual;
  ScorerParams params;
  std::map<std::string, std::string> training;  // per-variant hyper-parameters
  std::map<std::string, double> metrics;        // validation metrics of the kept checkpoint
};

// Writes one parameter file per scorer (the first, the default, to model.bin; the others to
// model_<name>.bin) and manifest.json (variants, every file's hash; version = the staging
// version) into `staging`, which already holds the embedding tables, and publishes it
// (ALREADY_EXISTS when that version appeared meanwhile). INVALID_ARGUMENT when `scorers` is empty,
// names a variant twice, or a variant's dims contradict its name (plain with prior features).
// The manifest's top-level dims and, when empty, metrics are the default scorer's.
absl::Status PublishRetrieverVersion(common::ArtifactStaging* staging,
                                     const std::vector<TrainedScorer>& scorers,
                                     RetrieverManifest manifest);
// One scorer, its variant read from its dims and its metrics from `manifest.metrics`.
absl::Status PublishRetrieverVersion(common::ArtifactStaging* staging, const ScorerParams& params,
                                     RetrieverManifest manifest);

// A loaded version: manifest, parameters and memory-mapped embedding tables.
struct LoadedRetrieverVersion {
  std::string dir;
  RetrieverManifest manifest;
  ScorerParams params;  // the default scorer variant's (model.bin)
  // The version's other scorer variants, in manifest order (model_<name>.bin).
  std::vector<std::pair<ScorerVariant, ScorerParams>> other_variants;
  std::shared_ptr<const EmbeddingTable> entities;
  std::shared_ptr<const EmbeddingTable> relations;
};

// Loads and cross-checks a version directory with every scorer variant it lists: NOT_FOUND when a
// file is missing, DATA_LOSS when a file's hash differs from the manifest, a file is malformed,
// or dims disagree.
absl::StatusOr<LoadedRetrieverVersion> LoadRetrieverVersion(const std::string& dir);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_MODEL_BUNDLE_H_
