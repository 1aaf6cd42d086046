// Versioned KG snapshots on disk: `<base>/kg/<version>/` holds the RocksDB database (`db/`) and a
// human-readable `manifest.json` (schema: ibgraphrag.artifacts.v1.KgSnapshotManifest). Listing,
// resolving and publishing versions is common::VersionedArtifactDir / ArtifactStaging.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_SNAPSHOT_MANIFEST_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_SNAPSHOT_MANIFEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/versioned_artifacts.h"
#include "services/kgstore/kg_types.h"

namespace ibgraphrag::kgstore {

// Bumped when the on-disk layout (column families, key or value encodings) changes incompatibly;
// a store refuses to open a snapshot with a different format.
inline constexpr int kSnapshotFormatVersion = 2;

// What the caller of KgStore::WriteSnapshot supplies beyond the graph itself.
struct SnapshotManifestInfo {
  // Snapshot version, > 0; normally the directory name (see NextSnapshotVersion).
  int64_t version = 0;
  // Build time in seconds since the Unix epoch; 0 means "now".
  int64_t created_unix_seconds = 0;
  // Free text recorded for operators, e.g. "ibgr kg build --preset embedded"; may be empty.
  std::string created_by;
};

// The parsed manifest.json of a snapshot (also stored inside the database's metadata).
struct SnapshotManifest {
  int format_version = kSnapshotFormatVersion;
  int64_t version = 0;
  int64_t created_unix_seconds = 0;
  std::string created_time;  // RFC 3339 UTC rendering of created_unix_seconds
  std::string created_by;
  // One entry per imported file: path, sha256 and row counts (errors are not copied).
  std::vector<SourceReport> sources;
  std::vector<std::string> source_names;     // SourceId -> name, as in KgData::sources
  std::vector<std::string> source_licenses;  // SourceId -> licence ("" = unknown)
  std::string license_filter;                // KgData::license_filter ("" = none)
  KgCounts counts;                           // at snapshot time; ingests do not change the manifest
};

// Builds the manifest of `kg` (counts, sources) stamped with `info`.
SnapshotManifest BuildSnapshotManifest(const KgData& kg, const SnapshotManifestInfo& info);

// JSON round trip. Parsing never throws; malformed input gives DATA_LOSS naming the field.
std::string SnapshotManifestToJson(const SnapshotManifest& manifest);
absl::StatusOr<SnapshotManifest> SnapshotManifestFromJson(std::string_view json);

// Reads `<snapshot_dir>/manifest.json`.
absl::StatusOr<SnapshotManifest> ReadSnapshotManifest(const std::string& snapshot_dir);

// The versioned folder of KG snapshots, `<base>/kg/<version>/` (common/versioned_artifacts.h).
common::VersionedArtifactDir SnapshotArtifacts(const std::string& base);

// Shorthands over SnapshotArtifacts(base):
// `<base>/kg/<version>`.
std::string SnapshotDir(const std::string& base, int64_t version);
// Complete snapshot versions under `<base>/kg/`, ascending.
absl::StatusOr<std::vector<int64_t>> ListSnapshotVersions(const std::string& base);
// The pinned version's directory (NOT_FOUND naming it when absent), otherwise the newest one
// (NOT_FOUND when there is none).
absl::StatusOr<std::string> ResolveSnapshotDir(const std::string& base,
                                               std::optional<int64_t> pinned_version);
// One more than the newest version, counting builds in progress.
absl::StatusOr<int64_t> NextSnapshotVersion(const std::string& base);

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_SNAPSHOT_MANIFEST_H_
