#include "services/alignment/trained_encoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/alignment/alignment_api.h"
#include "services/alignment/bundle.h"
#include "services/alignment/name_features.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

namespace fs = std::filesystem;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::vector<float> Encode(const TextEncoder& encoder, const std::string& text) {
  absl::StatusOr<std::vector<float>> v = encoder.Encode(text);
  EXPECT_OK(v);
  return v.ok() ? *v : std::vector<float>();
}

// A tiny model: 1024 buckets of width 8, every row `row`, optional one-unit MLP.
TrainedEncoderWeights ConstantWeights(const std::vector<float>& row, int hidden = 0) {
  TrainedEncoderWeights w;
  w.features.buckets = 1024;
  w.dim = 8;
  w.hidden = hidden;
  for (int b = 0; b < w.features.buckets; ++b)
    w.embedding.insert(w.embedding.end(), row.begin(), row.end());
  w.w1.assign(static_cast<size_t>(hidden) * w.dim, 0.0f);
  w.b1.assign(hidden, 0.0f);
  w.w2.assign(static_cast<size_t>(w.dim) * hidden, 0.0f);
  w.b2.assign(hidden == 0 ? 0 : w.dim, 0.0f);
  return w;
}

TrainedEncoderWeights RandomWeights(int buckets, int dim, int hidden, uint32_t seed) {
  TrainedEncoderWeights w;
  w.features.buckets = buckets;
  w.dim = dim;
  w.hidden = hidden;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  auto fill = [&](std::vector<float>* v, size_t n) {
    v->resize(n);
    for (float& x : *v) x = normal(rng);
  };
  fill(&w.embedding, static_cast<size_t>(buckets) * dim);
  fill(&w.w1, static_cast<size_t>(hidden) * dim);
  fill(&w.b1, hidden);
  fill(&w.w2, static_cast<size_t>(dim) * hidden);
  fill(&w.b2, hidden == 0 ? 0 : dim);
  return w;
}

void ExpectVectorNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "at " << i;
}

TEST(NameFeaturizerTest, HashIsStableAcrossBuilds) {
  // Golden values: trained tables are indexed by these; a change silently breaks every artifact.
  EXPECT_EQ(StableFeatureHash('w', "heart"), 0xdaf7ed83496b8607ULL);
  EXPECT_EQ(StableFeatureHash('b', "heart", "attack"), 0x53c1df9cdbb7a983ULL);
  EXPECT_EQ(StableFeatureHash('c', "<he"), 0x167c73b194c0abc2ULL);
}

TEST(NameFeaturizerTest, DeterministicAndCaseAndPunctuationNormalised) {
  const NameFeaturizer featurizer(NameFeaturizerOptions{});
  std::vector<int32_t> a_ids, b_ids, c_ids;
  std::vector<float> a_w, b_w, c_w;
  featurizer.Featurize("Heart Attacks!", &a_ids, &a_w);
  featurizer.Featurize("heart-attack", &b_ids, &b_w);
  featurizer.Featurize("heart-attack", &c_ids, &c_w);
  EXPECT_FALSE(a_ids.empty());
  EXPECT_EQ(a_ids, b_ids);
  EXPECT_EQ(a_w, b_w);
  EXPECT_EQ(b_ids, c_ids);
  for (const int32_t id : a_ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, featurizer.options().buckets);
  }
}

TEST(NameFeaturizerTest, FeaturesAndWeightsPerKind) {
  NameFeaturizerOptions o;
  o.buckets = 4096;
  o.word_weight = 2.5f;
  o.bigram_weight = 0.5f;
  const NameFeaturizer featurizer(o);
  std::vector<int32_t> ids;
  std::vector<float> weights;
  // "<ab>": n-grams "<ab", "ab>" (3) and "<ab>" (4), then the word; no pair for one word.
  featurizer.Featurize("AB", &ids, &weights);
  const uint64_t b = 4096;
  EXPECT_THAT(ids,
              ElementsAre(StableFeatureHash('c', "<ab") % b, StableFeatureHash('c', "ab>") % b,
                          StableFeatureHash('c', "<ab>") % b, StableFeatureHash('w', "ab") % b));
  EXPECT_THAT(weights, ElementsAre(1.0f, 1.0f, 1.0f, 2.5f));
  ids.clear();
  weights.clear();
  featurizer.Featurize("ab cd", &ids, &weights);
  ASSERT_EQ(ids.size(), 9u);  // 4 + pair + 4
  EXPECT_EQ(ids[4], static_cast<int32_t>(StableFeatureHash('b', "ab", "cd") % b));
  EXPECT_EQ(weights[4], 0.5f);
  ids.clear();
  featurizer.Featurize(" -- ! ", &ids, &weights);
  EXPECT_TRUE(ids.empty());
}

