#include "services/retriever/model_bundle.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/kgstore/import/sha256.h"
#include "services/kgstore/snapshot_manifest.h"

namespace ibgraphrag::retriever {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open (missing?)"));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return ss.str();
}

// Numeric subdirectories of `dir` (with manifest.json when `complete_only`), and, when
// `count_temp`, the numbers of "<n>.tmp-..." directories too.
absl::StatusOr<std::vector<int64_t>> ScanVersions(const std::string& dir, bool complete_only,
                                                  bool count_temp) {
  std::vector<int64_t> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    std::string name = it->path().filename().string();
    const size_t tmp = name.find(".tmp-");
    if (tmp != std::string::npos) {
      if (!count_temp) continue;
      name = name.substr(0, tmp);
    }
    int64_t v = 0;
    if (!absl::SimpleAtoi(name, &v) || v <= 0) continue;
    if (complete_only && !fs::exists(it->path() / kManifestFile, ec)) continue;
    out.push_back(v);
  }
  if (ec) return absl::UnavailableError(absl::StrCat(dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

std::string RetrieverManifestToJson(const RetrieverManifest& m) {
  json j;
  j["format_version"] = m.format_version;
  j["version"] = m.version;
  j["created_time"] = m.created_time;
  j["created_by"] = m.created_by;
  j["encoder_id"] = m.encoder_id;
  j["text_dim"] = m.scorer.text_dim;
  j["dde_dim"] = m.scorer.dde_dim;
  j["hidden"] = m.scorer.hidden;
  j["prior_dim"] = m.scorer.prior_dim;
  j["dde"] = {{"forward_rounds", m.dde.forward_rounds}, {"reverse_rounds", m.dde.reverse_rounds}};
  j["kg_version"] = m.kg_version;
  j["num_entities"] = m.num_entities;
  j["num_relations"] = m.num_relations;
  j["training_data_hash"] = m.training_data_hash;
  j["training"] = m.training;
  j["metrics"] = m.metrics;
  j["files"] = m.file_sha256;
  return j.dump(2) + "\n";
}

absl::StatusOr<RetrieverManifest> RetrieverManifestFromJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::DataLossError("manifest.json: not a JSON object");
  }
  RetrieverManifest m;
  const char* field = "";
  try {
    field = "format_version";
    m.format_version = j.at(field).get<int>();
    if (m.format_version != kRetrieverFormatVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "manifest.json: format_version ", m.format_version, ", this build reads ",
          kRetrieverFormatVersion,
          m.format_version < kRetrieverFormatVersion
              ? " (the model predates the scorer's structure features; retrain it with "
                "retriever_train)"
              : " (written by a newer build)"));
    }
    field = "version";
    m.version = j.at(field).get<int64_t>();
    field = "created_time";
    m.created_time = j.value(field, "");
    field = "created_by";
    m.created_by = j.value(field, "");
    field = "encoder_id";
    m.encoder_id = j.at(field).get<std::string>();
    field = "text_dim";
    m.scorer.text_dim = j.at(field).get<int>();
    field = "dde_dim";
    m.scorer.dde_dim = j.at(field).get<int>();
    field = "hidden";
    m.scorer.hidden = j.at(field).get<int>();
    field = "prior_dim";
    m.scorer.prior_dim = j.at(field).get<int>();
    field = "dde";
    m.dde.forward_rounds = j.at(field).at("forward_rounds").get<int>();
    m.dde.reverse_rounds = j.at(field).at("reverse_rounds").get<int>();
    field = "kg_version";
    m.kg_version = j.value(field, "");
    field = "num_entities";
    m.num_entities = j.at(field).get<int64_t>();
    field = "num_relations";
    m.num_relations = j.at(field).get<int64_t>();
    field = "training_data_hash";
    m.training_data_hash = j.value(field, "");
    field = "training";
    if (j.contains(field)) m.training = j.at(field).get<std::map<std::string, std::string>>();
    field = "metrics";
    if (j.contains(field)) m.metrics = j.at(field).get<std::map<std::string, double>>();
    field = "files";
    m.file_sha256 = j.at(field).get<std::map<std::string, std::string>>();
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat("manifest.json: field \"", field, "\": ", e.what()));
  }
  if (m.scorer.dde_dim != m.dde.node_dim()) {
    return absl::DataLossError("manifest.json: dde_dim does not match the DDE rounds");
  }
  return m;
}

