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
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "services/kgstore/kg_store_strings.h"

namespace ibgraphrag::kgstore {
namespace {

namespace fs = std::filesystem;
namespace artifacts_pb = ::ibgraphrag::artifacts::v1;

std::string FormatRfc3339(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
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
  for (const SourceInfo& s : kg.sources) {
    m.source_names.push_back(s.name);
    m.source_licenses.push_back(s.license);
  }
  m.license_filter = kg.license_filter;
  m.counts = CountKg(kg);
  return m;
}

namespace {

artifacts_pb::KgSnapshotManifest ToProto(const SnapshotManifest& m) {
  artifacts_pb::KgSnapshotManifest p;
  p.set_format_version(m.format_version);
  p.set_version(m.version);
  p.set_created_unix_seconds(m.created_unix_seconds);
  p.set_created_time(m.created_time);
  p.set_created_by(m.created_by);
  for (const SourceReport& r : m.sources) {
    artifacts_pb::KgSourceReport* s = p.add_sources();
    s->set_source(r.source);
    s->set_path(r.path);
    s->set_sha256(r.sha256);
    s->set_rows_read(r.rows_read);
    s->set_triples_added(r.triples_added);
    s->set_rows_skipped(r.rows_skipped);
    s->set_unmapped_ids(r.unmapped_ids);
    s->set_triples_merged(r.triples_merged);
  }
  for (const std::string& name : m.source_names) p.add_source_names(name);
  for (const std::string& license : m.source_licenses) p.add_source_licenses(license);
  p.set_license_filter(m.license_filter);
  artifacts_pb::KgCounts* c = p.mutable_counts();
  c->set_entities(m.counts.entities);
  c->set_relations(m.counts.relations);
  c->set_triples(m.counts.triples);
  c->mutable_entities_by_type()->insert(m.counts.entities_by_type.begin(),
                                        m.counts.entities_by_type.end());
  c->mutable_triples_by_relation()->insert(m.counts.triples_by_relation.begin(),
                                           m.counts.triples_by_relation.end());
  c->mutable_triples_by_source()->insert(m.counts.triples_by_source.begin(),
                                         m.counts.triples_by_source.end());
  c->mutable_triples_by_license()->insert(m.counts.triples_by_license.begin(),
                                          m.counts.triples_by_license.end());
  return p;
}

SnapshotManifest FromProto(const artifacts_pb::KgSnapshotManifest& p) {
  SnapshotManifest m;
  m.format_version = p.format_version();
  m.version = p.version();
  m.created_unix_seconds = p.created_unix_seconds();
  m.created_time = p.created_time();
  m.created_by = p.created_by();
  for (const artifacts_pb::KgSourceReport& s : p.sources()) {
    SourceReport r;
    r.source = s.source();
    r.path = s.path();
    r.sha256 = s.sha256();
    r.rows_read = s.rows_read();
    r.triples_added = s.triples_added();
    r.rows_skipped = s.rows_skipped();
    r.unmapped_ids = s.unmapped_ids();
    r.triples_merged = s.triples_merged();
    m.sources.push_back(std::move(r));
  }
  m.source_names.assign(p.source_names().begin(), p.source_names().end());
  m.source_licenses.assign(p.source_licenses().begin(), p.source_licenses().end());
  m.license_filter = p.license_filter();
  m.counts.entities = p.counts().entities();
  m.counts.relations = p.counts().relations();
  m.counts.triples = p.counts().triples();
  m.counts.entities_by_type.insert(p.counts().entities_by_type().begin(),
                                   p.counts().entities_by_type().end());
  m.counts.triples_by_relation.insert(p.counts().triples_by_relation().begin(),
                                      p.counts().triples_by_relation().end());
  m.counts.triples_by_source.insert(p.counts().triples_by_source().begin(),
                                    p.counts().triples_by_source().end());
  m.counts.triples_by_license.insert(p.counts().triples_by_license().begin(),
                                     p.counts().triples_by_license().end());
  return m;
}

}  // namespace

std::string SnapshotManifestToJson(const SnapshotManifest& m) {
  return common::ProtoToJson(ToProto(m));
}

absl::StatusOr<SnapshotManifest> SnapshotManifestFromJson(std::string_view text) {
  artifacts_pb::KgSnapshotManifest p;
  IBGR_RETURN_IF_ERROR(
      common::JsonToProto(absl::string_view(text.data(), text.size()), "snapshot manifest", &p));
  if (p.format_version() <= 0 || p.version() <= 0 || !p.has_counts()) {
    return absl::DataLossError(
        "snapshot manifest: format_version, version and counts are required");
  }
  return FromProto(p);
}

absl::StatusOr<SnapshotManifest> ReadSnapshotManifest(const std::string& snapshot_dir) {
  const std::string path = snapshot_dir + "/manifest.json";
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat("no manifest at ", path));
    }
    return text.status();
  }
  auto manifest = SnapshotManifestFromJson(*text);
  if (!manifest.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", manifest.status().message()));
  }
  return manifest;
}

common::VersionedArtifactDir SnapshotArtifacts(const std::string& base) {
  return common::VersionedArtifactDir(
      {base, "kg", "KG snapshot", "(build one with `ibgr kg build`)"});
}

std::string SnapshotDir(const std::string& base, int64_t version) {
  return SnapshotArtifacts(base).VersionDir(version);
}

absl::StatusOr<std::vector<int64_t>> ListSnapshotVersions(const std::string& base) {
  return SnapshotArtifacts(base).ListVersions();
}

absl::StatusOr<std::string> ResolveSnapshotDir(const std::string& base,
                                               std::optional<int64_t> pinned_version) {
  return SnapshotArtifacts(base).Resolve(pinned_version);
}

absl::StatusOr<int64_t> NextSnapshotVersion(const std::string& base) {
  return SnapshotArtifacts(base).NextVersion();
}

}  // namespace ibgraphrag::kgstore
