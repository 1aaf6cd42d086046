// What `ibgr eval` measures: each answer is scored into an ItemOutcome (correctness, answer-entity
// hit in the evidence, alignment coverage, degradations, latency); Summarize aggregates the
// outcomes of one dataset under one pipeline configuration. Definitions are in
// docs/evaluation.md; the code here is the reference.
#ifndef IBGRAPHRAG_TOOLS_EVAL_EVAL_METRICS_H_
#define IBGRAPHRAG_TOOLS_EVAL_EVAL_METRICS_H_

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/qa/qa_datasets.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::eval {

// How the gold answer appears among the evidence entity names (heads and tails).
enum class EntityHit {
  kNone,
  // Some evidence entity name containing the gold text, or contained in it, as a whole-word
  // phrase of at least kMinPartialHitChars characters (after normalisation).
  kPartial,
  // Some evidence entity name equal to the gold text (after normalisation).
  kExact,
};
inline constexpr size_t kMinPartialHitChars = 4;

// The outcome of one question.
struct ItemOutcome {
  // OK, or the RPC's code (absl and gRPC share the numbers).
  absl::StatusCode code = absl::StatusCode::kOk;
  // The RPC's error message (never the question text).
  std::string error;
  // Client-side wall time of the call, milliseconds.
  double latency_ms = 0;
  // The answer matches the gold option (by index or by option text) or the gold label.
  bool correct = false;
  // What was answered: "B", "SUPPORTED", ... ("" when nothing was chosen).
  std::string predicted;
  // Answered without choosing: no option (option_index -1), or the label UNKNOWN/unset.
  bool abstained = false;
  // The gold answer names an entity (see QaItem::gold_is_entity) and the call succeeded.
  bool hit_applicable = false;
  EntityHit hit = EntityHit::kNone;
  int entities = 0;
  int evidence = 0;
  int llm_calls = 0;  // AnswerResponse.llm_calls
  // Components reported in AnswerResponse.degraded (each at most once per answer).
  std::vector<std::string> degraded_components;
  // Per-stage durations as reported by the gateway, in response order.
  std::vector<std::pair<std::string, double>> stage_ms;
  bool low_confidence = false;
  bool insufficient_evidence = false;
  // Calibration (calibration_eval.h): Answer.confidence, raw_confidence, calibration, abstained.
  double confidence = 0;
  double raw_confidence = 0;
  std::string calibration;
  bool calibration_abstained = false;
  // Answer.question_class ("kg_lookup", "clinical_reasoning", "claim"; "" for LLM answers).
  std::string question_class;
  // Fact verification, answered claims: the gold verdict and the answered one as FactVerdict
  // indices (-1 otherwise).
  int fact_gold = -1;
  int fact_answered = -1;
  // The extractive backend's signals (has_signals = Answer.signals was set) and whether their
  // candidate answer is right.
  bool has_signals = false;
  // The served artifact versions the answer reports (recorded with a fitted calibration).
  v1::ArtifactVersions versions;
  reasoner::ExtractiveSignals signals;
  bool candidate_correct = false;
  // Lookup sets (QaItem::accepted non-empty): the relation kind asked about, whether the
  // question is open, and
  //   evidence_rank   1-based rank of the first evidence triple (best first) naming an accepted
  //                   answer as head or tail; 0 when none does
  //   hit5            open: one of the first five answers is accepted (Answer.answers; for an
  //                   answer without that list, the entities of the evidence it used other
  //                   than the aligned ones, in order); otherwise `correct`
  //   precision5      open: accepted answers among the first min(5, answers) answers, over
  //                   that count (0 without answers)
  //   relation_precision10  open, when the answer's intent names a relation
  //                   (AnswerResponse.intent.relations; else -1, not counted): share of the
  //                   first 10 evidence triples (over 10 slots) whose relation is one of those:
  //                   how much of the evidence is about what the question asks
  bool lookup = false;
  bool open = false;
  std::string item_id;
  std::string relation;
  int evidence_rank = 0;
  bool hit5 = false;
  double precision5 = 0;
  double relation_precision10 = -1;
  // Lookup multiple choice with an answer type (issue 26, options read in context): options, and
  // those whose line (common::AlignmentText) holds a kept entity of the expected KG type.
  int options = 0;
  int options_typed = 0;
};

// The KG entity types a lookup set's answer_type names ("drug" -> compound, "phenotype" ->
// symptom or phenotype, ...); empty for an unknown one.
std::vector<std::string> KgTypesOfAnswerType(absl::string_view answer_type);

// Whether `name` names one of `accepted`: the same normalised words in any order, a trailing
// plural 's' of each ignored ("Lung small cell carcinoma" = "small cell lung carcinomas"), and a
// drug's trailing salt or ester words too ("Fluticasone Propionate" = "fluticasone").
bool IsAcceptedName(absl::string_view name, const std::vector<std::string>& accepted);

// Lower-cases ASCII letters, turns every other ASCII character that is not a letter or a digit
// into a space, collapses runs of spaces and trims (bytes >= 0x80 are kept as they are).
// "Type-2 Diabetes  Mellitus." -> "type 2 diabetes mellitus".
std::string NormalizeName(absl::string_view text);

// Whether `answer` matches the item's gold answer. Multiple choice: the chosen option_index is
// the gold index, or names an option whose normalised text equals the gold text (datasets repeat
// options). Fact verification: the label equals the gold label (UNKNOWN is never correct).
bool IsCorrect(const QaItem& item, const v1::Answer& answer);

// The best EntityHit of `gold_text` over the evidence heads' and tails' names.
EntityHit AnswerEntityHit(absl::string_view gold_text, const v1::AnswerResponse& response);

// Scores a successful answer.
ItemOutcome ScoreAnswer(const QaItem& item, const v1::AnswerResponse& response, double latency_ms);
// A failed call.
ItemOutcome ErrorOutcome(absl::StatusCode code, std::string message, double latency_ms);

// Nearest-rank percentile (p in [0, 100]) of `values`: the smallest value with at least p% of
// the values at or below it. 0 for no values.
double Percentile(std::vector<double> values, double p);

// Aggregates over one dataset and configuration. Rates are in [0, 1].
// Verdicts of fact verification as the reports count them: NOT ENOUGH EVIDENCE is
// FACT_LABEL_UNKNOWN (and an answer without a label); PubHealth's mixture and unproven claims are
// gold NOT ENOUGH EVIDENCE (common/qa/qa_datasets.h ParsePubHealth).
enum FactVerdict { kFactSupported = 0, kFactRefuted = 1, kFactNotEnoughEvidence = 2 };
inline constexpr int kFactVerdicts = 3;
using FactConfusion = std::array<std::array<int, kFactVerdicts>, kFactVerdicts>;

// Accuracy and macro-F1 of a confusion matrix (rows gold, columns answered): over the binary
// subset (gold SUPPORTED or REFUTED; an answer of NOT ENOUGH EVIDENCE counts as a miss; F1 averaged
// over the two), as the IBGraphRAG paper scores PubHealth, and over every claim (the three
// verdicts; F1 averaged over the verdicts some gold claim has). A class's F1 is
// 2 tp / (2 tp + fp + fn), 0 when that is 0 / 0.
struct FactScores {
  int binary_claims = 0;
  double binary_accuracy = 0;
  double binary_macro_f1 = 0;
  int claims = 0;
  double accuracy = 0;
  double macro_f1 = 0;
};
FactScores ScoreFacts(const FactConfusion& confusion);

struct RunSummary {
  std::string dataset;
  std::string config;
  int total = 0;     // questions sent
  int answered = 0;  // calls that returned OK
  int errors = 0;    // calls that failed
  int correct = 0;
  // correct / total: failed calls count as wrong.
  double accuracy = 0;
  // correct / answered.
  double accuracy_answered = 0;
  // Answer-entity hit rate over answered questions whose gold answer names an entity.
  int hit_applicable = 0;
  int hit_exact = 0;
  int hit_partial_or_exact = 0;
  double hit_rate_exact = 0;
  double hit_rate_partial = 0;
  // Alignment coverage over answered questions: share with >= 1 entity, mean entities.
  int with_entities = 0;
  double coverage = 0;
  double mean_entities = 0;
  double mean_evidence = 0;
  double mean_llm_calls = 0;  // per answered question
  // Answered calls that chose no option / gave no SUPPORTED or REFUTED verdict.
  int abstained = 0;
  int low_confidence = 0;
  int insufficient_evidence = 0;
  // Answers with at least one degradation, and answers by degraded component.
  int degraded_answers = 0;
  std::map<std::string, int> degraded_by_component;
  // Failed calls by gRPC code name ("UNAVAILABLE", ...).
  std::map<std::string, int> errors_by_code;
  // Client-side latency of answered calls, milliseconds.
  double latency_mean_ms = 0;
  double latency_p50_ms = 0;
  double latency_p95_ms = 0;
  double latency_p99_ms = 0;
  // Mean duration of each stage over the answered calls that report it, in first-seen order.
  std::vector<std::pair<std::string, double>> mean_stage_ms;
  // Wall time of the whole run and answered calls per second over it.
  double wall_seconds = 0;
  double throughput_qps = 0;
  // Lookup sets (ItemOutcome::lookup): answered lookup questions and, over the open ones,
  // hit@5, mean precision@5 and evidence containing an accepted answer (in the first 10, the
  // first 100, anywhere); per relation kind: questions, right answers (hit@5 for open
  // questions, `correct` otherwise) and evidence containing an accepted answer.
  struct LookupCounts {
    int questions = 0;
    int open = 0;
    int right = 0;  // open questions with hit@5, plus the other kinds answered correctly
    int hit5 = 0;   // open questions with hit@5
    double precision5_sum = 0;            // open questions
    double relation_precision10_sum = 0;  // open questions whose intent names a relation
    int relation_questions = 0;
    int evidence_any = 0, evidence_top10 = 0, evidence_top100 = 0;
    int options = 0, options_typed = 0;  // multiple choice: options aligned to the expected type
  };
  LookupCounts lookup;
  std::map<std::string, LookupCounts> lookup_by_relation;
  // Fact verification over answered claims: gold verdict (rows) against the answered one.
  FactConfusion fact_confusion{};
  int fact_claims = 0;
  // Per lookup question, in item order: id, relation, open, evidence_rank, hit5, precision5.
  struct LookupRow {
    std::string id, relation;
    bool open = false;
    int evidence_rank = 0;
    bool hit5 = false;
    double precision5 = 0;
  };
  std::vector<LookupRow> lookup_rows;
};

RunSummary Summarize(const std::string& dataset, const std::string& config,
                     const std::vector<ItemOutcome>& outcomes, double wall_seconds);

// "UNAVAILABLE", "DEADLINE_EXCEEDED", ...
std::string StatusCodeName(absl::StatusCode code);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_TOOLS_EVAL_EVAL_METRICS_H_
