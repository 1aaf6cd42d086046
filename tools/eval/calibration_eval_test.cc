#include "tools/eval/calibration_eval.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/eval/eval_report.h"

namespace ibgraphrag::eval {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

QaItem McItem(int gold) {
  QaItem item;
  item.task = v1::TASK_MULTIPLE_CHOICE;
  item.question = "q";
  item.options = {"alpha", "beta", "gamma", "delta"};
  item.gold_index = gold;
  item.gold_text = item.options[gold];
  return item;
}

// A calibrated server's answer: committed to `chosen` (or withdrawn, naming it as the candidate).
v1::AnswerResponse Response(int chosen, double confidence, bool withdrawn) {
  v1::AnswerResponse response;
  v1::Answer* answer = response.mutable_answer();
  answer->set_option_index(withdrawn ? -1 : chosen);
  answer->set_confidence(static_cast<float>(confidence));
  answer->set_raw_confidence(2.5f);
  answer->set_calibration("calibration/1");
  answer->set_abstained(withdrawn);
  v1::ExtractiveSignals* signals = answer->mutable_signals();
  signals->set_task(v1::TASK_MULTIPLE_CHOICE);
  signals->set_candidate_index(chosen);
  signals->set_top_support(2.5);
  signals->set_num_options(4);
  signals->set_options_supported(2);
  return response;
}

TEST(CalibrationEvalTest, ScoresCandidatesOfWithdrawnAnswers) {
  const ItemOutcome right = ScoreAnswer(McItem(1), Response(1, 0.3, /*withdrawn=*/true), 1.0);
  EXPECT_TRUE(right.abstained);
  EXPECT_FALSE(right.correct);
  EXPECT_TRUE(right.calibration_abstained);
  EXPECT_TRUE(right.candidate_correct);
  EXPECT_EQ(right.signals.candidate_index, 1);
  EXPECT_NEAR(right.raw_confidence, 2.5, 1e-6);
  const ItemOutcome wrong = ScoreAnswer(McItem(0), Response(1, 0.3, true), 1.0);
  EXPECT_FALSE(wrong.candidate_correct);
}

TEST(CalibrationEvalTest, SummarisesCoverageAccuracyEceAndTheCurve) {
  // Four committed (0.9 right, 0.9 right, 0.7 wrong, 0.7 right), one withdrawn (0.2, wrong
  // candidate), one with no candidate at all, one failed call.
  std::vector<ItemOutcome> outcomes = {
      ScoreAnswer(McItem(1), Response(1, 0.9, false), 1),
      ScoreAnswer(McItem(1), Response(1, 0.9, false), 1),
      ScoreAnswer(McItem(0), Response(1, 0.7, false), 1),
      ScoreAnswer(McItem(1), Response(1, 0.7, false), 1),
      ScoreAnswer(McItem(0), Response(1, 0.2, true), 1),
  };
  v1::AnswerResponse nothing;
  nothing.mutable_answer()->set_option_index(-1);
  outcomes.push_back(ScoreAnswer(McItem(0), nothing, 1));
  outcomes.push_back(ErrorOutcome(absl::StatusCode::kUnavailable, "down", 1));

  const CalibrationSummary s = SummarizeCalibration(outcomes);
  EXPECT_EQ(s.questions, 7);
  EXPECT_EQ(s.committed, 4);
  EXPECT_EQ(s.committed_correct, 3);
  EXPECT_NEAR(s.coverage, 4.0 / 7, 1e-12);
  EXPECT_NEAR(s.accuracy_when_committed, 0.75, 1e-12);
  EXPECT_EQ(s.calibration, "calibration/1");
  // Committed: bin of 0.9 (2 right: |1 - 0.9|), bin of 0.7 (1 of 2: |0.5 - 0.7|).
  EXPECT_NEAR(s.ece_committed, 0.5 * 0.1 + 0.5 * 0.2, 1e-6);
  EXPECT_EQ(s.eligible, 5);
  // Eligible adds the withdrawn 0.2 (wrong): bins 0.9 (2/5 * 0.1), 0.7 (2/5 * 0.2), 0.2 (1/5 *
  // 0.2).
  EXPECT_NEAR(s.ece_eligible, 0.4 * 0.1 + 0.4 * 0.2 + 0.2 * 0.2, 1e-6);
  // Curve over 7 questions: 5% -> 0 (skipped), 10% -> 1, 20% -> 1 (same), 30% -> 2, 40% -> 3,
  // 50% -> 4 (3.5 rounds to 4), 60% -> 4, 80% -> 6 (beyond 5 eligible), 100% -> 7; then all 5.
  ASSERT_GE(s.curve.size(), 4u);
  EXPECT_EQ(s.curve[0].committed, 1);
  EXPECT_DOUBLE_EQ(s.curve[0].accuracy, 1.0);
  EXPECT_EQ(s.curve.back().committed, 5);
  EXPECT_NEAR(s.curve.back().accuracy, 3.0 / 5, 1e-12);
  for (const CoveragePoint& p : s.curve) EXPECT_LE(p.committed, 5);
}

TEST(CalibrationEvalTest, UncalibratedServersAreReadFromTheirRawConfidence) {
  v1::AnswerResponse old;  // a server from before calibration: no signals, no calibration
  old.mutable_answer()->set_option_index(1);
  old.mutable_answer()->set_confidence(3.0f);
  const ItemOutcome o = ScoreAnswer(McItem(1), old, 1);
  EXPECT_FALSE(o.has_signals);
  EXPECT_NEAR(o.raw_confidence, 3.0, 1e-6);
  const CalibrationSummary s = SummarizeCalibration({o});
  EXPECT_EQ(s.calibration, "none reported");
  EXPECT_NEAR(s.ece_committed, 0.0, 1e-12);  // clamped to 1, and right
}

TEST(CalibrationEvalTest, ExamplesComeFromAnswersWithACandidate) {
  std::vector<ItemOutcome> outcomes = {ScoreAnswer(McItem(1), Response(1, 0.9, false), 1),
                                       ScoreAnswer(McItem(0), Response(1, 0.2, true), 1)};
  v1::AnswerResponse none = Response(-1, 0, false);
  outcomes.push_back(ScoreAnswer(McItem(0), none, 1));
  const std::vector<reasoner::CalibrationExample> examples = CalibrationExamples("set", outcomes);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_TRUE(examples[0].correct);
  EXPECT_FALSE(examples[1].correct);
  EXPECT_EQ(examples[0].dataset, "set");
}

TEST(CalibrationEvalTest, NonFiniteSignalsAreRejectedAndLeaveNoFitExample) {
  v1::AnswerResponse response = Response(1, 0.9, false);
  response.mutable_answer()->mutable_signals()->set_margin(std::nan(""));
  const absl::StatusOr<reasoner::ExtractiveSignals> signals =
      SignalsFromProto(response.answer().signals());
  EXPECT_THAT(signals, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("signals.margin")));
  const ItemOutcome outcome = ScoreAnswer(McItem(1), response, 1);
  EXPECT_TRUE(outcome.correct);  // the answer itself still counts
  EXPECT_FALSE(outcome.has_signals);
  EXPECT_TRUE(CalibrationExamples("set", {outcome}).empty());
}

