#include "services/alignment/aligner.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/openai_client.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/alignment/alignment_api.h"
#include "services/alignment/bundle.h"
#include "services/alignment/calibrated_scores.h"
#include "services/alignment/testing/test_fixtures.h"

namespace ibgraphrag::alignment {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

// Hand-computed MSCA numbers for TinyLexicon + KeywordEncoder (dims heart, lung, fever) and the
// question "Heart attack or pneumonia with fever": v_Q = (1, 0, 1)/sqrt(2).
//   S0 = 1/sqrt(2) = 0.70711   S1 = 1/2 = 0.5   S2 = 2/sqrt(10) = 0.63246
//   cos(0,1) = 0   cos(0,2) = 2/sqrt(5) = 0.89443   cos(1,2) = 1/sqrt(10) = 0.31623
//   R0 = 0.44721   R1 = 0.15811   R2 = 0.60533
//   C = 0.6 S + 0.4 R: C0 = 0.60315   C1 = 0.36325   C2 = 0.62161
constexpr char kQuestion[] = "Heart attack or pneumonia with fever";
constexpr float kS[] = {0.70711f, 0.5f, 0.63246f};
constexpr float kR[] = {0.44721f, 0.15811f, 0.60533f};
constexpr float kC[] = {0.60315f, 0.36325f, 0.62161f};

// The same question with calibrated scores (ScoreCalibration in bundle.h). With three entries
// every entry is a reference entity and the relatedness null is all three pairs:
//   question null: mean(S) = 0.61319, population sd = 0.085644
//     z = (S - mean) / sd = 1.0966, -1.3216, 0.22500;  S* = clamp(z / 5, 0, 1)
//       = 0.21932, 0, 0.04500; "heart attack" and "pneumonia" name entities 0 and 1 in the
//       dictionary, so S*0 = S*1 = max(S*, 0.9) = 0.9; heart failure was only proposed by
//       "heart attack", which names MI, so it is a look-alike: S*2 = 0.045 * (1 - 0.9) = 0.0045
//   relatedness null: pairs 0, 0.89443, 0.31623: mean 0.40355, population sd 0.37034
//     z = (R - mean) / sd = 0.11789, -0.66279, 0.54481;  R* = clamp(z / 8, 0, 1)
//       = 0.014736, 0, 0.068101
//   C* = 0.6 S* + 0.4 R* = 0.54589, 0.54000, 0.02994
constexpr float kCalibratedS[] = {0.9f, 0.9f, 0.0045f};
constexpr float kCalibratedR[] = {0.014736f, 0.0f, 0.068101f};
constexpr float kCalibratedC[] = {0.54589f, 0.54000f, 0.02994f};

class AlignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = common::test_util::MakeTempDir("align-aligner");
    encoder_ = std::make_shared<testing::KeywordEncoder>();
    BundleBuildOptions build;
    build.base_path = base_;
    auto built = BuildAlignmentBundle(testing::TinyLexicon(), *encoder_, build);
    ASSERT_OK(built);
    built_ = *built;
    auto bundle = LoadAlignmentBundle(built_.dir);
    ASSERT_OK(bundle);
    bundle_ = *bundle;
    aligner_ = MakeAligner(nullptr);
  }
  std::unique_ptr<Aligner> MakeAligner(std::shared_ptr<const common::OpenAiClient> llm) {
    auto aligner = Aligner::Create(bundle_, encoder_, std::move(llm));
    EXPECT_OK(aligner);
    return aligner.ok() ? *std::move(aligner) : nullptr;
  }
  // The paper's raw cosines (no calibration), K = 3, no LLM step.
  static MscaOptions RawOptions() {
    MscaOptions options;
    options.top_k = 3;
    options.llm_choice_below = 0;
    options.calibrated = false;
    return options;
  }
  static const ScoredEntity* Find(const std::vector<ScoredEntity>& list, const std::string& id) {
    for (const ScoredEntity& s : list) {
      if (s.candidate.external_id == id) return &s;
    }
    return nullptr;
  }

  std::string base_;
  std::shared_ptr<const TextEncoder> encoder_;
  BundleBuildResult built_;
  std::shared_ptr<const AlignmentBundle> bundle_;
  std::unique_ptr<Aligner> aligner_;
};

