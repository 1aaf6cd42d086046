#include "tools/eval/eval_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::eval {
namespace {

using Json = nlohmann::ordered_json;

std::string Percent(double rate) { return absl::StrFormat("%.1f%%", 100.0 * rate); }

// Markdown table cells must not contain pipes or newlines.
std::string Cell(std::string text) {
  for (char& c : text) {
    if (c == '|' || c == '\n') c = ' ';
  }
  return text;
}

Json SummaryJson(const RunSummary& s) {
  Json stages = Json::object();
  for (const auto& [stage, ms] : s.mean_stage_ms) stages[stage] = ms;
  Json degraded = Json::object();
  for (const auto& [component, count] : s.degraded_by_component) degraded[component] = count;
  Json errors = Json::object();
  for (const auto& [code, count] : s.errors_by_code) errors[code] = count;
  return Json{
      {"dataset", s.dataset},
      {"config", s.config},
      {"total", s.total},
      {"answered", s.answered},
      {"errors", s.errors},
      {"correct", s.correct},
      {"accuracy", s.accuracy},
      {"accuracy_answered", s.accuracy_answered},
      {"answer_entity_hit",
       {{"applicable", s.hit_applicable},
        {"exact", s.hit_exact},
        {"partial_or_exact", s.hit_partial_or_exact},
        {"rate_exact", s.hit_rate_exact},
        {"rate_partial", s.hit_rate_partial}}},
      {"alignment",
       {{"with_entities", s.with_entities},
        {"coverage", s.coverage},
        {"mean_entities", s.mean_entities}}},
      {"mean_evidence", s.mean_evidence},
      {"mean_llm_calls", s.mean_llm_calls},
      {"abstained", s.abstained},
      {"low_confidence", s.low_confidence},
      {"insufficient_evidence", s.insufficient_evidence},
      {"degraded_answers", s.degraded_answers},
      {"degraded_by_component", degraded},
      {"errors_by_code", errors},
      {"latency_ms",
       {{"mean", s.latency_mean_ms},
        {"p50", s.latency_p50_ms},
        {"p95", s.latency_p95_ms},
        {"p99", s.latency_p99_ms}}},
      {"mean_stage_ms", stages},
      {"wall_seconds", s.wall_seconds},
      {"throughput_qps", s.throughput_qps},
  };
}

Json LookupCountsJson(const RunSummary::LookupCounts& c) {
  const double open = std::max(c.open, 1);
  return Json{
      {"questions", c.questions},
      {"right", c.right},
      {"open", c.open},
      {"hit_at_5", c.open == 0 ? 0.0 : c.hit5 / open},
      {"precision_at_5", c.precision5_sum / open},
      {"relation_precision_at_10", c.relation_precision10_sum / std::max(c.relation_questions, 1)},
      {"relation_questions", c.relation_questions},
      {"evidence_contains_answer", c.evidence_any / open},
      {"evidence_top10", c.evidence_top10 / open},
      {"evidence_top100", c.evidence_top100 / open},
      {"options", c.options},
      {"options_aligned_to_expected_type", c.options_typed}};
}

// The lookup section of a run (empty when the dataset is not a lookup set).
Json LookupJson(const RunSummary& s) {
  if (s.lookup.questions == 0) return Json();
  Json by_relation = Json::object();
  for (const auto& [relation, c] : s.lookup_by_relation)
    by_relation[relation] = LookupCountsJson(c);
  Json rows = Json::array();
  for (const RunSummary::LookupRow& r : s.lookup_rows) {
    rows.push_back(Json{{"id", r.id},
                        {"relation", r.relation},
                        {"open", r.open},
                        {"evidence_rank", r.evidence_rank},
                        {"hit_at_5", r.hit5},
                        {"precision_at_5", r.precision5}});
  }
  Json out = LookupCountsJson(s.lookup);
  out["by_relation"] = std::move(by_relation);
  out["questions_detail"] = std::move(rows);
  return out;
}

std::string CountsText(const std::map<std::string, int>& counts) {
  if (counts.empty()) return "";
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(absl::StrCat(name, " ", count));
  return absl::StrCat(" (", absl::StrJoin(parts, ", "), ")");
}

// Fact verification over answered claims: the confusion matrix and FactScores.
Json FactJson(const RunSummary& s) {
  static constexpr const char* kNames[] = {"SUPPORTED", "REFUTED", "NOT_ENOUGH_EVIDENCE"};
  Json confusion = Json::object();
  for (int g = 0; g < kFactVerdicts; ++g) {
    for (int a = 0; a < kFactVerdicts; ++a)
      confusion[kNames[g]][kNames[a]] = s.fact_confusion[g][a];
  }
  const FactScores f = ScoreFacts(s.fact_confusion);
  return Json{{"claims", f.claims},
              {"accuracy", f.accuracy},
              {"macro_f1", f.macro_f1},
              {"binary_claims", f.binary_claims},
              {"binary_accuracy", f.binary_accuracy},
              {"binary_macro_f1", f.binary_macro_f1},
              {"confusion_gold_by_answer", confusion}};
}

}  // namespace

