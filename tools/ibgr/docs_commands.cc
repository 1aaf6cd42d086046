#include "tools/ibgr/docs_commands.h"

#include <cstdio>
#include <memory>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/subgraph_documents.h"

ABSL_DECLARE_FLAG(std::string, base);

namespace {
const ibgraphrag::retriever::DocumentsBuildOptions kDocsDefaults;
}  // namespace

ABSL_FLAG(int64_t, max_documents, kDocsDefaults.max_documents,
          "docs build: documents at most (0 = every centre triple)");
ABSL_FLAG(std::string, docs_center_types, "disease",
          "docs build: comma-separated entity types whose triples are centre triples");
ABSL_FLAG(int, docs_centers_per_entity, kDocsDefaults.centers_per_entity,
          "docs build: centre triples per entity (strided over its edges)");
ABSL_FLAG(int, docs_max_neighbors, kDocsDefaults.max_neighbors,
          "docs build: neighbour triples per document");
ABSL_FLAG(int, docs_threads, kDocsDefaults.threads, "docs build: embedding threads");
ABSL_FLAG(std::string, docs_index, "auto",
          "docs build: FAISS index, auto (flat up to 50,000 documents, hnsw above), flat (exact "
          "inner product, the paper's) or hnsw (approximate, faster per question)");

namespace ibgraphrag::cli {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

// The newest retriever model's manifest: documents must embed like the served questions and
// name the triple ids of the KG snapshot the model was trained on.
absl::StatusOr<retriever::RetrieverManifest> ServedModel(const std::string& base) {
  absl::StatusOr<std::string> dir = retriever::ResolveRetrieverDir(base, std::nullopt);
  if (!dir.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("no retriever model under ", base,
                     " (its encoder embeds the documents; run ibgr "
                     "artifacts build first): ",
                     dir.status().message()));
  }
  IBGR_ASSIGN_OR_RETURN(std::string json, common::ReadFileToString(*dir + "/manifest.json"));
  return retriever::RetrieverManifestFromJson(json);
}

// The model's KG snapshot (its kg_version); a model without one (older manifests) uses the
// newest snapshot.
absl::StatusOr<std::string> ModelSnapshotDir(const std::string& base,
                                             const retriever::RetrieverManifest& model) {
  if (model.kg_version.empty()) return kgstore::ResolveSnapshotDir(base, std::nullopt);
  int64_t version = 0;
  if (!absl::SimpleAtoi(model.kg_version, &version)) {
    return absl::FailedPreconditionError(absl::StrCat("retriever model ", model.version,
                                                      ": kg_version '", model.kg_version,
                                                      "' is not a number"));
  }
  return kgstore::ResolveSnapshotDir(base, version);
}

absl::StatusOr<artifacts::v1::DocumentsManifest> BuildDocuments(const std::string& base,
                                                                const std::string& created_by) {
  IBGR_ASSIGN_OR_RETURN(retriever::RetrieverManifest model, ServedModel(base));
  IBGR_ASSIGN_OR_RETURN(retriever::TextEmbedder embedder,
                        retriever::EmbedderForId(base, model.encoder_id));
  IBGR_ASSIGN_OR_RETURN(std::string kg_dir, ModelSnapshotDir(base, model));
  kgstore::KgStoreOptions store_options;
  store_options.snapshot_dir = kg_dir;
  store_options.read_only = true;
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<kgstore::KgStore> store,
                        kgstore::KgStore::Open(store_options));
  retriever::DocumentsBuildOptions options;
  options.center_types =
      absl::StrSplit(absl::GetFlag(FLAGS_docs_center_types), ',', absl::SkipEmpty());
  options.centers_per_entity = absl::GetFlag(FLAGS_docs_centers_per_entity);
  options.max_neighbors = absl::GetFlag(FLAGS_docs_max_neighbors);
  options.max_documents = absl::GetFlag(FLAGS_max_documents);
  options.threads = absl::GetFlag(FLAGS_docs_threads);
  const std::string index = absl::GetFlag(FLAGS_docs_index);
  if (index == "flat") {
    options.index_kind = alignment::IndexKind::kFlat;
  } else if (index == "hnsw") {
    options.index_kind = alignment::IndexKind::kHnsw;
  } else if (index != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("--docs_index: '", index, "', must be auto, flat or hnsw"));
  }
  options.created_by = created_by;
  return retriever::BuildSubgraphDocuments(*store, embedder, options, base);
}

}  // namespace

bool DocumentsCurrent(const std::string& base, const std::string& kg_version,
                      const std::string& encoder_id) {
  absl::StatusOr<std::string> dir = retriever::DocumentsArtifacts(base).Resolve(std::nullopt);
  if (!dir.ok()) return false;
  absl::StatusOr<std::string> json = common::ReadFileToString(*dir + "/manifest.json");
  artifacts::v1::DocumentsManifest manifest;
  if (!json.ok() || !common::JsonToProto(*json, "documents manifest", &manifest).ok()) {
    return false;
  }
  return manifest.kg_version() == kg_version && manifest.encoder_id() == encoder_id;
}

int DocsBuild(const std::vector<std::string>&) {
  const std::string base = absl::GetFlag(FLAGS_base);
  absl::StatusOr<artifacts::v1::DocumentsManifest> manifest =
      BuildDocuments(base, "ibgr docs build");
  if (!manifest.ok()) return Fail(manifest.status());
  std::printf(
      "documents %lld: %lld documents, %lld triples, encoder %s, KG %s, index %s, "
      "%.1f s\n%s/documents/%lld\n",
      static_cast<long long>(manifest->version()),
      static_cast<long long>(manifest->num_documents()),
      static_cast<long long>(manifest->num_triples()), manifest->encoder_id().c_str(),
      manifest->kg_version().c_str(), manifest->index_kind().c_str(), manifest->build_seconds(),
      base.c_str(), static_cast<long long>(manifest->version()));
  return 0;
}

}  // namespace ibgraphrag::cli
