// Test helpers: a published model version over a KG, and fake subgraph sources.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_TEST_UTIL_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_RETRIEVER_TEST_UTIL_H_

#include <filesystem>
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
// `text_dim` and a randomly initialised scorer with `hidden` units.
inline void PublishTestVersion(const std::string& base, const kgstore::KgData& kg,
                               int text_dim = 32, int hidden = 16, int64_t version = 1) {
  const TextEmbedder embedder = HashNgramEmbedder(text_dim).value();
  const std::string staging = base + "/retriever/" + std::to_string(version) + ".tmp-test";
  std::filesystem::create_directories(staging);
  RetrieverManifest manifest;
  manifest.version = version;
  manifest.kg_version = "1";
  manifest.created_by = "retriever test";
  ASSERT_TRUE(BuildRetrieverArtifacts(ArtifactTextsFromKg(kg), embedder, staging, &manifest).ok());
  ScorerConfig config;
  config.text_dim = text_dim;
  config.hidden = hidden;
  config.dde_dim = manifest.dde.node_dim();
  ASSERT_TRUE(PublishRetrieverVersion(base, staging, InitScorerParams(config, 42), manifest).ok());
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
