// Versioned alignment bundles: `<base>/alignment/<version>/` holding the lexicon, the FAISS name
// index with its row map, the precomputed enriched-entity embeddings and manifest.json. Versions
// are listed, resolved and published by common::VersionedArtifactDir / ArtifactStaging, so a
// bundle directory only appears whole.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_BUNDLE_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_BUNDLE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/versioned_artifacts.h"
#include "services/alignment/candidate_index.h"
#include "services/alignment/generic_terms.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/mention_extractor.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

// Bumped when the files of a bundle change incompatibly; loaders refuse other formats.
inline constexpr int kBundleFormatVersion = 1;

// How the raw MSCA cosines of this bundle's encoder are put on a common [0, 1] evidence scale
// before C = (1 - lambda) S + lambda R is formed (docs/alignment.md, "Score calibration"). Raw
// cosines of different encoders live on different scales (a hashed n-gram vector of a long
// question has cosine ~0.15 with the entity it names; averaged word vectors give ~0.7), so a
// threshold tau only means the same thing across encoders after this map:
//   S* = clamp(((S - mean_Q) / sd_Q) / question_full_z, 0, 1)
//        mean_Q, sd_Q: mean and standard deviation of the question's cosine with the enriched
//        vectors of `reference_entries` evenly spaced lexicon entries (random entities)
//   S* = max(S*, dictionary_evidence) when the mention names the entity exactly (dictionary);
//   S* = S* * (1 - dictionary_evidence) for a look-alike: a candidate proposed only by
//        mentions that name another entity exactly
//   R* = clamp(((R - relatedness_null_mean) / relatedness_null_sd) / relatedness_full_z, 0, 1)
//        null: cosine between the enriched vectors of two random entries, fitted at build time
// So 0 means "no more similar than a random KG entity" and 1 means "question_full_z (resp.
// relatedness_full_z) standard deviations above random, or named verbatim".
struct ScoreCalibration {
  // "null-z-v1", or "none" for raw cosines (the paper's scale; bundles of other tools).
  std::string method = "null-z-v1";
  int64_t reference_entries = 0;
  float relatedness_null_mean = 0;
  float relatedness_null_sd = 0;
  // Fitted on the validation part of the question sets with gold entities (alignment_msca_fit,
  // docs/alignment.md "Constants fitted on validation"). Bundles record the values they were
  // built with; those built before the refit keep relatedness_full_z 3.
  float question_full_z = 5.0f;
  float relatedness_full_z = 8.0f;
  float dictionary_evidence = 0.9f;
};

// Reference entries S is standardised against (at most 1,024, evenly spaced).
inline constexpr int64_t kMaxCalibrationReferences = 1024;

// Fits the null of R from the enriched vectors (all pairs for <= 200 entries, else 20,000
// seeded random pairs; deterministic) and sets reference_entries.
ScoreCalibration FitScoreCalibration(const std::vector<float>& enriched, int dim);

struct BundleManifest {
  int format_version = kBundleFormatVersion;
  // Directory name under <base>/alignment/.
  int64_t version = 0;
  // TextEncoder::id() and dim() that produced every vector in the bundle.
  std::string encoder_id;
  int dim = 0;
  // Lexicon provenance (Lexicon::source, source_kg_version, source_hash).
  std::string source;
  std::string source_kg_version;
  std::string source_hash;
  int64_t entries = 0;
  // Rows of the name index (names after per-entry de-duplication).
  int64_t index_rows = 0;
  // "flat" or "hnsw".
  std::string index_kind;
  int64_t created_unix_seconds = 0;
  // RFC 3339 UTC.
  std::string created_time;
  double build_seconds = 0;
  std::string created_by;
  // Absent in bundles written before calibration existed: fitted when they are loaded.
  ScoreCalibration calibration;
  // The bundle holds generic_terms.tsv (generic_terms.h); bundles written before it have none,
  // and then no name is generic.
  bool has_generic_terms = false;
  // File name -> SHA-256 hex of each data file (BundleFiles), checked before anything is parsed.
  // Empty for bundles written before checksums, which load unchecked with a warning.
  std::map<std::string, std::string> file_sha256;
};