TEST_F(AlignerTest, ScoresMatchHandComputedSRC) {
  MscaOptions options = RawOptions();
  auto result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  ASSERT_EQ(result->mentions.size(), 2u);
  EXPECT_FALSE(result->effective.calibrated);
  const char* ids[] = {"DOID:5844", "DOID:552", "DOID:6000"};
  for (int i = 0; i < 3; ++i) {
    const ScoredEntity* s = Find(result->kept, ids[i]);
    if (s == nullptr) s = Find(result->rejected, ids[i]);
    ASSERT_NE(s, nullptr) << ids[i];
    EXPECT_NEAR(s->question_similarity, kS[i], 1e-4) << ids[i];
    EXPECT_NEAR(s->relatedness, kR[i], 1e-4) << ids[i];
    EXPECT_NEAR(s->consistency, kC[i], 1e-4) << ids[i];
    EXPECT_EQ(s->raw_question_similarity, s->question_similarity) << ids[i];
    EXPECT_EQ(s->raw_relatedness, s->relatedness) << ids[i];
  }
}

TEST_F(AlignerTest, CalibratedScoresMatchHandComputation) {
  const ScoreCalibration& cal = bundle_->manifest.calibration;
  EXPECT_EQ(cal.method, "null-z-v1");
  EXPECT_EQ(cal.reference_entries, 3);
  EXPECT_NEAR(cal.relatedness_null_mean, 0.40355f, 1e-4);
  EXPECT_NEAR(cal.relatedness_null_sd, 0.37034f, 1e-4);
  MscaOptions options = RawOptions();
  options.calibrated = true;
  auto result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  EXPECT_TRUE(result->effective.calibrated);
  const char* ids[] = {"DOID:5844", "DOID:552", "DOID:6000"};
  for (int i = 0; i < 3; ++i) {
    const ScoredEntity* s = Find(result->kept, ids[i]);
    if (s == nullptr) s = Find(result->rejected, ids[i]);
    ASSERT_NE(s, nullptr) << ids[i];
    EXPECT_EQ(s->candidate.dictionary_match, i < 2) << ids[i];
    EXPECT_EQ(s->lookalike, i == 2) << ids[i];
    EXPECT_NEAR(s->raw_question_similarity, kS[i], 1e-4) << ids[i];
    EXPECT_NEAR(s->raw_relatedness, kR[i], 1e-4) << ids[i];
    EXPECT_NEAR(s->question_similarity, kCalibratedS[i], 1e-4) << ids[i];
    EXPECT_NEAR(s->relatedness, kCalibratedR[i], 1e-4) << ids[i];
    EXPECT_NEAR(s->consistency, kCalibratedC[i], 1e-4) << ids[i];
  }
  // tau 0.545 keeps only MI (0.5459); the named entities pass a tau the unnamed one cannot.
  options.tau = 0.545f;
  result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size(), 1u);
  EXPECT_EQ(result->kept[0].candidate.external_id, "DOID:5844");
  // Calibration is recorded in the manifest and survives a reload.
  auto reloaded = LoadAlignmentBundle(built_.dir);
  ASSERT_OK(reloaded);
  EXPECT_EQ((*reloaded)->manifest.calibration.reference_entries, 3);
  EXPECT_NEAR((*reloaded)->manifest.calibration.question_full_z, 5.0f, 1e-6);
  EXPECT_NEAR((*reloaded)->manifest.calibration.dictionary_evidence, 0.9f, 1e-6);
}

TEST_F(AlignerTest, BundleWithoutCalibrationIsFittedWhenLoaded) {
  // A manifest written before calibration existed: the loader fits the same calibration.
  const std::string path = built_.dir + "/manifest.json";
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  in.close();
  j.erase("score_calibration");
  std::ofstream(path) << j.dump(2);
  auto bundle = LoadAlignmentBundle(built_.dir);
  ASSERT_OK(bundle);
  EXPECT_EQ((*bundle)->manifest.calibration.reference_entries, 3);
  EXPECT_NEAR((*bundle)->manifest.calibration.relatedness_null_mean, 0.40355f, 1e-4);
}

