#include "tools/eval/eval_metrics.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/topic_rule.h"
#include "tools/eval/calibration_eval.h"

namespace ibgraphrag::eval {
namespace {

// `needle` occurs in `haystack` as a run of whole words (both normalised).
bool ContainsWords(const std::string& haystack, const std::string& needle) {
  if (needle.empty()) return false;
  return absl::StrContains(absl::StrCat(" ", haystack, " "), absl::StrCat(" ", needle, " "));
}

EntityHit MatchName(const std::string& gold, const std::string& name) {
  if (name.empty()) return EntityHit::kNone;
  if (name == gold) return EntityHit::kExact;
  const std::string& shorter = name.size() < gold.size() ? name : gold;
  const std::string& longer = name.size() < gold.size() ? gold : name;
  if (shorter.size() >= kMinPartialHitChars && ContainsWords(longer, shorter)) {
    return EntityHit::kPartial;
  }
  return EntityHit::kNone;
}

double Ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

}  // namespace

std::string NormalizeName(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (const char raw : text) {
    const unsigned char c = static_cast<unsigned char>(raw);
    const bool keep =
        c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!keep) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : raw);
  }
  return out;
}

bool IsCorrect(const QaItem& item, const v1::Answer& answer) {
  if (item.task == v1::TASK_FACT_VERIFICATION) {
    return item.gold_label != v1::FACT_LABEL_UNSPECIFIED && answer.label() == item.gold_label;
  }
  if (item.gold_index < 0) return false;
  const int chosen = answer.option_index();
  if (chosen < 0 || chosen >= static_cast<int>(item.options.size())) return false;
  if (chosen == item.gold_index) return true;
  return NormalizeName(item.options[chosen]) == NormalizeName(item.gold_text);
}

