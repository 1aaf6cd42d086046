#include "common/versioned_artifacts.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace ibgraphrag::common {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kStagingInfix = ".tmp-";

absl::Status FsError(absl::string_view what, const fs::path& path, const std::error_code& ec) {
  return absl::InternalError(absl::StrCat(what, " ", path.string(), ": ", ec.message()));
}

// The version a staging directory name ("4.tmp-123-456") is building, if it is one.
std::optional<int64_t> StagingVersion(absl::string_view name) {
  const size_t at = name.find(kStagingInfix);
  if (at == absl::string_view::npos) return std::nullopt;
  return ParseArtifactVersion(name.substr(0, at));
}

absl::Status FsyncFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat("cannot fsync ", path, ": ", strerror(err)));
  return absl::OkStatus();
}

// fsyncs every regular file and directory under `root` (files first, then their directories).
absl::Status FsyncTree(const fs::path& root) {
  std::error_code ec;
  std::vector<std::string> dirs = {root.string()};
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_regular_file(status)) {
      IBGR_RETURN_IF_ERROR(FsyncFile(it->path().string()));
    } else if (fs::is_directory(status)) {
      dirs.push_back(it->path().string());
    }
  }
  if (ec) return FsError("cannot walk", root, ec);
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) IBGR_RETURN_IF_ERROR(FsyncDirectory(*it));
  return absl::OkStatus();
}

// rename(2) that never replaces an existing `to` (RENAME_NOREPLACE, or check-then-rename on file
// systems without it, where a narrow race remains).
absl::Status RenameNoReplace(const std::string& from, const std::string& to) {
  int rc = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && errno == EINVAL) {
    std::error_code ec;
    rc = fs::exists(fs::symlink_status(to, ec)) ? (errno = EEXIST, -1)
                                                : ::rename(from.c_str(), to.c_str());
  }
  if (rc == 0) return absl::OkStatus();
  const int err = errno;
  if (err == EEXIST || err == ENOTEMPTY) {
    return absl::AlreadyExistsError(
        absl::StrCat(to, " appeared while it was being built; not replaced"));
  }
  return absl::InternalError(
      absl::StrCat("cannot rename ", from, " to ", to, ": ", std::strerror(err)));
}

}  // namespace

std::optional<int64_t> ParseArtifactVersion(absl::string_view name) {
  if (name.empty() || name.size() > 18 || name[0] == '0') return std::nullopt;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(name, &v) || v <= 0) {
    return std::nullopt;
  }
  return v;
}

VersionedArtifactDir::VersionedArtifactDir(Options options)
    : options_(std::move(options)),
      root_((fs::path(options_.base) / options_.kind).lexically_normal().string()) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string VersionedArtifactDir::VersionDir(int64_t version) const {
  return absl::StrCat(root_, "/", version);
}

absl::StatusOr<std::vector<int64_t>> VersionedArtifactDir::Scan(bool include_staging) const {
  std::vector<int64_t> versions;
  std::error_code ec;
  const fs::file_status root_status = fs::status(root_, ec);
  if (!fs::exists(root_status)) return versions;  // no version built yet
  if (!fs::is_directory(root_status)) {
    return absl::FailedPreconditionError(absl::StrCat(root_, " is not a directory"));
  }
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_directory(entry_ec)) continue;
    const std::string name = it->path().filename().string();
    if (std::optional<int64_t> v = ParseArtifactVersion(name)) {
      if (fs::exists(it->path() / kArtifactManifestFile, entry_ec)) versions.push_back(*v);
    } else if (include_staging) {
      if (std::optional<int64_t> v = StagingVersion(name)) versions.push_back(*v);
    }
  }
  if (ec) return FsError("cannot list", root_, ec);
  std::sort(versions.begin(), versions.end());
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

absl::StatusOr<std::vector<int64_t>> VersionedArtifactDir::ListVersions() const {
  return Scan(/*include_staging=*/false);
}

absl::StatusOr<int64_t> VersionedArtifactDir::ResolveVersion(
    std::optional<int64_t> pinned_version) const {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListVersions());
  if (pinned_version.has_value()) {
    if (!std::binary_search(versions.begin(), versions.end(), *pinned_version)) {
      return absl::NotFoundError(absl::StrCat(
          options_.display_name, " version ", *pinned_version, " not found under ", root_,
          versions.empty() ? " (none present)"
                           : absl::StrCat(" (present: ", absl::StrJoin(versions, ", "), ")")));
    }
    return *pinned_version;
  }
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat("no ", options_.display_name, " under ", root_,
                                            options_.build_hint.empty() ? "" : " ",
                                            options_.build_hint));
  }
  return versions.back();
}

absl::StatusOr<std::string> VersionedArtifactDir::Resolve(
    std::optional<int64_t> pinned_version) const {
  IBGR_ASSIGN_OR_RETURN(int64_t version, ResolveVersion(pinned_version));
  return VersionDir(version);
}

absl::StatusOr<int64_t> VersionedArtifactDir::NextVersion() const {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, Scan(/*include_staging=*/true));
  return versions.empty() ? 1 : versions.back() + 1;
}