// The question's null from the reference rows' moments (dim < rows) equals the one from its
// cosine with every reference row, on unit rows sharing a component as trained embeddings do (mean
// cosine ~0.3, sd ~0.05: a variance far below the mean square).
TEST(QuestionNullTest, FromTheMomentsEqualsTheCosinesMeanAndSd) {
  constexpr int kDim = 256;
  constexpr int kRows = 1024;
  AlignmentBundle bundle;
  bundle.manifest.dim = kDim;
  bundle.manifest.calibration.reference_entries = kRows;
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> shared(kDim);
  for (float& x : shared) x = noise(rng);
  auto unit = [](std::vector<float> v) {
    double norm = 0;
    for (float x : v) norm += static_cast<double>(x) * x;
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
    return v;
  };
  shared = unit(shared);
  auto sample = [&](float shared_weight) {
    std::vector<float> v(kDim);
    for (int i = 0; i < kDim; ++i) v[i] = shared_weight * shared[i] + 0.06f * noise(rng);
    return unit(std::move(v));
  };
  for (int r = 0; r < kRows; ++r) {
    const std::vector<float> row = sample(0.7f);
    bundle.reference_enriched.insert(bundle.reference_enriched.end(), row.begin(), row.end());
  }
  ComputeReferenceMoments(&bundle);
  ASSERT_EQ(bundle.reference_mean.size(), static_cast<size_t>(kDim));
  ASSERT_EQ(bundle.reference_covariance.size(), static_cast<size_t>(kDim) * kDim);
  for (int trial = 0; trial < 5; ++trial) {
    const std::vector<float> q = sample(trial % 2 == 0 ? 0.6f : 0.0f);
    double sum = 0, sum2 = 0;
    for (int r = 0; r < kRows; ++r) {
      double cos = 0;
      for (int i = 0; i < kDim; ++i) {
        cos += static_cast<double>(bundle.reference_enriched[r * kDim + i]) * q[i];
      }
      sum += cos;
      sum2 += cos * cos;
    }
    const double mean = sum / kRows;
    const double sd = std::sqrt(std::max(0.0, sum2 / kRows - mean * mean));
    const QuestionNull null = QuestionNullOf(bundle, q.data());
    EXPECT_NEAR(null.mean, mean, 1e-6) << trial;
    EXPECT_NEAR(null.sd, sd, 1e-4 * sd) << trial;
    if (trial % 2 == 0) EXPECT_GT(mean, 0.2) << "the shared component should dominate";
  }
  // With dim >= rows the direct loop is as cheap: no moments, and the loop's figures.
  AlignmentBundle small;
  small.manifest.dim = kDim;
  small.manifest.calibration.reference_entries = 4;
  small.reference_enriched.assign(bundle.reference_enriched.begin(),
                                  bundle.reference_enriched.begin() + 4 * kDim);
  ComputeReferenceMoments(&small);
  EXPECT_TRUE(small.reference_mean.empty());
  EXPECT_TRUE(small.reference_covariance.empty());
  EXPECT_GT(QuestionNullOf(small, shared.data()).sd, 0.0);
}

TEST_F(AlignerTest, AlignDropsEntitiesBelowTauAndSortsKeptByConsistency) {
  MscaOptions options = RawOptions();
  auto result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size(), 2u);
  EXPECT_EQ(result->kept[0].candidate.external_id, "DOID:6000");  // C 0.622
  EXPECT_EQ(result->kept[1].candidate.external_id, "DOID:5844");  // C 0.603
  ASSERT_EQ(result->rejected.size(), 1u);
  EXPECT_EQ(result->rejected[0].candidate.external_id, "DOID:552");  // C 0.363 < 0.6
  EXPECT_EQ(result->kept[1].source_ids, (std::vector<std::string>{"DOID:5844", "UMLS:C0027051"}));
  EXPECT_EQ(result->kept[1].candidate.kg_id, 10u);
  // lambda = 0 keeps only S: 0.707 and 0.632 pass tau 0.6, 0.5 does not; tau 0.65 keeps one.
  options.lambda = 0;
  options.tau = 0.65f;
  result = aligner_->Align(kQuestion, options);
  ASSERT_EQ(result->kept.size(), 1u);
  EXPECT_NEAR(result->kept[0].consistency, kS[0], 1e-4);
}

