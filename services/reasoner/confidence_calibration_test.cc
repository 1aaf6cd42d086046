#include "services/reasoner/confidence_calibration.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/reasoner/extractive_reasoner.h"
#include "services/reasoner/reasoner.h"

namespace ibgraphrag::reasoner {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Draws n rows (1, x1, x2) with x ~ U(-2, 2) and labels from sigmoid(w . x) with a fixed seed.
void SyntheticLogistic(const std::vector<double>& w, int n, std::vector<std::vector<double>>* x,
                       std::vector<double>* y) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> feature(-2.0, 2.0);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int i = 0; i < n; ++i) {
    std::vector<double> row = {1.0, feature(rng), feature(rng)};
    x->push_back(row);
    y->push_back(coin(rng) < LogisticProbability(w, row) ? 1 : 0);
  }
}

TEST(LogisticFitTest, RecoversAKnownModelAndIsDeterministic) {
  const std::vector<double> truth = {-0.5, 1.5, -1.0};
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  SyntheticLogistic(truth, 20000, &x, &y);
  LogisticFitOptions options;
  options.l2 = 1e-6;
  auto fitted = FitLogistic(x, y, options);
  ASSERT_OK(fitted);
  ASSERT_EQ(fitted->size(), 3u);
  for (size_t j = 0; j < truth.size(); ++j) EXPECT_NEAR((*fitted)[j], truth[j], 0.08) << j;
  auto again = FitLogistic(x, y, options);
  ASSERT_OK(again);
  EXPECT_EQ(*fitted, *again);
}

TEST(LogisticFitTest, PenaltyShrinksWeightsAndKeepsSeparableDataFinite) {
  // Perfectly separable: without a penalty the weight would grow without bound.
  std::vector<std::vector<double>> x = {{1, -2}, {1, -1}, {1, 1}, {1, 2}};
  std::vector<double> y = {0, 0, 1, 1};
  LogisticFitOptions options;
  options.l2 = 1.0;
  auto fitted = FitLogistic(x, y, options);
  ASSERT_OK(fitted);
  EXPECT_TRUE(std::isfinite((*fitted)[1]));
  EXPECT_GT((*fitted)[1], 0.5);
  EXPECT_LT((*fitted)[1], 10.0);
}

