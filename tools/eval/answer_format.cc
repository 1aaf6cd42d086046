#include "tools/eval/answer_format.h"

#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"

namespace ibgraphrag::eval {
namespace {

std::string EntityLabel(const v1::EntityRef& entity) {
  return entity.name().empty() ? entity.external_id() : entity.name();
}

std::string LabelName(v1::FactLabel label) {
  absl::string_view name = v1::FactLabel_Name(label);
  absl::ConsumePrefix(&name, "FACT_LABEL_");
  return std::string(name);
}

void AppendAnswer(const v1::Answer& answer, std::string* out) {
  std::string headline = answer.text();
  if (headline.empty() && !answer.option_letter().empty()) headline = answer.option_letter();
  if (answer.label() != v1::FACT_LABEL_UNSPECIFIED) {
    const std::string label = LabelName(answer.label());
    if (headline.empty()) {
      headline = label;
    } else if (!absl::StartsWith(headline, label)) {
      headline = absl::StrCat(label, ": ", headline);
    }
  }
  if (headline.empty()) headline = "(no answer)";
  absl::StrAppend(out, "Answer: ", headline, "\n");
  std::vector<std::string> facts;
  if (!answer.option_letter().empty()) {
    facts.push_back(absl::StrCat("option ", answer.option_letter()));
  }
  if (!answer.backend().empty()) facts.push_back(absl::StrCat("backend ", answer.backend()));
  if (!answer.question_class().empty()) {
    facts.push_back(absl::StrCat("class ", answer.question_class()));
  }
  if (answer.calibration().empty()) {
    facts.push_back(absl::StrFormat("confidence %.3g", answer.confidence()));
  } else if (answer.calibration() == "uncalibrated") {
    facts.push_back(
        absl::StrFormat("confidence %.3g (raw support, uncalibrated)", answer.confidence()));
  } else {
    facts.push_back(absl::StrFormat("confidence %.2f (%s; raw support %.3g)", answer.confidence(),
                                    answer.calibration(), answer.raw_confidence()));
  }
  if (answer.votes_size() > 0) {
    facts.push_back(
        absl::StrFormat("agreement %.2f over %d votes", answer.agreement(), answer.votes_size()));
  }
  if (!answer.prompt_version().empty()) {
    facts.push_back(absl::StrCat("prompt ", answer.prompt_version()));
  }
  absl::StrAppend(out, "  ", absl::StrJoin(facts, ", "), "\n");
  std::vector<std::string> warnings;
  if (answer.low_confidence()) warnings.push_back("low confidence");
  if (answer.insufficient_evidence()) warnings.push_back("insufficient evidence");
  if (answer.abstained()) {
    warnings.push_back("abstained: the calibration does not trust the best candidate");
  }
  if (!answer.parsed()) warnings.push_back("model output not parsed");
  if (!warnings.empty()) absl::StrAppend(out, "  caution: ", absl::StrJoin(warnings, "; "), "\n");
  if (!answer.rationale().empty()) {
    // Continuation lines are indented under the heading.
    absl::StrAppend(
        out, "  Rationale: ",
        absl::StrReplaceAll(absl::StripAsciiWhitespace(answer.rationale()), {{"\n", "\n    "}}),
        "\n");
  }
}

// "Question read as: treats -> compound (all_of; from the question: drug, treat)".
void AppendIntent(const v1::AnswerResponse& response, std::string* out) {
  const v1::QuestionIntent& intent = response.intent();
  if (intent.relation_kinds_size() == 0 && intent.answer_types_size() == 0) {
    absl::StrAppend(out, "\nQuestion read as: no relation recognised (evidence about the topic)\n");
    return;
  }
  std::string line = intent.relation_kinds_size() == 0
                         ? std::string("any relation")
                         : absl::StrJoin(intent.relation_kinds(), ", ");
  absl::StrAppend(&line, " -> ",
                  intent.answer_types_size() == 0 ? std::string("any type")
                                                  : absl::StrJoin(intent.answer_types(), "|"));
  std::vector<std::string> notes;
  if (intent.constraint() == v1::INTENT_CONSTRAINT_ALL_OF) notes.push_back("all of the entities");
  if (intent.constraint() == v1::INTENT_CONSTRAINT_EXCEPT) notes.push_back("the exception");
  if (intent.single_answer()) notes.push_back("one answer expected");
  if (intent.asks_cause()) notes.push_back("a causal gene: risk loci rank after");
  notes.push_back(intent.origin() == "request"
                      ? std::string("given by the request")
                      : absl::StrCat("from the words: ", absl::StrJoin(intent.cues(), ", ")));
  absl::StrAppend(out, "\nQuestion read as: ", line, " (", absl::StrJoin(notes, "; "), ")\n");
}

// The open answer's entities with their sources (intent-driven extractive answers).
void AppendAnswerEntities(const v1::Answer& answer, std::string* out) {
  if (answer.answer_entities_size() == 0) return;
  absl::StrAppend(out, "\nAnswer entities (", answer.answer_entities_size(), ")\n");
  int rank = 0;
  for (const v1::AnswerEntity& a : answer.answer_entities()) {
    absl::StrAppend(
        out, "  ", ++rank, ". ", EntityLabel(a.entity()),
        absl::StrFormat(
            "  support %.2f, %d triple(s), sources: %s\n", a.support(), a.evidence_size(),
            a.sources_size() == 0 ? std::string("unknown") : absl::StrJoin(a.sources(), ", ")));
  }
}

void AppendEntities(const v1::AnswerResponse& response, std::string* out) {
  absl::StrAppend(out, "\nEntities (", response.entities_size(), " aligned)\n");
  if (response.entities_size() == 0) {
    absl::StrAppend(out, "  none: no entity of the question was recognised\n");
    return;
  }
  absl::StrAppendFormat(out, "  %-36s %-18s %-16s %6s %6s %6s\n", "name", "type", "external id",
                        "S", "R", "C");
  for (const v1::AlignedEntity& aligned : response.entities()) {
    const v1::EntityRef& e = aligned.entity();
    absl::StrAppendFormat(out, "  %-36s %-18s %-16s %6.3f %6.3f %6.3f%s\n", EntityLabel(e),
                          e.type(), e.external_id(), aligned.question_similarity(),
                          aligned.relatedness(), aligned.consistency(),
                          aligned.chosen_by_llm()       ? "  (chosen by LLM)"
                          : aligned.chosen_by_context() ? "  (option, by the expected type)"
                                                        : "");
  }
}

// "hetionet [CC0] + disgenet [ODbL 1.0]", then the source score and note when there are any;
// only `source` for responses from before provenance existed.
void AppendSources(const v1::EvidenceTriple& t, std::vector<std::string>* notes) {
  if (t.sources_size() == 0) {
    if (!t.source().empty()) notes->push_back(t.source());
    return;
  }
  std::vector<std::string> sources;
  for (int i = 0; i < t.sources_size(); ++i) {
    const bool licensed = i < t.licenses_size() && !t.licenses(i).empty();
    sources.push_back(licensed ? absl::StrCat(t.sources(i), " [", t.licenses(i), "]")
                               : t.sources(i));
  }
  notes->push_back(absl::StrJoin(sources, " + "));
  if (t.has_source_score())
    notes->push_back(absl::StrFormat("source score %.3g", t.source_score()));
  if (!t.source_note().empty()) notes->push_back(t.source_note());
}

void AppendEvidence(const v1::AnswerResponse& response, int max_evidence, std::string* out) {
  const int total = response.evidence_size();
  const int shown = std::min(total, std::max(max_evidence, 0));
  absl::StrAppend(out, "\nEvidence (", shown, " of ", total, " triples shown, best first)\n");
  for (int i = 0; i < shown; ++i) {
    const v1::EvidenceTriple& t = response.evidence(i);
    absl::StrAppendFormat(out, "  %3d  %.3f  %s -[%s]-> %s", i, t.score(), EntityLabel(t.head()),
                          t.relation(), EntityLabel(t.tail()));
    std::vector<std::string> notes;
    AppendSources(t, &notes);
    if (t.hop() > 0) notes.push_back(absl::StrCat("hop ", t.hop()));
    if (!notes.empty()) absl::StrAppend(out, "  (", absl::StrJoin(notes, ", "), ")");
    absl::StrAppend(out, "\n");
  }
}

void AppendPaths(const v1::AnswerResponse& response, int max_paths, std::string* out) {
  const int total = response.paths_size();
  if (total == 0) return;
  const int shown = std::min(total, std::max(max_paths, 0));
  absl::StrAppend(out, "\nReasoning paths (", shown, " of ", total, " shown)\n");
  for (int i = 0; i < shown; ++i) {
    const v1::ReasoningPath& path = response.paths(i);
    std::string text = path.text();
    if (text.empty()) {
      std::vector<std::string> steps;
      for (uint32_t index : path.triple_indices()) steps.push_back(absl::StrCat("#", index));
      text = absl::StrJoin(steps, " -> ");
    }
    absl::StrAppendFormat(out, "  %.3f  %s\n", path.score(), text);
  }
}

void AppendTimingsAndStatus(const v1::AnswerResponse& response, std::string* out) {
  // Stages "align", "retrieve", ... with their sub-stages ("align.candidates") in brackets;
  // "total" and "gateway_overhead" (when the gateway reports them) after the stages.
  struct Stage {
    std::string name;
    std::string own;                // "23.4 ms"; empty when only sub-stages were reported
    std::vector<std::string> subs;  // "candidates 20.7 ms"
  };
  std::vector<Stage> stages;
  std::vector<std::string> totals;
  double stage_sum = 0;
  for (const v1::StageTiming& timing : response.timings()) {
    const std::string& name = timing.stage();
    const std::string ms = absl::StrFormat("%.1f ms", timing.duration_ms());
    if (name == "total" || name == "gateway_overhead") {
      totals.push_back(absl::StrCat(absl::StrReplaceAll(name, {{"_", " "}}), " ", ms));
      continue;
    }
    const size_t dot = name.find('.');
    const std::string parent = name.substr(0, dot);
    auto it = std::find_if(stages.begin(), stages.end(),
                           [&](const Stage& stage) { return stage.name == parent; });
    if (it == stages.end()) it = stages.insert(stages.end(), Stage{parent, "", {}});
    if (dot == std::string::npos) {
      it->own = ms;
      stage_sum += timing.duration_ms();
    } else {
      it->subs.push_back(absl::StrCat(name.substr(dot + 1), " ", ms));
    }
  }
  std::vector<std::string> parts;
  for (const Stage& stage : stages) {
    std::string part = stage.name;
    if (!stage.own.empty()) absl::StrAppend(&part, " ", stage.own);
    if (!stage.subs.empty()) absl::StrAppend(&part, " (", absl::StrJoin(stage.subs, ", "), ")");
    parts.push_back(part);
  }
  if (totals.empty() && !stages.empty()) {
    totals.push_back(absl::StrFormat("stages sum %.1f ms", stage_sum));
  }
  absl::StrAppend(out, "\nTimings: ", parts.empty() ? "none reported" : absl::StrJoin(parts, ", "),
                  totals.empty() ? "" : absl::StrCat("; ", absl::StrJoin(totals, ", ")), "\n");
  if (response.degraded_size() == 0) {
    absl::StrAppend(out, "Degraded: no\n");
  } else {
    absl::StrAppend(out, "Degraded:\n");
    for (const v1::Degradation& d : response.degraded()) {
      absl::StrAppend(out, "  ", d.component(), ": ", d.reason(), "\n");
    }
  }
  const v1::ArtifactVersions& v = response.versions();
  absl::StrAppend(
      out, "Versions: kg ", v.kg_version().empty() ? "-" : v.kg_version(), ", alignment bundle ",
      v.alignment_bundle_version().empty() ? "-" : v.alignment_bundle_version(),
      ", retriever model ", v.retriever_model_version().empty() ? "-" : v.retriever_model_version(),
      v.retriever_scorer_variant().empty() ? ""
                                           : absl::StrCat(" (", v.retriever_scorer_variant(), ")"),
      ", prompt ", v.prompt_version().empty() ? "-" : v.prompt_version(), ", encoder ",
      v.encoder_id().empty() ? "-" : v.encoder_id(), "\n");
  absl::StrAppend(out, "Request id: ", response.request_id().empty() ? "-" : response.request_id(),
                  "\n");
}

}  // namespace

std::string FormatAnswerText(const v1::AnswerResponse& response,
                             const AnswerFormatOptions& options) {
  std::string out;
  AppendAnswer(response.answer(), &out);
  AppendAnswerEntities(response.answer(), &out);
  AppendIntent(response, &out);
  AppendEntities(response, &out);
  AppendEvidence(response, options.max_evidence, &out);
  AppendPaths(response, options.max_paths, &out);
  AppendTimingsAndStatus(response, &out);
  return out;
}

std::string FormatStageEvent(const v1::StageEvent& event) {
  std::string line = absl::StrFormat("[%s] %.1f ms", event.stage(), event.duration_ms());
  if (!event.summary().empty()) absl::StrAppend(&line, "  ", event.summary());
  return line;
}

absl::StatusOr<std::string> MessageToJson(const google::protobuf::Message& message, bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = pretty;
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("JSON conversion failed: ", status.ToString()));
  }
  if (pretty && (json.empty() || json.back() != '\n')) json.push_back('\n');
  return json;
}

}  // namespace ibgraphrag::eval
