#include "tools/eval/calibration_eval.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ibgraphrag::eval {
namespace {

using Json = nlohmann::ordered_json;

bool Committed(const ItemOutcome& o) { return o.code == absl::StatusCode::kOk && !o.abstained; }

// Committed, or withdrawn by the calibration: what some threshold would commit.
bool Eligible(const ItemOutcome& o) { return Committed(o) || o.calibration_abstained; }

// Right as committed, or (withdrawn) whether the candidate was right.
bool EligibleCorrect(const ItemOutcome& o) {
  return Committed(o) ? o.correct : o.candidate_correct;
}

// A non-finite confidence (a broken server) counts as 0, never reaching the sort or the bins.
double Confidence(const ItemOutcome& o) {
  return std::clamp(reasoner::FiniteOrZero(o.confidence), 0.0, 1.0);
}

std::string Percent(double rate) { return absl::StrFormat("%.1f%%", 100.0 * rate); }

// Eligible outcomes, most confident first (raw confidence, then question order, break ties).
std::vector<size_t> RankEligible(const std::vector<ItemOutcome>& outcomes) {
  std::vector<size_t> order;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (Eligible(outcomes[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double ca = Confidence(outcomes[a]);
    const double cb = Confidence(outcomes[b]);
    if (ca != cb) return ca > cb;
    return reasoner::FiniteOrZero(outcomes[a].raw_confidence) >
           reasoner::FiniteOrZero(outcomes[b].raw_confidence);
  });
  return order;
}

std::vector<CoveragePoint> CoverageCurve(const std::vector<ItemOutcome>& outcomes) {
  const std::vector<size_t> order = RankEligible(outcomes);
  std::vector<int> right_prefix(order.size() + 1, 0);
  for (size_t k = 0; k < order.size(); ++k) {
    right_prefix[k + 1] = right_prefix[k] + (EligibleCorrect(outcomes[order[k]]) ? 1 : 0);
  }
  std::vector<CoveragePoint> curve;
  auto add = [&](size_t k) {
    if (k == 0 || k > order.size()) return;
    if (!curve.empty() && curve.back().committed == static_cast<int>(k)) return;
    curve.push_back({static_cast<double>(k) / outcomes.size(), static_cast<int>(k),
                     static_cast<double>(right_prefix[k]) / k});
  };
  for (double level : kCoverageLevels) {
    add(static_cast<size_t>(std::llround(level * outcomes.size())));
  }
  add(order.size());
  return curve;
}

}  // namespace

absl::Status CheckCalibrationFitScope(bool fit, bool grid, bool grid_mode) {
  if (!fit || (!grid && !grid_mode)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--fit_calibration cannot be combined with ", grid ? "--grid" : "--grid_mode",
      ": it would pool answers of several configs/modes; fit on the base config alone"));
}

