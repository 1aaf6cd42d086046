// Plain request/result types of the reasoning service. They mirror protos/ibgraphrag/v1/
// reasoner.proto field for field so the gRPC layer is a mechanical copy; nothing here knows gRPC.
#ifndef IBGRAPHRAG_SERVICES_REASONER_REASONER_TYPES_H_
#define IBGRAPHRAG_SERVICES_REASONER_REASONER_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/question_intent.h"

namespace ibgraphrag::reasoner {

// Backend name of the extractive backend (the empty name selects it too).
inline constexpr absl::string_view kExtractiveBackend = "extractive";

// What kind of question is asked; decides the prompt template, the parser and the answer fields.
enum class Task {
  // Resolved to kMultipleChoice when options are given; without, kFactVerification for a yes/no
  // question and kOpen otherwise (see ResolveTask).
  kUnspecified = 0,
  kMultipleChoice = 1,
  kFactVerification = 2,
  kOpen = 3,
};

// Verdict for kFactVerification; kUnspecified for the other tasks.
enum class FactLabel {
  kUnspecified = 0,
  kSupported = 1,
  kRefuted = 2,
  // The evidence (or the model's output) does not decide the claim.
  kUnknown = 3,
};

enum class ParseStatus {
  // The answer was read from the output (always the case for the extractive backend).
  kOk = 0,
  // Nothing could be read without guessing: `answer` holds the raw output, no option or label set.
  kUnparseable = 1,
};

// A KG entity as the evidence names it.
struct EntityRef {
  // Stable external id ("DOID:9352", "DrugBank:DB00945"); may be empty. Entities are matched on
  // this id when both sides have one, on their normalised names otherwise.
  std::string id;
  std::string name;  // preferred name, used in prompts and for matching option text
  std::string type;  // lower-case entity type ("compound", "gene"); may be empty (unknown)
};

// One retrieved triple.
struct EvidenceTriple {
  EntityRef head;
  std::string relation;              // readable relation name, e.g. "drug treats disease"
  std::string relation_description;  // one sentence for the prompt; may be empty
  EntityRef tail;
  // Retriever relevance in [0, 1], higher is better; 0 when unscored. Values outside [0, 1] are
  // clamped; when every score is <= 0 all triples weigh the same.
  double score = 0.0;
  std::string source;  // data source that asserted the triple ("hetionet", ...)
  // Every data source that asserted it (`source` first); empty when only `source` is known.
  std::vector<std::string> sources;
  // The source's own evidence score (a DisGeNET score, a GWAS mapping confidence, ...), in
  // [0, 1]; negative = none.
  double source_score = -1.0;
  // Hop distance from the nearest topic entity (1 = touches one); 0 when unknown.
  int hop = 0;
};

// A chain of evidence triples starting at a topic entity.
struct ReasoningPath {
  std::vector<int> triple_indices;  // indices into ReasonRequest::evidence, in path order
  double score = 0.0;               // higher is better
};

// Several samples at different temperatures and a majority vote.
struct SelfConsistencyOptions {
  // Number of samples, 0..16; 0 or 1 disables voting (one sample). When 0 and `temperatures`
  // is non-empty, one sample per temperature; otherwise `temperatures` must have `samples`
  // entries when given.
  int samples = 0;
  // One temperature per sample, each in [0, 2]; empty means the schedule 0, 0.3, 0.5, 0.7, 0.9,
  // 1.0, 1.0, ... (see SampleTemperatures).
  std::vector<double> temperatures;
};

// A prompt rendered by the caller (a gateway mode following another paper's prompt); sent to the
// LLM in place of the versioned template. Empty `version` = none.
struct CallerPrompt {
  std::string version;  // reported as prompt_version, 1..64 bytes
  std::string system;   // may be empty, at most 64 KiB
  std::string user;     // 1 byte .. 256 KiB
};

struct ReasonRequest {
  Task task = Task::kUnspecified;
  // UTF-8, 1 byte .. 16 KiB; for kFactVerification, the claim. Patient data: never logged.
  std::string question;
  // Options for kMultipleChoice (2..26, each <= 1 KiB), lettered A..Z by position.
  std::vector<std::string> options;
  // Retrieved evidence, at most 1,000 triples, any order (prompts sort by score).
  std::vector<EvidenceTriple> evidence;
  std::vector<ReasoningPath> paths;
  // Entities found in the question. When empty, the extractive backend uses evidence entities
  // whose names occur in the question.
  std::vector<EntityRef> topic_entities;
  // Parallel to topic_entities (or empty): the question mention each was aligned from; entities
  // of one mention are one question entity (one topic group). Empty: grouped by normalised name.
  std::vector<uint32_t> topic_mentions;
  // "" or "extractive" = the extractive backend; otherwise a configured LLM backend name.
  std::string backend;
  SelfConsistencyOptions self_consistency;
  // Evidence budget in approximate tokens (characters / 4, see prompt_builder.h); 0 = default.
  int evidence_token_budget = 0;
  // Replaces the versioned template for LLM backends; the extractive backend ignores it.
  CallerPrompt caller_prompt;
  // Opaque id for log lines; never interpreted.
  std::string request_id;
  // The question's intent (common/question_intent.h); unset = read from `question`. An empty
  // intent turns intent-driven answering off (open questions list the best paths, as before).
  std::optional<common::QuestionIntent> intent;
};

// One entity an open question's intent-driven extractive answer names.
struct AnswerEntity {
  EntityRef entity;
  // Score-weighted evidence strength: sum over its triples of score * (1 + independent sources).
  double support = 0.0;
  // Indices into ReasonRequest::evidence of its triples (intent relation, linking it to a topic
  // entity), best first.
  std::vector<int> evidence;
  // Distinct sources of those triples.
  std::vector<std::string> sources;
  // Topic-entity groups it is linked to.
  int topics_linked = 0;
};

// One self-consistency sample's answer, in sample order.
struct Vote {
  double temperature = 0.0;
  // Option letter, fact label name or normalised free-text answer; empty when unparseable.
  std::string answer;
};

// Wall time spent in one stage: "prompt_build", "llm", "parse", "extractive".
struct StageTiming {
  std::string stage;
  double duration_ms = 0.0;
};

// Something that did not work as configured; an answer was produced anyway.
struct Degradation {
  std::string component;  // "llm"
  std::string reason;     // e.g. "backend 'vllm' UNAVAILABLE: ...; answered extractively"
};

// What the extractive backend's answer rests on, the inputs of its calibrated confidence
// (services/reasoner/confidence_calibration.h). Filled for multiple choice and fact
// verification; `present` stays false for open questions and LLM answers.
struct ExtractiveSignals {
  bool present = false;
  Task task = Task::kUnspecified;
  // Support of the candidate answer (multiple choice: the candidate option's, i.e. the best
  // option's, or 0 for an exception question's unsupported option; fact verification: the
  // larger of agreeing and contradicting weight), >= 0.
  double top_support = 0.0;
  // The runner-up's support (the best other option; the smaller of agree / contradict), >= 0.
  double runner_up_support = 0.0;
  // (top - runner-up) / top in [0, 1]; 0 when top is 0.
  double margin = 0.0;
  // Options with support > 0 (fact verification: how many of agree / contradict are > 0).
  int options_supported = 0;
  // Options of the question (fact verification: 2, SUPPORTED or REFUTED).
  int num_options = 0;
  // Both in question-entity groups (a topic entity and its same-name stand-ins count once):
  // those found in the evidence (multiple choice: topic groups no option names), and those among
  // them whose reach supports the candidate (fact verification: claim entities touched by a
  // deciding triple). Feature semantics version 2 (kCalibrationFeaturesVersion).
  int topics_present = 0;
  int topics_connected = 0;
  // Evidence triples in the request.
  int evidence_count = 0;
  // The question asks for the exception ("not", "except", "least", ...).
  bool exception_question = false;
  // The answer the evidence points to before any abstention: the option ranked first (-1 when no
  // option has support, or for exception questions without a single unsupported option), or
  // the verdict with more weight (UNKNOWN when tied or none). The eval fits calibration on
  // whether this candidate is right.
  int candidate_index = -1;
  FactLabel candidate_label = FactLabel::kUnspecified;
  // The question's class (QuestionClassName): the calibration is fitted per task and class.
  std::string question_class;
  // KG-lookup multiple choice (feature semantics version 3): the share, in [0, 1], of question
  // entities linked to the candidate by a triple of an asked relation (0: no option is so
  // linked); how many options are linked to as many (1 = the candidate alone); the distinct
  // sources of the candidate's linking triples.
  double intent_linked = 0.0;
  int linked_options = 0;
  int candidate_sources = 0;
};

struct ReasonResult {
  // The answer as text: "B) Aspirin" for multiple choice, "SUPPORTED" (+ explanation) for fact
  // verification, free text for open questions; the raw output when unparseable.
  std::string answer;
  // Open questions: every answer of the model's multi-answer list (its ans: lines), in order;
  // multiple choice and fact verification: the one answer. Empty when unparseable.
  std::vector<std::string> answers;
  int option_index = -1;      // chosen option, 0-based; -1 when none could be chosen
  std::string option_letter;  // "A".."Z"; empty when none
  FactLabel fact_label = FactLabel::kUnspecified;
  std::string rationale;   // evidence lines used, or the model's explanation
  std::string raw_output;  // the LLM's raw output (winning sample); empty for extractive
  ParseStatus parse_status = ParseStatus::kOk;
  std::string backend;  // backend that produced the answer ("extractive" or an LLM backend)
  bool used_llm = false;
  // Empty evidence, or evidence that does not connect any option/claim to the topic entities.
  bool insufficient_evidence = false;
  // Extractive: a tie or a runner-up within 80% of the winner. LLM: agreement below 0.5.
  bool low_confidence = false;
  // Extractive: weighted evidence support of the chosen answer (>= 0). LLM: equals `agreement`.
  double confidence = 0.0;
  // Share of self-consistency samples agreeing with the answer, in [0, 1]; 1 without voting.
  double agreement = 1.0;
  std::vector<Vote> votes;     // one per LLM sample; empty for extractive
  std::string prompt_version;  // "mcq.v1", ...; "extractive.v1" for the extractive backend
  // Indices into ReasonRequest::evidence that the prompt contained (LLM) or the answer used
  // (extractive), best first.
  std::vector<int> evidence_used;
  int evidence_dropped = 0;  // triples left out of the prompt by the token budget
  std::vector<Degradation> degradations;
  std::vector<StageTiming> timings;
  // Extractive answers: the signals behind the answer (present = false otherwise).
  ExtractiveSignals signals;
  // Extractive answers: `confidence` before calibration (the raw support); equals `confidence`
  // when no calibration is loaded.
  double raw_confidence = 0.0;
  // The calibration that set `confidence` ("calibration/<version>"), "uncalibrated" for an
  // extractive answer without one, empty for LLM answers.
  std::string calibration;
  // The calibrated extractive backend named no answer because the candidate's calibrated
  // probability fell below the task's threshold (the candidate stays in the rationale).
  bool abstained = false;
  // Open questions answered by intent: the answer entities, best first (empty otherwise).
  std::vector<AnswerEntity> answer_entities;
  // Extractive answers: the question's class (QuestionClassName); empty for LLM answers.
  std::string question_class;

