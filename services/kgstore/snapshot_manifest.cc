#include "services/kgstore/snapshot_manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/kgstore/kg_store_strings.h"

namespace ibgraphrag::kgstore {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string FormatRfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A version directory name: decimal digits only, no sign, no leading zero, fits int64, > 0.
std::optional<int64_t> ParseVersionName(std::string_view name) {
  if (name.empty() || name.size() > 18 || name[0] == '0') return std::nullopt;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(AsAbsl(name), &v) || v <= 0) return std::nullopt;
  return v;
}

absl::Status ErrnoStatus(std::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(AsAbsl(what), " ", path, ": ", std::strerror(errno)));
}

}  // namespace

SnapshotManifest BuildSnapshotManifest(const KgData& kg, const SnapshotManifestInfo& info) {
  SnapshotManifest m;
  m.version = info.version;
  m.created_unix_seconds = info.created_unix_seconds > 0 ? info.created_unix_seconds
                                                         : static_cast<int64_t>(time(nullptr));
  m.created_time = FormatRfc3339(m.created_unix_seconds);
  m.created_by = info.created_by;
  m.sources.reserve(kg.reports.size());
  for (const SourceReport& r : kg.reports) {
    SourceReport copy = r;
    copy.errors.clear();  // line-level diagnostics belong to the import log, not the manifest
    m.sources.push_back(std::move(copy));
  }
  m.source_names = kg.sources;
  m.counts = CountKg(kg);
  return m;
}

std::string SnapshotManifestToJson(const SnapshotManifest& m) {
  json j;
  j["format_version"] = m.format_version;
  j["version"] = m.version;
  j["created_unix_seconds"] = m.created_unix_seconds;
  j["created_time"] = m.created_time;
  j["created_by"] = m.created_by;
  json sources = json::array();
  for (const SourceReport& r : m.sources) {
    sources.push_back({{"source", r.source},
                       {"path", r.path},
                       {"sha256", r.sha256},
                       {"rows_read", r.rows_read},
                       {"triples_added", r.triples_added},
                       {"rows_skipped", r.rows_skipped},
                       {"unmapped_ids", r.unmapped_ids}});
  }
  j["sources"] = std::move(sources);
  j["source_names"] = m.source_names;
  json counts;
  counts["entities"] = m.counts.entities;
  counts["relations"] = m.counts.relations;
  counts["triples"] = m.counts.triples;
  counts["entities_by_type"] = m.counts.entities_by_type;
  counts["triples_by_relation"] = m.counts.triples_by_relation;
  j["counts"] = std::move(counts);
  return j.dump(2) + "\n";
}

absl::StatusOr<SnapshotManifest> SnapshotManifestFromJson(std::string_view text) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError("snapshot manifest is not a JSON object");
  }
  // nlohmann throws on type mismatches; this is the boundary where that becomes a Status.
  try {
    SnapshotManifest m;
    m.format_version = j.at("format_version").get<int>();
    m.version = j.at("version").get<int64_t>();
    m.created_unix_seconds = j.value("created_unix_seconds", int64_t{0});
    m.created_time = j.value("created_time", std::string());
    m.created_by = j.value("created_by", std::string());
    for (const json& s : j.value("sources", json::array())) {
      SourceReport r;
      r.source = s.value("source", std::string());
      r.path = s.value("path", std::string());
      r.sha256 = s.value("sha256", std::string());
      r.rows_read = s.value("rows_read", int64_t{0});
      r.triples_added = s.value("triples_added", int64_t{0});
      r.rows_skipped = s.value("rows_skipped", int64_t{0});
      r.unmapped_ids = s.value("unmapped_ids", int64_t{0});
      m.sources.push_back(std::move(r));
    }
    m.source_names = j.value("source_names", std::vector<std::string>());
    const json& c = j.at("counts");
    m.counts.entities = c.at("entities").get<int64_t>();
    m.counts.relations = c.at("relations").get<int64_t>();
    m.counts.triples = c.at("triples").get<int64_t>();
    m.counts.entities_by_type = c.value("entities_by_type", std::map<std::string, int64_t>());
    m.counts.triples_by_relation = c.value("triples_by_relation", std::map<std::string, int64_t>());
    return m;
  } catch (const std::exception& e) {
    return absl::DataLossError(absl::StrCat("snapshot manifest: ", e.what()));
  }
}

