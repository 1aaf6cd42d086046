#include "services/reasoner/confidence_calibration.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "common/versioned_artifacts.h"

namespace ibgraphrag::reasoner {
namespace {

namespace fs = std::filesystem;
using artifacts::v1::CalibrationManifest;
using artifacts::v1::ConfidenceCalibration;
using artifacts::v1::TaskCalibration;

double Sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

// Penalised negative log-likelihood of `w` (the objective Newton minimises).
double PenalisedLoss(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                     const std::vector<double>& w, double l2) {
  double loss = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double p = std::clamp(LogisticProbability(w, x[i]), 1e-15, 1.0 - 1e-15);
    loss -= y[i] * std::log(p) + (1.0 - y[i]) * std::log(1.0 - p);
  }
  for (size_t j = 1; j < w.size(); ++j) loss += 0.5 * l2 * w[j] * w[j];
  return loss;
}

// Solves a * s = b for a symmetric positive definite `a` (Gaussian elimination with partial
// pivoting; the systems are 7 x 7). False when singular.
bool Solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* s) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (std::abs(a[pivot][col]) < 1e-300) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  s->assign(n, 0.0);
  for (size_t r = n; r-- > 0;) {
    double v = b[r];
    for (size_t c = r + 1; c < n; ++c) v -= a[r][c] * (*s)[c];
    (*s)[r] = v / a[r][r];
  }
  return true;
}

// One Newton direction: (X'WX + l2 I') step = X'(y - p) - l2 w' (' = intercept unpenalised).
bool NewtonStep(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                const std::vector<double>& w, double l2, std::vector<double>* step) {
  const size_t d = w.size();
  std::vector<std::vector<double>> hessian(d, std::vector<double>(d, 0.0));
  std::vector<double> gradient(d, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const double p = LogisticProbability(w, x[i]);
    const double weight = std::max(p * (1.0 - p), 1e-12);
    for (size_t a = 0; a < d; ++a) {
      gradient[a] += (y[i] - p) * x[i][a];
      for (size_t b = 0; b < d; ++b) hessian[a][b] += weight * x[i][a] * x[i][b];
    }
  }
  for (size_t j = 1; j < d; ++j) {
    hessian[j][j] += l2;
    gradient[j] -= l2 * w[j];
  }
  hessian[0][0] += 1e-9;  // keeps an all-one-class intercept solvable
  return Solve(std::move(hessian), std::move(gradient), step);
}

// Fits one task's model and threshold from its examples.
absl::StatusOr<TaskCalibration> FitTask(Task task, const std::vector<CalibrationExample>& examples,
                                        double target_accuracy,
                                        const CalibrationFitOptions& options) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  std::vector<double> raw;
  std::vector<bool> correct;
  std::vector<std::string> datasets;
  for (const CalibrationExample& e : examples) {
    x.push_back(CalibrationFeatures(e.signals));
    y.push_back(e.correct ? 1 : 0);
    correct.push_back(e.correct);
    raw.push_back(std::clamp(FiniteOrZero(e.raw_confidence), 0.0, 1.0));
    if (std::find(datasets.begin(), datasets.end(), e.dataset) == datasets.end()) {
      datasets.push_back(e.dataset);
    }
  }
  // Platt's targets: (N+ + 1) / (N+ + 2) for right answers, 1 / (N- + 2) for wrong ones, so a
  // fit split where every candidate was right still says "very likely", never "certain".
  const int64_t positives = std::count(correct.begin(), correct.end(), true);
  const int64_t negatives = static_cast<int64_t>(correct.size()) - positives;
  for (size_t i = 0; i < y.size(); ++i) {
    y[i] = correct[i] ? (positives + 1.0) / (positives + 2.0) : 1.0 / (negatives + 2.0);
  }
  IBGR_ASSIGN_OR_RETURN(std::vector<double> weights, FitLogistic(x, y, options.logistic));
  std::vector<double> calibrated;
  for (const std::vector<double>& row : x) calibrated.push_back(LogisticProbability(weights, row));
  const double threshold = ChooseThreshold(calibrated, correct, target_accuracy,
                                           options.min_committed, options.accuracy_bound_z);

  TaskCalibration out;
  out.set_task(std::string(TaskName(task)));
  for (double w : weights) out.add_weights(w);
  out.set_threshold(threshold);
  out.set_target_accuracy(target_accuracy);
  out.set_accuracy_bound_z(options.accuracy_bound_z);
  out.set_l2(options.logistic.l2);
  out.set_split(options.split);
  out.set_examples(static_cast<int64_t>(examples.size()));
  out.set_positives(positives);
  out.set_ece_raw(ExpectedCalibrationError(raw, correct));
  out.set_ece_calibrated(ExpectedCalibrationError(calibrated, correct));
  int committed = 0;
  int right = 0;
  for (size_t i = 0; i < calibrated.size(); ++i) {
    if (calibrated[i] < threshold) continue;
    ++committed;
    right += correct[i] ? 1 : 0;
  }
  out.set_coverage(static_cast<double>(committed) / examples.size());
  out.set_accuracy_when_committed(committed > 0 ? static_cast<double>(right) / committed : 0.0);
  for (const std::string& name : datasets) out.add_datasets(name);
  return out;
}