std::string RetrieverVersionDir(const std::string& base, int64_t version) {
  return absl::StrCat(base, "/retriever/", version);
}

absl::StatusOr<std::vector<int64_t>> ListRetrieverVersions(const std::string& base) {
  return ScanVersions(base + "/retriever", /*complete_only=*/true, /*count_temp=*/false);
}

absl::StatusOr<std::string> ResolveRetrieverDir(const std::string& base,
                                                std::optional<int64_t> pinned) {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions, ListRetrieverVersions(base));
  if (pinned.has_value()) {
    if (std::find(versions.begin(), versions.end(), *pinned) == versions.end()) {
      return absl::NotFoundError(
          absl::StrCat("model_version: ", *pinned, " not found under ", base, "/retriever/"));
    }
    return RetrieverVersionDir(base, *pinned);
  }
  if (versions.empty()) {
    return absl::NotFoundError(absl::StrCat("no retriever model under ", base,
                                            "/retriever/ (train one with retriever_train)"));
  }
  return RetrieverVersionDir(base, versions.back());
}

absl::StatusOr<int64_t> NextRetrieverVersion(const std::string& base) {
  IBGR_ASSIGN_OR_RETURN(std::vector<int64_t> versions,
                        ScanVersions(base + "/retriever", false, /*count_temp=*/true));
  return versions.empty() ? 1 : versions.back() + 1;
}

ArtifactTexts ArtifactTextsFromKg(const kgstore::KgData& kg) {
  ArtifactTexts t;
  t.entities.reserve(kg.entities.size());
  for (const auto& e : kg.entities)
    t.entities.push_back(std::string(e.name) + " (" + std::string(e.type) + ")");
  for (const auto& r : kg.relations)
    t.relations.push_back(absl::StrCat(r.name, ": ", r.description));
  return t;
}

absl::StatusOr<ArtifactTexts> ArtifactTextsFromStore(const kgstore::KgStore& store) {
  ArtifactTexts t;
  const int64_t n = store.num_entities();
  std::vector<kgstore::EntityId> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<kgstore::EntityId>(i);
  t.entities.reserve(n);
  IBGR_RETURN_IF_ERROR(store.VisitEntitySummaries(ids, [&t](const kgstore::EntitySummaryView& e) {
    t.entities.push_back(std::string(e.name) + " (" + std::string(e.type) + ")");
  }));
  for (const auto& r : store.relations()) {
    t.relations.push_back(absl::StrCat(r.name, ": ", r.description));
  }
  return t;
}

namespace {

std::vector<float> EmbedAll(const std::vector<std::string>& texts, const TextEmbedder& embedder,
                            int threads) {
  const int dim = embedder.dim;
  std::vector<float> out(texts.size() * dim);
  threads = std::max(1, std::min<int>(threads, static_cast<int>(texts.size() / 1000) + 1));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (size_t i = t; i < texts.size(); i += threads) {
        std::vector<float> v = embedder.embed(texts[i]);
        std::copy_n(v.begin(), std::min<size_t>(v.size(), dim), out.begin() + i * dim);
      }
    });
  }
  for (auto& w : workers) w.join();
  return out;
}

}  // namespace

absl::Status BuildRetrieverArtifacts(const ArtifactTexts& texts, const TextEmbedder& embedder,
                                     const std::string& dir, RetrieverManifest* manifest,
                                     int threads) {
  if (embedder.dim <= 0 || !embedder.embed) {
    return absl::InvalidArgumentError("embedder: no encoder given");
  }
  const std::vector<float> ents = EmbedAll(texts.entities, embedder, threads);
  const std::vector<float> rels = EmbedAll(texts.relations, embedder, threads);
  IBGR_RETURN_IF_ERROR(WriteEmbeddingTable(dir + "/" + kEntityEmbeddingsFile, ents, embedder.dim));
  IBGR_RETURN_IF_ERROR(
      WriteEmbeddingTable(dir + "/" + kRelationEmbeddingsFile, rels, embedder.dim));
  manifest->encoder_id = embedder.id;
  manifest->scorer.text_dim = embedder.dim;
  manifest->num_entities = static_cast<int64_t>(texts.entities.size());
  manifest->num_relations = static_cast<int64_t>(texts.relations.size());
  return absl::OkStatus();
}

