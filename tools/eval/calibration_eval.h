// How well the answers' confidence is calibrated, and what abstaining buys: per run, the expected
// calibration error (15 equal-width bins), a reliability table, accuracy when committed and the
// accuracy-vs-coverage curve; and the fit examples `ibgr eval --fit_calibration` fits the
// extractive backend's calibration on (services/reasoner/confidence_calibration.h).
//
// Confidence of an answer = Answer.confidence clamped to [0, 1]: a calibrated probability for a
// calibrated server, the raw evidence support (a sum, read as if it were a probability) for an
// uncalibrated one. "Eligible" answers are those a threshold could commit: committed ones and
// those the calibration withdrew (Answer.abstained).
#ifndef IBGRAPHRAG_TOOLS_EVAL_CALIBRATION_EVAL_H_
#define IBGRAPHRAG_TOOLS_EVAL_CALIBRATION_EVAL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "services/reasoner/confidence_calibration.h"
#include "tools/eval/eval_metrics.h"

namespace ibgraphrag::eval {

// Coverage levels of the accuracy-vs-coverage table, as shares of all questions.
inline constexpr double kCoverageLevels[] = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0};

struct CoveragePoint {
  double coverage = 0.0;  // committed / questions
  int committed = 0;
  double accuracy = 0.0;  // right among committed
};

struct CalibrationSummary {
  int questions = 0;
  int committed = 0;
  int committed_correct = 0;
  // committed / questions, committed_correct / committed (0 when none).
  double coverage = 0.0;
  double accuracy_when_committed = 0.0;
  // Over committed answers (the confidence the user reads next to an answer).
  double ece_committed = 0.0;
  // Over eligible answers (committed or withdrawn by calibration), candidate correctness.
  int eligible = 0;
  double ece_eligible = 0.0;
  std::vector<reasoner::ReliabilityBin> bins;  // of the eligible answers
  // Eligible answers ranked by confidence, cut at each kCoverageLevels share of the questions
  // (levels beyond the eligible answers are left out), then the full eligible set.
  std::vector<CoveragePoint> curve;
  // The calibration the answers reported ("uncalibrated", "calibration/3", mixed: first seen).
  std::string calibration;
};

// Over the outcomes of one run (failed calls count as questions, never as committed).
CalibrationSummary SummarizeCalibration(const std::vector<ItemOutcome>& outcomes);

// One run's calibration figures and per-question records, for the reports.
struct CalibrationRun {
  std::string dataset;
  std::string config;
  CalibrationSummary summary;
  // One object per question, in question order: {index, task, confidence, raw_confidence,
  // committed, correct, eligible, candidate_correct, abstained_by_calibration, calibration,
  // question_class}.
  nlohmann::ordered_json questions;
  // "" for a whole run; else the question class ("kg_lookup", ...) of the run's questions this
  // entry covers (its `dataset` reads "<set> [<class>]"): reports list it after the whole runs
  // and attach it to its run in the JSON ("calibration_by_class").
  std::string question_class;
};
CalibrationRun MakeCalibrationRun(const std::string& dataset, const std::string& config,
                                  const std::vector<QaItem>& items,
                                  const std::vector<ItemOutcome>& outcomes);
// The run's summary, bins and curve as JSON (the report's "calibration" object of the run).
nlohmann::ordered_json CalibrationSummaryJson(const CalibrationSummary& summary);
// Two Markdown tables: per run coverage, accuracy when committed and ECE; and accuracy when
// committed at each coverage level.
std::string CalibrationMarkdown(const std::vector<CalibrationRun>& runs);

// The fit examples of one run: answers whose signals name a candidate, labelled by whether the
// candidate was right.
std::vector<reasoner::CalibrationExample> CalibrationExamples(
    const std::string& dataset, const std::vector<ItemOutcome>& outcomes);

// `ibgr eval --fit_calibration` fits on the answers of one pipeline config: answers of other
// configs or modes (--grid, --grid_mode) have other signal distributions, and pooling them would
// fit none of them. INVALID_ARGUMENT naming the flags when `fit` comes with `grid` or `grid_mode`.
absl::Status CheckCalibrationFitScope(bool fit, bool grid, bool grid_mode);

// The proto signals as the reasoner's struct (for fitting on the client). INVALID_ARGUMENT naming
// the field when a support or the margin is NaN or infinite (they come over the wire; a NaN
// feature would poison the fit).
absl::StatusOr<reasoner::ExtractiveSignals> SignalsFromProto(const v1::ExtractiveSignals& signals);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_TOOLS_EVAL_CALIBRATION_EVAL_H_