bool IsCommitted(const ReasonResult& result) {
  return result.option_index >= 0 || result.fact_label == FactLabel::kSupported ||
         result.fact_label == FactLabel::kRefuted;
}

std::string CandidateText(const ReasonRequest& request, const ExtractiveSignals& signals) {
  if (signals.task == Task::kFactVerification) {
    return std::string(FactLabelName(signals.candidate_label));
  }
  const int index = signals.candidate_index;
  if (index < 0 || index >= static_cast<int>(request.options.size())) return "";
  return absl::StrCat(OptionLetter(index), ") ", request.options[index]);
}

// Withdraws a committed answer, saying `why` (the candidate and the rule it fell short of).
void Abstain(const ReasonRequest& request, const std::string& why, ReasonResult* result) {
  result->option_index = -1;
  result->option_letter.clear();
  if (result->signals.task == Task::kFactVerification) result->fact_label = FactLabel::kUnknown;
  result->insufficient_evidence = true;
  result->low_confidence = true;
  result->abstained = true;
  result->answer =
      absl::StrCat("insufficient evidence: ", why, " (extractive backend; no LLM was used).");
  result->rationale = absl::StrCat("Abstained: ", why, ". ", result->rationale);
}

}  // namespace

const std::vector<std::string>& CalibrationFeatureNames() {
  static const auto* const kNames =
      new std::vector<std::string>{"log1p_top_support",       "margin",
                                   "options_supported_share", "topics_connected_share",
                                   "exception_question",      "log1p_evidence_count",
                                   "intent_linked",           "intent_exclusive",
                                   "log1p_candidate_sources"};
  return *kNames;
}

double FiniteOrZero(double value) { return std::isfinite(value) ? value : 0.0; }

std::vector<double> CalibrationFeatures(const ExtractiveSignals& s) {
  const double supported_share =
      s.num_options > 0 ? static_cast<double>(s.options_supported) / s.num_options : 0.0;
  const double connected_share =
      s.topics_present > 0 ? static_cast<double>(s.topics_connected) / s.topics_present : 0.0;
  return {1.0,
          std::log1p(std::max(FiniteOrZero(s.top_support), 0.0)),
          std::clamp(FiniteOrZero(s.margin), 0.0, 1.0),
          supported_share,
          connected_share,
          s.exception_question ? 1.0 : 0.0,
          std::log1p(std::max(s.evidence_count, 0)),
          std::clamp(FiniteOrZero(s.intent_linked), 0.0, 1.0),
          s.linked_options == 1 && s.intent_linked > 0.0 ? 1.0 : 0.0,
          std::log1p(std::max(s.candidate_sources, 0))};
}

bool HasCandidate(const ExtractiveSignals& signals) {
  if (!signals.present) return false;
  if (signals.task == Task::kFactVerification) {
    return signals.candidate_label == FactLabel::kSupported ||
           signals.candidate_label == FactLabel::kRefuted;
  }
  return signals.candidate_index >= 0;
}