absl::Status PublishRetrieverVersion(const std::string& base, const std::string& staging_dir,
                                     const ScorerParams& params, RetrieverManifest manifest) {
  IBGR_RETURN_IF_ERROR(
      kgstore::WriteFileAtomically(staging_dir + "/" + kModelFile, SerializeScorerParams(params)));
  manifest.scorer = params.config;
  if (manifest.created_time.empty()) {
    manifest.created_time =
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  }
  for (const char* f : {kModelFile, kEntityEmbeddingsFile, kRelationEmbeddingsFile}) {
    IBGR_ASSIGN_OR_RETURN(manifest.file_sha256[f],
                          kgstore::import_::Sha256File(staging_dir + "/" + f));
  }
  IBGR_RETURN_IF_ERROR(kgstore::WriteFileAtomically(staging_dir + "/" + kManifestFile,
                                                    RetrieverManifestToJson(manifest)));
  const std::string target = RetrieverVersionDir(base, manifest.version);
  std::error_code ec;
  if (fs::exists(target, ec)) {
    return absl::AlreadyExistsError(absl::StrCat(target, ": version exists"));
  }
  fs::create_directories(base + "/retriever", ec);
  fs::rename(staging_dir, target, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("rename to ", target, ": ", ec.message()));
  return kgstore::SyncDirectory(base + "/retriever");
}

absl::StatusOr<LoadedRetrieverVersion> LoadRetrieverVersion(const std::string& dir) {
  LoadedRetrieverVersion out;
  out.dir = dir;
  IBGR_ASSIGN_OR_RETURN(std::string manifest_text, ReadFile(dir + "/" + kManifestFile));
  absl::StatusOr<RetrieverManifest> manifest = RetrieverManifestFromJson(manifest_text);
  if (!manifest.ok()) {
    return absl::Status(manifest.status().code() == absl::StatusCode::kFailedPrecondition
                            ? absl::StatusCode::kFailedPrecondition
                            : absl::StatusCode::kDataLoss,
                        absl::StrCat(dir, "/", manifest.status().message()));
  }
  out.manifest = *std::move(manifest);
  for (const char* f : {kModelFile, kEntityEmbeddingsFile, kRelationEmbeddingsFile}) {
    const std::string path = dir + "/" + f;
    absl::StatusOr<std::string> digest = kgstore::import_::Sha256File(path);
    if (!digest.ok()) {
      return absl::NotFoundError(
          absl::StrCat(path, ": missing or unreadable (", digest.status().message(), ")"));
    }
    auto it = out.manifest.file_sha256.find(f);
    if (it == out.manifest.file_sha256.end() || it->second != *digest) {
      return absl::DataLossError(
          absl::StrCat(path, ": SHA-256 differs from manifest.json (corrupt or replaced)"));
    }
  }
  IBGR_ASSIGN_OR_RETURN(std::string model_bytes, ReadFile(dir + "/" + kModelFile));
  IBGR_ASSIGN_OR_RETURN(out.params, ParseScorerParams(model_bytes));
  const ScorerConfig& c = out.params.config;
  if (c.text_dim != out.manifest.scorer.text_dim || c.dde_dim != out.manifest.scorer.dde_dim ||
      c.hidden != out.manifest.scorer.hidden || c.prior_dim != out.manifest.scorer.prior_dim) {
    return absl::DataLossError(absl::StrCat(dir, ": model.bin dims differ from manifest.json"));
  }
  IBGR_ASSIGN_OR_RETURN(out.entities, EmbeddingTable::Open(dir + "/" + kEntityEmbeddingsFile));
  IBGR_ASSIGN_OR_RETURN(out.relations, EmbeddingTable::Open(dir + "/" + kRelationEmbeddingsFile));
  if (out.entities->dim() != c.text_dim || out.relations->dim() != c.text_dim ||
      out.entities->rows() != out.manifest.num_entities ||
      out.relations->rows() != out.manifest.num_relations) {
    return absl::DataLossError(
        absl::StrCat(dir, ": embedding tables disagree with manifest.json (rows or width)"));
  }
  return out;
}

}  // namespace ibgraphrag::retriever
