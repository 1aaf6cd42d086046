#include "tools/ibgr/eval_commands.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/qa/qa_datasets.h"
#include "common/qa/qa_split.h"
#include "common/status_macros.h"
#include "services/reasoner/confidence_calibration.h"
#include "tools/eval/calibration_eval.h"
#include "tools/eval/eval_report.h"
#include "tools/eval/eval_runner.h"
#include "tools/ibgr/ask_commands.h"

ABSL_DECLARE_FLAG(std::string, gateway);

ABSL_FLAG(std::string, dataset, "",
          "eval: a QA file, a directory of them, or a comma-separated list");
ABSL_FLAG(std::string, format, "auto",
          "eval: auto | medqa | medmcqa | pubmedqa | mmlu | biomixqa_mcq | truefalse");
ABSL_FLAG(int64_t, limit, 0, "eval: first N questions of each file (0 = all)");
ABSL_FLAG(int, lookup_as_choices, 0,
          "eval: ask each lookup-format set as multiple choice instead (its own multiple-choice "
          "questions, and this many four-option questions per open question, right option an "
          "accepted answer, distractors other questions' answers of the same type; reported as "
          "<set>-choices); 0 = as written");
ABSL_FLAG(std::string, qa_split, "all",
          "eval: only the questions of this part under the retriever's train / validation / test "
          "rule (all, train, validation, test; test = questions no retriever trained on)");
ABSL_FLAG(uint64_t, split_seed, 0,
          "eval --qa_split: the split's seed (retriever_train --split_seed; default the same)");
ABSL_FLAG(int, concurrency, 8, "eval: calls in flight at once, 1..256");
ABSL_FLAG(bool, grid, false,
          "eval: run the ablation grid --grid_msca x --grid_ibrp x --grid_top_k");
ABSL_FLAG(std::string, grid_msca, "true,false", "eval --grid: MSCA values");
ABSL_FLAG(std::string, grid_ibrp, "true,false", "eval --grid: IBRP values");
ABSL_FLAG(std::string, grid_top_k, "10,100", "eval --grid: top_k values (evidence triples)");
ABSL_FLAG(std::string, grid_mode, "",
          "eval: one run per mode, in the same table (e.g. ibgraphrag,kg_rank,kg_rag,give); with "
          "--grid (modes outermost)");
ABSL_FLAG(std::string, out_json, "", "eval: write the JSON report here");
ABSL_FLAG(std::string, out_md, "", "eval: write the Markdown table here");
ABSL_FLAG(std::string, fit_calibration, "",
          "eval: fit the extractive backend's confidence calibration on this run's answers and "
          "write it (calibration.json) here; refused with --qa_split=test or all");
ABSL_FLAG(std::string, calibration_base, "",
          "eval --fit_calibration: also publish it as the next <base>/calibration/<version>");
ABSL_FLAG(double, calibration_target_mc, 0.6,
          "eval --fit_calibration: accuracy when committed the threshold of clinical-reasoning "
          "multiple choice keeps");
ABSL_FLAG(double, calibration_target_lookup, 0.85,
          "eval --fit_calibration: accuracy when committed the threshold of KG-lookup multiple "
          "choice keeps");
ABSL_FLAG(double, calibration_target_fv, 0.75,
          "eval --fit_calibration: accuracy when committed the fact-verification threshold keeps");
ABSL_FLAG(double, calibration_bound_z, 1.2816,
          "eval --fit_calibration: a threshold's accuracy when committed must reach the target as "
          "the Wilson lower bound at this normal quantile (1.2816: one-sided 90 %; 0: the plain "
          "rate on the fit answers)");