absl::StatusOr<reasoner::ExtractiveSignals> SignalsFromProto(const v1::ExtractiveSignals& p) {
  for (const auto& [name, value] : {std::pair<const char*, double>{"top_support", p.top_support()},
                                    {"runner_up_support", p.runner_up_support()},
                                    {"margin", p.margin()},
                                    {"intent_linked", p.intent_linked()}}) {
    if (!std::isfinite(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Answer.signals.", name, ": ", value, " is not finite"));
    }
  }
  reasoner::ExtractiveSignals s;
  s.present = true;
  s.task = p.task() == v1::TASK_FACT_VERIFICATION ? reasoner::Task::kFactVerification
                                                  : reasoner::Task::kMultipleChoice;
  s.top_support = p.top_support();
  s.runner_up_support = p.runner_up_support();
  s.margin = p.margin();
  s.options_supported = static_cast<int>(p.options_supported());
  s.num_options = static_cast<int>(p.num_options());
  s.topics_present = static_cast<int>(p.topics_present());
  s.topics_connected = static_cast<int>(p.topics_connected());
  s.evidence_count = static_cast<int>(p.evidence_count());
  s.exception_question = p.exception_question();
  s.candidate_index = p.candidate_index();
  s.question_class = p.question_class();
  s.intent_linked = p.intent_linked();
  s.linked_options = static_cast<int>(p.linked_options());
  s.candidate_sources = static_cast<int>(p.candidate_sources());
  switch (p.candidate_label()) {
    case v1::FACT_LABEL_SUPPORTED:
      s.candidate_label = reasoner::FactLabel::kSupported;
      break;
    case v1::FACT_LABEL_REFUTED:
      s.candidate_label = reasoner::FactLabel::kRefuted;
      break;
    case v1::FACT_LABEL_UNKNOWN:
      s.candidate_label = reasoner::FactLabel::kUnknown;
      break;
    default:
      s.candidate_label = reasoner::FactLabel::kUnspecified;
  }
  return s;
}

CalibrationSummary SummarizeCalibration(const std::vector<ItemOutcome>& outcomes) {
  CalibrationSummary s;
  s.questions = static_cast<int>(outcomes.size());
  std::vector<double> committed_confidence, eligible_confidence;
  std::vector<bool> committed_correct, eligible_correct;
  for (const ItemOutcome& o : outcomes) {
    if (s.calibration.empty() && !o.calibration.empty()) s.calibration = o.calibration;
    if (!Eligible(o)) continue;
    eligible_confidence.push_back(Confidence(o));
    eligible_correct.push_back(EligibleCorrect(o));
    if (!Committed(o)) continue;
    committed_confidence.push_back(Confidence(o));
    committed_correct.push_back(o.correct);
    ++s.committed;
    s.committed_correct += o.correct ? 1 : 0;
  }
  if (s.calibration.empty()) s.calibration = "none reported";
  s.eligible = static_cast<int>(eligible_confidence.size());
  s.coverage = s.questions > 0 ? static_cast<double>(s.committed) / s.questions : 0.0;
  s.accuracy_when_committed =
      s.committed > 0 ? static_cast<double>(s.committed_correct) / s.committed : 0.0;
  s.ece_committed = reasoner::ExpectedCalibrationError(committed_confidence, committed_correct);
  s.ece_eligible = reasoner::ExpectedCalibrationError(eligible_confidence, eligible_correct);
  s.bins = reasoner::ReliabilityBins(eligible_confidence, eligible_correct);
  s.curve = CoverageCurve(outcomes);
  return s;
}

std::vector<reasoner::CalibrationExample> CalibrationExamples(
    const std::string& dataset, const std::vector<ItemOutcome>& outcomes) {
  std::vector<reasoner::CalibrationExample> examples;
  for (const ItemOutcome& o : outcomes) {
    if (o.code != absl::StatusCode::kOk || !o.has_signals) continue;
    if (!reasoner::HasCandidate(o.signals)) continue;
    examples.push_back({o.signals, o.candidate_correct, o.raw_confidence, dataset});
  }
  return examples;
}

CalibrationRun MakeCalibrationRun(const std::string& dataset, const std::string& config,
                                  const std::vector<QaItem>& items,
                                  const std::vector<ItemOutcome>& outcomes) {
  CalibrationRun run{dataset, config, SummarizeCalibration(outcomes), Json::array(), ""};
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const ItemOutcome& o = outcomes[i];
    const bool fact = i < items.size() && items[i].task == v1::TASK_FACT_VERIFICATION;
    run.questions.push_back(Json{
        {"index", i},
        {"id", i < items.size() ? items[i].id : std::string()},
        {"task", fact ? "FACT_VERIFICATION" : "MULTIPLE_CHOICE"},
        {"ok", o.code == absl::StatusCode::kOk},
        {"confidence", o.confidence},
        {"raw_confidence", o.raw_confidence},
        {"committed", Committed(o)},
        {"correct", o.correct},
        {"eligible", Eligible(o)},
        {"eligible_correct", Eligible(o) && EligibleCorrect(o)},
        {"abstained_by_calibration", o.calibration_abstained},
        {"calibration", o.calibration},
        {"question_class", o.question_class},
    });
  }
  return run;
}