TEST(CalibrationEvalTest, NonFiniteConfidenceCountsAsZero) {
  std::vector<ItemOutcome> outcomes;
  for (int i = 0; i < 20; ++i) {
    const double confidence = i % 2 == 0 ? std::nan("") : 0.8;
    outcomes.push_back(ScoreAnswer(McItem(1), Response(1, confidence, false), 1));
    outcomes.back().raw_confidence = std::nan("");
  }
  const CalibrationSummary s = SummarizeCalibration(outcomes);
  EXPECT_EQ(s.committed, 20);
  EXPECT_EQ(s.bins.front().count, 10);  // the NaN ones, as confidence 0
  EXPECT_TRUE(std::isfinite(s.ece_committed));
  ASSERT_FALSE(s.curve.empty());
  EXPECT_EQ(s.curve.back().committed, 20);
}

TEST(CalibrationEvalTest, FittingRefusesGridAndGridMode) {
  EXPECT_OK(CheckCalibrationFitScope(/*fit=*/true, false, false));
  EXPECT_OK(CheckCalibrationFitScope(/*fit=*/false, true, true));
  const absl::Status grid = CheckCalibrationFitScope(true, /*grid=*/true, false);
  EXPECT_THAT(grid,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("--fit_calibration"), HasSubstr("--grid"))));
  const absl::Status mode = CheckCalibrationFitScope(true, false, /*grid_mode=*/true);
  EXPECT_THAT(mode.message(), HasSubstr("--grid_mode"));
}

