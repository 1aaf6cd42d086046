// Versioned artifact folders, the one implementation every artifact kind uses (KG snapshots,
// alignment bundles, retriever models, encoders). Modelled on TF Serving's
// file_system_storage_path_source: an artifact kind lives under `<base>/<kind>/`, each version in a
// decimal-integer directory `<base>/<kind>/<version>/`, complete when it holds `manifest.json`.
//
// A version directory only ever appears by publishing a staging directory: every file in it is
// fsynced, the directory itself is fsynced, it is renamed into place with RENAME_NOREPLACE (so a
// version that appeared meanwhile is never replaced) and the parent is fsynced. Readers therefore
// never see half of a version, and a crash leaves either the old set of versions or the new one
// plus a `<version>.tmp-*` staging directory that `Retain` removes later.
#ifndef IBGRAPHRAG_COMMON_VERSIONED_ARTIFACTS_H_
#define IBGRAPHRAG_COMMON_VERSIONED_ARTIFACTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace ibgraphrag::common {

// The file whose presence marks a version directory as complete.
inline constexpr char kArtifactManifestFile[] = "manifest.json";

// A version directory name: decimal digits, no sign, no leading zero, fits int64, > 0.
std::optional<int64_t> ParseArtifactVersion(absl::string_view name);

// SHA-256 of each of `files` inside `dir` (file name -> lower-case hex), what a publisher writes
// into its manifest.
absl::StatusOr<std::map<std::string, std::string>> FileDigests(const std::string& dir,
                                                               absl::Span<const std::string> files);

// Checks a version's files against the digests its manifest lists (`digests`: file name ->
// lower-case hex, as FileDigests makes them). The manifest must list exactly `files`: a missing
// entry would skip that file's check, and an extra one names a path the loader must not open.
// DATA_LOSS naming the manifest entry, or the file whose digest differs; for a file that cannot
// be read, the read error's code (NOT_FOUND when missing, PERMISSION_DENIED, ...) naming it.
absl::Status CheckFileDigests(const std::string& dir, absl::Span<const std::string> files,
                              const std::map<std::string, std::string>& digests);

// One artifact kind under one base directory.
class VersionedArtifactDir {
 public:
  struct Options {
    // Artifact base directory (`--base`), shared by every kind.
    std::string base;
    // Sub-directory of the kind: "kg", "alignment", "retriever", "encoder".
    std::string kind;
    // What a version is called in messages: "KG snapshot", "alignment bundle", ...
    std::string display_name;
    // Appended to "none found" errors, e.g. "(build one with `ibgr align build`)"; may be empty.
    std::string build_hint;
  };
  explicit VersionedArtifactDir(Options options);

  // `<base>/<kind>`.
  const std::string& root() const { return root_; }
  // `<base>/<kind>/<version>`.
  std::string VersionDir(int64_t version) const;
  const Options& options() const { return options_; }

  // Complete versions, ascending. A missing root gives an empty list; temp directories
  // ("3.tmp-...") and stray files are ignored.
  absl::StatusOr<std::vector<int64_t>> ListVersions() const;
  // The pinned version's directory (NOT_FOUND naming it and the versions present), otherwise the
  // newest one (NOT_FOUND with the build hint when there is none).
  absl::StatusOr<std::string> Resolve(std::optional<int64_t> pinned_version) const;
  // The version Resolve would pick.
  absl::StatusOr<int64_t> ResolveVersion(std::optional<int64_t> pinned_version) const;
  // One more than the newest version, counting staging directories of builds in progress so two
  // builders do not pick the same number (publishing with NOREPLACE remains the real guard).
  absl::StatusOr<int64_t> NextVersion() const;

  // Retention: removes complete versions older than the newest `keep` (never `keep_version`, the
  // one being served), and staging directories last modified more than `stale_staging` ago
  // (left by crashed builds). Returns the removed versions. keep >= 1.
  absl::StatusOr<std::vector<int64_t>> Retain(int keep, std::optional<int64_t> keep_version,
                                              absl::Duration stale_staging = absl::Hours(24)) const;

 private:
  absl::StatusOr<std::vector<int64_t>> Scan(bool include_staging) const;

  Options options_;
  std::string root_;
};

// A staging directory for one new version, `<final_dir>.tmp-<pid>-<random>`, created empty.
// Write the artifact's files into dir(), then Publish(). Destroying an unpublished staging
// directory removes it with everything in it.
class ArtifactStaging {
 public:
  // ALREADY_EXISTS when `final_dir` exists; creates the parent directories.
  static absl::StatusOr<ArtifactStaging> Create(std::string final_dir);
  // The next version of `artifacts` (NextVersion) when `version` is 0, else `version`.
  static absl::StatusOr<ArtifactStaging> CreateVersion(const VersionedArtifactDir& artifacts,
                                                       int64_t version = 0);

  ArtifactStaging(ArtifactStaging&& other) noexcept;
  ArtifactStaging& operator=(ArtifactStaging&& other) noexcept;
  ArtifactStaging(const ArtifactStaging&) = delete;
  ArtifactStaging& operator=(const ArtifactStaging&) = delete;
  ~ArtifactStaging();

  const std::string& dir() const { return dir_; }
  const std::string& final_dir() const { return final_dir_; }
  // The version number of final_dir's name (0 when it is not a version directory).
  int64_t version() const;

  // fsyncs every file and directory under dir(), renames it to final_dir() without replacing
  // anything (ALREADY_EXISTS when a directory appeared there meanwhile) and fsyncs the parent.
  // On error the staging directory is kept for the destructor to remove.
  absl::Status Publish();

 private:
  ArtifactStaging(std::string dir, std::string final_dir)
      : dir_(std::move(dir)), final_dir_(std::move(final_dir)) {}
  void Discard();

  std::string dir_;
  std::string final_dir_;
  bool published_ = false;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_VERSIONED_ARTIFACTS_H_