double LogisticProbability(const std::vector<double>& weights, const std::vector<double>& x) {
  double z = 0.0;
  for (size_t j = 0; j < weights.size() && j < x.size(); ++j) z += weights[j] * x[j];
  return Sigmoid(z);
}

absl::StatusOr<std::vector<double>> FitLogistic(const std::vector<std::vector<double>>& x,
                                                const std::vector<double>& y,
                                                const LogisticFitOptions& options) {
  if (x.empty() || x.size() != y.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("logistic fit: ", x.size(), " rows and ", y.size(), " labels"));
  }
  if (!(options.l2 >= 0.0)) return absl::InvalidArgumentError("l2: must be >= 0");
  for (double target : y) {
    if (!(target >= 0.0 && target <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("logistic fit: target ", target, " is outside [0, 1]"));
    }
  }
  const size_t d = x[0].size();
  for (const std::vector<double>& row : x) {
    if (row.size() != d) return absl::InvalidArgumentError("logistic fit: ragged feature rows");
  }
  std::vector<double> w(d, 0.0);
  double loss = PenalisedLoss(x, y, w, options.l2);
  std::vector<double> step;
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    if (!NewtonStep(x, y, w, options.l2, &step)) break;
    // Step halving keeps every iteration downhill (unpenalised separable data diverges slowly).
    double scale = 1.0;
    std::vector<double> next(d);
    double next_loss = loss;
    for (int halving = 0; halving < 30; ++halving, scale *= 0.5) {
      for (size_t j = 0; j < d; ++j) next[j] = w[j] + scale * step[j];
      next_loss = PenalisedLoss(x, y, next, options.l2);
      if (next_loss <= loss + 1e-12) break;
    }
    double moved = 0.0;
    for (size_t j = 0; j < d; ++j) moved = std::max(moved, std::abs(next[j] - w[j]));
    w = next;
    loss = next_loss;
    if (moved < options.tolerance) break;
  }
  return w;
}

std::vector<ReliabilityBin> ReliabilityBins(const std::vector<double>& confidence,
                                            const std::vector<bool>& correct, int bins) {
  std::vector<ReliabilityBin> out(std::max(bins, 1));
  std::vector<double> sum_confidence(out.size(), 0.0);
  std::vector<int> right(out.size(), 0);
  for (size_t b = 0; b < out.size(); ++b) {
    out[b].lower = static_cast<double>(b) / out.size();
    out[b].upper = static_cast<double>(b + 1) / out.size();
  }
  for (size_t i = 0; i < confidence.size() && i < correct.size(); ++i) {
    const double c = std::clamp(FiniteOrZero(confidence[i]), 0.0, 1.0);
    const size_t b = std::min(out.size() - 1, static_cast<size_t>(c * out.size()));
    ++out[b].count;
    sum_confidence[b] += c;
    right[b] += correct[i] ? 1 : 0;
  }
  for (size_t b = 0; b < out.size(); ++b) {
    if (out[b].count == 0) continue;
    out[b].mean_confidence = sum_confidence[b] / out[b].count;
    out[b].accuracy = static_cast<double>(right[b]) / out[b].count;
  }
  return out;
}

double ExpectedCalibrationError(const std::vector<double>& confidence,
                                const std::vector<bool>& correct, int bins) {
  const size_t n = std::min(confidence.size(), correct.size());
  if (n == 0) return 0.0;
  double ece = 0.0;
  for (const ReliabilityBin& bin : ReliabilityBins(confidence, correct, bins)) {
    ece += static_cast<double>(bin.count) / n * std::abs(bin.accuracy - bin.mean_confidence);
  }
  return ece;
}

double WilsonLowerBound(int right, int n, double z) {
  if (n <= 0) return 0.0;
  const double p = static_cast<double>(right) / n;
  if (z <= 0.0) return p;
  const double z2 = z * z;
  const double centre = p + z2 / (2.0 * n);
  const double spread = z * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
  return std::max(0.0, (centre - spread) / (1.0 + z2 / n));
}