TEST(LogisticFitTest, RejectsEmptyAndRaggedInput) {
  EXPECT_THAT(FitLogistic({}, {}, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FitLogistic({{1, 2}, {1}}, {0, 1}, {}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FitLogistic({{1, 2}}, {1.5}, {}), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ExpectedCalibrationErrorTest, MatchesAHandComputedExample) {
  // Bin [0.8, 0.8667): two predictions at 0.8, one right -> |0.5 - 0.8| = 0.3, weight 2/4.
  // Bin [0.2, 0.2667): two predictions at 0.2, none right -> |0 - 0.2| = 0.2, weight 2/4.
  const std::vector<double> confidence = {0.8, 0.8, 0.2, 0.2};
  const std::vector<bool> correct = {true, false, false, false};
  EXPECT_NEAR(ExpectedCalibrationError(confidence, correct), 0.5 * 0.3 + 0.5 * 0.2, 1e-12);
  const std::vector<ReliabilityBin> bins = ReliabilityBins(confidence, correct);
  ASSERT_EQ(bins.size(), 15u);
  EXPECT_EQ(bins[12].count, 2);  // 0.8 * 15 = 12
  EXPECT_DOUBLE_EQ(bins[12].accuracy, 0.5);
  EXPECT_EQ(bins[3].count, 2);  // 0.2 * 15 = 3
  // Confidence 1 falls in the last bin; a perfectly calibrated set has ECE 0.
  EXPECT_NEAR(ExpectedCalibrationError({1.0, 1.0, 0.0}, {true, true, false}), 0.0, 1e-12);
  EXPECT_EQ(ExpectedCalibrationError({}, {}), 0.0);
}

TEST(ChooseThresholdTest, WilsonLowerBound) {
  EXPECT_EQ(WilsonLowerBound(0, 0, 1.2816), 0.0);
  EXPECT_DOUBLE_EQ(WilsonLowerBound(3, 4, 0.0), 0.75);
  // Hand-computed: p = 0.625, n = 16, z = 1.2816 -> 0.4652; 69 of 75 -> 0.8703.
  EXPECT_NEAR(WilsonLowerBound(10, 16, 1.2816), 0.4652, 1e-3);
  EXPECT_NEAR(WilsonLowerBound(69, 75, 1.2816), 0.8703, 1e-3);
  // All right still leaves doubt, less with more answers.
  EXPECT_LT(WilsonLowerBound(5, 5, 1.2816), 0.8);
  EXPECT_GT(WilsonLowerBound(50, 50, 1.2816), WilsonLowerBound(5, 5, 1.2816));
}

TEST(ChooseThresholdTest, TheBoundRefusesATargetReachedOnAFewAnswers) {
  // 16 answers: the top 10 are 7 right, all 16 are 10 right (62.5 %). The plain rate passes a
  // 0.6 target at every cut of 10 or more; the bound at z = 1.2816 passes none.
  std::vector<double> p;
  std::vector<bool> right;
  for (int i = 0; i < 16; ++i) {
    p.push_back(0.9 - 0.01 * i);
    right.push_back(i % 3 != 2);  // right, right, wrong, ...: 11 of 16, then the last wrong
  }
  right[15] = false;
  ASSERT_EQ(std::count(right.begin(), right.end(), true), 10);
  EXPECT_LT(ChooseThreshold(p, right, 0.6, 10, 0.0), kNeverCommit);
  EXPECT_EQ(ChooseThreshold(p, right, 0.6, 10, 1.2816), kNeverCommit);
  // Many answers at the same rate pass: 160 answers, 120 right (75 %, bound 0.70).
  std::vector<double> many_p;
  std::vector<bool> many_right;
  for (int i = 0; i < 160; ++i) {
    many_p.push_back(0.9);
    many_right.push_back(i % 4 != 0);
  }
  EXPECT_DOUBLE_EQ(ChooseThreshold(many_p, many_right, 0.6, 10, 1.2816), 0.9);
}

TEST(ChooseThresholdTest, SmallestThresholdReachingTheTarget) {
  const std::vector<double> p = {0.9, 0.8, 0.7, 0.6, 0.5, 0.4};
  const std::vector<bool> right = {true, true, false, true, false, false};
  // Committed accuracies going down: 1, 1, 2/3, 3/4, 3/5, 1/2.
  EXPECT_DOUBLE_EQ(ChooseThreshold(p, right, 0.75, 1), 0.6);
  EXPECT_DOUBLE_EQ(ChooseThreshold(p, right, 0.5, 1), 0.4);
  EXPECT_DOUBLE_EQ(ChooseThreshold(p, right, 0.75, 5), kNeverCommit);
  EXPECT_DOUBLE_EQ(ChooseThreshold(p, right, 1.0, 2), 0.8);
}

ExtractiveSignals ChoiceSignals(double top, double runner_up, int candidate) {
  ExtractiveSignals s;
  s.present = true;
  s.task = Task::kMultipleChoice;
  s.top_support = top;
  s.runner_up_support = runner_up;
  s.margin = top > 0 ? (top - runner_up) / top : 0;
  s.options_supported = runner_up > 0 ? 2 : 1;
  s.num_options = 4;
  s.topics_present = 1;
  s.topics_connected = 1;
  s.evidence_count = 10;
  s.candidate_index = candidate;
  return s;
}

// Examples where a wide margin means right and a tie-ish margin wrong, 3 times in 4.
std::vector<CalibrationExample> SeparatedExamples() {
  std::vector<CalibrationExample> examples;
  for (int i = 0; i < 80; ++i) {
    CalibrationExample e;
    const bool wide = i % 2 == 0;
    e.signals = ChoiceSignals(1.0, wide ? 0.1 : 0.95, 0);
    e.correct = wide ? (i % 8 != 0) : (i % 8 == 1);
    e.raw_confidence = 1.0;
    e.dataset = "synthetic";
    examples.push_back(e);
  }
  return examples;
}

TEST(FitCalibrationTest, FitsMultipleChoiceAndLeavesTasksWithoutExamplesOut) {
  CalibrationFitOptions options;
  options.split = "validation";
  // Overall the candidates are right half the time; only the wide-margin half reaches 0.6.
  options.target_accuracy_multiple_choice = 0.6;
  auto fitted = FitCalibration(SeparatedExamples(), options);
  ASSERT_OK(fitted);
  ASSERT_EQ(fitted->tasks_size(), 1);
  const auto& task = fitted->tasks(0);
  EXPECT_EQ(task.task(), "MULTIPLE_CHOICE");
  EXPECT_EQ(task.examples(), 80);
  EXPECT_EQ(task.split(), "validation");
  EXPECT_LT(task.ece_calibrated(), task.ece_raw());  // raw confidence 1 for everything
  // The fit's target, not a looser bound: what it commits to is right at least 60 % of the time.
  EXPECT_GE(task.accuracy_when_committed(), options.target_accuracy_multiple_choice);
  EXPECT_NEAR(task.coverage(), 0.5, 1e-9);  // exactly the wide-margin half commits
  auto model = CalibrationModel::FromProto(*fitted, "test");
  ASSERT_OK(model);
  EXPECT_EQ(model->ForTask(Task::kFactVerification, "claim"), nullptr);
  const double p_wide = CalibrationModel::Probability(task, ChoiceSignals(1.0, 0.1, 0));
  const double p_tie = CalibrationModel::Probability(task, ChoiceSignals(1.0, 0.95, 0));
  EXPECT_NEAR(p_wide, 0.75, 0.1);
  EXPECT_LT(p_tie, 0.4);
}

// KG-lookup answers: linked through the asked relation, exclusively, with sources: right 19 times
// in 20; not linked: right 1 time in 4. Clinical-reasoning answers: right half the time whatever
// the signals.
std::vector<CalibrationExample> ClassExamples() {
  std::vector<CalibrationExample> examples;
  for (int i = 0; i < 80; ++i) {
    CalibrationExample e;
    e.signals = ChoiceSignals(1.0, 0.5, 0);
    e.signals.question_class = "kg_lookup";
    const bool linked = i % 2 == 0;
    e.signals.intent_linked = linked ? 1.0 : 0.0;
    e.signals.linked_options = linked ? 1 : 0;
    e.signals.candidate_sources = linked ? 2 : 0;
    e.correct = linked ? (i % 40 != 0) : (i % 8 == 1);
    e.raw_confidence = 1.0;
    examples.push_back(e);
  }
  for (int i = 0; i < 60; ++i) {
    CalibrationExample e;
    e.signals = ChoiceSignals(1.0, 0.5, 0);
    e.signals.question_class = "clinical_reasoning";
    e.correct = i % 2 == 0;
    e.raw_confidence = 1.0;
    examples.push_back(e);
  }
  return examples;
}

// Issue 26: each class gets its own calibration, and a class whose validation answers the KG
// decides commits to them (a pooled fit used to push the threshold above 1 for everything).
TEST(FitCalibrationTest, FitsEachQuestionClassAndCommitsWhereTheKgDecides) {
  CalibrationFitOptions options;
  options.split = "validation";
  auto fitted = FitCalibration(ClassExamples(), options);
  ASSERT_OK(fitted);
  ASSERT_EQ(fitted->tasks_size(), 2);
  const auto& reasoning = fitted->tasks(0);
  const auto& lookup = fitted->tasks(1);
  EXPECT_EQ(reasoning.question_class(), "clinical_reasoning");
  EXPECT_EQ(lookup.question_class(), "kg_lookup");
  EXPECT_EQ(lookup.examples(), 80);
  EXPECT_DOUBLE_EQ(lookup.target_accuracy(), 0.85);
  EXPECT_DOUBLE_EQ(reasoning.target_accuracy(), 0.6);
  // Lookup: the linked half commits, right at least 85 % of the time.
  EXPECT_LE(lookup.threshold(), 1.0);
  EXPECT_NEAR(lookup.coverage(), 0.5, 1e-9);
  EXPECT_GE(lookup.accuracy_when_committed(), 0.85);
  // Reasoning: nothing reaches 60 %, so nothing commits.
  EXPECT_GT(reasoning.threshold(), 1.0);
  auto model = CalibrationModel::FromProto(*fitted, "test");
  ASSERT_OK(model);
  EXPECT_EQ(model->ForTask(Task::kMultipleChoice, "kg_lookup"), &model->proto().tasks(1));
  EXPECT_EQ(model->ForTask(Task::kMultipleChoice, "clinical_reasoning"), &model->proto().tasks(0));
  EXPECT_EQ(model->ForTask(Task::kMultipleChoice, ""), nullptr);
  EXPECT_TRUE(model->HasTask(Task::kMultipleChoice));
  EXPECT_FALSE(model->HasTask(Task::kFactVerification));
}

TEST(CalibrationModelTest, RefusesUnknownClassesAndTwoEntriesForOneClass) {
  auto fitted = FitCalibration(ClassExamples(), {});
  ASSERT_OK(fitted);
  artifacts::v1::ConfidenceCalibration unknown = *fitted;
  unknown.mutable_tasks(0)->set_question_class("trivia");
  EXPECT_THAT(CalibrationModel::FromProto(unknown, "c"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tasks[0].question_class: \"trivia\"")));
  artifacts::v1::ConfidenceCalibration twice = *fitted;
  *twice.add_tasks() = twice.tasks(1);
  EXPECT_THAT(CalibrationModel::FromProto(twice, "c"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
  // An entry for every class ("", fitted before classes) serves each class without its own.
  artifacts::v1::ConfidenceCalibration every = *fitted;
  every.mutable_tasks(0)->clear_question_class();
  auto model = CalibrationModel::FromProto(every, "c");
  ASSERT_OK(model);
  EXPECT_EQ(model->ForTask(Task::kMultipleChoice, "clinical_reasoning"), &model->proto().tasks(0));
  EXPECT_EQ(model->ForTask(Task::kMultipleChoice, "kg_lookup"), &model->proto().tasks(1));
}

TEST(FitCalibrationTest, AllRightFitSplitGivesLikelyNotCertain) {
  std::vector<CalibrationExample> examples = SeparatedExamples();
  for (CalibrationExample& e : examples) e.correct = true;
  auto fitted = FitCalibration(examples, {});
  ASSERT_OK(fitted);
  const double p = CalibrationModel::Probability(fitted->tasks(0), ChoiceSignals(1.0, 0.1, 0));
  EXPECT_NEAR(p, 81.0 / 82.0, 0.01);  // Platt's target for 80 right of 80
}

TEST(FitCalibrationTest, TooFewExamplesIsAFailedPrecondition) {
  std::vector<CalibrationExample> examples = SeparatedExamples();
  examples.resize(5);
  EXPECT_THAT(FitCalibration(examples, {}), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(FitCalibrationTest, ABadBoundIsRefusedNamingIt) {
  for (double z : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    CalibrationFitOptions options;
    options.accuracy_bound_z = z;
    EXPECT_THAT(FitCalibration(SeparatedExamples(), options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("accuracy_bound_z")));
  }
  // The fitted entries record the bound they were chosen with; a stored bad one is refused.
  auto fitted = FitCalibration(SeparatedExamples(), {});
  ASSERT_OK(fitted);
  EXPECT_DOUBLE_EQ(fitted->tasks(0).accuracy_bound_z(), 1.2816);
  artifacts::v1::ConfidenceCalibration bad = *fitted;
  bad.mutable_tasks(0)->set_accuracy_bound_z(-0.5);
  EXPECT_THAT(CalibrationModel::FromProto(bad, "calibration/1").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("accuracy_bound_z")));
}

TEST(CalibrationArtifactTest, PublishesAndLoadsTheNewestVersion) {
  const std::string base = common::test_util::MakeTempDir("calibration");
  auto fitted = FitCalibration(SeparatedExamples(), {});
  ASSERT_OK(fitted);
  auto none = LoadCalibrationSpec("auto", base);
  ASSERT_OK(none);
  EXPECT_EQ(*none, nullptr);
  ASSERT_OK(PublishCalibration(base, *fitted, "test"));
  auto version = PublishCalibration(base, *fitted, "test");
  ASSERT_OK(version);
  EXPECT_EQ(*version, 2);
  auto loaded = LoadCalibrationSpec("auto", base);
  ASSERT_OK(loaded);
  ASSERT_NE(*loaded, nullptr);
  EXPECT_EQ((*loaded)->label(), "calibration/2");
  EXPECT_EQ((*loaded)->proto().SerializeAsString(), fitted->SerializeAsString());
  auto file = LoadCalibrationSpec(base + "/calibration/1/calibration.json", base);
  ASSERT_OK(file);
  EXPECT_THAT((*file)->label(), HasSubstr("calibration.json"));
  EXPECT_EQ(*LoadCalibrationSpec("none", base), nullptr);
}

TEST(CalibrationArtifactTest, CorruptFilesGiveClearErrors) {
  const std::string base = common::test_util::MakeTempDir("calibration_corrupt");
  auto fitted = FitCalibration(SeparatedExamples(), {});
  ASSERT_OK(fitted);
  ASSERT_OK(PublishCalibration(base, *fitted, "test"));
  const std::string model_path = base + "/calibration/1/calibration.json";
  // A changed byte breaks the manifest's SHA-256.
  std::string json = *common::ReadFileToString(model_path);
  json[json.find("MULTIPLE_CHOICE")] = 'X';
  ASSERT_OK(common::WriteStringToFileAtomic(model_path, json));
  auto tampered = LoadCalibrationSpec("auto", base);
  EXPECT_THAT(tampered, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("SHA-256")));
  // A file that is not JSON, and one with the wrong number of weights.
  ASSERT_OK(common::WriteStringToFileAtomic(model_path, "{not json"));
  EXPECT_THAT(LoadCalibrationFile(model_path), StatusIs(absl::StatusCode::kDataLoss));
  artifacts::v1::ConfidenceCalibration short_weights = *fitted;
  short_weights.mutable_tasks(0)->mutable_weights()->RemoveLast();
  ASSERT_OK(common::WriteStringToFileAtomic(model_path, common::ProtoToJson(short_weights)));
  auto bad = LoadCalibrationFile(model_path);
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tasks[0].weights")));
  EXPECT_THAT(LoadCalibrationFile(base + "/missing.json"), StatusIs(absl::StatusCode::kNotFound));
}

// JSON has one zero; protobuf reads "-0.0" as -0 but "-0" as +0. A parsed manifest must print and
// parse back to the same bytes (the calibration fuzzer's invariant), so -0 is read as +0.
TEST(CalibrationArtifactTest, NegativeZeroReadsAsZeroAndSurvivesItsOwnRoundTrip) {
  artifacts::v1::ConfidenceCalibration calibration;
  ASSERT_OK(common::JsonToProto(R"({"tasks":[{"threshold":-0.0,"weights":[-0.0,1.5,-0e3]}]})",
                                "calibration", &calibration));
  ASSERT_EQ(calibration.tasks_size(), 1);
  EXPECT_FALSE(std::signbit(calibration.tasks(0).threshold()));
  ASSERT_EQ(calibration.tasks(0).weights_size(), 3);
  EXPECT_FALSE(std::signbit(calibration.tasks(0).weights(0)));
  EXPECT_EQ(calibration.tasks(0).weights(1), 1.5);
  EXPECT_FALSE(std::signbit(calibration.tasks(0).weights(2)));
  const std::string printed = common::ProtoToJson(calibration);
  EXPECT_THAT(printed, ::testing::Not(HasSubstr("-0")));
  artifacts::v1::ConfidenceCalibration again;
  ASSERT_OK(common::JsonToProto(printed, "printed", &again));
  EXPECT_EQ(common::ProtoToJson(again), printed);
}

TEST(CalibrationArtifactTest, ManifestRecordsWhatItWasFitOnAndStaleFeaturesAreRefused) {
  const std::string base = common::test_util::MakeTempDir("calibration_fit_on");
  auto fitted = FitCalibration(SeparatedExamples(), {});
  ASSERT_OK(fitted);
  ASSERT_OK(PublishCalibration(base, *fitted, "test", {"3", "2", "5"}));
  const std::string manifest_path = base + "/calibration/1/manifest.json";
  artifacts::v1::CalibrationManifest manifest;
  ASSERT_OK(common::JsonToProto(*common::ReadFileToString(manifest_path), "m", &manifest));
  EXPECT_EQ(manifest.features_version(), kCalibrationFeaturesVersion);
  EXPECT_EQ(manifest.kg_version(), "3");
  EXPECT_EQ(manifest.alignment_bundle_version(), "2");
  EXPECT_EQ(manifest.retriever_model_version(), "5");
  ASSERT_OK(LoadCalibrationSpec("auto", base));
  // A calibration fitted on the signals of an older build (features_version 0 or 1).
  manifest.set_features_version(1);
  ASSERT_OK(common::WriteStringToFileAtomic(manifest_path, common::ProtoToJson(manifest)));
  auto stale = LoadCalibrationSpec("auto", base);
  EXPECT_THAT(stale,
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("features_version 1")));
}

// An evidence edge between two named entities whose ids are their names prefixed with "id:".
EvidenceTriple Edge(const std::string& from, const std::string& relation, const std::string& to,
                    double score) {
  EvidenceTriple edge;
  edge.head = {"id:" + from, from};
  edge.relation = relation;
  edge.tail = {"id:" + to, to};
  edge.score = score;
  return edge;
}

// Aspirin treats the question's disease directly; metformin reaches it over two hops.
ReasonRequest MiRequest() {
  ReasonRequest request;
  request.task = Task::kMultipleChoice;
  request.question = "Which drug is used to treat myocardial infarction?";
  request.options = {"Metformin", "Aspirin", "Levothyroxine", "Omeprazole"};
  request.topic_entities = {{"id:Myocardial infarction", "myocardial infarction"}};
  request.evidence = {Edge("Aspirin", "treats", "Myocardial infarction", 0.9),
                      Edge("Metformin", "treats", "Type 2 diabetes", 0.8),
                      Edge("Type 2 diabetes", "resembles", "Myocardial infarction", 0.2)};
  return request;
}

TEST(ExtractiveSignalsTest, DescribeTheChoice) {
  const ReasonResult result =
      ReasonExtractively(MiRequest(), Task::kMultipleChoice, ExtractiveOptions());
  const ExtractiveSignals& s = result.signals;
  ASSERT_TRUE(s.present);
  EXPECT_EQ(s.task, Task::kMultipleChoice);
  EXPECT_EQ(s.candidate_index, 1);
  EXPECT_EQ(result.option_index, 1);
  EXPECT_DOUBLE_EQ(s.top_support, result.confidence);
  EXPECT_GT(s.runner_up_support, 0.0);  // metformin, two hops away
  EXPECT_GT(s.margin, 0.5);
  EXPECT_EQ(s.options_supported, 2);
  EXPECT_EQ(s.num_options, 4);
  EXPECT_EQ(s.topics_present, 1);
  EXPECT_EQ(s.topics_connected, 1);
  EXPECT_EQ(s.evidence_count, 3);
  EXPECT_FALSE(s.exception_question);
}

TEST(ExtractiveSignalsTest, CountQuestionEntityGroupsNotOptionTopics) {
  // The gateway sends option entities as topics too: they are no question entities.
  ReasonRequest request = MiRequest();
  request.topic_entities.push_back({"id:Aspirin", "aspirin"});
  request.topic_entities.push_back({"id:Metformin", "metformin"});
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  const ExtractiveSignals& s = result.signals;
  EXPECT_EQ(s.topics_present, 1);
  EXPECT_EQ(s.topics_connected, 1);
  EXPECT_LE(s.topics_connected, s.topics_present);
}

TEST(ExtractiveSignalsTest, ExceptionQuestionsDescribeTheUnsupportedCandidate) {
  ReasonRequest request = MiRequest();
  request.question = "Which drug is not used to treat myocardial infarction?";
  request.options = {"Aspirin", "Metformin", "Levothyroxine"};
  const ReasonResult result =
      ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  const ExtractiveSignals& s = result.signals;
  ASSERT_EQ(result.option_index, 2);
  EXPECT_TRUE(s.exception_question);
  EXPECT_EQ(s.candidate_index, 2);
  EXPECT_DOUBLE_EQ(s.top_support, 0.0);  // Levothyroxine's, not aspirin's
  EXPECT_GT(s.runner_up_support, 0.0);   // the best other option: aspirin
  EXPECT_DOUBLE_EQ(s.margin, 0.0);
  EXPECT_EQ(s.options_supported, 2);
  EXPECT_EQ(s.topics_present, 1);
  EXPECT_EQ(s.topics_connected, 0);
}

// A model with p = sigmoid(bias) for every answer.
CalibrationModel ConstantModel(double bias, double threshold) {
  artifacts::v1::ConfidenceCalibration proto;
  proto.set_format_version(kCalibrationFormatVersion);
  for (const std::string& name : CalibrationFeatureNames()) proto.add_feature_names(name);
  for (const char* task : {"MULTIPLE_CHOICE", "FACT_VERIFICATION"}) {
    auto* t = proto.add_tasks();
    t->set_task(task);
    t->add_weights(bias);
    for (size_t i = 0; i < CalibrationFeatureNames().size(); ++i) t->add_weights(0.0);
    t->set_threshold(threshold);
  }
  return *CalibrationModel::FromProto(proto, "calibration/7");
}

TEST(ApplyCalibrationTest, AbstainsBelowTheThresholdAndNamesTheCandidate) {
  const ReasonRequest request = MiRequest();
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  const double raw = result.confidence;
  result.raw_confidence = raw;
  ApplyCalibration(ConstantModel(/*bias=*/-1.0, /*threshold=*/0.5), request, &result);
  EXPECT_NEAR(result.confidence, 1.0 / (1.0 + std::exp(1.0)), 1e-9);
  EXPECT_EQ(result.raw_confidence, raw);
  EXPECT_EQ(result.calibration, "calibration/7");
  EXPECT_TRUE(result.abstained);
  EXPECT_TRUE(result.insufficient_evidence);
  EXPECT_EQ(result.option_index, -1);
  EXPECT_EQ(result.option_letter, "");
  EXPECT_THAT(result.answer, StartsWith("insufficient evidence"));
  EXPECT_THAT(result.rationale, HasSubstr("B) Aspirin"));
  EXPECT_THAT(result.rationale, HasSubstr("(Aspirin, treats, Myocardial infarction)"));
}

TEST(ApplyCalibrationTest, CommitsAtOrAboveTheThresholdWithTheCalibratedProbability) {
  const ReasonRequest request = MiRequest();
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  ApplyCalibration(ConstantModel(/*bias=*/2.0, /*threshold=*/0.5), request, &result);
  EXPECT_NEAR(result.confidence, 1.0 / (1.0 + std::exp(-2.0)), 1e-9);
  EXPECT_FALSE(result.abstained);
  EXPECT_EQ(result.option_index, 1);
  EXPECT_THAT(result.answer, HasSubstr("B) Aspirin"));
}

TEST(ApplyCalibrationTest, AClassWithoutItsOwnEntryAbstainsWhileOtherClassesAreCalibrated) {
  // A short "which drug treats" question, decided by the asked relation: kg_lookup.
  ReasonRequest request = MiRequest();
  request.evidence[0] = Edge("Aspirin", "drug treats disease", "Myocardial infarction", 0.9);
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  ASSERT_EQ(result.signals.question_class, "kg_lookup");
  ASSERT_EQ(result.option_index, 1);
  artifacts::v1::ConfidenceCalibration proto = ConstantModel(2.0, 0.5).proto();
  proto.mutable_tasks(0)->set_question_class("clinical_reasoning");
  auto model = CalibrationModel::FromProto(proto, "calibration/8");
  ASSERT_OK(model);
  ApplyCalibration(*model, request, &result);
  EXPECT_TRUE(result.abstained);
  EXPECT_EQ(result.option_index, -1);
  EXPECT_EQ(result.confidence, 0.0);
  EXPECT_EQ(result.calibration, "calibration/8");
  EXPECT_THAT(result.answer, HasSubstr("B) Aspirin, answers a kg_lookup question, a class the "
                                       "calibration has no entry for"));
  // Its own entry: judged by it.
  proto.mutable_tasks(0)->set_question_class("kg_lookup");
  model = CalibrationModel::FromProto(proto, "calibration/9");
  ASSERT_OK(model);
  result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  ApplyCalibration(*model, request, &result);
  EXPECT_FALSE(result.abstained);
  EXPECT_EQ(result.option_index, 1);
}

TEST(ApplyCalibrationTest, FactVerificationAbstainsAsUnknown) {
  ReasonRequest request;
  request.task = Task::kFactVerification;
  request.question = "Aspirin treats myocardial infarction";
  request.evidence = MiRequest().evidence;
  ReasonResult result = ReasonExtractively(request, Task::kFactVerification, ExtractiveOptions());
  ASSERT_EQ(result.fact_label, FactLabel::kSupported);
  EXPECT_EQ(result.signals.candidate_label, FactLabel::kSupported);
  ApplyCalibration(ConstantModel(-3.0, 0.5), request, &result);
  EXPECT_EQ(result.fact_label, FactLabel::kUnknown);
  EXPECT_TRUE(result.abstained);
  EXPECT_THAT(result.rationale, HasSubstr("SUPPORTED"));
}

TEST(CalibrationNanTest, BinsThresholdsAndFeaturesReadNonFiniteValuesAsZero) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<ReliabilityBin> bins =
      ReliabilityBins({nan, 0.95, -inf}, {true, true, false}, /*bins=*/10);
  ASSERT_EQ(bins.size(), 10u);
  EXPECT_EQ(bins[0].count, 2);  // NaN and -inf in the lowest bin, not an out-of-range index
  EXPECT_EQ(bins[9].count, 1);
  EXPECT_TRUE(std::isfinite(ExpectedCalibrationError({nan, 0.5}, {true, false})));
  // Twelve right at 0.9, NaN probabilities (read as 0) wrong: the threshold is 0.9, finite.
  std::vector<double> p(12, 0.9);
  std::vector<bool> correct(12, true);
  for (int i = 0; i < 12; ++i) {
    p.push_back(nan);
    correct.push_back(false);
  }
  EXPECT_DOUBLE_EQ(ChooseThreshold(p, correct, /*target_accuracy=*/0.9, /*min_committed=*/10), 0.9);
  ExtractiveSignals signals;
  signals.top_support = nan;
  signals.margin = inf;
  for (double feature : CalibrationFeatures(signals)) EXPECT_TRUE(std::isfinite(feature));
  EXPECT_EQ(FiniteOrZero(nan), 0.0);
  EXPECT_EQ(FiniteOrZero(-inf), 0.0);
  EXPECT_EQ(FiniteOrZero(0.25), 0.25);
}

TEST(ApplyCalibrationTest, NonFiniteSignalsGiveAFiniteProbabilityAndAbstainBelowIt) {
  const ReasonRequest request = MiRequest();
  ReasonResult result = ReasonExtractively(request, Task::kMultipleChoice, ExtractiveOptions());
  result.signals.top_support = std::nan("");
  result.signals.margin = std::nan("");
  ApplyCalibration(ConstantModel(/*bias=*/-1.0, /*threshold=*/0.5), request, &result);
  EXPECT_TRUE(std::isfinite(result.confidence));
  EXPECT_TRUE(result.abstained);
  EXPECT_EQ(result.option_index, -1);
}

TEST(ReasonerCalibrationTest, ReportsUncalibratedWithoutAModelAndCalibratedWithOne) {
  ReasonerOptions options;
  options.log = [](absl::string_view) {};
  auto plain = Reasoner::Create(options);
  ASSERT_OK(plain);
  auto raw = (*plain)->Reason(MiRequest(), absl::InfiniteFuture());
  ASSERT_OK(raw);
  EXPECT_EQ(raw->calibration, "uncalibrated");
  EXPECT_EQ(raw->confidence, raw->raw_confidence);
  EXPECT_EQ(raw->option_index, 1);

  options.calibration = std::make_shared<const CalibrationModel>(ConstantModel(-1.0, 0.5));
  auto calibrated = Reasoner::Create(options);
  ASSERT_OK(calibrated);
  auto answer = (*calibrated)->Reason(MiRequest(), absl::InfiniteFuture());
  ASSERT_OK(answer);
  EXPECT_EQ(answer->calibration, "calibration/7");
  EXPECT_TRUE(answer->abstained);
  EXPECT_EQ(answer->raw_confidence, raw->raw_confidence);
  EXPECT_LT(answer->confidence, 0.5);
}

}  // namespace
}  // namespace ibgraphrag::reasoner
