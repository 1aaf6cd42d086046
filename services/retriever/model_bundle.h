// Versioned retriever artifacts: `<base>/retriever/<version>/` holds
//   manifest.json             encoder id, dims, DDE rounds, KG version, training settings, data
//                             hash, metrics, and the SHA-256 of every file below
//   model.bin                 the scorer parameters (scorer_params.h format)
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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/versioned_artifacts.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kg_types.h"
#include "services/retriever/dde.h"
#include "services/retriever/embedding_table.h"
#include "services/retriever/scorer_params.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever {

inline constexpr int kRetrieverFormatVersion =
    2;  // 2: scorer structure features (prior_dim, IBGRMLP2)
inline constexpr char kModelFile[] = "model.bin";
inline constexpr char kEntityEmbeddingsFile[] = "entity_embeddings.f32";
inline constexpr char kRelationEmbeddingsFile[] = "relation_embeddings.f32";
inline constexpr char kManifestFile[] = "manifest.json";

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
};

std::string RetrieverManifestToJson(const RetrieverManifest& manifest);
// DATA_LOSS naming the field for malformed JSON (never throws).
absl::StatusOr<RetrieverManifest> RetrieverManifestFromJson(const std::string& json);

// The versioned folder of models, `<base>/retriever/<version>/` (common/versioned_artifacts.h).
common::VersionedArtifactDir RetrieverArtifacts(const std::string& base);
// `<base>/retriever/<version>`.
std::string RetrieverVersionDir(const std::string& base, int64_t version);
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

// Writes model.bin and manifest.json (with every file's hash; version = the staging version)
// into `staging`, which already holds the embedding tables, and publishes it (ALREADY_EXISTS
// when that version appeared meanwhile).
absl::Status PublishRetrieverVersion(common::ArtifactStaging* staging, const ScorerParams& params,
                                     RetrieverManifest manifest);

// A loaded version: manifest, parameters and memory-mapped embedding tables.
struct LoadedRetrieverVersion {
  std::string dir;
  RetrieverManifest manifest;
  ScorerParams params;
  std::shared_ptr<const EmbeddingTable> entities;
  std::shared_ptr<const EmbeddingTable> relations;
};

// Loads and cross-checks a version directory: NOT_FOUND when a file is missing, DATA_LOSS when
// a file's hash differs from the manifest, a file is malformed, or dims disagree.
absl::StatusOr<LoadedRetrieverVersion> LoadRetrieverVersion(const std::string& dir);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_MODEL_BUNDLE_H_
