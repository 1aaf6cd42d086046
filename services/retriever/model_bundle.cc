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

// The manifest's scorer variants, the default first; versions written before variants existed
// hold model.bin alone, whose variant its dims tell.
absl::StatusOr<std::vector<ScorerVariantInfo>> VariantsFromProto(
    const artifacts_pb::RetrieverModelManifest& p, const RetrieverManifest& m) {
  std::vector<ScorerVariantInfo> variants;
  if (p.variants().empty()) {
    ScorerVariantInfo only;
    only.variant = VariantOfConfig(m.scorer);
    only.file = kModelFile;
    only.scorer = m.scorer;
    only.metrics = m.metrics;
    variants.push_back(std::move(only));
    return variants;
  }
  for (const artifacts_pb::RetrieverScorerVariant& v : p.variants()) {
    absl::StatusOr<ScorerVariant> variant = ParseScorerVariant(v.name(), "manifest.json: variants");
    if (!variant.ok()) return absl::DataLossError(variant.status().message());
    if (v.file().empty() || v.file().find('/') != std::string::npos) {
      return absl::DataLossError(
          absl::StrCat("manifest.json: variant ", v.name(), ": file must be a plain file name"));
    }
    ScorerVariantInfo info;
    info.variant = *variant;
    info.file = v.file();
    info.scorer = m.scorer;
    info.scorer.hidden = v.hidden();
    info.scorer.prior_dim = v.prior_dim();
    info.training.insert(v.training().begin(), v.training().end());
    info.metrics.insert(v.metrics().begin(), v.metrics().end());
    const bool is_default =
        p.default_variant().empty() ? variants.empty() : v.name() == p.default_variant();
    variants.insert(is_default ? variants.begin() : variants.end(), std::move(info));
  }
  if (!p.default_variant().empty() &&
      p.default_variant() != ScorerVariantName(variants.front().variant)) {
    return absl::DataLossError(absl::StrCat("manifest.json: default_variant \"",
                                            p.default_variant(), "\" is not among variants"));
  }
  return variants;
}

}  // namespace

const char* ScorerVariantName(ScorerVariant variant) {
  return variant == ScorerVariant::kPlain ? "plain" : "residual";
}

absl::StatusOr<ScorerVariant> ParseScorerVariant(absl::string_view name, absl::string_view field) {
  if (name == "residual") return ScorerVariant::kResidual;
  if (name == "plain") return ScorerVariant::kPlain;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": \"", name, "\" is not a scorer variant (residual, plain)"));
}

ScorerVariant VariantOfConfig(const ScorerConfig& config) {
  return config.prior_dim > 0 ? ScorerVariant::kResidual : ScorerVariant::kPlain;
}

std::string ScorerVariantFile(ScorerVariant variant, bool is_default) {
  return is_default ? std::string(kModelFile)
                    : absl::StrCat("model_", ScorerVariantName(variant), ".bin");
}

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
  p.set_max_candidates(m.max_candidates);
  for (const ScorerVariantInfo& v : m.variants) {
    artifacts_pb::RetrieverScorerVariant* out = p.add_variants();
    out->set_name(ScorerVariantName(v.variant));
    out->set_file(v.file);
    out->set_hidden(v.scorer.hidden);
    out->set_prior_dim(v.scorer.prior_dim);
    out->mutable_training()->insert(v.training.begin(), v.training.end());
    out->mutable_metrics()->insert(v.metrics.begin(), v.metrics.end());
  }
  if (!m.variants.empty()) p.set_default_variant(ScorerVariantName(m.variants.front().variant));
  return common::ProtoToJson(p);
}

absl::StatusOr<RetrieverManifest> RetrieverManifestFromJson(const std::string& text) {
  artifacts_pb::RetrieverModelManifest p;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(text, "manifest.json", &p));
  if (p.format_version() != kRetrieverFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "manifest.json: format_version ", p.format_version(), ", this build reads ",
        kRetrieverFormatVersion,
        p.format_version() < kRetrieverFormatVersion
            ? " (the model predates the scorer's question-intent features; retrain it with "
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
  m.max_candidates = p.max_candidates();
  if (m.scorer.dde_dim != m.dde.node_dim()) {
    return absl::DataLossError("manifest.json: dde_dim does not match the DDE rounds");
  }
  IBGR_ASSIGN_OR_RETURN(m.variants, VariantsFromProto(p, m));
  return m;
}

int TrainedCandidateCap(const RetrieverManifest& manifest) {
  if (manifest.max_candidates > 0) return manifest.max_candidates;
  int recorded = 0;
  auto it = manifest.training.find("max_candidates");
  if (it != manifest.training.end() && absl::SimpleAtoi(it->second, &recorded) && recorded > 0) {
    return recorded;
  }
  return kDefaultTrainedCandidateCap;
}

int TrainedMaxScored(const RetrieverManifest& manifest) {
  int recorded = 0;
  auto it = manifest.training.find("max_scored");
  if (it != manifest.training.end() && absl::SimpleAtoi(it->second, &recorded) && recorded > 0) {
    return recorded;
  }
  return 0;
}

