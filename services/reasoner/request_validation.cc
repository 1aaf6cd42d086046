#include "services/reasoner/request_validation.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ibgraphrag::reasoner {
namespace {

absl::Status CheckField(absl::string_view value, absl::string_view field, size_t limit) {
  if (value.size() > limit) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", value.size(), " bytes; the limit is ", limit, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateEvidence(const ReasonRequest& request, const ValidationLimits& limits) {
  if (static_cast<int>(request.evidence.size()) > limits.max_evidence) {
    return absl::InvalidArgumentError(absl::StrCat("evidence has ", request.evidence.size(),
                                                   " triples; the limit is ", limits.max_evidence));
  }
  const size_t field_limit = limits.max_evidence_field_bytes;
  for (size_t i = 0; i < request.evidence.size(); ++i) {
    const EvidenceTriple& t = request.evidence[i];
    const std::string prefix = absl::StrCat("evidence[", i, "].");
    const std::pair<absl::string_view, absl::string_view> fields[] = {
        {"head.id", t.head.id},   {"head.name", t.head.name},
        {"relation", t.relation}, {"relation_description", t.relation_description},
        {"tail.id", t.tail.id},   {"tail.name", t.tail.name},
        {"source", t.source}};
    for (const auto& [name, value] : fields) {
      if (value.size() > field_limit) {
        return CheckField(value, absl::StrCat(prefix, name), field_limit);
      }
    }
    if (t.head.name.empty() && t.head.id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "head needs a name or an id (both are empty)"));
    }
    if (t.tail.name.empty() && t.tail.id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "tail needs a name or an id (both are empty)"));
    }
    if (!std::isfinite(t.score)) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "score must be a finite number"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePaths(const ReasonRequest& request, const ValidationLimits& limits) {
  if (static_cast<int>(request.paths.size()) > limits.max_paths) {
    return absl::InvalidArgumentError(absl::StrCat("paths has ", request.paths.size(),
                                                   " entries; the limit is ", limits.max_paths));
  }
  for (size_t i = 0; i < request.paths.size(); ++i) {
    const ReasoningPath& path = request.paths[i];
    if (static_cast<int>(path.triple_indices.size()) > limits.max_path_length) {
      return absl::InvalidArgumentError(
          absl::StrCat("paths[", i, "].triple_indices has ", path.triple_indices.size(),
                       " entries; the limit is ", limits.max_path_length));
    }
    for (size_t j = 0; j < path.triple_indices.size(); ++j) {
      const int index = path.triple_indices[j];
      if (index < 0 || index >= static_cast<int>(request.evidence.size())) {
        return absl::InvalidArgumentError(absl::StrCat("paths[", i, "].triple_indices[", j, "] is ",
                                                       index, "; it must index evidence (0..",
                                                       request.evidence.size(), ")"));
      }
    }
    if (!std::isfinite(path.score)) {
      return absl::InvalidArgumentError(
          absl::StrCat("paths[", i, "].score must be a finite number"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSelfConsistency(const SelfConsistencyOptions& sc,
                                     const ValidationLimits& limits) {
  if (sc.samples < 0 || sc.samples > limits.max_samples) {
    return absl::InvalidArgumentError(absl::StrCat("self_consistency.samples is ", sc.samples,
                                                   "; it must be in 0..", limits.max_samples));
  }
  if (static_cast<int>(sc.temperatures.size()) > limits.max_samples) {
    return absl::InvalidArgumentError(absl::StrCat("self_consistency.temperatures has ",
                                                   sc.temperatures.size(),
                                                   " entries; the limit is ", limits.max_samples));
  }
  for (size_t i = 0; i < sc.temperatures.size(); ++i) {
    const double t = sc.temperatures[i];
    if (!std::isfinite(t) || t < 0.0 || t > limits.max_temperature) {
      return absl::InvalidArgumentError(absl::StrCat("self_consistency.temperatures[", i, "] is ",
                                                     t, "; it must be in [0, ",
                                                     limits.max_temperature, "]"));
    }
  }
  if (!sc.temperatures.empty() && sc.samples >= 1 &&
      static_cast<int>(sc.temperatures.size()) != sc.samples) {
    return absl::InvalidArgumentError(absl::StrCat(
        "self_consistency.temperatures has ", sc.temperatures.size(),
        " entries; give one per sample (self_consistency.samples is ", sc.samples, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCallerPrompt(const CallerPrompt& prompt) {
  constexpr size_t kMaxVersion = 64, kMaxSystem = 64 * 1024, kMaxUser = 256 * 1024;
  if (prompt.version.empty()) {
    if (prompt.system.empty() && prompt.user.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "caller_prompt.version is empty; name the prompt (1..64 bytes)");
  }
  if (prompt.version.size() > kMaxVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("caller_prompt.version exceeds ", kMaxVersion, " bytes"));
  }
  if (prompt.user.empty() || prompt.user.size() > kMaxUser) {
    return absl::InvalidArgumentError(
        absl::StrCat("caller_prompt.user must be 1 byte .. ", kMaxUser, " bytes"));
  }
  if (prompt.system.size() > kMaxSystem) {
    return absl::InvalidArgumentError(
        absl::StrCat("caller_prompt.system exceeds ", kMaxSystem, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRequest(const ReasonRequest& request, const ValidationLimits& limits,
                             const std::vector<std::string>& llm_backends) {
  if (request.question.empty()) {
    return absl::InvalidArgumentError("question is empty; it must be 1 byte .. " +
                                      std::to_string(limits.max_question_bytes) + " bytes");
  }
  if (auto s = CheckField(request.question, "question", limits.max_question_bytes); !s.ok()) {
    return s;
  }
  if (absl::StripAsciiWhitespace(request.question).empty()) {
    return absl::InvalidArgumentError("question is blank (whitespace only)");
  }
  const Task task = ResolveTask(request);
  if (static_cast<int>(request.options.size()) > limits.max_options) {
    return absl::InvalidArgumentError(absl::StrCat("options has ", request.options.size(),
                                                   " entries; the limit is ", limits.max_options));
  }
  if (task == Task::kMultipleChoice &&
      static_cast<int>(request.options.size()) < limits.min_options) {
    return absl::InvalidArgumentError(
        absl::StrCat("options has ", request.options.size(),
                     " entries; a multiple-choice question needs at least ", limits.min_options));
  }
  for (size_t i = 0; i < request.options.size(); ++i) {
    if (request.options[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("options[", i, "] is empty"));
    }
    if (auto s = CheckField(request.options[i], absl::StrCat("options[", i, "]"),
                            limits.max_option_bytes);
        !s.ok()) {
      return s;
    }
  }
  if (auto s = ValidateCallerPrompt(request.caller_prompt); !s.ok()) return s;
  if (static_cast<int>(request.topic_entities.size()) > limits.max_topic_entities) {
    return absl::InvalidArgumentError(
        absl::StrCat("topic_entities has ", request.topic_entities.size(),
                     " entries; the limit is ", limits.max_topic_entities));
  }
  if (!request.topic_mentions.empty() &&
      request.topic_mentions.size() != request.topic_entities.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "topic_mentions has ", request.topic_mentions.size(), " entries and topic_entities ",
        request.topic_entities.size(), "; give one mention per topic entity, or none"));
  }
  for (size_t i = 0; i < request.topic_entities.size(); ++i) {
    const EntityRef& e = request.topic_entities[i];
    if (e.id.size() > limits.max_evidence_field_bytes ||
        e.name.size() > limits.max_evidence_field_bytes) {
      return absl::InvalidArgumentError(absl::StrCat("topic_entities[", i, "] id or name exceeds ",
                                                     limits.max_evidence_field_bytes, " bytes"));
    }
  }
  if (auto s = ValidateEvidence(request, limits); !s.ok()) return s;
  if (auto s = ValidatePaths(request, limits); !s.ok()) return s;
  if (auto s = ValidateSelfConsistency(request.self_consistency, limits); !s.ok()) return s;
  if (request.evidence_token_budget < 0 ||
      request.evidence_token_budget > limits.max_evidence_token_budget) {
    return absl::InvalidArgumentError(
        absl::StrCat("evidence_token_budget is ", request.evidence_token_budget,
                     "; it must be in 0..", limits.max_evidence_token_budget));
  }
  if (!request.backend.empty() && request.backend != kExtractiveBackend &&
      std::find(llm_backends.begin(), llm_backends.end(), request.backend) == llm_backends.end()) {
    std::vector<std::string> known = {std::string(kExtractiveBackend)};
    known.insert(known.end(), llm_backends.begin(), llm_backends.end());
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", request.backend,
                     "' is not configured; known backends: ", absl::StrJoin(known, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace ibgraphrag::reasoner