namespace ibgraphrag::cli {
namespace {

constexpr char kEvalUsage[] =
    "usage: ibgr eval --dataset=FILE|DIR[,...] [--gateway=127.0.0.1:50051] "
    "[--format=auto|medqa|medmcqa|pubmedqa|mmlu|biomixqa_mcq|truefalse]\n"
    "                 [--qa_split=all|train|validation|test [--split_seed=0]] "
    "[--lookup_as_choices=N]\n"
    "                 [--limit=N] [--concurrency=8] [--deadline_ms=30000] [--grid "
    "[--grid_msca=true,false] [--grid_ibrp=true,false] [--grid_top_k=10,100]]\n"
    "                 [--mode=ibgraphrag|kg_rank|kg_rag|give] "
    "[--grid_mode=ibgraphrag,kg_rank,kg_rag,give]\n"
    "                 [--out_json=FILE] [--out_md=FILE] [--top_k --msca --ibrp --lambda --tau "
    "--hops --backend] [--tls_ca=PEM] [--api_key=KEY]\n"
    "                 [--fit_calibration=calibration.json [--calibration_base=DIR] "
    "[--calibration_target_mc=0.6] [--calibration_target_lookup=0.85] "
    "[--calibration_target_fv=0.75] [--calibration_bound_z=1.2816]]";

int Usage(const std::string& problem) {
  if (!problem.empty()) std::fprintf(stderr, "ibgr eval: %s\n", problem.c_str());
  std::fprintf(stderr, "%s\n", kEvalUsage);
  return 2;
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

absl::StatusOr<std::vector<bool>> ParseBools(const char* flag, const std::string& text) {
  std::vector<bool> values;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    bool value = false;
    if (!absl::SimpleAtob(part, &value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": \"", part, "\" is not true or false"));
    }
    values.push_back(value);
  }
  if (values.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": empty"));
  return values;
}

absl::StatusOr<std::vector<uint32_t>> ParseTopKs(const std::string& text) {
  std::vector<uint32_t> values;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    uint32_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 1 || value > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("--grid_top_k: \"", part, "\" is not an integer in [1, 1000]"));
    }
    values.push_back(value);
  }
  if (values.empty()) return absl::InvalidArgumentError("--grid_top_k: empty");
  return values;
}