  bool degraded() const { return !degradations.empty(); }
};

// The class of a question, which decides the extractive backend's answer rule and which
// calibration it is judged by (issue 26): exam vignettes, where the KG rarely decides, must not
// drag down short lookups the KG answers outright.
enum class QuestionClass {
  // A short question (at most kMaxLookupQuestionWords words, two sentences) whose intent names a
  // relation (common/question_intent.h), with entity-like options (each at most
  // kMaxLookupOptionWords words): "Which drug treats asthma?" with drug names.
  kKgLookup = 0,
  // Vignettes, exam questions, and anything without a relation intent.
  kClinicalReasoning = 1,
  // Fact verification.
  kClaim = 2,
};
inline constexpr int kMaxLookupQuestionWords = 32;
inline constexpr int kMaxLookupOptionWords = 6;
// "kg_lookup", "clinical_reasoning", "claim".
absl::string_view QuestionClassName(QuestionClass question_class);
// The class of a question of resolved `task` with `intent` (see QuestionClass).
QuestionClass ClassifyQuestion(absl::string_view question, const std::vector<std::string>& options,
                               Task task, const common::QuestionIntent& intent);

// Names as the proto spells their suffix: "MULTIPLE_CHOICE", "SUPPORTED", ...
absl::string_view TaskName(Task task);
absl::string_view FactLabelName(FactLabel label);

// kUnspecified becomes kMultipleChoice with options; without options, kFactVerification for a
// yes/no question (common::IsYesNoQuestion, as the gateway resolves it for its modes) and kOpen
// otherwise.
Task ResolveTask(const ReasonRequest& request);

// The option letter for a 0-based position ("A" for 0); "" outside 0..25.
std::string OptionLetter(int index);

// The temperature of every sample: `options.temperatures` when given, else the default schedule.
// Assumes the options passed ValidateRequest.
std::vector<double> SampleTemperatures(const SelfConsistencyOptions& options);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_REASONER_TYPES_H_
