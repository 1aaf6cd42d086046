// Retriever model versions with several scorer variants and the recorded candidate cap: manifest
// round trip, versions written before either existed, publish / load / refuse.
#include "services/retriever/model_bundle.h"

#include <filesystem>
#include <fstream>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/kg_store_test_util.h"
#include "services/retriever/retriever_test_util.h"

namespace ibgraphrag::retriever {
namespace {

namespace kt = kgstore::testing;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

RetrieverManifest ManifestWithTwoVariants() {
  RetrieverManifest m;
  m.version = 3;
  m.encoder_id = "hash-ngram-v1-d32";
  m.scorer.text_dim = 32;
  m.scorer.dde_dim = m.dde.node_dim();
  m.scorer.hidden = 16;
  m.scorer.prior_dim = kPriorFeatureDim;
  m.file_sha256 = {{"model.bin", "aa"}, {"model_plain.bin", "bb"}};
  m.max_candidates = 1500;
  ScorerVariantInfo residual{ScorerVariant::kResidual, "model.bin", m.scorer, {}, {}};
  residual.metrics = {{"validation/hit@10", 0.5}};
  ScorerVariantInfo plain{ScorerVariant::kPlain, "model_plain.bin", m.scorer, {}, {}};
  plain.scorer.prior_dim = 0;
  plain.training = {{"residual_prior", "false"}};
  m.variants = {residual, plain};
  return m;
}

TEST(ModelBundleTest, ManifestRoundTripsVariantsAndCandidateCap) {
  absl::StatusOr<RetrieverManifest> back =
      RetrieverManifestFromJson(RetrieverManifestToJson(ManifestWithTwoVariants()));
  ASSERT_OK(back);
  EXPECT_EQ(back->max_candidates, 1500);
  EXPECT_EQ(TrainedCandidateCap(*back), 1500);
  ASSERT_EQ(back->variants.size(), 2u);
  EXPECT_EQ(back->variants[0].variant, ScorerVariant::kResidual);
  EXPECT_EQ(back->variants[0].file, "model.bin");
  EXPECT_EQ(back->variants[0].scorer.prior_dim, kPriorFeatureDim);
  EXPECT_DOUBLE_EQ(back->variants[0].metrics.at("validation/hit@10"), 0.5);
  EXPECT_EQ(back->variants[1].variant, ScorerVariant::kPlain);
  EXPECT_EQ(back->variants[1].file, "model_plain.bin");
  EXPECT_EQ(back->variants[1].scorer.prior_dim, 0);
  EXPECT_EQ(back->variants[1].training.at("residual_prior"), "false");
}

TEST(ModelBundleTest, DefaultVariantComesFirstAndMustBeListed) {
  RetrieverManifest m = ManifestWithTwoVariants();
  std::string json = RetrieverManifestToJson(m);
  // A manifest whose default is the second entry lists it first once parsed.
  const std::string from = "\"default_variant\": \"residual\"";
  ASSERT_NE(json.find(from), std::string::npos) << json;
  std::string plain_default = json;
  plain_default.replace(plain_default.find(from), from.size(), "\"default_variant\": \"plain\"");
  absl::StatusOr<RetrieverManifest> back = RetrieverManifestFromJson(plain_default);
  ASSERT_OK(back);
  EXPECT_EQ(back->variants[0].variant, ScorerVariant::kPlain);
  // One that names a variant it does not list is corrupt.
  m.variants.resize(1);
  json = RetrieverManifestToJson(m);
  json.replace(json.find(from), from.size(), "\"default_variant\": \"plain\"");
  back = RetrieverManifestFromJson(json);
  EXPECT_THAT(back, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("default_variant")));
}

TEST(ModelBundleTest, OlderManifestsHoldModelBinAloneAndTheCapAsText) {
  RetrieverManifest m = ManifestWithTwoVariants();
  m.variants.clear();
  m.max_candidates = 0;
  m.training = {{"max_candidates", "2500"}};
  absl::StatusOr<RetrieverManifest> back = RetrieverManifestFromJson(RetrieverManifestToJson(m));
  ASSERT_OK(back);
  ASSERT_EQ(back->variants.size(), 1u);
  EXPECT_EQ(back->variants[0].variant, ScorerVariant::kResidual);  // prior_dim kPriorFeatureDim
  EXPECT_EQ(back->variants[0].file, "model.bin");
  EXPECT_EQ(TrainedCandidateCap(*back), 2500);

  m.scorer.prior_dim = 0;
  m.training.clear();
  back = RetrieverManifestFromJson(RetrieverManifestToJson(m));
  ASSERT_OK(back);
  EXPECT_EQ(back->variants[0].variant, ScorerVariant::kPlain);
  EXPECT_EQ(TrainedCandidateCap(*back), kDefaultTrainedCandidateCap);
}

TEST(ModelBundleTest, ParsesVariantNamesNamingTheField) {
  EXPECT_EQ(ParseScorerVariant("plain", "--scorer").value(), ScorerVariant::kPlain);
  EXPECT_EQ(ParseScorerVariant("residual", "--scorer").value(), ScorerVariant::kResidual);
  absl::StatusOr<ScorerVariant> bad = ParseScorerVariant("mlp", "--scorer");
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument,
                            ::testing::AllOf(HasSubstr("--scorer"), HasSubstr("mlp"))));
}

