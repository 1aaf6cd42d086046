// The `ibgr eval` report: a JSON document (every figure, for machines) and a Markdown table
// (for docs), from the run summaries.
#ifndef IBGRAPHRAG_TOOLS_EVAL_EVAL_REPORT_H_
#define IBGRAPHRAG_TOOLS_EVAL_EVAL_REPORT_H_

#include <string>
#include <vector>

#include "tools/eval/calibration_eval.h"
#include "tools/eval/eval_metrics.h"

namespace ibgraphrag::eval {

// How the run was made, recorded in the report.
struct ReportMeta {
  std::string gateway;
  int concurrency = 0;
  int64_t deadline_ms = 0;
  // 0 = every question.
  int64_t limit = 0;
  // The questions' part under the retriever's train / validation / test rule (qa_split.h):
  // "all", or "test" to score only questions no retriever trained on; and the split's seed.
  std::string qa_split = "all";
  uint64_t split_seed = 0;
  // The command line without secrets, for reproducibility.
  std::string command;
  // UTC, RFC 3339.
  std::string started_at;
};

// One summary per (dataset, configuration), in run order; `calibration`, when given, holds one
// entry per run in the same order (its summary goes to the run's "calibration" object, its
// records to "questions", and the Markdown gains the calibration tables).
std::string ReportJson(const ReportMeta& meta, const std::vector<RunSummary>& runs,
                       const std::vector<CalibrationRun>& calibration = {});
std::string ReportMarkdown(const ReportMeta& meta, const std::vector<RunSummary>& runs,
                           const std::vector<CalibrationRun>& calibration = {});

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_TOOLS_EVAL_EVAL_REPORT_H_