absl::StatusOr<std::vector<int64_t>> VersionedArtifactDir::Retain(
    int keep, std::optional<int64_t> keep_version, absl::Duration stale_staging) const {
  if (keep < 1) return absl::InvalidArgumentError(absl::StrCat("keep: must be >= 1, got ", keep));
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListVersions());
  std::vector<int64_t> removed;
  const size_t drop = versions.size() > static_cast<size_t>(keep) ? versions.size() - keep : 0;
  for (size_t i = 0; i < drop; ++i) {
    if (keep_version.has_value() && versions[i] == *keep_version) continue;
    // Unpublish first (rename away), so a reader never resolves a half-deleted version.
    const std::string dir = VersionDir(versions[i]);
    const std::string doomed = absl::StrCat(dir, kStagingInfix, "retired-", ::getpid());
    std::error_code ec;
    fs::rename(dir, doomed, ec);
    if (ec) return FsError("cannot retire", dir, ec);
    fs::remove_all(doomed, ec);
    if (ec) return FsError("cannot remove", doomed, ec);
    removed.push_back(versions[i]);
  }
  // Staging directories of crashed builds (and retired versions a crash left behind).
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  const auto stale = std::chrono::duration_cast<fs::file_time_type::duration>(
      absl::ToChronoSeconds(stale_staging));
  for (fs::directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!StagingVersion(it->path().filename().string()).has_value()) continue;
    const auto mtime = fs::last_write_time(it->path(), entry_ec);
    if (!entry_ec && now - mtime > stale) fs::remove_all(it->path(), entry_ec);
  }
  if (!removed.empty()) IBGR_RETURN_IF_ERROR(FsyncDirectory(root_));
  return removed;
}

absl::StatusOr<ArtifactStaging> ArtifactStaging::Create(std::string final_dir) {
  while (final_dir.size() > 1 && final_dir.back() == '/') final_dir.pop_back();
  if (final_dir.empty()) return absl::InvalidArgumentError("artifact directory: must not be empty");
  std::error_code ec;
  if (fs::exists(fs::symlink_status(final_dir, ec))) {
    return absl::AlreadyExistsError(
        absl::StrCat(final_dir, " already exists; published versions are immutable"));
  }
  fs::path parent = fs::path(final_dir).parent_path();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, ec);
  if (ec) return FsError("cannot create", parent, ec);
  std::random_device rd;
  std::string dir = absl::StrCat(final_dir, kStagingInfix, ::getpid(), "-", rd());
  if (!fs::create_directory(dir, ec) || ec) {
    return absl::InternalError(absl::StrCat("cannot create staging directory ", dir, ": ",
                                            ec ? ec.message() : "already exists"));
  }
  return ArtifactStaging(std::move(dir), std::move(final_dir));
}

absl::StatusOr<ArtifactStaging> ArtifactStaging::CreateVersion(
    const VersionedArtifactDir& artifacts, int64_t version) {
  if (version < 0) return absl::InvalidArgumentError("version: must be >= 0");
  if (version == 0) {
    IBGR_ASSIGN_OR_RETURN(version, artifacts.NextVersion());
  }
  return Create(artifacts.VersionDir(version));
}

ArtifactStaging::ArtifactStaging(ArtifactStaging&& other) noexcept
    : dir_(std::move(other.dir_)),
      final_dir_(std::move(other.final_dir_)),
      published_(other.published_) {
  other.dir_.clear();
}

ArtifactStaging& ArtifactStaging::operator=(ArtifactStaging&& other) noexcept {
  if (this != &other) {
    Discard();
    dir_ = std::move(other.dir_);
    final_dir_ = std::move(other.final_dir_);
    published_ = other.published_;
    other.dir_.clear();
  }
  return *this;
}

ArtifactStaging::~ArtifactStaging() { Discard(); }

void ArtifactStaging::Discard() {
  if (dir_.empty() || published_) return;
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
  dir_.clear();
}

int64_t ArtifactStaging::version() const {
  return ParseArtifactVersion(fs::path(final_dir_).filename().string()).value_or(0);
}

absl::Status ArtifactStaging::Publish() {
  if (published_) return absl::FailedPreconditionError(absl::StrCat(final_dir_, ": published"));
  if (dir_.empty()) return absl::FailedPreconditionError("staging directory: discarded");
  IBGR_RETURN_IF_ERROR(FsyncTree(dir_));
  IBGR_RETURN_IF_ERROR(RenameNoReplace(dir_, final_dir_));
  published_ = true;
  fs::path parent = fs::path(final_dir_).parent_path();
  return FsyncDirectory(parent.empty() ? std::string(".") : parent.string());
}

absl::StatusOr<std::map<std::string, std::string>> FileDigests(
    const std::string& dir, absl::Span<const std::string> files) {
  std::map<std::string, std::string> digests;
  for (const std::string& file : files) {
    IBGR_ASSIGN_OR_RETURN(digests[file], Sha256HexOfFile(dir + "/" + file));
  }
  return digests;
}

absl::Status CheckFileDigests(const std::string& dir, absl::Span<const std::string> files,
                              const std::map<std::string, std::string>& digests) {
  const std::string manifest = absl::StrCat(dir, "/", kArtifactManifestFile);
  for (const auto& [file, digest] : digests) {
    if (std::find(files.begin(), files.end(), file) == files.end()) {
      return absl::DataLossError(
          absl::StrCat(manifest, ": file_sha256 names '", file, "', not a file of this artifact"));
    }
  }
  for (const std::string& file : files) {
    auto it = digests.find(file);
    if (it == digests.end()) {
      return absl::DataLossError(absl::StrCat(manifest, ": file_sha256 has no entry for ", file));
    }
    const std::string path = absl::StrCat(dir, "/", file);
    absl::StatusOr<std::string> actual = Sha256HexOfFile(path);
    if (!actual.ok()) {  // the read error's code: NOT_FOUND, PERMISSION_DENIED, ...
      return absl::Status(actual.status().code(), absl::StrCat(path, ": missing or unreadable (",
                                                               actual.status().message(), ")"));
    }
    if (*actual != it->second) {
      return absl::DataLossError(absl::StrCat(path, ": SHA-256 ", *actual,
                                              " differs from the manifest's ", it->second,
                                              " (corrupt or replaced)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace ibgraphrag::common