double ChooseThreshold(const std::vector<double>& probability, const std::vector<bool>& correct,
                       double target_accuracy, int min_committed, double bound_z) {
  std::vector<size_t> order(probability.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // NaN as 0: a NaN in the comparator would break strict weak ordering (undefined behaviour).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return FiniteOrZero(probability[a]) > FiniteOrZero(probability[b]);
  });
  // Walk down the probabilities; the threshold at position k commits the first k + 1 (and any
  // ties with the k-th, handled by only considering the last of a run of equal values).
  double best = kNeverCommit;
  int committed = 0;
  int right = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    ++committed;
    right += correct[order[k]] ? 1 : 0;
    const double p = FiniteOrZero(probability[order[k]]);
    if (k + 1 < order.size() && FiniteOrZero(probability[order[k + 1]]) == p) continue;
    if (committed >= min_committed &&
        WilsonLowerBound(right, committed, bound_z) >= target_accuracy - 1e-12) {
      best = p;
    }
  }
  return best;
}

absl::StatusOr<ConfidenceCalibration> FitCalibration(
    const std::vector<CalibrationExample>& examples, const CalibrationFitOptions& options) {
  if (!(options.accuracy_bound_z >= 0.0 && std::isfinite(options.accuracy_bound_z))) {
    return absl::InvalidArgumentError(absl::StrCat("accuracy_bound_z: ", options.accuracy_bound_z,
                                                   " is not a finite value >= 0"));
  }
  ConfidenceCalibration out;
  out.set_format_version(kCalibrationFormatVersion);
  for (const std::string& name : CalibrationFeatureNames()) out.add_feature_names(name);
  out.set_fit_description(options.description);
  std::string counts;
  for (Task task : {Task::kMultipleChoice, Task::kFactVerification}) {
    // One entry per class the examples report, in name order ("" from servers before classes).
    std::map<std::string, std::vector<CalibrationExample>> by_class;
    for (const CalibrationExample& e : examples) {
      if (e.signals.task == task && HasCandidate(e.signals)) {
        by_class[e.signals.question_class].push_back(e);
      }
    }
    for (const auto& [question_class, of_class] : by_class) {
      absl::StrAppend(&counts, counts.empty() ? "" : ", ", TaskName(task),
                      question_class.empty() ? "" : "/", question_class, " ", of_class.size());
      if (static_cast<int>(of_class.size()) < options.min_examples) continue;
      const double target = task == Task::kFactVerification
                                ? options.target_accuracy_fact_verification
                            : question_class == QuestionClassName(QuestionClass::kKgLookup)
                                ? options.target_accuracy_kg_lookup
                                : options.target_accuracy_multiple_choice;
      IBGR_ASSIGN_OR_RETURN(TaskCalibration fitted, FitTask(task, of_class, target, options));
      fitted.set_question_class(question_class);
      *out.add_tasks() = std::move(fitted);
    }
  }
  if (out.tasks_size() == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "calibration: no task has ", options.min_examples, " answers with a candidate to fit on (",
        counts, "); was the server running without a calibration, on the extractive backend?"));
  }
  return out;
}

absl::StatusOr<CalibrationModel> CalibrationModel::FromProto(ConfidenceCalibration proto,
                                                             std::string label) {
  if (proto.format_version() != kCalibrationFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": format_version ",
                                                   proto.format_version(), ", this build reads ",
                                                   kCalibrationFormatVersion));
  }
  const std::vector<std::string>& names = CalibrationFeatureNames();
  if (std::vector<std::string>(proto.feature_names().begin(), proto.feature_names().end()) !=
      names) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": feature_names differ from this build's (refit the calibration)"));
  }
  std::vector<std::string> seen;
  for (int i = 0; i < proto.tasks_size(); ++i) {
    const TaskCalibration& task = proto.tasks(i);
    const std::string field = absl::StrCat(label, ": tasks[", i, "]");
    if (task.task() != TaskName(Task::kMultipleChoice) &&
        task.task() != TaskName(Task::kFactVerification)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".task: \"", task.task(), "\" is not MULTIPLE_CHOICE or FACT_VERIFICATION"));
    }
    const std::string& question_class = task.question_class();
    if (!question_class.empty() && question_class != QuestionClassName(QuestionClass::kKgLookup) &&
        question_class != QuestionClassName(QuestionClass::kClinicalReasoning) &&
        question_class != QuestionClassName(QuestionClass::kClaim)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".question_class: \"", question_class,
                       "\" is not kg_lookup, clinical_reasoning, claim or \"\" (every class)"));
    }
    const std::string key = absl::StrCat(task.task(), "/", question_class);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": ", task.task(), " class \"", question_class, "\" twice"));
    }
    seen.push_back(key);
    if (task.weights_size() != static_cast<int>(names.size()) + 1) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".weights: ", task.weights_size(),
                                                     " values, expected ", names.size() + 1));
    }
    for (double w : task.weights()) {
      if (!std::isfinite(w)) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".weights: not finite"));
      }
    }
    if (!(task.threshold() >= 0.0 && task.threshold() <= kNeverCommit)) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".threshold: ", task.threshold(),
                                                     " is outside [0, ", kNeverCommit, "]"));
    }
    if (!(task.accuracy_bound_z() >= 0.0 && std::isfinite(task.accuracy_bound_z()))) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".accuracy_bound_z: ", task.accuracy_bound_z(), " is not a finite value >= 0"));
    }
  }
  return CalibrationModel(std::move(proto), std::move(label));
}