TEST(CalibrationEvalTest, ReportsCarryRecordsAndTables) {
  const std::vector<QaItem> items = {McItem(1), McItem(0)};
  const std::vector<ItemOutcome> outcomes = {ScoreAnswer(items[0], Response(1, 0.9, false), 1),
                                             ScoreAnswer(items[1], Response(1, 0.2, true), 1)};
  const std::vector<CalibrationRun> runs = {MakeCalibrationRun("set", "cfg", items, outcomes)};
  ReportMeta meta;
  const std::vector<RunSummary> summaries = {Summarize("set", "cfg", outcomes, 1.0)};
  const std::string json = ReportJson(meta, summaries, runs);
  EXPECT_THAT(json, HasSubstr("\"ece_committed\""));
  EXPECT_THAT(json, HasSubstr("\"abstained_by_calibration\": true"));
  EXPECT_THAT(json, HasSubstr("\"coverage_curve\""));
  const std::string md = ReportMarkdown(meta, summaries, runs);
  EXPECT_THAT(md, HasSubstr("| set | cfg | 2 | calibration/1 | 1 | 50.0% | 50.0% | 100.0% |"));
  EXPECT_THAT(md, HasSubstr("max coverage"));
}

// Issue 26: a class entry is listed in the tables and attached to its own run in the JSON, never
// paired with the next run.
TEST(CalibrationEvalTest, ClassEntriesAttachToTheirRun) {
  const std::vector<QaItem> items = {McItem(1), McItem(0)};
  const std::vector<ItemOutcome> outcomes = {ScoreAnswer(items[0], Response(1, 0.9, false), 1),
                                             ScoreAnswer(items[1], Response(1, 0.2, true), 1)};
  CalibrationRun lookup = MakeCalibrationRun("a [kg_lookup]", "cfg", {items[0]}, {outcomes[0]});
  lookup.question_class = "kg_lookup";
  const std::vector<CalibrationRun> runs = {
      MakeCalibrationRun("a", "cfg", items, outcomes), lookup,
      MakeCalibrationRun("b", "cfg", {items[1]}, {outcomes[1]})};
  const std::vector<RunSummary> summaries = {Summarize("a", "cfg", outcomes, 1.0),
                                             Summarize("b", "cfg", {outcomes[1]}, 1.0)};
  const nlohmann::json json = nlohmann::json::parse(ReportJson(ReportMeta(), summaries, runs));
  ASSERT_EQ(json["runs"].size(), 2u);
  EXPECT_EQ(json["runs"][0]["calibration"]["questions"], 2);
  EXPECT_EQ(json["runs"][0]["calibration_by_class"]["kg_lookup"]["questions"], 1);
  EXPECT_EQ(json["runs"][1]["calibration"]["questions"], 1);  // b's own, not the class entry
  EXPECT_FALSE(json["runs"][1].contains("calibration_by_class"));
  EXPECT_THAT(ReportMarkdown(ReportMeta(), summaries, runs),
              HasSubstr("| a [kg_lookup] | cfg | 1 |"));
}

}  // namespace
}  // namespace ibgraphrag::eval
