// Versioned alignment bundles: `<base>/alignment/<version>/` holding the lexicon, the FAISS name
// index with its row map, the precomputed enriched-entity embeddings and manifest.json. A bundle
// directory only appears by renaming a complete temp directory, so readers never see half of
// one. Versions are decimal integers; "newest" is the numeric maximum.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_BUNDLE_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_BUNDLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/alignment/candidate_index.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/mention_extractor.h"
#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

// Bumped when the files of a bundle change incompatibly; loaders refuse other formats.
inline constexpr int kBundleFormatVersion = 1;

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
};

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

  const float* enriched_row(uint32_t entry) const {
    return enriched.data() + static_cast<size_t>(entry) * manifest.dim;
  }
};

// Loads and checks a bundle directory (DATA_LOSS for inconsistent files, FAILED_PRECONDITION
// for another format version).
absl::StatusOr<std::shared_ptr<const AlignmentBundle>> LoadAlignmentBundle(
    const std::string& dir, const CandidateIndexOptions& index_options = {});

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_BUNDLE_H_