TEST_F(AlignerTest, RelatednessIsZeroForALoneCandidate) {
  MscaOptions options;
  options.top_k = 1;
  options.llm_choice_below = 0;
  auto result = aligner_->Align("pneumonia", options);
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size() + result->rejected.size(), 1u);
  const ScoredEntity& s = result->kept.empty() ? result->rejected[0] : result->kept[0];
  EXPECT_EQ(s.relatedness, 0.0f);
  EXPECT_NEAR(s.consistency, 0.6f * s.question_similarity, 1e-6);
}

TEST_F(AlignerTest, MscaOffKeepsTopOnePerMentionWithoutFilter) {
  MscaOptions options;
  options.msca_enabled = false;
  auto result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  ASSERT_EQ(result->kept.size(), 2u);
  EXPECT_TRUE(result->rejected.empty());
  std::vector<std::string> ids = {result->kept[0].candidate.external_id,
                                  result->kept[1].candidate.external_id};
  // The dictionary match wins the tie with "heart failure" (both cosine 1 to "heart attack").
  EXPECT_THAT(ids, ::testing::UnorderedElementsAre("DOID:5844", "DOID:552"));
  EXPECT_TRUE(result->degraded.empty());
}

TEST_F(AlignerTest, FewSurvivorsWithoutLlmSkipTheStepWithoutDegrading) {
  // No LLM configured is a deployment choice, not a degradation (that is for a configured LLM
  // that fails).
  MscaOptions options = RawOptions();
  options.llm_choice_below = 5;
  auto result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty());
  EXPECT_EQ(result->kept.size(), 2u);
}

TEST_F(AlignerTest, LlmSelectionMovesTheChosenCandidateToKept) {
  auto server = common::test_util::FakeOpenAiServer::Start();
  ASSERT_OK(server);
  (*server)->SetDefault(common::test_util::FakeResponse::Completion(
      R"(Sure. {"selected_entity": {"name": "pneumonia", "id": "DOID:552", "reason": "named"}})"));
  common::OpenAiClientOptions config;
  config.name = "test";
  config.base_url = (*server)->base_url();
  config.model = "m";
  auto llm = common::OpenAiClient::Create(config);
  ASSERT_OK(llm);
  auto aligner = MakeAligner(std::shared_ptr<const common::OpenAiClient>(std::move(*llm)));
  MscaOptions options = RawOptions();
  options.llm_choice_below = 5;
  options.llm_step = LlmStep::kRescueRejected;
  auto result = aligner->Align(kQuestion, options);
  ASSERT_OK(result);
  EXPECT_TRUE(result->degraded.empty());
  ASSERT_EQ(result->kept.size(), 3u);
  EXPECT_TRUE(result->kept.back().chosen_by_llm);
  EXPECT_EQ(result->kept.back().candidate.external_id, "DOID:552");
  EXPECT_TRUE(result->rejected.empty());
  const std::string body = (*server)->requests()[0].body;
  EXPECT_THAT(body, HasSubstr("selected_entity"));
  EXPECT_THAT(body, HasSubstr("DOID:552"));

  // "NONE" keeps the threshold result; garbage is a degradation, not an error.
  (*server)->Enqueue(common::test_util::FakeResponse::Completion("NONE"));
  result = aligner->Align(kQuestion, options);
  ASSERT_OK(result);
  EXPECT_EQ(result->kept.size(), 2u);
  (*server)->Enqueue(common::test_util::FakeResponse::Completion("I think pneumonia"));
  result = aligner->Align(kQuestion, options);
  ASSERT_OK(result);
  ASSERT_EQ(result->degraded.size(), 1u);
  EXPECT_THAT(result->degraded[0].reason, HasSubstr("LLM selection failed"));
}

