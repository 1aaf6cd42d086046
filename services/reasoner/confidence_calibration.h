// Calibrated confidence and abstention for the extractive backend. Its raw confidence is a sum of
// evidence weights, not a probability; on exam-style questions its committed answers are right
// about as often as chance while reported with the same number. A calibration maps the answer's
// ExtractiveSignals to p(candidate answer is right) with one logistic model per task (Platt
// scaling on a few features, fitted by Newton's method with an L2 penalty: deterministic), and
// abstains below a per-task threshold chosen on the fit split: the smallest threshold whose
// committed fit answers are right at least `target_accuracy` of the time (so the user can read
// "it answers only when it is right at least that often", and coverage is as large as that
// allows). Fitting happens in `ibgr eval --fit_calibration` on answers of an uncalibrated server
// (their signals travel in Answer.signals); the artifact is `<base>/calibration/<version>/`
// (manifest.json + calibration.json, protos in artifacts/v1/manifests.proto).
#ifndef IBGRAPHRAG_SERVICES_REASONER_CONFIDENCE_CALIBRATION_H_
#define IBGRAPHRAG_SERVICES_REASONER_CONFIDENCE_CALIBRATION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

// Layout version of the calibration artifact (manifest.json and calibration.json).
inline constexpr int kCalibrationFormatVersion = 1;
// Artifact kind directory under the artifact base, and the model file in a version directory.
inline constexpr char kCalibrationKind[] = "calibration";
inline constexpr char kCalibrationFile[] = "calibration.json";
// Reliability bins of the expected calibration error: 15 equal-width bins over [0, 1].
inline constexpr int kEceBins = 15;

// Meaning of the signals the features are computed from; bumped when the extractive backend
// computes a signal differently (2: topics counted as question-entity groups, exception questions
// described by their candidate). Recorded in the manifest; a version fitted on other semantics is
// not served (LoadCalibrationVersion refuses it).
// 3: question classes (ExtractiveSignals.question_class) and the KG-lookup signals
// (intent_linked, linked_options, candidate_sources).
inline constexpr int kCalibrationFeaturesVersion = 3;

// `value`, or 0 when it is NaN or infinite: signals and confidences arrive over the wire, and a
// NaN would compare false everywhere (never abstain, break sorting, index bins out of range).
double FiniteOrZero(double value);

// Feature names, in weight order after the intercept: log1p(top support), margin, share of
// options supported, share of present topic entities connected to the candidate, exception
// question (0/1), log1p(evidence triples).
const std::vector<std::string>& CalibrationFeatureNames();
// 1 (the intercept) followed by the features of `signals`.
std::vector<double> CalibrationFeatures(const ExtractiveSignals& signals);

// Whether the signals point at an answer (an option, or SUPPORTED / REFUTED).
bool HasCandidate(const ExtractiveSignals& signals);

// L2-penalised logistic regression (the intercept, x[0] == 1, is not penalised) by Newton's
// method with step halving. Rows of `x` all have the same length; `y` holds targets in [0, 1]
// (0/1 labels, or Platt's smoothed targets). INVALID_ARGUMENT for empty or ragged input, targets
// outside [0, 1] or l2 < 0.
struct LogisticFitOptions {
  double l2 = 1.0;
  int max_iterations = 100;
  // Stop when no weight moves by more than this.
  double tolerance = 1e-10;
};
absl::StatusOr<std::vector<double>> FitLogistic(const std::vector<std::vector<double>>& x,
                                                const std::vector<double>& y,
                                                const LogisticFitOptions& options);
// sigmoid(weights . x).
double LogisticProbability(const std::vector<double>& weights, const std::vector<double>& x);

// One reliability bin: predictions with confidence in [lower, upper) (the last bin includes 1).
struct ReliabilityBin {
  double lower = 0.0;
  double upper = 0.0;
  int count = 0;
  double mean_confidence = 0.0;  // 0 when empty
  double accuracy = 0.0;         // share right; 0 when empty
};
// `bins` equal-width bins over [0, 1]; confidences outside are clamped, non-finite ones count
// as 0. Sizes must match.
std::vector<ReliabilityBin> ReliabilityBins(const std::vector<double>& confidence,
                                            const std::vector<bool>& correct, int bins = kEceBins);
// Expected calibration error: sum over bins of count / n * |accuracy - mean confidence|; 0 for
// no predictions.
double ExpectedCalibrationError(const std::vector<double>& confidence,
                                const std::vector<bool>& correct, int bins = kEceBins);

// The Wilson score interval's lower end for `right` successes in `n` trials at normal quantile
// `z` (1.2816: one-sided 90 %); right / n when z is 0; 0 when n is 0.
double WilsonLowerBound(int right, int n, double z);

// The smallest threshold t among the probabilities such that the predictions with p >= t number
// at least `min_committed` and are right at least `target_accuracy` of the time, read as the
// Wilson lower bound at `bound_z` (0: the plain fit-set accuracy); above every probability (never
// commit: 1.01) when none is. With a bound, a threshold that reaches the target on a handful of
// fit answers by luck is not taken: 10 of 16 right (62.5 %) does not pass a 0.6 target at
// z = 1.28 (bound 0.47), 69 of 75 (92 %) passes 0.85 (bound 0.87).
inline constexpr double kNeverCommit = 1.01;
double ChooseThreshold(const std::vector<double>& probability, const std::vector<bool>& correct,
                       double target_accuracy, int min_committed, double bound_z = 0.0);

