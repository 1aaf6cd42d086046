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
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "services/kgstore/snapshot_manifest.h"

namespace ibgraphrag::retriever {
namespace {

namespace fs = std::filesystem;
namespace artifacts_pb = ::ibgraphrag::artifacts::v1;

}  // namespace

std::string RetrieverManifestToJson(const RetrieverManifest& m) {
  artifacts_pb::RetrieverModelManifest p;
  p.set_format_version(m.format_version);
  p.set_version(m.version);
  p.set_created_time(m.created_time);
  p.set_created_by(m.created_by);
  p.set_encoder_id(m.encoder_id);
  p.set_text_dim(m.scorer.text_dim);
  p.set_dde_dim(m.scorer.dde_dim);
  p.set_hidden(m.scorer.hidden);
  p.set_prior_dim(m.scorer.prior_dim);
  p.mutable_dde()->set_forward_rounds(m.dde.forward_rounds);
  p.mutable_dde()->set_reverse_rounds(m.dde.reverse_rounds);
  p.set_kg_version(m.kg_version);
  p.set_num_entities(m.num_entities);
  p.set_num_relations(m.num_relations);
  p.set_training_data_hash(m.training_data_hash);
  p.mutable_training()->insert(m.training.begin(), m.training.end());
  p.mutable_metrics()->insert(m.metrics.begin(), m.metrics.end());
  p.mutable_files()->insert(m.file_sha256.begin(), m.file_sha256.end());
  return common::ProtoToJson(p);
}

absl::StatusOr<RetrieverManifest> RetrieverManifestFromJson(const std::string& text) {
  artifacts_pb::RetrieverModelManifest p;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(text, "manifest.json", &p));
  if (p.format_version() != kRetrieverFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("manifest.json: format_version ", p.format_version(), ", this build reads ",
                     kRetrieverFormatVersion,
                     p.format_version() < kRetrieverFormatVersion
                         ? " (the model predates the scorer's structure features; retrain it with "
                           "`ibgr artifacts build` or retriever_train)"
                         : " (written by a newer build)"));
  }
  if (p.version() <= 0 || p.encoder_id().empty() || p.files().empty() || !p.has_dde()) {
    return absl::DataLossError("manifest.json: version, encoder_id, dde and files are required");
  }
  RetrieverManifest m;
  m.format_version = p.format_version();
  m.version = p.version();
  m.created_time = p.created_time();
  m.created_by = p.created_by();
  m.encoder_id = p.encoder_id();
  m.scorer.text_dim = p.text_dim();
  m.scorer.dde_dim = p.dde_dim();
  m.scorer.hidden = p.hidden();
  m.scorer.prior_dim = p.prior_dim();
  m.dde.forward_rounds = p.dde().forward_rounds();
  m.dde.reverse_rounds = p.dde().reverse_rounds();
  m.kg_version = p.kg_version();
  m.num_entities = p.num_entities();
  m.num_relations = p.num_relations();
  m.training_data_hash = p.training_data_hash();
  m.training.insert(p.training().begin(), p.training().end());
  m.metrics.insert(p.metrics().begin(), p.metrics().end());
  m.file_sha256.insert(p.files().begin(), p.files().end());
  if (m.scorer.dde_dim != m.dde.node_dim()) {
    return absl::DataLossError("manifest.json: dde_dim does not match the DDE rounds");
  }
  return m;
}

common::VersionedArtifactDir RetrieverArtifacts(const std::string& base) {
  return common::VersionedArtifactDir(
      {base, "retriever", "retriever model", "(train one with `ibgr artifacts build`)"});
}

std::string RetrieverVersionDir(const std::string& base, int64_t version) {
  return RetrieverArtifacts(base).VersionDir(version);
}

absl::StatusOr<std::vector<int64_t>> ListRetrieverVersions(const std::string& base) {
  return RetrieverArtifacts(base).ListVersions();
}

absl::StatusOr<std::string> ResolveRetrieverDir(const std::string& base,
                                                std::optional<int64_t> pinned) {
  return RetrieverArtifacts(base).Resolve(pinned);
}

absl::StatusOr<int64_t> NextRetrieverVersion(const std::string& base) {
  return RetrieverArtifacts(base).NextVersion();
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

absl::Status PublishRetrieverVersion(common::ArtifactStaging* staging, const ScorerParams& params,
                                     RetrieverManifest manifest) {
  const std::string& dir = staging->dir();
  IBGR_RETURN_IF_ERROR(
      common::WriteStringToFileAtomic(dir + "/" + kModelFile, SerializeScorerParams(params)));
  manifest.version = staging->version();
  manifest.scorer = params.config;
  if (manifest.created_time.empty()) {
    manifest.created_time =
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  }
  for (const char* f : {kModelFile, kEntityEmbeddingsFile, kRelationEmbeddingsFile}) {
    IBGR_ASSIGN_OR_RETURN(manifest.file_sha256[f], common::Sha256HexOfFile(dir + "/" + f));
  }
  // The manifest last: it marks the version complete once published.
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(dir + "/" + kManifestFile,
                                                       RetrieverManifestToJson(manifest)));
  return staging->Publish();
}

absl::StatusOr<LoadedRetrieverVersion> LoadRetrieverVersion(const std::string& dir) {
  LoadedRetrieverVersion out;
  out.dir = dir;
  IBGR_ASSIGN_OR_RETURN(std::string manifest_text,
                        common::ReadFileToString(dir + "/" + kManifestFile));
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
    absl::StatusOr<std::string> digest = common::Sha256HexOfFile(path);
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
  IBGR_ASSIGN_OR_RETURN(std::string model_bytes, common::ReadFileToString(dir + "/" + kModelFile));
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