TEST_F(AlignerTest, LlmMentionsAreMergedWithoutOverlapsOrInventions) {
  auto server = common::test_util::FakeOpenAiServer::Start();
  ASSERT_OK(server);
  (*server)->SetDefault(
      common::test_util::FakeResponse::Completion(R"(["heart attack", "fever", "lupus"])"));
  common::OpenAiClientOptions config;
  config.name = "test";
  config.base_url = (*server)->base_url();
  config.model = "m";
  auto aligner = MakeAligner(std::move(*common::OpenAiClient::Create(config)));
  auto result = aligner->ExtractMentions("No heart attack, no fever.", true);
  ASSERT_OK(result);
  ASSERT_EQ(result->mentions.size(), 2u);
  EXPECT_EQ(result->mentions[0].origin, "dictionary");
  EXPECT_EQ(result->mentions[1].origin, "llm");
  EXPECT_EQ(result->mentions[1].text, "fever");
  EXPECT_TRUE(result->mentions[1].negated);
  EXPECT_TRUE(result->degraded.empty());
  // Without an LLM the request still succeeds, flagged as degraded.
  result = aligner_->ExtractMentions("No heart attack, no fever.", true);
  ASSERT_OK(result);
  EXPECT_EQ(result->mentions.size(), 1u);
  ASSERT_EQ(result->degraded.size(), 1u);
}

TEST_F(AlignerTest, InvalidInputNamesTheField) {
  MscaOptions options;
  EXPECT_THAT(aligner_->Align("", options).status().message(), HasSubstr("text"));
  EXPECT_THAT(aligner_->Align(std::string(16 * 1024 + 1, 'a'), options).status().message(),
              HasSubstr("16 KiB"));
  EXPECT_THAT(aligner_->Align("bad \xFF", options).status().message(), HasSubstr("UTF-8"));
  options.lambda = 1.5f;
  EXPECT_THAT(aligner_->Align("x", options).status().message(), HasSubstr("lambda"));
  options = MscaOptions();
  options.tau = -0.1f;
  EXPECT_THAT(aligner_->Align("x", options).status().message(), HasSubstr("tau"));
  options = MscaOptions();
  options.top_k = 1001;
  EXPECT_THAT(aligner_->Align("x", options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("top_k")));
  options.lambda = std::nanf("");
  EXPECT_THAT(aligner_->Align("x", options), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(AlignerTest, LinkReturnsTopKDistinctEntitiesPerMention) {
  auto result = aligner_->Link("heart attack", 2);
  ASSERT_OK(result);
  ASSERT_EQ(result->links.size(), 1u);
  const auto& c = result->links[0].candidates;
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].external_id, "DOID:5844");
  EXPECT_TRUE(c[0].dictionary_match);
  EXPECT_EQ(c[0].matched_name, "heart attack");
  EXPECT_NEAR(c[0].similarity, 1.0f, 1e-5);
  EXPECT_EQ(c[1].external_id, "DOID:6000");
}

TEST_F(AlignerTest, EncoderMismatchIsRefused) {
  auto other =
      std::make_shared<testing::KeywordEncoder>(std::vector<std::string>{"heart", "lung", "cough"});
  auto wrong_dim = std::make_shared<testing::KeywordEncoder>(std::vector<std::string>{"a", "b"});
  EXPECT_THAT(Aligner::Create(bundle_, wrong_dim, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  HashNgramEncoderOptions hash;
  std::shared_ptr<const TextEncoder> h = *HashNgramEncoder::Create(hash);
  auto status = Aligner::Create(bundle_, h, nullptr).status();
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("hash-ngram-v1-d256")));
  (void)other;
}