TEST(NameFeaturizerTest, ValidationNamesTheField) {
  NameFeaturizerOptions o;
  o.buckets = 10;
  EXPECT_THAT(ValidateNameFeaturizerOptions(o).message(), HasSubstr("features.buckets"));
  o = {};
  o.max_ngram = 2;
  EXPECT_THAT(ValidateNameFeaturizerOptions(o).message(), HasSubstr("min_ngram/max_ngram"));
}

TEST(TrainedNameEncoderTest, BagWithoutMlpIsTheNormalisedWeightedMean) {
  // Every row (3, 4, 0...): whatever the features, bag = (3, 4, 0...), v = (0.6, 0.8, 0...).
  auto encoder = TrainedNameEncoder::FromWeights(ConstantWeights({3, 4, 0, 0, 0, 0, 0, 0}), "t");
  ASSERT_OK(encoder);
  ExpectVectorNear(Encode(**encoder, "heart attack"), {0.6f, 0.8f, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ((*encoder)->id(), "t");
  EXPECT_EQ((*encoder)->dim(), 8);
}

TEST(TrainedNameEncoderTest, FeatureWeightsWeighTheRows) {
  TrainedEncoderWeights w = ConstantWeights({0, 0, 0, 0, 0, 0, 0, 0});
  w.embedding[1 * 8 + 0] = 4;  // E[1] = (4, 0, ...)
  w.embedding[2 * 8 + 1] = 4;  // E[2] = (0, 4, ...)
  auto encoder = *TrainedNameEncoder::FromWeights(std::move(w), "t");
  std::vector<float> out(8);
  // bag = (1 * E[1] + 3 * E[2]) / 4 = (1, 3, 0...); v = (1, 3) / sqrt(10).
  encoder->EncodeFeatures(std::vector<int32_t>{1, 2}, std::vector<float>{1, 3}, out.data());
  const float s = std::sqrt(10.0f);
  ExpectVectorNear(out, {1 / s, 3 / s, 0, 0, 0, 0, 0, 0});
}

TEST(TrainedNameEncoderTest, ResidualMlpAddsW2ReluW1PlusBiases) {
  TrainedEncoderWeights w = ConstantWeights({3, 4, 0, 0, 0, 0, 0, 0}, /*hidden=*/1);
  w.w1[0] = 1;  // pre-activation = bag[0] + b1 = 3.5
  w.b1[0] = 0.5f;
  w.w2[2] = 2;  // h[2] += 2 * 3.5
  w.b2[3] = 1;  // h[3] += 1
  auto encoder = *TrainedNameEncoder::FromWeights(w, "t");
  const float n = std::sqrt(9.0f + 16 + 49 + 1);
  ExpectVectorNear(Encode(*encoder, "fever"), {3 / n, 4 / n, 7 / n, 1 / n, 0, 0, 0, 0});

  w.b1[0] = -10;  // relu cuts the unit off: h = bag + b2
  encoder = *TrainedNameEncoder::FromWeights(w, "t");
  const float m = std::sqrt(9.0f + 16 + 1);
  ExpectVectorNear(Encode(*encoder, "fever"), {3 / m, 4 / m, 0, 1 / m, 0, 0, 0, 0});
}

TEST(TrainedNameEncoderTest, NoFeaturesOrZeroVectorGivesAllZero) {
  auto encoder = *TrainedNameEncoder::FromWeights(ConstantWeights({3, 4, 0, 0, 0, 0, 0, 0}), "t");
  ExpectVectorNear(Encode(*encoder, "?! -"), std::vector<float>(8, 0.0f));
  auto zero = *TrainedNameEncoder::FromWeights(ConstantWeights(std::vector<float>(8, 0.0f)), "t");
  ExpectVectorNear(Encode(*zero, "heart attack"), std::vector<float>(8, 0.0f));
}

TEST(TrainedNameEncoderTest, WrongSizesAreInvalidArgumentNamingTheField) {
  TrainedEncoderWeights w = ConstantWeights({1, 0, 0, 0, 0, 0, 0, 0}, 2);
  w.w1.pop_back();
  auto bad = TrainedNameEncoder::FromWeights(w, "t");
  EXPECT_THAT(
      bad, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("w1: 15 floats, expected 16")));

  w = ConstantWeights({1, 0, 0, 0, 0, 0, 0, 0});
  w.embedding.resize(100);
  EXPECT_THAT(ValidateTrainedEncoderWeights(w).message(), HasSubstr("embedding"));
  w = ConstantWeights({1, 0, 0, 0, 0, 0, 0, 0});
  w.b2.push_back(1);  // hidden == 0 takes no b2
  EXPECT_THAT(ValidateTrainedEncoderWeights(w).message(), HasSubstr("b2"));
  w = ConstantWeights({1, 0, 0, 0, 0, 0, 0, 0});
  w.dim = 4;
  EXPECT_THAT(ValidateTrainedEncoderWeights(w).message(), HasSubstr("dim: 4 outside"));
  EXPECT_THAT(
      TrainedNameEncoder::FromWeights(ConstantWeights({1, 0, 0, 0, 0, 0, 0, 0}), "").status(),
      StatusIs(absl::StatusCode::kInvalidArgument));
}

class TrainedEncoderArtifactTest : public ::testing::Test {
 protected:
  common::test_util::ScratchDir base_{"trained-encoder"};
  TrainedEncoderWeights weights_ = RandomWeights(2048, 16, 8, 7);
  TrainedEncoderArtifactInfo info_{"abc123", "{\"seed\":7}", "{\"acc1\":0.5}", 1.5, "test"};
};

TEST_F(TrainedEncoderArtifactTest, PublishOpenRoundTripGivesIdenticalVectors) {
  absl::StatusOr<std::string> dir = PublishTrainedEncoder(base_.path(), weights_, info_);
  ASSERT_OK(dir);
  EXPECT_EQ(*dir, (fs::path(base_.path()) / "encoder" / "1").string());
  auto opened = TrainedNameEncoder::Open(*dir);
  ASSERT_OK(opened);
  EXPECT_THAT((*opened)->id(), MatchesRegex("trained-name-v1-d16-[0-9a-f]{12}"));
  const std::string sha = *common::Sha256HexOfFile(*dir + "/weights.bin");
  EXPECT_EQ((*opened)->id(), TrainedEncoderId(16, sha));
  auto direct = *TrainedNameEncoder::FromWeights(weights_, (*opened)->id());
  for (const std::string text : {"myocardial infarction", "Type 2 diabetes mellitus", "CRF"}) {
    EXPECT_EQ(Encode(**opened, text), Encode(*direct, text)) << text;
  }
  const std::string manifest = *common::ReadFileToString(*dir + "/manifest.json");
  EXPECT_THAT(manifest, AllOf(HasSubstr("\"kind\": \"trained-name-v1\""),
                              HasSubstr("\"training_data_digest\": \"abc123\""),
                              HasSubstr(absl::StrCat("\"weights_sha256\": \"", sha, "\""))));
}

TEST_F(TrainedEncoderArtifactTest, OpenEncoderByIdFindsTrainedAndRebuildsHash) {
  const std::string first = *PublishTrainedEncoder(base_.path(), weights_, info_);
  const std::string second =
      *PublishTrainedEncoder(base_.path(), RandomWeights(1024, 8, 0, 3), info_);
  EXPECT_THAT(second, HasSubstr("/encoder/2"));
  const std::string id = (*TrainedNameEncoder::Open(first))->id();
  auto by_id = OpenEncoderById(base_.path(), id);
  ASSERT_OK(by_id);
  EXPECT_EQ((*by_id)->id(), id);
  EXPECT_EQ((*by_id)->dim(), 16);

  for (const std::string hash_id : {"hash-ngram-v1-d256", "hash-ngram-v1-d64-n2-4-u3-b0.5"}) {
    auto hash = OpenEncoderById(base_.path(), hash_id);
    ASSERT_OK(hash);
    EXPECT_EQ((*hash)->id(), hash_id);
  }
  HashNgramEncoderOptions defaults;
  EXPECT_EQ(Encode(**OpenEncoderById("", "hash-ngram-v1-d256"), "fever"),
            Encode(**HashNgramEncoder::Create(defaults), "fever"));
  EXPECT_THAT(OpenEncoderById("", "hash-ngram-v1-dx"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// One open encoder per base and id while it is held (the all-in-one's alignment and retriever
// share the trained table); another id, another base or a released encoder opens anew.
TEST_F(TrainedEncoderArtifactTest, SharedEncoderByIdOpensEachEncoderOnce) {
  const std::string first = *PublishTrainedEncoder(base_.path(), weights_, info_);
  ASSERT_OK(PublishTrainedEncoder(base_.path(), RandomWeights(1024, 8, 0, 3), info_));
  const std::string id = (*TrainedNameEncoder::Open(first))->id();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const TextEncoder> a, SharedEncoderById(base_.path(), id));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const TextEncoder> b,
                       SharedEncoderById(base_.path() + "/", id));  // the same base, spelled so
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(a->id(), id);
  EncoderSpec spec;
  spec.kind = "bundle";
  spec.base_path = base_.path();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const TextEncoder> for_manifest,
                       EncoderForManifest(spec, id));
  EXPECT_EQ(for_manifest.get(), a.get());
  // The same id under another base is another file: not shared.
  const common::test_util::ScratchDir other("trained-encoder-other-base");
  ASSERT_OK(PublishTrainedEncoder(other.path(), weights_, info_));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const TextEncoder> elsewhere,
                       SharedEncoderById(other.path(), id));
  EXPECT_NE(elsewhere.get(), a.get());
  EXPECT_EQ(Encode(*elsewhere, "fever"), Encode(*a, "fever"));
  // Held by nobody, an encoder is not kept: the next call opens it again.
  std::weak_ptr<const TextEncoder> released = a;
  a.reset();
  b.reset();
  for_manifest.reset();
  EXPECT_TRUE(released.expired());
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const TextEncoder> again,
                       SharedEncoderById(base_.path(), id));
  EXPECT_EQ(again->id(), id);
  // Hashed encoders are keyed by id alone; errors are OpenEncoderById's.
  ASSERT_OK_AND_ASSIGN(auto h1, SharedEncoderById("", "hash-ngram-v1-d256"));
  ASSERT_OK_AND_ASSIGN(auto h2, SharedEncoderById(base_.path(), "hash-ngram-v1-d256"));
  EXPECT_EQ(h1.get(), h2.get());
  EXPECT_THAT(SharedEncoderById(base_.path(), "trained-name-v1-d16-000000000000"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(TrainedEncoderArtifactTest, UnknownIdIsNotFoundNamingIdPlaceVersionsAndFix) {
  ASSERT_OK(PublishTrainedEncoder(base_.path(), weights_, info_));
  const absl::Status missing =
      OpenEncoderById(base_.path(), "trained-name-v1-d16-000000000000").status();
  EXPECT_THAT(missing, StatusIs(absl::StatusCode::kNotFound,
                                AllOf(HasSubstr("trained-name-v1-d16-000000000000"),
                                      HasSubstr(fs::path(base_.path()) / "encoder"),
                                      HasSubstr("versions present: 1 (trained-name-v1-d16-"),
                                      HasSubstr("rebuild with `ibgr artifacts build`"))));
  EXPECT_THAT(OpenEncoderById(base_.path(), "wordvec-bio-n10-d200"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(TrainedEncoderArtifactTest, TruncatedOrCorruptedWeightsAreDataLoss) {
  const std::string dir = *PublishTrainedEncoder(base_.path(), weights_, info_);
  const std::string path = dir + "/weights.bin";
  const std::string bytes = *common::ReadFileToString(path);

  ASSERT_OK(common::WriteStringToFileAtomic(path, bytes.substr(0, bytes.size() - 4)));
  absl::Status truncated = TrainedNameEncoder::Open(dir).status();
  EXPECT_THAT(truncated, StatusIs(absl::StatusCode::kDataLoss,
                                  AllOf(HasSubstr(path), HasSubstr("truncated"))));

  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  ASSERT_OK(common::WriteStringToFileAtomic(path, flipped));
  absl::Status corrupted = TrainedNameEncoder::Open(dir).status();
  EXPECT_THAT(corrupted, StatusIs(absl::StatusCode::kDataLoss,
                                  AllOf(HasSubstr(path), HasSubstr("manifest says"))));

  EXPECT_THAT(
      ParseTrainedEncoderWeights("IBGRXXXX and more bytes of header......", "x.bin").status(),
      StatusIs(absl::StatusCode::kDataLoss));
}

TEST_F(TrainedEncoderArtifactTest, LocalAlignerOpensTheBundlesTrainedEncoderById) {
  const std::string dir = *PublishTrainedEncoder(base_.path(), weights_, info_);
  auto trained = *TrainedNameEncoder::Open(dir);
  BundleBuildOptions build;
  build.base_path = base_.path();
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), *trained, build));

  LocalAlignerOptions local;  // no encoder named: the bundle's, by id
  local.base_path = base_.path();
  auto aligner = OpenLocalAligner(local);
  ASSERT_OK(aligner);
  EXPECT_EQ((*aligner)->encoder().id(), trained->id());

  local.encoder.kind = "trained";  // trained without a pin: also the bundle's
  EXPECT_OK(OpenLocalAligner(local));
  local.encoder = EncoderSpec();  // the hash encoder: the existing refusal
  EXPECT_THAT(OpenLocalAligner(local), StatusIs(absl::StatusCode::kFailedPrecondition));

  // The encoder the bundle names is gone, and no aligner holds it any more (one that did would
  // share its loaded copy: SharedEncoderById).
  aligner->reset();
  fs::remove_all(dir);
  local.encoder = EncoderSpec{"bundle"};
  const absl::Status gone = OpenLocalAligner(local).status();
  EXPECT_THAT(gone, StatusIs(absl::StatusCode::kNotFound,
                             AllOf(HasSubstr(trained->id()), HasSubstr("ibgr artifacts build"))));
}

TEST_F(TrainedEncoderArtifactTest, TrainedKindRefusesAHashBundle) {
  std::unique_ptr<TextEncoder> hash = *HashNgramEncoder::Create(HashNgramEncoderOptions());
  BundleBuildOptions build;
  build.base_path = base_.path();
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), *hash, build));
  LocalAlignerOptions local;
  local.base_path = base_.path();
  EXPECT_OK(OpenLocalAligner(local));  // default: the bundle's hash encoder, by id
  local.encoder.kind = "trained";
  const absl::Status refused = OpenLocalAligner(local).status();
  EXPECT_THAT(refused,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("hash-ngram-v1-d256")));
}

TEST_F(TrainedEncoderArtifactTest, CreateTextEncoderOpensAPinnedTrainedVersion) {
  ASSERT_OK(PublishTrainedEncoder(base_.path(), weights_, info_));
  EncoderSpec spec;
  spec.kind = "trained";
  spec.base_path = base_.path();
  spec.trained.version = 1;
  auto encoder = CreateTextEncoder(spec);
  ASSERT_OK(encoder);
  EXPECT_THAT((*encoder)->id(), HasSubstr("trained-name-v1-d16-"));
  spec.trained.version = 7;
  EXPECT_THAT(CreateTextEncoder(spec), StatusIs(absl::StatusCode::kNotFound));
  spec.trained.version = 0;  // no pin: only an artifact's manifest can say which
  EXPECT_THAT(CreateTextEncoder(spec), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace ibgraphrag::alignment