absl::StatusOr<SnapshotManifest> ReadSnapshotManifest(const std::string& snapshot_dir) {
  const std::string path = snapshot_dir + "/manifest.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("no manifest at ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::InternalError(absl::StrCat("reading ", path, " failed"));
  auto manifest = SnapshotManifestFromJson(buf.str());
  if (!manifest.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", manifest.status().message()));
  }
  return manifest;
}

std::string SnapshotDir(const std::string& base, int64_t version) {
  return absl::StrCat(base, "/kg/", version);
}

namespace {

// Scans `<base>/kg`; `include_in_progress` also counts "<version>.tmp-..." build directories.
absl::StatusOr<std::vector<int64_t>> ScanVersions(const std::string& base,
                                                  bool include_in_progress) {
  const fs::path root = fs::path(base) / "kg";
  std::error_code ec;
  if (!fs::exists(root, ec)) {
    if (ec)
      return absl::InternalError(absl::StrCat("cannot stat ", root.string(), ": ", ec.message()));
    return std::vector<int64_t>();
  }
  if (!fs::is_directory(root, ec)) {
    return absl::FailedPreconditionError(absl::StrCat(root.string(), " is not a directory"));
  }
  std::vector<int64_t> versions;
  fs::directory_iterator it(root, ec), end;
  if (ec)
    return absl::InternalError(absl::StrCat("cannot list ", root.string(), ": ", ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec)
      return absl::InternalError(absl::StrCat("cannot list ", root.string(), ": ", ec.message()));
    const std::string name = it->path().filename().string();
    std::error_code dir_ec;
    if (!it->is_directory(dir_ec)) continue;
    if (std::optional<int64_t> v = ParseVersionName(name)) {
      if (fs::exists(it->path() / "manifest.json", dir_ec)) versions.push_back(*v);
    } else if (include_in_progress) {
      const size_t dot = name.find(".tmp-");
      if (dot != std::string::npos) {
        if (std::optional<int64_t> tv = ParseVersionName(name.substr(0, dot))) {
          versions.push_back(*tv);
        }
      }
    }
  }
  std::sort(versions.begin(), versions.end());
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ListSnapshotVersions(const std::string& base) {
  return ScanVersions(base, /*include_in_progress=*/false);
}

absl::StatusOr<std::string> ResolveSnapshotDir(const std::string& base,
                                               std::optional<int64_t> pinned_version) {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListSnapshotVersions(base));
  if (pinned_version.has_value()) {
    if (!std::binary_search(versions.begin(), versions.end(), *pinned_version)) {
      return absl::NotFoundError(
          absl::StrCat("KG snapshot version ", *pinned_version, " not found under ", base, "/kg"));
    }
    return SnapshotDir(base, *pinned_version);
  }
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat("no KG snapshot under ", base, "/kg"));
  }
  return SnapshotDir(base, versions.back());
}

absl::StatusOr<int64_t> NextSnapshotVersion(const std::string& base) {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                        ScanVersions(base, /*include_in_progress=*/true));
  return versions.empty() ? 1 : versions.back() + 1;
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return ErrnoStatus("cannot fsync directory", dir);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  std::random_device rd;
  const std::string tmp = absl::StrCat(path, ".tmp-", ::getpid(), "-", rd());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", tmp);
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = ErrnoStatus("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status s = ErrnoStatus("cannot fsync", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = ErrnoStatus("cannot rename into", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return SyncDirectory(fs::path(path).parent_path().string());
}

}  // namespace ibgraphrag::kgstore