const TaskCalibration* CalibrationModel::ForTask(Task task,
                                                 absl::string_view question_class) const {
  const absl::string_view name =
      TaskName(task == Task::kUnspecified ? Task::kMultipleChoice : task);
  const TaskCalibration* every_class = nullptr;
  for (const TaskCalibration& t : proto_.tasks()) {
    if (t.task() != name) continue;
    if (t.question_class() == question_class) return &t;
    if (t.question_class().empty()) every_class = &t;
  }
  return every_class;
}

bool CalibrationModel::HasTask(Task task) const {
  const absl::string_view name =
      TaskName(task == Task::kUnspecified ? Task::kMultipleChoice : task);
  return std::any_of(proto_.tasks().begin(), proto_.tasks().end(),
                     [&](const TaskCalibration& t) { return t.task() == name; });
}

double CalibrationModel::Probability(const TaskCalibration& task_calibration,
                                     const ExtractiveSignals& signals) {
  const std::vector<double> weights(task_calibration.weights().begin(),
                                    task_calibration.weights().end());
  return LogisticProbability(weights, CalibrationFeatures(signals));
}

absl::StatusOr<CalibrationModel> LoadCalibrationFile(const std::string& path) {
  IBGR_ASSIGN_OR_RETURN(const std::string json, common::ReadFileToString(path));
  ConfidenceCalibration proto;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(json, path, &proto));
  return CalibrationModel::FromProto(std::move(proto), path);
}

absl::StatusOr<CalibrationModel> LoadCalibrationVersion(const std::string& dir) {
  const std::string manifest_path = (fs::path(dir) / common::kArtifactManifestFile).string();
  IBGR_ASSIGN_OR_RETURN(const std::string manifest_json, common::ReadFileToString(manifest_path));
  CalibrationManifest manifest;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(manifest_json, manifest_path, &manifest));
  if (manifest.format_version() != kCalibrationFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(manifest_path, ": format_version ",
                                                   manifest.format_version(), ", this build reads ",
                                                   kCalibrationFormatVersion));
  }
  if (manifest.features_version() != kCalibrationFeaturesVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(manifest_path, ": features_version ", manifest.features_version(),
                     ", this build computes signals version ", kCalibrationFeaturesVersion,
                     "; refit (scripts/fit_calibration.sh) or serve --calibration=none"));
  }
  const std::string model_path = (fs::path(dir) / kCalibrationFile).string();
  IBGR_ASSIGN_OR_RETURN(const std::string json, common::ReadFileToString(model_path));
  if (common::Sha256Hex(json) != manifest.calibration_sha256()) {
    return absl::DataLossError(
        absl::StrCat(model_path, ": SHA-256 differs from the manifest's calibration_sha256"));
  }
  ConfidenceCalibration proto;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(json, model_path, &proto));
  return CalibrationModel::FromProto(std::move(proto),
                                     absl::StrCat(kCalibrationKind, "/", manifest.version()));
}