Json CalibrationSummaryJson(const CalibrationSummary& s) {
  Json bins = Json::array();
  for (const reasoner::ReliabilityBin& b : s.bins) {
    bins.push_back(Json{{"lower", b.lower},
                        {"upper", b.upper},
                        {"count", b.count},
                        {"mean_confidence", b.mean_confidence},
                        {"accuracy", b.accuracy}});
  }
  Json curve = Json::array();
  for (const CoveragePoint& p : s.curve) {
    curve.push_back(
        Json{{"coverage", p.coverage}, {"committed", p.committed}, {"accuracy", p.accuracy}});
  }
  return Json{{"calibration", s.calibration},
              {"questions", s.questions},
              {"committed", s.committed},
              {"committed_correct", s.committed_correct},
              {"coverage", s.coverage},
              {"accuracy_when_committed", s.accuracy_when_committed},
              {"ece_bins", reasoner::kEceBins},
              {"ece_committed", s.ece_committed},
              {"eligible", s.eligible},
              {"ece_eligible", s.ece_eligible},
              {"reliability", bins},
              {"coverage_curve", curve}};
}

std::string CalibrationMarkdown(const std::vector<CalibrationRun>& runs) {
  std::string md = absl::StrCat(
      "\nConfidence and abstention (ECE: ", reasoner::kEceBins,
      " equal-width bins, confidence clamped to [0, 1]; committed = named an option or a "
      "SUPPORTED/REFUTED verdict):\n\n",
      "| dataset | config | n | calibration | committed | coverage | accuracy | accuracy when "
      "committed | ECE committed | ECE eligible (n) |\n",
      "|---|---|--:|---|--:|--:|--:|--:|--:|--:|\n");
  for (const CalibrationRun& run : runs) {
    const CalibrationSummary& s = run.summary;
    absl::StrAppendFormat(
        &md, "| %s | %s | %d | %s | %d | %s | %s | %s | %.3f | %.3f (%d) |\n", run.dataset,
        run.config, s.questions, s.calibration, s.committed, Percent(s.coverage),
        Percent(s.questions > 0 ? static_cast<double>(s.committed_correct) / s.questions : 0.0),
        s.committed > 0 ? Percent(s.accuracy_when_committed) : "n/a", s.ece_committed,
        s.ece_eligible, s.eligible);
  }
  absl::StrAppend(&md,
                  "\nAccuracy when committed at a coverage (share of all questions answered, the "
                  "most confident first; \"-\" = fewer eligible answers than that):\n\n",
                  "| dataset |");
  for (double level : kCoverageLevels) absl::StrAppend(&md, " ", Percent(level), " |");
  absl::StrAppend(&md, " max coverage: accuracy |\n|---|");
  for (size_t i = 0; i <= std::size(kCoverageLevels); ++i) absl::StrAppend(&md, "--:|");
  absl::StrAppend(&md, "\n");
  for (const CalibrationRun& run : runs) {
    absl::StrAppend(&md, "| ", run.dataset, " |");
    const int questions = run.summary.questions;
    for (double level : kCoverageLevels) {
      const int k = static_cast<int>(std::llround(level * questions));
      std::string cell = "-";
      for (const CoveragePoint& p : run.summary.curve) {
        if (p.committed == k && k > 0) cell = Percent(p.accuracy);
      }
      absl::StrAppend(&md, " ", cell, " |");
    }
    if (run.summary.curve.empty()) {
      absl::StrAppend(&md, " - |\n");
    } else {
      const CoveragePoint& last = run.summary.curve.back();
      absl::StrAppend(&md, " ", Percent(last.coverage), ": ", Percent(last.accuracy), " |\n");
    }
  }
  return md;
}

}  // namespace ibgraphrag::eval