TEST(ModelBundleTest, PublishesAndLoadsBothVariants) {
  kt::ScratchDir dir;
  testing::PublishTwoVariantTestVersion(dir.path(), kt::SmallKg(), 1, /*max_candidates=*/7);
  ASSERT_FALSE(HasFatalFailure());
  const std::string v = RetrieverVersionDir(dir.path(), 1);
  EXPECT_TRUE(std::filesystem::exists(v + "/model.bin"));
  EXPECT_TRUE(std::filesystem::exists(v + "/model_plain.bin"));
  absl::StatusOr<LoadedRetrieverVersion> loaded = LoadRetrieverVersion(v);
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->params.config.prior_dim, kPriorFeatureDim);
  ASSERT_EQ(loaded->other_variants.size(), 1u);
  EXPECT_EQ(loaded->other_variants[0].first, ScorerVariant::kPlain);
  EXPECT_EQ(loaded->other_variants[0].second.config.prior_dim, 0);
  EXPECT_EQ(TrainedCandidateCap(loaded->manifest), 7);
  EXPECT_DOUBLE_EQ(loaded->manifest.variants[1].metrics.at("validation/hit@10"), 0.25);
  // The top-level metrics are the default variant's.
  EXPECT_DOUBLE_EQ(loaded->manifest.metrics.at("validation/hit@10"), 0.5);
}

TEST(ModelBundleTest, CorruptSecondVariantIsDataLossNamingItsFile) {
  kt::ScratchDir dir;
  testing::PublishTwoVariantTestVersion(dir.path(), kt::SmallKg());
  ASSERT_FALSE(HasFatalFailure());
  const std::string v = RetrieverVersionDir(dir.path(), 1);
  std::filesystem::resize_file(v + "/model_plain.bin", 100);
  absl::StatusOr<LoadedRetrieverVersion> loaded = LoadRetrieverVersion(v);
  EXPECT_THAT(loaded, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("model_plain.bin")));
}

TEST(ModelBundleTest, PublishRefusesVariantsThatContradictTheirDims) {
  kt::ScratchDir dir;
  ScorerConfig config;
  config.text_dim = 32;
  config.hidden = 8;
  config.dde_dim = DdeOptions().node_dim();
  const ScorerParams with_prior = InitScorerParams(config, 1);
  for (const std::vector<TrainedScorer>& scorers :
       {std::vector<TrainedScorer>{{ScorerVariant::kPlain, with_prior, {}, {}}},
        std::vector<TrainedScorer>{{ScorerVariant::kResidual, with_prior, {}, {}},
                                   {ScorerVariant::kResidual, with_prior, {}, {}}},
        std::vector<TrainedScorer>{}}) {
    absl::StatusOr<common::ArtifactStaging> staging =
        common::ArtifactStaging::CreateVersion(RetrieverArtifacts(dir.path()));
    ASSERT_OK(staging);
    absl::Status s = PublishRetrieverVersion(&*staging, scorers, RetrieverManifest());
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("scorers")));
  }
}

}  // namespace
}  // namespace ibgraphrag::retriever