// One fit example: an answer's signals (with a candidate) and whether the candidate was right.
struct CalibrationExample {
  ExtractiveSignals signals;
  bool correct = false;
  double raw_confidence = 0.0;
  std::string dataset;
};

struct CalibrationFitOptions {
  LogisticFitOptions logistic;
  // Target accuracy when committed, per task and question class (see the file comment):
  // multiple choice of the clinical_reasoning class (and of no class), kg_lookup multiple choice,
  // fact verification.
  double target_accuracy_multiple_choice = 0.6;
  double target_accuracy_kg_lookup = 0.85;
  double target_accuracy_fact_verification = 0.75;
  // Fewest committed fit answers a threshold must keep.
  int min_committed = 10;
  // The target must hold for the Wilson lower bound of the fit answers' accuracy when committed
  // at this normal quantile (one-sided 90 %), not just for the fit answers themselves: the
  // threshold is chosen on the same answers it is judged on, so the plain rate is optimistic,
  // most of all for a class with few committed answers (ChooseThreshold). Finite, >= 0
  // (INVALID_ARGUMENT otherwise). With z > 0 a target of 1.0 is never reached: that class never
  // commits.
  double accuracy_bound_z = 1.2816;
  // Fewest examples a task needs to be calibrated at all (tasks with fewer are left out and
  // stay uncalibrated).
  int min_examples = 20;
  // Recorded in the model: the fit split and a description of how the examples were drawn.
  std::string split;
  std::string description;
};

// Fits one TaskCalibration per task with enough examples (examples without a candidate are
// skipped) on Platt's smoothed targets. FAILED_PRECONDITION when no task has enough.
absl::StatusOr<artifacts::v1::ConfidenceCalibration> FitCalibration(
    const std::vector<CalibrationExample>& examples, const CalibrationFitOptions& options);

// A loaded, checked calibration.
class CalibrationModel {
 public:
  // Checks format version, feature names, task names (at most one each), weight counts and
  // finiteness, thresholds in [0, kNeverCommit]; INVALID_ARGUMENT naming the field.
  static absl::StatusOr<CalibrationModel> FromProto(artifacts::v1::ConfidenceCalibration proto,
                                                    std::string label);

  // The calibration of `task` for `question_class` (QuestionClassName), else the task's entry for
  // every class (question_class ""); nullptr when there is neither.
  const artifacts::v1::TaskCalibration* ForTask(Task task, absl::string_view question_class) const;
  // Whether any entry calibrates `task`.
  bool HasTask(Task task) const;
  // p(candidate right) under `task_calibration`.
  static double Probability(const artifacts::v1::TaskCalibration& task_calibration,
                            const ExtractiveSignals& signals);
  // Reported in answers: "calibration/<version>", or the file's path.
  const std::string& label() const { return label_; }
  const artifacts::v1::ConfidenceCalibration& proto() const { return proto_; }

 private:
  CalibrationModel(artifacts::v1::ConfidenceCalibration proto, std::string label)
      : proto_(std::move(proto)), label_(std::move(label)) {}
  artifacts::v1::ConfidenceCalibration proto_;
  std::string label_;
};

// Reads a calibration.json file (label = its path). DATA_LOSS for unparseable JSON, NOT_FOUND
// for a missing file, INVALID_ARGUMENT from FromProto.
absl::StatusOr<CalibrationModel> LoadCalibrationFile(const std::string& path);
// Reads `<dir>/manifest.json` and `<dir>/calibration.json` of a version directory, checking the
// format version, the model's SHA-256 (DATA_LOSS on mismatch) and the features version
// (FAILED_PRECONDITION when fitted on other signal semantics: refit). Label
// "calibration/<version>".
absl::StatusOr<CalibrationModel> LoadCalibrationVersion(const std::string& dir);
// `spec`: "none" (nullptr), "auto" (the newest version under `<base>/calibration`, nullptr when
// there is none), a version directory, or a calibration.json file.
absl::StatusOr<std::shared_ptr<const CalibrationModel>> LoadCalibrationSpec(
    const std::string& spec, const std::string& base);

// The served artifact versions the fit answers came from (recorded in the manifest).
struct CalibrationFitVersions {
  std::string kg_version;
  std::string alignment_bundle_version;
  std::string retriever_model_version;
};

// Publishes `calibration` (checked with FromProto first) as the next version under
// `<base>/calibration/`, its manifest recording kCalibrationFeaturesVersion and `fit_on`;
// returns the version.
absl::StatusOr<int64_t> PublishCalibration(const std::string& base,
                                           const artifacts::v1::ConfidenceCalibration& calibration,
                                           const std::string& created_by,
                                           const CalibrationFitVersions& fit_on = {});

// Calibrates an extractive `result` in place: raw_confidence keeps the raw support, confidence
// becomes p(candidate right) (0 without a candidate), `calibration` the model's label, and a
// committed answer whose p is below the task's threshold is withdrawn: no option / UNKNOWN,
// insufficient_evidence, low_confidence and abstained set, answer text "insufficient evidence
// ...", the candidate named in the rationale. Tasks without a calibration (and open questions)
// are left raw and reported "uncalibrated".
void ApplyCalibration(const CalibrationModel& model, const ReasonRequest& request,
                      ReasonResult* result);

// "uncalibrated": what answers report without a calibration.
inline constexpr char kUncalibrated[] = "uncalibrated";

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_CONFIDENCE_CALIBRATION_H_