bool TrainedOntologyExpansion(const RetrieverManifest& manifest) {
  auto it = manifest.training.find("ontology_expansion");
  return it != manifest.training.end() && it->second == "true";
}

common::VersionedArtifactDir RetrieverArtifacts(const std::string& base) {
  return common::VersionedArtifactDir(
      {base, "retriever", "retriever model", "(train one with `ibgr artifacts build`)"});
}

std::vector<std::string> RetrieverVersionFiles(const RetrieverManifest& manifest) {
  std::vector<std::string> files = {kEntityEmbeddingsFile, kRelationEmbeddingsFile};
  for (const ScorerVariantInfo& v : manifest.variants) files.push_back(v.file);
  return files;
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

namespace {

// INVALID_ARGUMENT unless `scorers` names each variant once with dims that fit its name.
absl::Status CheckTrainedScorers(const std::vector<TrainedScorer>& scorers) {
  if (scorers.empty()) return absl::InvalidArgumentError("scorers: at least one is required");
  for (size_t i = 0; i < scorers.size(); ++i) {
    const char* name = ScorerVariantName(scorers[i].variant);
    if (VariantOfConfig(scorers[i].params.config) != scorers[i].variant) {
      return absl::InvalidArgumentError(
          absl::StrCat("scorers[", i, "]: variant ", name, " with prior_dim ",
                       scorers[i].params.config.prior_dim, " (residual needs > 0, plain 0)"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (scorers[j].variant == scorers[i].variant) {
        return absl::InvalidArgumentError(
            absl::StrCat("scorers[", i, "]: variant ", name, " given twice"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PublishRetrieverVersion(common::ArtifactStaging* staging,
                                     const std::vector<TrainedScorer>& scorers,
                                     RetrieverManifest manifest) {
  IBGR_RETURN_IF_ERROR(CheckTrainedScorers(scorers));
  const std::string& dir = staging->dir();
  manifest.version = staging->version();
  manifest.scorer = scorers.front().params.config;
  if (manifest.metrics.empty()) manifest.metrics = scorers.front().metrics;
  if (manifest.created_time.empty()) {
    manifest.created_time =
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  }
  manifest.variants.clear();
  for (const TrainedScorer& t : scorers) {
    ScorerVariantInfo info{t.variant, ScorerVariantFile(t.variant, manifest.variants.empty()),
                           t.params.config, t.training, t.metrics};
    IBGR_RETURN_IF_ERROR(
        common::WriteStringToFileAtomic(dir + "/" + info.file, SerializeScorerParams(t.params)));
    manifest.variants.push_back(std::move(info));
  }
  IBGR_ASSIGN_OR_RETURN(manifest.file_sha256,
                        common::FileDigests(dir, RetrieverVersionFiles(manifest)));
  // The manifest last: it marks the version complete once published.
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(dir + "/" + kManifestFile,
                                                       RetrieverManifestToJson(manifest)));
  return staging->Publish();
}

absl::Status PublishRetrieverVersion(common::ArtifactStaging* staging, const ScorerParams& params,
                                     RetrieverManifest manifest) {
  TrainedScorer only;
  only.variant = VariantOfConfig(params.config);
  only.params = params;
  only.metrics = manifest.metrics;
  return PublishRetrieverVersion(staging, std::vector<TrainedScorer>{std::move(only)},
                                 std::move(manifest));
}

namespace {

// One variant's parameters (its digest already checked), checked against the dims the manifest
// gives it.
absl::StatusOr<ScorerParams> LoadScorerVariant(const std::string& dir, const ScorerVariantInfo& v,
                                               const RetrieverManifest& manifest) {
  IBGR_ASSIGN_OR_RETURN(std::string bytes, common::ReadFileToString(dir + "/" + v.file));
  IBGR_ASSIGN_OR_RETURN(ScorerParams params, ParseScorerParams(bytes));
  const ScorerConfig& c = params.config;
  if (c.text_dim != manifest.scorer.text_dim || c.dde_dim != manifest.scorer.dde_dim ||
      c.hidden != v.scorer.hidden || c.prior_dim != v.scorer.prior_dim ||
      VariantOfConfig(c) != v.variant) {
    return absl::DataLossError(absl::StrCat(dir, "/", v.file, ": dims differ from manifest.json (",
                                            ScorerVariantName(v.variant), " scorer)"));
  }
  return params;
}

}  // namespace

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
  IBGR_RETURN_IF_ERROR(
      common::CheckFileDigests(dir, RetrieverVersionFiles(out.manifest), out.manifest.file_sha256));
  for (const ScorerVariantInfo& v : out.manifest.variants) {
    IBGR_ASSIGN_OR_RETURN(ScorerParams params, LoadScorerVariant(dir, v, out.manifest));
    if (out.manifest.variants.front().file == v.file) {
      out.params = std::move(params);
    } else {
      out.other_variants.emplace_back(v.variant, std::move(params));
    }
  }
  const ScorerConfig& c = out.params.config;
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