absl::StatusOr<std::shared_ptr<const CalibrationModel>> LoadCalibrationSpec(
    const std::string& spec, const std::string& base) {
  std::string dir;
  if (spec == "none") return nullptr;
  if (spec == "auto") {
    common::VersionedArtifactDir artifacts(
        {base, kCalibrationKind, "calibration", "(fit one with scripts/fit_calibration.sh)"});
    IBGR_ASSIGN_OR_RETURN(const std::vector<int64_t> versions, artifacts.ListVersions());
    if (versions.empty()) return nullptr;
    dir = artifacts.VersionDir(versions.back());
  } else {
    std::error_code ec;
    if (!fs::is_directory(spec, ec)) {
      IBGR_ASSIGN_OR_RETURN(CalibrationModel model, LoadCalibrationFile(spec));
      return std::make_shared<const CalibrationModel>(std::move(model));
    }
    dir = spec;
  }
  IBGR_ASSIGN_OR_RETURN(CalibrationModel model, LoadCalibrationVersion(dir));
  return std::make_shared<const CalibrationModel>(std::move(model));
}

absl::StatusOr<int64_t> PublishCalibration(const std::string& base,
                                           const ConfidenceCalibration& calibration,
                                           const std::string& created_by,
                                           const CalibrationFitVersions& fit_on) {
  if (base.empty()) return absl::InvalidArgumentError("base: required");
  IBGR_RETURN_IF_ERROR(CalibrationModel::FromProto(calibration, "calibration").status());
  common::VersionedArtifactDir artifacts({base, kCalibrationKind, "calibration", ""});
  IBGR_ASSIGN_OR_RETURN(common::ArtifactStaging staging,
                        common::ArtifactStaging::CreateVersion(artifacts));
  const std::string json = common::ProtoToJson(calibration);
  CalibrationManifest manifest;
  manifest.set_format_version(kCalibrationFormatVersion);
  manifest.set_version(staging.version());
  manifest.set_created_at(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()));
  manifest.set_created_by(created_by);
  manifest.set_calibration_sha256(common::Sha256Hex(json));
  manifest.set_features_version(kCalibrationFeaturesVersion);
  manifest.set_kg_version(fit_on.kg_version);
  manifest.set_alignment_bundle_version(fit_on.alignment_bundle_version);
  manifest.set_retriever_model_version(fit_on.retriever_model_version);
  const fs::path tmp = staging.dir();
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic((tmp / kCalibrationFile).string(), json));
  // The manifest last: it marks the version complete once published.
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(
      (tmp / common::kArtifactManifestFile).string(), common::ProtoToJson(manifest)));
  IBGR_RETURN_IF_ERROR(staging.Publish());
  return manifest.version();
}

void ApplyCalibration(const CalibrationModel& model, const ReasonRequest& request,
                      ReasonResult* result) {
  if (!result->signals.present || !model.HasTask(result->signals.task)) {
    result->calibration = kUncalibrated;
    return;
  }
  const TaskCalibration* task = model.ForTask(result->signals.task, result->signals.question_class);
  if (task == nullptr) {
    // The task is calibrated but not this class (too few validation answers of it): a class
    // without a calibration abstains rather than commit to an unjudged guess.
    result->calibration = model.label();
    result->confidence = 0.0;
    if (IsCommitted(*result)) {
      Abstain(request,
              absl::StrCat("the best candidate, ", CandidateText(request, result->signals),
                           ", answers a ", result->signals.question_class,
                           " question, a class the calibration has no entry for (too few "
                           "validation answers of it), so it is not trusted"),
              result);
    }
    return;
  }
  result->calibration = model.label();
  if (!HasCandidate(result->signals)) {
    result->confidence = 0.0;
    return;
  }
  const double p = CalibrationModel::Probability(*task, result->signals);
  result->confidence = FiniteOrZero(p);
  // Written so that a NaN probability withdraws the answer: `p < threshold` is false for NaN.
  if (IsCommitted(*result) && !(p >= task->threshold())) {
    Abstain(request,
            absl::StrFormat("the best candidate, %s, has a calibrated probability of %.2f of "
                            "being right, below the threshold %.2f of %s questions",
                            CandidateText(request, result->signals), p, task->threshold(),
                            task->question_class().empty() ? "these" : task->question_class()),
            result);
  }
}

}  // namespace ibgraphrag::reasoner
