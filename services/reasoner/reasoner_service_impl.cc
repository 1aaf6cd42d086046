#include "services/reasoner/reasoner_service_impl.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "common/question_intent_proto.h"
#include "common/server_interceptor.h"
#include "common/status_macros.h"

namespace ibgraphrag::reasoner {
namespace {

namespace pb = ::ibgraphrag::v1;
using common::ToGrpcStatus;

// uint32 proto counts become ints without wrapping negative: values past INT_MAX are far beyond
// every limit, so the core still rejects them with the right field name.
int ToInt(uint32_t value) {
  return static_cast<int>(std::min<uint32_t>(value, std::numeric_limits<int>::max()));
}

absl::StatusOr<Task> FromProto(pb::Task task) {
  switch (task) {
    case pb::TASK_UNSPECIFIED:
      return Task::kUnspecified;
    case pb::TASK_MULTIPLE_CHOICE:
      return Task::kMultipleChoice;
    case pb::TASK_FACT_VERIFICATION:
      return Task::kFactVerification;
    case pb::TASK_OPEN:
      return Task::kOpen;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("task is ", static_cast<int>(task), "; it must be a Task value (0..3)"));
}

pb::Task ToProto(Task task) {
  switch (task) {
    case Task::kMultipleChoice:
      return pb::TASK_MULTIPLE_CHOICE;
    case Task::kFactVerification:
      return pb::TASK_FACT_VERIFICATION;
    case Task::kOpen:
      return pb::TASK_OPEN;
    case Task::kUnspecified:
      break;
  }
  return pb::TASK_UNSPECIFIED;
}

pb::FactLabel ToProto(FactLabel label) {
  switch (label) {
    case FactLabel::kSupported:
      return pb::FACT_LABEL_SUPPORTED;
    case FactLabel::kRefuted:
      return pb::FACT_LABEL_REFUTED;
    case FactLabel::kUnknown:
      return pb::FACT_LABEL_UNKNOWN;
    case FactLabel::kUnspecified:
      break;
  }
  return pb::FACT_LABEL_UNSPECIFIED;
}

void ToProto(const ExtractiveSignals& signals, pb::ExtractiveSignals* out) {
  auto count = [](int value) { return static_cast<uint32_t>(std::max(value, 0)); };
  out->set_top_support(signals.top_support);
  out->set_runner_up_support(signals.runner_up_support);
  out->set_margin(signals.margin);
  out->set_options_supported(count(signals.options_supported));
  out->set_num_options(count(signals.num_options));
  out->set_topics_present(count(signals.topics_present));
  out->set_topics_connected(count(signals.topics_connected));
  out->set_evidence_count(count(signals.evidence_count));
  out->set_exception_question(signals.exception_question);
  out->set_candidate_index(signals.candidate_index);
  out->set_candidate_label(ToProto(signals.candidate_label));
  out->set_task(ToProto(signals.task));
  out->set_question_class(signals.question_class);
  out->set_intent_linked(signals.intent_linked);
  out->set_linked_options(count(signals.linked_options));
  out->set_candidate_sources(count(signals.candidate_sources));
}

EntityRef FromProto(const pb::EntityRef& entity) {
  return {entity.external_id(), entity.name(), entity.type()};
}

}  // namespace

absl::StatusOr<ReasonRequest> FromProto(const pb::ReasonRequest& request) {
  ReasonRequest out;
  IBGR_ASSIGN_OR_RETURN(out.task, FromProto(request.task()));
  out.question = request.question();
  out.options.assign(request.options().begin(), request.options().end());
  out.evidence.reserve(request.evidence_size());
  for (const pb::EvidenceTriple& t : request.evidence()) {
    EvidenceTriple& e = out.evidence.emplace_back();
    e.head = FromProto(t.head());
    e.relation = t.relation();
    e.relation_description = t.relation_description();
    e.tail = FromProto(t.tail());
    e.score = t.score();
    e.source = t.source();
    e.sources.assign(t.sources().begin(), t.sources().end());
    if (t.has_source_score()) e.source_score = t.source_score();
    e.hop = ToInt(t.hop());
  }
  out.paths.reserve(request.paths_size());
  for (const pb::ReasoningPath& p : request.paths()) {
    ReasoningPath& path = out.paths.emplace_back();
    path.triple_indices.reserve(p.triple_indices_size());
    for (uint32_t index : p.triple_indices()) path.triple_indices.push_back(ToInt(index));
    path.score = p.score();
  }
  out.topic_entities.reserve(request.topic_entities_size());
  for (const pb::EntityRef& e : request.topic_entities()) {
    out.topic_entities.push_back(FromProto(e));
  }
  out.topic_mentions.assign(request.topic_mentions().begin(), request.topic_mentions().end());
  out.backend = request.backend();
  out.self_consistency.samples = ToInt(request.self_consistency().samples());
  out.self_consistency.temperatures.assign(request.self_consistency().temperatures().begin(),
                                           request.self_consistency().temperatures().end());
  out.evidence_token_budget = ToInt(request.evidence_token_budget());
  out.caller_prompt = {request.caller_prompt().version(), request.caller_prompt().system(),
                       request.caller_prompt().user()};
  IBGR_ASSIGN_OR_RETURN(
      out.intent, common::RequestedIntent(request.intent(), request.intent_disabled(), "intent"));
  return out;
}

void ToProto(const ReasonResult& result, pb::ReasonResponse* response) {
  pb::Answer* answer = response->mutable_answer();
  answer->set_text(result.answer);
  answer->set_option_index(result.option_index);
  answer->set_option_letter(result.option_letter);
  answer->set_label(ToProto(result.fact_label));
  answer->set_rationale(result.rationale);
  answer->set_raw_output(result.raw_output);
  answer->set_parsed(result.parse_status == ParseStatus::kOk);
  answer->set_backend(result.backend);
  answer->set_used_llm(result.used_llm);
  answer->set_insufficient_evidence(result.insufficient_evidence);
  answer->set_agreement(static_cast<float>(result.agreement));
  for (const Vote& vote : result.votes) {
    pb::Vote* v = answer->add_votes();
    v->set_temperature(static_cast<float>(vote.temperature));
    v->set_answer(vote.answer);
  }
  answer->set_prompt_version(result.prompt_version);
  answer->set_confidence(static_cast<float>(result.confidence));
  answer->set_low_confidence(result.low_confidence);
  answer->mutable_evidence_used()->Reserve(static_cast<int>(result.evidence_used.size()));
  for (int index : result.evidence_used) {
    answer->add_evidence_used(static_cast<uint32_t>(std::max(index, 0)));
  }
  answer->set_evidence_dropped(static_cast<uint32_t>(std::max(result.evidence_dropped, 0)));
  if (result.signals.present) ToProto(result.signals, answer->mutable_signals());
  answer->set_raw_confidence(static_cast<float>(result.raw_confidence));
  answer->set_calibration(result.calibration);
  answer->set_abstained(result.abstained);
  answer->set_question_class(result.question_class);
  for (const std::string& text : result.answers) answer->add_answers(text);
  for (const AnswerEntity& a : result.answer_entities) {
    pb::AnswerEntity* out = answer->add_answer_entities();
    out->mutable_entity()->set_external_id(a.entity.id);
    out->mutable_entity()->set_name(a.entity.name);
    out->mutable_entity()->set_type(a.entity.type);
    out->set_support(static_cast<float>(a.support));
    for (int index : a.evidence) out->add_evidence(static_cast<uint32_t>(std::max(index, 0)));
    for (const std::string& s : a.sources) out->add_sources(s);
    out->set_topics_linked(static_cast<uint32_t>(std::max(a.topics_linked, 0)));
  }
  for (const StageTiming& timing : result.timings) {
    pb::StageTiming* t = response->add_timings();
    t->set_stage(timing.stage);
    t->set_duration_ms(timing.duration_ms);
  }
  for (const Degradation& degradation : result.degradations) {
    pb::Degradation* d = response->add_degraded();
    d->set_component(degradation.component);
    d->set_reason(degradation.reason);
  }
}

absl::Time DeadlineOf(const grpc::ServerContext& context) {
  const std::chrono::system_clock::time_point deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

ReasonerServiceImpl::ReasonerServiceImpl(std::string default_backend, AnswerObserver observer)
    : default_backend_(std::move(default_backend)), observer_(std::move(observer)) {}

void ReasonerServiceImpl::SetReasoner(std::shared_ptr<const Reasoner> reasoner) {
  absl::MutexLock lock(&mu_);
  reasoner_ = std::move(reasoner);
}

absl::StatusOr<std::shared_ptr<const Reasoner>> ReasonerServiceImpl::Get() const {
  absl::MutexLock lock(&mu_);
  if (reasoner_ == nullptr) return absl::UnavailableError("reasoner: not ready yet");
  return reasoner_;
}

absl::StatusOr<ReasonRequest> ReasonerServiceImpl::ToCore(std::string request_id,
                                                          const pb::ReasonRequest& request) const {
  IBGR_ASSIGN_OR_RETURN(ReasonRequest core, FromProto(request));
  if (core.backend.empty()) core.backend = default_backend_;
  core.request_id = std::move(request_id);
  return core;
}

grpc::Status ReasonerServiceImpl::Reason(grpc::ServerContext* context,
                                         const pb::ReasonRequest* request,
                                         pb::ReasonResponse* response) {
  return ReasonDirect(common::DirectCall{DeadlineOf(*context), common::RequestIdOf(*context)},
                      *request, response);
}

grpc::Status ReasonerServiceImpl::ReasonDirect(const common::DirectCall& call,
                                               const pb::ReasonRequest& request,
                                               pb::ReasonResponse* response) const {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const Reasoner> reasoner, Get());
    IBGR_ASSIGN_OR_RETURN(ReasonRequest core, ToCore(call.request_id, request));
    IBGR_ASSIGN_OR_RETURN(ReasonResult result, reasoner->Reason(core, call.deadline));
    if (observer_) observer_(core.backend, result);
    ToProto(result, response);
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status ReasonerServiceImpl::ReasonStream(
    grpc::ServerContext* context, const pb::ReasonStreamRequest* request,
    grpc::ServerWriter<pb::ReasonStreamResponse>* writer) {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const Reasoner> reasoner, Get());
    IBGR_ASSIGN_OR_RETURN(ReasonRequest core,
                          ToCore(common::RequestIdOf(*context), request->request()));
    // Tokens arrive on this thread (Reasoner::ReasonStream's contract), so the writer is never
    // used concurrently. One message is reused for every token.
    pb::ReasonStreamResponse token_message;
    bool caller_gone = false;
    const TokenCallback on_token = [&](absl::string_view token) {
      if (caller_gone || token.empty()) return;
      token_message.set_token(std::string(token));
      if (!writer->Write(token_message)) caller_gone = true;
    };
    IBGR_ASSIGN_OR_RETURN(ReasonResult result,
                          reasoner->ReasonStream(core, DeadlineOf(*context), on_token));
    if (observer_) observer_(core.backend, result);
    if (caller_gone || context->IsCancelled()) {
      return absl::CancelledError("reasoner: the caller cancelled the stream");
    }
    pb::ReasonStreamResponse final_message;
    ToProto(result, final_message.mutable_result());
    if (!writer->Write(final_message)) {
      return absl::CancelledError("reasoner: the caller cancelled the stream");
    }
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

}  // namespace ibgraphrag::reasoner