// --grid_mode: the configs once per mode, modes outermost (one table row per mode and config).
absl::StatusOr<std::vector<eval::PipelineConfig>> PerMode(
    std::vector<eval::PipelineConfig> configs) {
  const std::string text = absl::GetFlag(FLAGS_grid_mode);
  if (text.empty()) return configs;
  std::vector<eval::PipelineConfig> out;
  for (absl::string_view mode : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    for (eval::PipelineConfig config : configs) {
      config.mode = std::string(absl::StripAsciiWhitespace(mode));
      out.push_back(std::move(config));
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("--grid_mode: empty");
  return out;
}

absl::StatusOr<std::vector<eval::PipelineConfig>> Configs() {
  auto base = PipelineFromFlags();
  if (!base.ok()) return base.status();
  if (!absl::GetFlag(FLAGS_grid)) return PerMode({*base});
  auto msca = ParseBools("grid_msca", absl::GetFlag(FLAGS_grid_msca));
  if (!msca.ok()) return msca.status();
  auto ibrp = ParseBools("grid_ibrp", absl::GetFlag(FLAGS_grid_ibrp));
  if (!ibrp.ok()) return ibrp.status();
  auto top_k = ParseTopKs(absl::GetFlag(FLAGS_grid_top_k));
  if (!top_k.ok()) return top_k.status();
  return PerMode(eval::AblationGrid(*base, *msca, *ibrp, *top_k));
}

// Progress on stderr: redrawn in place on a terminal (at most 5 times a second), else a line
// every 10% so that logs stay short.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(isatty(STDERR_FILENO) == 1) {}

  void Update(const eval::RunProgress& progress) {
    const absl::Time now = absl::Now();
    const bool last = progress.done == progress.total;
    if (tty_) {
      if (!last && now - last_print_ < absl::Milliseconds(200)) return;
      std::fprintf(stderr, "\r%s%s", eval::FormatProgress(progress).c_str(), last ? "\n" : "");
    } else {
      const size_t decile = progress.total == 0 ? 10 : progress.done * 10 / progress.total;
      if (!last && decile == last_decile_) return;
      last_decile_ = decile;
      std::fprintf(stderr, "%s\n", eval::FormatProgress(progress).c_str());
    }
    last_print_ = now;
    std::fflush(stderr);
  }

 private:
  const bool tty_;
  absl::Time last_print_ = absl::InfinitePast();
  size_t last_decile_ = 0;
};

// Checks the --fit_calibration flags before any question is sent.
absl::Status CheckCalibrationFlags(eval::QaSplit split) {
  if (absl::GetFlag(FLAGS_fit_calibration).empty()) {
    if (!absl::GetFlag(FLAGS_calibration_base).empty()) {
      return absl::InvalidArgumentError("--calibration_base needs --fit_calibration");
    }
    return absl::OkStatus();
  }
  IBGR_RETURN_IF_ERROR(eval::CheckCalibrationFitScope(
      /*fit=*/true, absl::GetFlag(FLAGS_grid), !absl::GetFlag(FLAGS_grid_mode).empty()));
  // Reports are made on the test split; fitting on it (or on all, which contains it) would tune
  // on the questions the figures are reported on.
  if (split == eval::QaSplit::kTest || split == eval::QaSplit::kAll) {
    return absl::InvalidArgumentError(
        "--fit_calibration: fit on --qa_split=validation (or train), never on test or all");
  }
  for (const auto& [name, target] :
       {std::pair<const char*, double>{"mc", absl::GetFlag(FLAGS_calibration_target_mc)},
        {"lookup", absl::GetFlag(FLAGS_calibration_target_lookup)},
        {"fv", absl::GetFlag(FLAGS_calibration_target_fv)}}) {
    if (!(target >= 0.0 && target <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--calibration_target_", name, ": ", target, " is outside [0, 1]"));
    }
  }
  if (const double z = absl::GetFlag(FLAGS_calibration_bound_z); !(z >= 0.0 && z <= 5.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--calibration_bound_z: ", z, " is outside [0, 5]"));
  }
  return absl::OkStatus();
}

// Fits the calibration on the examples, writes it, and publishes it when asked.
absl::Status FitAndWriteCalibration(const std::vector<reasoner::CalibrationExample>& examples,
                                    const eval::ReportMeta& meta,
                                    const reasoner::CalibrationFitVersions& fit_on) {
  reasoner::CalibrationFitOptions options;
  options.target_accuracy_multiple_choice = absl::GetFlag(FLAGS_calibration_target_mc);
  options.target_accuracy_kg_lookup = absl::GetFlag(FLAGS_calibration_target_lookup);
  options.target_accuracy_fact_verification = absl::GetFlag(FLAGS_calibration_target_fv);
  options.accuracy_bound_z = absl::GetFlag(FLAGS_calibration_bound_z);
  options.split = meta.qa_split;
  options.description =
      absl::StrCat(meta.command, " (split seed ", meta.split_seed, ", ", meta.started_at, ")");
  IBGR_ASSIGN_OR_RETURN(const artifacts::v1::ConfidenceCalibration calibration,
                        reasoner::FitCalibration(examples, options));
  for (const artifacts::v1::TaskCalibration& task : calibration.tasks()) {
    std::fprintf(stderr,
                 "calibration %s%s%s: %lld examples (%lld right), ECE raw %.3f -> calibrated "
                 "%.3f, threshold %.3f: coverage %.1f%%, accuracy when committed %.1f%%\n",
                 task.task().c_str(), task.question_class().empty() ? "" : "/",
                 task.question_class().c_str(), static_cast<long long>(task.examples()),
                 static_cast<long long>(task.positives()), task.ece_raw(), task.ece_calibrated(),
                 task.threshold(), 100 * task.coverage(), 100 * task.accuracy_when_committed());
  }
  const std::string path = absl::GetFlag(FLAGS_fit_calibration);
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(path, common::ProtoToJson(calibration)));
  std::fprintf(stderr, "wrote %s\n", path.c_str());
  if (const std::string base = absl::GetFlag(FLAGS_calibration_base); !base.empty()) {
    IBGR_ASSIGN_OR_RETURN(const int64_t version,
                          reasoner::PublishCalibration(base, calibration, meta.command, fit_on));
    std::fprintf(stderr, "published %s/%s/%lld\n", base.c_str(), reasoner::kCalibrationKind,
                 static_cast<long long>(version));
  }
  return absl::OkStatus();
}

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

int Eval(const std::vector<std::string>& args) {
  if (!args.empty()) return Usage("takes flags only");
  const std::string spec = absl::GetFlag(FLAGS_dataset);
  if (spec.empty()) return Usage("--dataset is required");
  auto format = eval::ParseDatasetFormat(absl::GetFlag(FLAGS_format));
  if (!format.ok()) return Usage(std::string(format.status().message()));
  auto qa_split = eval::ParseQaSplit(absl::GetFlag(FLAGS_qa_split), "--qa_split");
  if (!qa_split.ok()) return Usage(std::string(qa_split.status().message()));
  const uint64_t split_seed = absl::GetFlag(FLAGS_split_seed);
  const int64_t limit = absl::GetFlag(FLAGS_limit);
  if (limit < 0) return Usage(absl::StrCat("--limit: must be >= 0, got ", limit));
  if (const int n = absl::GetFlag(FLAGS_lookup_as_choices); n < 0 || n > 10) {
    return Usage(absl::StrCat("--lookup_as_choices: must be in [0, 10], got ", n));
  }
  const int concurrency = absl::GetFlag(FLAGS_concurrency);
  if (concurrency < 1 || concurrency > eval::kMaxConcurrency) {
    return Usage(absl::StrCat("--concurrency: must be in [1, ", eval::kMaxConcurrency, "], got ",
                              concurrency));
  }
  auto deadline = DeadlineFromFlags();
  if (!deadline.ok()) return Usage(std::string(deadline.status().message()));
  auto configs = Configs();
  if (!configs.ok()) return Usage(std::string(configs.status().message()));
  if (auto s = CheckCalibrationFlags(*qa_split); !s.ok()) return Usage(std::string(s.message()));

  auto paths = eval::ExpandDatasetPaths(spec);
  if (!paths.ok()) return Fail(paths.status());
  std::vector<eval::QaDataset> datasets;
  for (const std::string& path : *paths) {
    auto dataset = eval::LoadDataset(path, *format);
    if (!dataset.ok()) return Fail(dataset.status());
    if (const int per_question = absl::GetFlag(FLAGS_lookup_as_choices);
        per_question > 0 && dataset->format == eval::DatasetFormat::kLookup) {
      dataset->items = eval::LookupAsChoices(dataset->items, per_question);
      dataset->name += "-choices";
    }
    eval::KeepSplit(*qa_split, split_seed, &dataset->items);
    if (limit > 0 && dataset->items.size() > static_cast<size_t>(limit)) {
      dataset->items.resize(limit);
    }
    std::fprintf(stderr, "loaded %s: %zu questions (%s, split %s)\n", path.c_str(),
                 dataset->items.size(),
                 std::string(eval::DatasetFormatName(dataset->format)).c_str(),
                 std::string(eval::QaSplitName(*qa_split)).c_str());
    datasets.push_back(*std::move(dataset));
  }
  auto stub = GatewayStubFromFlags();
  if (!stub.ok()) return Fail(stub.status());

  eval::ReportMeta meta;
  meta.gateway = absl::GetFlag(FLAGS_gateway);
  meta.concurrency = concurrency;
  meta.deadline_ms = absl::ToInt64Milliseconds(*deadline);
  meta.limit = limit;
  meta.qa_split = std::string(eval::QaSplitName(*qa_split));
  meta.split_seed = split_seed;
  meta.command = RedactedCommandLineForReports();
  meta.started_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());

  eval::RunOptions options;
  options.concurrency = concurrency;
  options.deadline = *deadline;
  options.api_key = ApiKeyFromFlags();
  std::vector<eval::RunSummary> summaries;
  std::vector<eval::CalibrationRun> calibration_runs;
  std::vector<reasoner::CalibrationExample> calibration_examples;
  reasoner::CalibrationFitVersions fit_on;
  int answered = 0;
  for (const eval::QaDataset& dataset : datasets) {
    for (const eval::PipelineConfig& config : *configs) {
      std::fprintf(stderr, "%s [%s]\n", dataset.name.c_str(), config.Label().c_str());
      ProgressPrinter printer;
      options.pipeline = config;
      options.on_progress = [&printer](const eval::RunProgress& p) { printer.Update(p); };
      const absl::Time start = absl::Now();
      auto outcomes = eval::RunItems(stub->get(), dataset.items, options);
      if (!outcomes.ok()) return Fail(outcomes.status());
      const eval::RunSummary summary = eval::Summarize(dataset.name, config.Label(), *outcomes,
                                                       absl::ToDoubleSeconds(absl::Now() - start));
      answered += summary.answered;
      std::fprintf(stderr,
                   "  accuracy %.1f%%, coverage %.1f%%, errors %d, p50 %.1f ms, p99 %.1f ms\n",
                   100 * summary.accuracy, 100 * summary.coverage, summary.errors,
                   summary.latency_p50_ms, summary.latency_p99_ms);
      for (const auto& [code, count] : summary.errors_by_code) {
        std::fprintf(stderr, "  %d x %s\n", count, code.c_str());
      }
      summaries.push_back(summary);
      calibration_runs.push_back(
          eval::MakeCalibrationRun(dataset.name, config.Label(), dataset.items, *outcomes));
      // Per question class too, when the set holds more than one (each class has its own
      // calibration; a pooled figure hides which one commits).
      std::map<std::string, std::vector<size_t>> by_class;
      for (size_t i = 0; i < outcomes->size(); ++i) {
        if (!(*outcomes)[i].question_class.empty()) {
          by_class[(*outcomes)[i].question_class].push_back(i);
        }
      }
      if (by_class.size() > 1) {
        for (const auto& [question_class, indices] : by_class) {
          std::vector<eval::QaItem> class_items;
          std::vector<eval::ItemOutcome> class_outcomes;
          for (size_t i : indices) {
            class_items.push_back(dataset.items[i]);
            class_outcomes.push_back((*outcomes)[i]);
          }
          eval::CalibrationRun run =
              eval::MakeCalibrationRun(absl::StrCat(dataset.name, " [", question_class, "]"),
                                       config.Label(), class_items, class_outcomes);
          run.question_class = question_class;
          calibration_runs.push_back(std::move(run));
        }
      }
      // The versions the first answered question reports: what the calibration is fitted on.
      for (const eval::ItemOutcome& o : *outcomes) {
        if (fit_on.kg_version.empty() && o.code == absl::StatusCode::kOk) {
          fit_on = {o.versions.kg_version(), o.versions.alignment_bundle_version(),
                    o.versions.retriever_model_version()};
        }
      }
      for (reasoner::CalibrationExample& example :
           eval::CalibrationExamples(dataset.name, *outcomes)) {
        calibration_examples.push_back(std::move(example));
      }
    }
  }
  const std::string markdown = eval::ReportMarkdown(meta, summaries, calibration_runs);
  std::printf("%s", markdown.c_str());
  if (const std::string path = absl::GetFlag(FLAGS_out_json); !path.empty()) {
    if (auto s = WriteText(path, eval::ReportJson(meta, summaries, calibration_runs)); !s.ok()) {
      return Fail(s);
    }
    std::fprintf(stderr, "wrote %s\n", path.c_str());
  }
  if (const std::string path = absl::GetFlag(FLAGS_out_md); !path.empty()) {
    if (auto s = WriteText(path, markdown); !s.ok()) return Fail(s);
    std::fprintf(stderr, "wrote %s\n", path.c_str());
  }
  if (answered == 0) {
    std::fprintf(stderr, "error: no question was answered (see the errors above)\n");
    return 1;
  }
  if (!absl::GetFlag(FLAGS_fit_calibration).empty()) {
    const absl::Status fit = FitAndWriteCalibration(calibration_examples, meta, fit_on);
    if (!fit.ok()) return Fail(fit);
  }
  return 0;
}

}  // namespace ibgraphrag::cli