std::string ReportJson(const ReportMeta& meta, const std::vector<RunSummary>& runs,
                       const std::vector<CalibrationRun>& calibration) {
  Json json{{"tool", "ibgr eval"},
            {"gateway", meta.gateway},
            {"command", meta.command},
            {"started_at", meta.started_at},
            {"concurrency", meta.concurrency},
            {"deadline_ms", meta.deadline_ms},
            {"limit", meta.limit},
            {"qa_split", meta.qa_split},
            {"split_seed", meta.split_seed},
            {"runs", Json::array()}};
  // Whole runs pair with `runs` in order; a class entry attaches to the whole run before it.
  std::vector<const CalibrationRun*> whole;
  std::vector<std::vector<const CalibrationRun*>> by_class;
  for (const CalibrationRun& c : calibration) {
    if (c.question_class.empty()) {
      whole.push_back(&c);
      by_class.emplace_back();
    } else if (!by_class.empty()) {
      by_class.back().push_back(&c);
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    Json run = SummaryJson(runs[i]);
    if (Json lookup = LookupJson(runs[i]); !lookup.is_null()) run["lookup"] = std::move(lookup);
    if (runs[i].fact_claims > 0) run["fact_verification"] = FactJson(runs[i]);
    if (i < whole.size()) {
      run["calibration"] = CalibrationSummaryJson(whole[i]->summary);
      run["questions"] = whole[i]->questions;
      for (const CalibrationRun* c : by_class[i]) {
        run["calibration_by_class"][c->question_class] = CalibrationSummaryJson(c->summary);
      }
    }
    json["runs"].push_back(std::move(run));
  }
  return json.dump(2) + "\n";
}

std::string ReportMarkdown(const ReportMeta& meta, const std::vector<RunSummary>& runs,
                           const std::vector<CalibrationRun>& calibration) {
  std::string md = absl::StrFormat(
      "Command: `%s`  \nGateway %s, concurrency %d, deadline %d ms, started %s.\n",
      Cell(meta.command), Cell(meta.gateway), meta.concurrency, meta.deadline_ms, meta.started_at);
  if (meta.qa_split != "all") {
    absl::StrAppendFormat(&md, "Questions: the %s split only (split seed %d).\n",
                          Cell(meta.qa_split), meta.split_seed);
  }
  absl::StrAppend(&md, "\n");
  absl::StrAppend(&md,
                  "| dataset | config | n | accuracy | hit exact | hit partial | coverage | "
                  "entities | degraded | errors | p50 ms | p95 ms | p99 ms | q/s |\n",
                  "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const RunSummary& s : runs) {
    const bool hit = s.hit_applicable > 0;
    absl::StrAppendFormat(
        &md, "| %s | %s | %d | %s | %s | %s | %s | %.2f | %d | %d | %.1f | %.1f | %.1f | %.1f |\n",
        Cell(s.dataset), Cell(s.config), s.total, Percent(s.accuracy),
        hit ? Percent(s.hit_rate_exact) : "n/a", hit ? Percent(s.hit_rate_partial) : "n/a",
        Percent(s.coverage), s.mean_entities, s.degraded_answers, s.errors, s.latency_p50_ms,
        s.latency_p95_ms, s.latency_p99_ms, s.throughput_qps);
  }
  absl::StrAppend(&md,
                  "\nPer run: abstentions (answered without choosing), mean stage times (ms), "
                  "degradations and errors.\n\n");
  for (const RunSummary& s : runs) {
    std::vector<std::string> stages;
    for (const auto& [stage, ms] : s.mean_stage_ms) {
      stages.push_back(absl::StrFormat("%s %.2f", stage, ms));
    }
    absl::StrAppendFormat(&md, "- %s, %s: abstained %d; stages %s; degraded %d%s; errors %d%s\n",
                          Cell(s.dataset), Cell(s.config), s.abstained,
                          stages.empty() ? "none" : absl::StrJoin(stages, ", "), s.degraded_answers,
                          CountsText(s.degraded_by_component), s.errors,
                          CountsText(s.errors_by_code));
  }
  for (const RunSummary& s : runs) {
    if (s.lookup.questions == 0) continue;
    absl::StrAppendFormat(
        &md,
        "\nLookup questions, %s, %s (open questions: hit@5 = an accepted answer among the first "
        "five answers; precision@5; evidence = an evidence triple names an accepted answer, "
        "anywhere / in the first 10 / 100; relation P@10 = share of the first 10 evidence triples "
        "with a relation the intent names, over the open questions whose intent names one; right = "
        "hit@5 for open questions, the right option or "
        "verdict otherwise):\n\n"
        "| relation | questions | right | open | hit@5 | precision@5 | evidence | top 10 | "
        "top 100 | relation P@10 |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
        Cell(s.dataset), Cell(s.config));
    auto row = [&](const std::string& name, const RunSummary::LookupCounts& c) {
      const double open = std::max(c.open, 1);
      absl::StrAppendFormat(&md, "| %s | %d | %d | %d | %s | %.2f | %s | %s | %s | %.2f |\n", name,
                            c.questions, c.right, c.open, c.open ? Percent(c.hit5 / open) : "n/a",
                            c.precision5_sum / open,
                            c.open ? Percent(c.evidence_any / open) : "n/a",
                            c.open ? Percent(c.evidence_top10 / open) : "n/a",
                            c.open ? Percent(c.evidence_top100 / open) : "n/a",
                            c.relation_precision10_sum / std::max(c.relation_questions, 1));
    };
    for (const auto& [relation, c] : s.lookup_by_relation) row(relation, c);
    row("**all**", s.lookup);
    if (s.lookup.options > 0) {
      absl::StrAppendFormat(
          &md, "\nOptions aligned to an entity of the expected type: %d of %d (%s).\n",
          s.lookup.options_typed, s.lookup.options,
          Percent(static_cast<double>(s.lookup.options_typed) / s.lookup.options));
    }
  }
  bool any_claims = false;
  for (const RunSummary& s : runs) any_claims |= s.fact_claims > 0;
  if (any_claims) {
    absl::StrAppend(
        &md,
        "\nFact verification, answered claims (NEE = NOT ENOUGH EVIDENCE: an UNKNOWN verdict; "
        "PubHealth's mixture and unproven claims are gold NEE. Binary = the claims whose gold is "
        "SUPPORTED or REFUTED, an NEE answer counting as a miss; all = the three verdicts):\n\n"
        "| dataset | config | claims | binary: n | accuracy | macro-F1 | all: accuracy | "
        "macro-F1 | answered S / R / NEE |\n|---|---|--:|--:|--:|--:|--:|--:|---|\n");
    for (const RunSummary& s : runs) {
      if (s.fact_claims == 0) continue;
      const FactScores f = ScoreFacts(s.fact_confusion);
      int answered[kFactVerdicts] = {0, 0, 0};
      for (int g = 0; g < kFactVerdicts; ++g) {
        for (int a = 0; a < kFactVerdicts; ++a) answered[a] += s.fact_confusion[g][a];
      }
      absl::StrAppendFormat(&md, "| %s | %s | %d | %d | %s | %.3f | %s | %.3f | %d / %d / %d |\n",
                            Cell(s.dataset), Cell(s.config), f.claims, f.binary_claims,
                            Percent(f.binary_accuracy), f.binary_macro_f1, Percent(f.accuracy),
                            f.macro_f1, answered[0], answered[1], answered[2]);
    }
  }
  if (!calibration.empty()) absl::StrAppend(&md, CalibrationMarkdown(calibration));
  return md;
}

}  // namespace ibgraphrag::eval
