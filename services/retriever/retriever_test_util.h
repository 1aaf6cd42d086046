// Test helpers: a published model version over a KG, and fake subgraph sources.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_TEST_UTIL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"
#include "services/kgstore/kg_types.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/scorer_params.h"
#include "services/retriever/subgraph_source.h"
#include "services/retriever/text_embedder.h"

namespace ibgraphrag::retriever::testing {

// Publishes `<base>/retriever/<version>/` for `kg`: hashed n-gram embeddings of width
// `text_dim` and a randomly initialised scorer with `hidden` units (with `residual`, the
// trainer's start: ranks exactly like SHORTEST_PATH).
// `embedder` embeds the texts (its id goes into the manifest).
inline void PublishTestVersionWith(const std::string& base, const kgstore::KgData& kg,
                                   const TextEmbedder& embedder, int hidden = 16,
                                   int64_t version = 1, bool residual = false) {
  const int text_dim = embedder.dim;
  absl::StatusOr<common::ArtifactStaging> staging =
      common::ArtifactStaging::CreateVersion(RetrieverArtifacts(base), version);
  ASSERT_TRUE(staging.ok()) << staging.status();
  RetrieverManifest manifest;
  manifest.version = version;
  manifest.kg_version = "1";
  manifest.created_by = "retriever test";
  ASSERT_TRUE(
      BuildRetrieverArtifacts(ArtifactTextsFromKg(kg), embedder, staging->dir(), &manifest).ok());
  ScorerConfig config;
  config.text_dim = text_dim;
  config.hidden = hidden;
  config.dde_dim = manifest.dde.node_dim();
  ScorerParams params = InitScorerParams(config, 42);
  if (residual) ResidualPriorInit(&params);
  ASSERT_TRUE(PublishRetrieverVersion(&*staging, params, manifest).ok());
}

inline void PublishTestVersion(const std::string& base, const kgstore::KgData& kg,
                               int text_dim = 32, int hidden = 16, int64_t version = 1,
                               bool residual = false) {
  PublishTestVersionWith(base, kg, HashNgramEmbedder(text_dim).value(), hidden, version, residual);
}

// Publishes `<base>/retriever/<version>/` for `kg` holding both scorer variants: the residual
// one (the trainer's start, ranks like SHORTEST_PATH; the default, model.bin) and a randomly
// initialised plain MLP (model_plain.bin). `max_candidates` is the recorded training cap (0 =
// not recorded).
inline void PublishTwoVariantTestVersion(const std::string& base, const kgstore::KgData& kg,
                                         int64_t version = 1, int max_candidates = 0) {
  const TextEmbedder embedder = HashNgramEmbedder(32).value();
  absl::StatusOr<common::ArtifactStaging> staging =
      common::ArtifactStaging::CreateVersion(RetrieverArtifacts(base), version);
  ASSERT_TRUE(staging.ok()) << staging.status();
  RetrieverManifest manifest;
  manifest.kg_version = "1";
  manifest.created_by = "retriever test";
  manifest.max_candidates = max_candidates;
  ASSERT_TRUE(
      BuildRetrieverArtifacts(ArtifactTextsFromKg(kg), embedder, staging->dir(), &manifest).ok());
  ScorerConfig config;
  config.text_dim = embedder.dim;
  config.hidden = 16;
  config.dde_dim = manifest.dde.node_dim();
  TrainedScorer residual{ScorerVariant::kResidual, InitScorerParams(config, 42), {}, {}};
  ResidualPriorInit(&residual.params);
  residual.metrics = {{"validation/hit@10", 0.5}};
  ScorerConfig plain_config = config;
  plain_config.prior_dim = 0;  // the paper's MLP: no structure features
  TrainedScorer plain{ScorerVariant::kPlain, InitScorerParams(plain_config, 7), {}, {}};
  plain.metrics = {{"validation/hit@10", 0.25}};
  ASSERT_TRUE(PublishRetrieverVersion(&*staging, {residual, plain}, manifest).ok());
}

// Sets manifest.json's format_version in `version_dir` (an artifact of an older build).
inline void RewriteManifestFormat(const std::string& version_dir, int format_version) {
  const std::string path = version_dir + "/manifest.json";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\"format_version\": ";
  const size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find_first_of(",\n}", at + key.size());
  text.replace(at + key.size(), end - at - key.size(), std::to_string(format_version));
  std::ofstream(path, std::ios::trunc) << text;
}

// A source whose every call fails with `status` (kgstore down, slow, ...).
class FailingSource : public SubgraphSource {
 public:
  explicit FailingSource(absl::Status status) : status_(std::move(status)) {}
  absl::StatusOr<CandidateSubgraph> Extract(const SubgraphRequest&) override { return status_; }
  absl::StatusOr<std::vector<EntityInfo>> Describe(absl::Span<const uint32_t>,
                                                   absl::Time) override {
    return status_;
  }

 private:
  absl::Status status_;
};

}  // namespace ibgraphrag::retriever::testing

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_TEST_UTIL_H_