// The data files of a bundle with this manifest (all but manifest.json).
std::vector<std::string> BundleFiles(const BundleManifest& manifest);

std::string BundleManifestToJson(const BundleManifest& manifest);
absl::StatusOr<BundleManifest> BundleManifestFromJson(const std::string& json);

struct BundleBuildOptions {
  // Artifact base; the bundle goes to `<base_path>/alignment/<version>/`.
  std::string base_path;
  // Version to write; 0 picks one more than the newest existing (or in-progress) version.
  int64_t version = 0;
  CandidateIndexOptions index;
  // Texts per EncodeBatch call; large batches amortise remote round trips.
  int encode_batch = 512;
  // Free text for operators ("ibgr align build --data_dir ...").
  std::string created_by;
  // Which names are not mentions by themselves (generic_terms.h); enabled = false stores an
  // empty list.
  GenericTermOptions generic_terms;
};

struct BundleBuildResult {
  std::string dir;
  BundleManifest manifest;
};

// Encodes every name (index rows) and every entry's enriched text with `encoder`, builds the
// FAISS index and writes the bundle atomically. ALREADY_EXISTS when the version exists.
absl::StatusOr<BundleBuildResult> BuildAlignmentBundle(const Lexicon& lexicon,
                                                       const TextEncoder& encoder,
                                                       const BundleBuildOptions& options);

// The versioned folder of bundles, `<base>/alignment/<version>/` (common/versioned_artifacts.h).
common::VersionedArtifactDir BundleArtifacts(const std::string& base);
// Complete versions under `<base>/alignment/`, ascending.
absl::StatusOr<std::vector<int64_t>> ListBundleVersions(const std::string& base);
// `<base>/alignment/<pinned>` (NOT_FOUND when absent) or the newest one (NOT_FOUND when none).
absl::StatusOr<std::string> ResolveBundleDir(const std::string& base,
                                             std::optional<int64_t> pinned_version);

// A loaded bundle: everything Align needs, immutable and shareable across threads.
struct AlignmentBundle {
  std::string dir;
  BundleManifest manifest;
  Lexicon lexicon;
  std::unique_ptr<CandidateIndex> index;
  // entries x dim, unit rows: v_e of MSCA.
  std::vector<float> enriched;
  std::unique_ptr<MentionExtractor> extractor;
  // generic_terms.tsv: the names the extractor does not report by themselves.
  std::vector<GenericTerm> generic_terms;
  // manifest.calibration.reference_entries rows of `enriched`, contiguous (entries
  // i * entries / reference_entries), for S calibration.
  std::vector<float> reference_enriched;
  // The moments of those rows r (R of them), from which a question's null needs dim dot products
  // of dim instead of R (QuestionNullOf, calibrated_scores.h): the mean row m = (1/R) sum r, dim
  // floats, and the covariance (1/R) sum (r - m)(r - m)^T, dim x dim row-major; both accumulated
  // in double. Empty when dim >= R (the direct loop is then no more work) or there are no rows.
  std::vector<float> reference_mean;
  std::vector<float> reference_covariance;

  const float* enriched_row(uint32_t entry) const {
    return enriched.data() + static_cast<size_t>(entry) * manifest.dim;
  }
};

// Fills bundle->reference_mean and reference_covariance from reference_enriched and
// manifest.dim (cleared when dim >= the number of rows). The loader calls it.
void ComputeReferenceMoments(AlignmentBundle* bundle);

// Loads and checks a bundle directory: every data file against its SHA-256 in the manifest
// first (DATA_LOSS naming a damaged file, NOT_FOUND a missing one), then DATA_LOSS for
// inconsistent files and FAILED_PRECONDITION for another format version.
absl::StatusOr<std::shared_ptr<const AlignmentBundle>> LoadAlignmentBundle(
    const std::string& dir, const CandidateIndexOptions& index_options = {});

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_BUNDLE_H_
