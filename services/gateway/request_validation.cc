#include "services/gateway/request_validation.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/error_echo.h"
#include "common/utf8.h"
#include "services/gateway/modes/pipeline_mode.h"

namespace ibgraphrag::gateway {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

bool IsUtf8(absl::string_view text) { return common::IsValidUtf8(text); }

absl::Status CheckUnit(absl::string_view field, float value) {
  if (!std::isfinite(value) || value < 0.0f || value > 1.0f) {
    return Invalid(field, absl::StrCat(value, " is outside [0, 1]"));
  }
  return absl::OkStatus();
}

absl::Status CheckRange(absl::string_view field, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi) {
    return Invalid(field, absl::StrCat(value, " is outside [", lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAnswerRequest(const ibgraphrag::v1::AnswerRequest& request) {
  const std::string& question = request.question();
  if (question.empty()) return Invalid("question", "must not be empty");
  if (question.size() > kMaxQuestionBytes) {
    return Invalid("question", absl::StrCat(question.size(), " bytes exceeds the limit of ",
                                            kMaxQuestionBytes, " bytes (16 KiB)"));
  }
  if (!IsUtf8(question)) return Invalid("question", "not valid UTF-8");
  if (request.options_size() > kMaxOptions) {
    return Invalid("options", absl::StrCat(request.options_size(), " options exceed the limit of ",
                                           kMaxOptions));
  }
  for (int i = 0; i < request.options_size(); ++i) {
    const std::string& option = request.options(i);
    const std::string field = absl::StrCat("options[", i, "]");
    if (option.empty()) return Invalid(field, "must not be empty");
    if (option.size() > kMaxOptionBytes) {
      return Invalid(field, absl::StrCat(option.size(), " bytes exceeds the limit of ",
                                         kMaxOptionBytes, " bytes"));
    }
    if (!IsUtf8(option)) return Invalid(field, "not valid UTF-8");
  }
  if (request.task() == ibgraphrag::v1::TASK_MULTIPLE_CHOICE && request.options_size() < 2) {
    return Invalid("options", "TASK_MULTIPLE_CHOICE needs 2..26 options");
  }
  if (!ibgraphrag::v1::Task_IsValid(request.task())) {
    return Invalid("task", absl::StrCat("unknown value ", request.task()));
  }
  const ibgraphrag::v1::PipelineOptions& p = request.pipeline();
  if (p.has_top_k()) {
    if (auto s = CheckRange("pipeline.top_k", p.top_k(), 1, kMaxTopK); !s.ok()) return s;
  }
  if (p.has_align_top_k()) {
    if (auto s = CheckRange("pipeline.align_top_k", p.align_top_k(), 1, kMaxTopK); !s.ok()) {
      return s;
    }
  }
  if (p.has_max_hops()) {
    if (auto s = CheckRange("pipeline.max_hops", p.max_hops(), 1, kMaxHops); !s.ok()) return s;
  }
  if (p.has_lambda()) {
    if (auto s = CheckUnit("pipeline.lambda", p.lambda()); !s.ok()) return s;
  }
  if (p.has_tau()) {
    if (auto s = CheckUnit("pipeline.tau", p.tau()); !s.ok()) return s;
  }
  if (!ibgraphrag::v1::ScorerVariant_IsValid(p.scorer_variant())) {
    return Invalid("pipeline.scorer_variant",
                   absl::StrCat("unknown value ", p.scorer_variant(),
                                " (SCORER_VARIANT_UNSPECIFIED, _RESIDUAL or _PLAIN)"));
  }
  if (p.reasoner_backend().size() > static_cast<size_t>(kMaxReasonerBackendBytes)) {
    return Invalid("pipeline.reasoner_backend",
                   absl::StrCat("longer than ", kMaxReasonerBackendBytes, " bytes"));
  }
  if (!IsKnownMode(p.mode())) {
    return Invalid("pipeline.mode",
                   absl::StrCat("unknown mode '", common::EchoForError(p.mode()),
                                "'; allowed: ", ModeNamesList(), " (empty = ibgraphrag)"));
  }
  for (const auto& [field, value] : {std::pair<absl::string_view, const std::string*>{
                                         "pipeline.kg_rank_reranker", &p.kg_rank_reranker()},
                                     std::pair<absl::string_view, const std::string*>{
                                         "pipeline.illama_reranker", &p.illama_reranker()}}) {
    if (!value->empty() && *value != "encoder" && *value != "ibrp") {
      return Invalid(field,
                     absl::StrCat("\"", common::EchoForError(*value), "\" is not encoder or ibrp"));
    }
  }
  if (p.has_kg_rag_minimum_similarity() &&
      !(p.kg_rag_minimum_similarity() >= -1.0F && p.kg_rag_minimum_similarity() <= 1.0F)) {
    return Invalid("pipeline.kg_rag_minimum_similarity",
                   absl::StrCat(p.kg_rag_minimum_similarity(), " is outside [-1, 1]"));
  }
  if (p.has_kg_rag_prompt_mode() && p.kg_rag_prompt_mode() > 3) {
    return Invalid("pipeline.kg_rag_prompt_mode",
                   absl::StrCat(p.kg_rag_prompt_mode(), " is outside [0, 3]"));
  }
  if (p.self_consistency().samples() > 16) {
    return Invalid("pipeline.self_consistency.samples",
                   absl::StrCat(p.self_consistency().samples(), " is outside [0, 16]"));
  }
  return absl::OkStatus();
}

}  // namespace ibgraphrag::gateway