TEST_F(AlignerTest, BundleIsVersionedWithManifestAndNoTempLeftovers) {
  EXPECT_EQ(built_.manifest.version, 1);
  EXPECT_EQ(built_.manifest.encoder_id, "keyword-test-d3");
  EXPECT_EQ(built_.manifest.entries, 3);
  EXPECT_EQ(built_.manifest.index_rows, 5);  // 3 names for MI, 1 each for the others
  EXPECT_EQ(built_.manifest.index_kind, "flat");
  BundleBuildOptions build;
  build.base_path = base_;
  auto second = BuildAlignmentBundle(testing::TinyLexicon(), *encoder_, build);
  ASSERT_OK(second);
  EXPECT_EQ(second->manifest.version, 2);
  build.version = 2;
  EXPECT_THAT(BuildAlignmentBundle(testing::TinyLexicon(), *encoder_, build),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(*ListBundleVersions(base_), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(*ResolveBundleDir(base_, std::nullopt), second->dir);
  EXPECT_THAT(ResolveBundleDir(base_, 7), StatusIs(absl::StatusCode::kNotFound));
  for (const auto& e : std::filesystem::directory_iterator(base_ + "/alignment")) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos);
  }
  std::ifstream in(built_.dir + "/manifest.json");
  const nlohmann::json m = nlohmann::json::parse(in);
  EXPECT_EQ(m["dim"], 3);
  EXPECT_EQ(m["source_hash"], "0");
  EXPECT_FALSE(m["created_time"].get<std::string>().empty());
}

TEST_F(AlignerTest, HnswIndexFindsTheSameTopCandidate) {
  BundleBuildOptions build;
  build.base_path = common::test_util::MakeTempDir("align-aligner-hnsw");
  build.index.kind = IndexKind::kHnsw;
  HashNgramEncoderOptions hash;
  std::shared_ptr<const TextEncoder> h = *HashNgramEncoder::Create(hash);
  auto built = BuildAlignmentBundle(testing::TinyLexicon(), *h, build);
  ASSERT_OK(built);
  EXPECT_EQ(built->manifest.index_kind, "hnsw");
  auto bundle = LoadAlignmentBundle(built->dir);
  ASSERT_OK(bundle);
  auto aligner = Aligner::Create(*bundle, h, nullptr);
  ASSERT_OK(aligner);
  auto link = (*aligner)->Link("Known MI, heart attacks", 1);
  ASSERT_OK(link);
  ASSERT_EQ(link->links.size(), 2u);
  EXPECT_EQ(link->links[0].candidates[0].external_id, "DOID:5844");  // MI -> its expansion
  EXPECT_EQ(link->links[1].candidates[0].external_id, "DOID:5844");
}

TEST_F(AlignerTest, CorruptBundleFilesAreDataLoss) {
  std::filesystem::resize_file(built_.dir + "/enriched.f32", 20);
  EXPECT_THAT(LoadAlignmentBundle(built_.dir), StatusIs(absl::StatusCode::kDataLoss));
}

TEST_F(AlignerTest, FormatsTableAndJson) {
  MscaOptions options = RawOptions();
  auto result = aligner_->Align(kQuestion, options);
  ASSERT_OK(result);
  const std::string table = FormatAlignResultTable(*result);
  EXPECT_THAT(table, HasSubstr("kept (2)"));
  EXPECT_THAT(table, HasSubstr("heart failure"));
  const nlohmann::json j = nlohmann::json::parse(FormatAlignResultJson(*result));
  EXPECT_EQ(j["kept"].size(), 2u);
  EXPECT_EQ(j["rejected"][0]["external_id"], "DOID:552");
  EXPECT_TRUE(j["timings_ms"].contains("score"));
  EXPECT_EQ(j["calibrated"], false);
  EXPECT_TRUE(j["kept"][0].contains("raw_question_similarity"));
}

TEST_F(AlignerTest, OpenLocalAlignerChecksTheEncoder) {
  LocalAlignerOptions options;
  options.base_path = base_;
  auto aligner = OpenLocalAligner(options);  // default hash encoder vs keyword bundle
  EXPECT_THAT(aligner, StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace ibgraphrag::alignment