bool IsAcceptedName(absl::string_view name, const std::vector<std::string>& accepted) {
  // Normalised words, a trailing plural "s" dropped from each, sorted: "lung small cell
  // carcinoma" and "small cell lung carcinoma" name the same thing. UBERON names some organs
  // "X of body" ("skin of body", "surface of body"): that suffix is dropped too.
  // A drug's salt or ester named after it ("Fluticasone Propionate", "Cromolyn sodium",
  // "Dabigatran etexilate") is the drug the accepted generic name names: trailing salt words are
  // dropped while a word is left ("Sodium nitroprusside" keeps its leading "sodium").
  static const auto* salts = new absl::flat_hash_set<std::string>{
      "acetate",       "acetonide", "besylate",   "bitartrate",   "bromide",     "butyrate",
      "calcium",       "citrate",   "dihydrate",  "dipropionate", "disodium",    "etexilate",
      "fumarate",      "furoate",   "gluconate",  "hcl",          "hyclate",     "hydrobromide",
      "hydrochloride", "lactate",   "maleate",    "mesylate",     "monohydrate", "phosphate",
      "pivalate",      "potassium", "propionate", "sodium",       "succinate",   "sulfate",
      "sulphate",      "tartrate",  "trihydrate", "valerate"};
  auto words = [](absl::string_view text) {
    std::string normalized = NormalizeName(text);
    if (absl::EndsWith(normalized, " of body")) normalized.resize(normalized.size() - 8);
    std::vector<std::string> out = absl::StrSplit(normalized, ' ', absl::SkipEmpty());
    while (out.size() > 1 && salts->contains(out.back())) out.pop_back();
    for (std::string& w : out) {
      if (w.size() > 3 && w.back() == 's' && w[w.size() - 2] != 's') w.pop_back();
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> n = words(name);
  if (n.empty()) return false;
  for (const std::string& a : accepted) {
    if (words(a) == n) return true;
  }
  return false;
}

namespace {

// What an open answer names, in order: Answer.answers, or for an answer without that list (an
// extractive answer from before question intents, which rendered evidence paths) the entities of
// the evidence it used that are not the question's aligned entities.
std::vector<std::string> NamedAnswers(const v1::AnswerResponse& response) {
  const v1::Answer& answer = response.answer();
  std::vector<std::string> out(answer.answers().begin(), answer.answers().end());
  if (!out.empty()) return out;
  std::set<std::string> skip;
  for (const v1::AlignedEntity& e : response.entities())
    skip.insert(NormalizeName(e.entity().name()));
  for (uint32_t index : answer.evidence_used()) {
    if (index >= static_cast<uint32_t>(response.evidence_size())) continue;
    const v1::EvidenceTriple& t = response.evidence(static_cast<int>(index));
    for (const v1::EntityRef* e : {&t.head(), &t.tail()}) {
      if (skip.insert(NormalizeName(e->name())).second) out.push_back(e->name());
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> KgTypesOfAnswerType(absl::string_view answer_type) {
  if (answer_type == "drug") return {"compound"};
  if (answer_type == "phenotype") return {"symptom", "phenotype"};
  if (answer_type == "gene" || answer_type == "disease" || answer_type == "side_effect" ||
      answer_type == "anatomy" || answer_type == "pathway") {
    return {std::string(answer_type)};
  }
  return {};
}

namespace {

void ScoreLookup(const QaItem& item, const v1::AnswerResponse& response, ItemOutcome* outcome) {
  if (item.accepted.empty()) return;
  outcome->lookup = true;
  outcome->item_id = item.id;
  outcome->open = item.task == v1::TASK_OPEN;
  outcome->relation = item.relation;
  for (int i = 0; i < response.evidence_size() && outcome->evidence_rank == 0; ++i) {
    const v1::EvidenceTriple& t = response.evidence(i);
    if (IsAcceptedName(t.head().name(), item.accepted) ||
        IsAcceptedName(t.tail().name(), item.accepted)) {
      outcome->evidence_rank = i + 1;
    }
  }
  if (!outcome->open) {
    outcome->hit5 = outcome->correct;
    const std::vector<std::string> types = KgTypesOfAnswerType(item.answer_type);
    if (item.task == v1::TASK_MULTIPLE_CHOICE && !types.empty()) {
      for (const common::OptionSpan& span : common::OptionSpans(item.question, item.options)) {
        ++outcome->options;
        for (const v1::AlignedEntity& e : response.entities()) {
          if (e.mention().begin() >= span.begin && e.mention().end() <= span.end &&
              std::find(types.begin(), types.end(), e.entity().type()) != types.end()) {
            ++outcome->options_typed;
            break;
          }
        }
      }
    }
    return;
  }
  const absl::flat_hash_set<std::string> asked(response.intent().relations().begin(),
                                               response.intent().relations().end());
  if (!asked.empty()) {
    int asked_in_top10 = 0;
    for (int i = 0; i < std::min(10, response.evidence_size()); ++i) {
      asked_in_top10 += asked.contains(response.evidence(i).relation()) ? 1 : 0;
    }
    outcome->relation_precision10 = asked_in_top10 / 10.0;
  }
  const std::vector<std::string> answers = NamedAnswers(response);
  const int n = std::min<int>(5, static_cast<int>(answers.size()));
  int right = 0;
  for (int i = 0; i < n; ++i) {
    if (IsAcceptedName(answers[i], item.accepted)) ++right;
  }
  outcome->hit5 = right > 0;
  outcome->precision5 = n == 0 ? 0.0 : static_cast<double>(right) / n;
  // An open question is answered right when one of its first five answers is accepted.
  outcome->correct = outcome->hit5;
}

}  // namespace

EntityHit AnswerEntityHit(absl::string_view gold_text, const v1::AnswerResponse& response) {
  const std::string gold = NormalizeName(gold_text);
  if (gold.empty()) return EntityHit::kNone;
  EntityHit best = EntityHit::kNone;
  for (const v1::EvidenceTriple& triple : response.evidence()) {
    for (const v1::EntityRef* entity : {&triple.head(), &triple.tail()}) {
      const EntityHit hit = MatchName(gold, NormalizeName(entity->name()));
      if (hit == EntityHit::kExact) return hit;
      if (hit == EntityHit::kPartial) best = hit;
    }
  }
  return best;
}

namespace {

// The calibration fields of an outcome; the candidate is scored like a committed answer.
void ScoreCalibration(const QaItem& item, const v1::Answer& answer, ItemOutcome* outcome) {
  outcome->confidence = answer.confidence();
  // Servers from before calibration (and LLM answers) leave `calibration` empty.
  outcome->raw_confidence =
      answer.calibration().empty() ? answer.confidence() : answer.raw_confidence();
  outcome->calibration = answer.calibration();
  outcome->calibration_abstained = answer.abstained();
  outcome->question_class = answer.question_class();
  if (!answer.has_signals()) return;
  // Non-finite signals are dropped (the answer still counts; it is just no fit example).
  absl::StatusOr<reasoner::ExtractiveSignals> signals = SignalsFromProto(answer.signals());
  if (!signals.ok()) return;
  outcome->has_signals = true;
  outcome->signals = *std::move(signals);
  v1::Answer candidate;
  candidate.set_option_index(answer.signals().candidate_index());
  candidate.set_label(answer.signals().candidate_label());
  outcome->candidate_correct =
      reasoner::HasCandidate(outcome->signals) && IsCorrect(item, candidate);
}

}  // namespace

FactScores ScoreFacts(const FactConfusion& confusion) {
  // Accuracy and macro-F1 over the gold rows in `rows`, F1 averaged over `rows` with claims.
  auto score = [&](std::initializer_list<int> rows, int* n, double* accuracy, double* macro_f1) {
    int right = 0;
    double f1_sum = 0;
    int classes = 0;
    for (int c : rows) {
      int gold = 0;
      for (int a = 0; a < kFactVerdicts; ++a) gold += confusion[c][a];
      *n += gold;
      const int tp = confusion[c][c];
      right += tp;
      int fp = 0;
      for (int r : rows) fp += r != c ? confusion[r][c] : 0;
      const int fn = gold - tp;
      if (gold == 0) continue;
      ++classes;
      f1_sum += 2.0 * tp + fp + fn > 0 ? 2.0 * tp / (2.0 * tp + fp + fn) : 0.0;
    }
    *accuracy = *n > 0 ? static_cast<double>(right) / *n : 0.0;
    *macro_f1 = classes > 0 ? f1_sum / classes : 0.0;
  };
  FactScores out;
  score({kFactSupported, kFactRefuted}, &out.binary_claims, &out.binary_accuracy,
        &out.binary_macro_f1);
  score({kFactSupported, kFactRefuted, kFactNotEnoughEvidence}, &out.claims, &out.accuracy,
        &out.macro_f1);
  return out;
}

ItemOutcome ScoreAnswer(const QaItem& item, const v1::AnswerResponse& response, double latency_ms) {
  ItemOutcome outcome;
  outcome.latency_ms = latency_ms;
  const v1::Answer& answer = response.answer();
  outcome.correct = IsCorrect(item, answer);
  if (item.task == v1::TASK_FACT_VERIFICATION) {
    if (answer.label() != v1::FACT_LABEL_UNSPECIFIED) {
      absl::string_view name = v1::FactLabel_Name(answer.label());
      absl::ConsumePrefix(&name, "FACT_LABEL_");
      outcome.predicted = std::string(name);
    }
    outcome.abstained =
        answer.label() != v1::FACT_LABEL_SUPPORTED && answer.label() != v1::FACT_LABEL_REFUTED;
    auto verdict = [](v1::FactLabel label) {
      return label == v1::FACT_LABEL_SUPPORTED ? kFactSupported
             : label == v1::FACT_LABEL_REFUTED ? kFactRefuted
                                               : kFactNotEnoughEvidence;
    };
    if (item.gold_label != v1::FACT_LABEL_UNSPECIFIED) {
      outcome.fact_gold = verdict(item.gold_label);
      outcome.fact_answered = verdict(answer.label());
    }
  } else {
    outcome.predicted = answer.option_letter();
    outcome.abstained = answer.option_index() < 0;
  }
  outcome.hit_applicable = item.gold_is_entity;
  if (outcome.hit_applicable) outcome.hit = AnswerEntityHit(item.gold_text, response);
  outcome.entities = response.entities_size();
  outcome.evidence = response.evidence_size();
  outcome.llm_calls = static_cast<int>(response.llm_calls());
  std::set<std::string> seen;
  for (const v1::Degradation& degradation : response.degraded()) {
    if (seen.insert(degradation.component()).second) {
      outcome.degraded_components.push_back(degradation.component());
    }
  }
  for (const v1::StageTiming& timing : response.timings()) {
    outcome.stage_ms.emplace_back(timing.stage(), timing.duration_ms());
  }
  outcome.low_confidence = answer.low_confidence();
  outcome.insufficient_evidence = answer.insufficient_evidence();
  ScoreCalibration(item, answer, &outcome);
  outcome.versions = response.versions();
  ScoreLookup(item, response, &outcome);
  return outcome;
}

ItemOutcome ErrorOutcome(absl::StatusCode code, std::string message, double latency_ms) {
  ItemOutcome outcome;
  outcome.code = code == absl::StatusCode::kOk ? absl::StatusCode::kUnknown : code;
  outcome.error = std::move(message);
  outcome.latency_ms = latency_ms;
  return outcome;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  p = std::clamp(p, 0.0, 100.0);
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  return values[rank == 0 ? 0 : rank - 1];
}

std::string StatusCodeName(absl::StatusCode code) { return absl::StatusCodeToString(code); }

RunSummary Summarize(const std::string& dataset, const std::string& config,
                     const std::vector<ItemOutcome>& outcomes, double wall_seconds) {
  RunSummary s;
  s.dataset = dataset;
  s.config = config;
  s.total = static_cast<int>(outcomes.size());
  s.wall_seconds = wall_seconds;
  std::vector<double> latencies;
  double entities = 0;
  double evidence = 0;
  double llm_calls = 0;
  std::vector<std::pair<std::string, std::pair<double, int>>> stages;  // name -> (sum, count)
  for (const ItemOutcome& o : outcomes) {
    if (o.code != absl::StatusCode::kOk) {
      ++s.errors;
      ++s.errors_by_code[StatusCodeName(o.code)];
      continue;
    }
    ++s.answered;
    if (o.lookup) {
      s.lookup_rows.push_back(
          {o.item_id, o.relation, o.open, o.evidence_rank, o.hit5, o.precision5});
      for (RunSummary::LookupCounts* c : {&s.lookup, &s.lookup_by_relation[o.relation]}) {
        ++c->questions;
        if (o.hit5) ++c->right;
        c->options += o.options;
        c->options_typed += o.options_typed;
        if (!o.open) continue;
        ++c->open;
        if (o.hit5) ++c->hit5;
        c->precision5_sum += o.precision5;
        if (o.relation_precision10 >= 0) {
          c->relation_precision10_sum += o.relation_precision10;
          ++c->relation_questions;
        }
        if (o.evidence_rank > 0) ++c->evidence_any;
        if (o.evidence_rank > 0 && o.evidence_rank <= 10) ++c->evidence_top10;
        if (o.evidence_rank > 0 && o.evidence_rank <= 100) ++c->evidence_top100;
      }
    }
    if (o.correct) ++s.correct;
    if (o.hit_applicable) {
      ++s.hit_applicable;
      if (o.hit == EntityHit::kExact) ++s.hit_exact;
      if (o.hit != EntityHit::kNone) ++s.hit_partial_or_exact;
    }
    if (o.entities > 0) ++s.with_entities;
    entities += o.entities;
    evidence += o.evidence;
    llm_calls += o.llm_calls;
    if (o.abstained) ++s.abstained;
    if (o.fact_gold >= 0 && o.fact_answered >= 0) {
      ++s.fact_confusion[o.fact_gold][o.fact_answered];
      ++s.fact_claims;
    }
    if (o.low_confidence) ++s.low_confidence;
    if (o.insufficient_evidence) ++s.insufficient_evidence;
    if (!o.degraded_components.empty()) ++s.degraded_answers;
    for (const std::string& component : o.degraded_components) {
      ++s.degraded_by_component[component];
    }
    latencies.push_back(o.latency_ms);
    for (const auto& stage_ms : o.stage_ms) {
      // Named copies: clang 14 cannot capture structured bindings in a lambda (C++20).
      const auto& stage = stage_ms.first;
      const auto& ms = stage_ms.second;
      auto it = std::find_if(stages.begin(), stages.end(),
                             [&](const auto& entry) { return entry.first == stage; });
      if (it == stages.end()) it = stages.insert(stages.end(), {stage, {0.0, 0}});
      it->second.first += ms;
      ++it->second.second;
    }
  }
  s.accuracy = Ratio(s.correct, s.total);
  s.accuracy_answered = Ratio(s.correct, s.answered);
  s.hit_rate_exact = Ratio(s.hit_exact, s.hit_applicable);
  s.hit_rate_partial = Ratio(s.hit_partial_or_exact, s.hit_applicable);
  s.coverage = Ratio(s.with_entities, s.answered);
  s.mean_entities = Ratio(entities, s.answered);
  s.mean_evidence = Ratio(evidence, s.answered);
  s.mean_llm_calls = Ratio(llm_calls, s.answered);
  double latency_sum = 0;
  for (double ms : latencies) latency_sum += ms;
  s.latency_mean_ms = Ratio(latency_sum, latencies.size());
  s.latency_p50_ms = Percentile(latencies, 50);
  s.latency_p95_ms = Percentile(latencies, 95);
  s.latency_p99_ms = Percentile(latencies, 99);
  for (const auto& [stage, sum_count] : stages) {
    s.mean_stage_ms.emplace_back(stage, Ratio(sum_count.first, sum_count.second));
  }
  s.throughput_qps = Ratio(s.answered, wall_seconds);
  return s;
}

}  // namespace ibgraphrag::eval
