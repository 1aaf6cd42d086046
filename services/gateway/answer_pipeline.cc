#include "services/gateway/answer_pipeline.h"

#include <grpcpp/client_context.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/arena_message.h"
#include "common/client.h"
#include "common/grpc_status.h"
#include "common/interned_evidence.h"
#include "common/question_intent.h"
#include "common/question_intent_proto.h"
#include "common/server_interceptor.h"
#include "common/topic_rule.h"
#include "services/gateway/option_context.h"
#include "services/gateway/shortest_path_evidence.h"
#include "services/reasoner/reasoner.h"
#include "services/reasoner/reasoner_service_impl.h"

namespace ibgraphrag::gateway {
namespace pb = ibgraphrag::v1;
namespace {

absl::Time CallerDeadline(const grpc::ServerContextBase& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

void AddTiming(pb::AnswerResponse* response, absl::string_view stage, double ms) {
  pb::StageTiming* t = response->add_timings();
  t->set_stage(std::string(stage));
  t->set_duration_ms(ms);
}

// Upstream timings, prefixed with the stage they belong to ("retrieve.score").
void AddUpstreamTimings(pb::AnswerResponse* response, absl::string_view prefix,
                        const google::protobuf::RepeatedPtrField<pb::StageTiming>& timings) {
  for (const pb::StageTiming& t : timings) {
    AddTiming(response, absl::StrCat(prefix, ".", t.stage()), t.duration_ms());
  }
}

// The intent the gateway resolved (AnswerResponse.intent), for a retriever or reasoner request:
// forwarded when it names something, else the stage is told not to read one of its own.
template <typename Request>
void SetIntent(const pb::AnswerResponse& response, pb::QuestionIntent* out, Request* request) {
  if (response.intent().relation_kinds_size() > 0 || response.intent().answer_types_size() > 0) {
    *out = response.intent();
  } else {
    request->set_intent_disabled(true);
  }
}

void AddDegraded(pb::AnswerResponse* response, absl::string_view component,
                 absl::string_view reason) {
  pb::Degradation* d = response->add_degraded();
  d->set_component(std::string(component));
  d->set_reason(std::string(reason));
}

std::string Describe(const grpc::Status& status) {
  return absl::StrCat(common::GrpcStatusCodeName(status.error_code()), ": ",
                      status.error_message());
}

// Budget for a stage: `share` of the time left, at least min(half of it, 250 ms), at most `cap`.
absl::Duration StageBudget(absl::Time deadline, double share, absl::Duration cap) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return absl::ZeroDuration();
  const absl::Duration floor = std::min(left / 2, absl::Milliseconds(250));
  return std::min(cap, std::max(floor, left * share));
}

bool Expired(absl::Time deadline) { return absl::Now() >= deadline; }

grpc::Status DeadlineExceeded(absl::string_view stage) {
  return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      absl::StrCat("deadline exceeded during ", stage,
                                   "; give the call more time (a typical answer with the "
                                   "extractive backend takes tens of milliseconds, with an "
                                   "LLM seconds)"));
}

// "residual" / "plain" for ArtifactVersions (empty when no trained scorer ranked).
std::string ScorerVariantLabel(pb::ScorerVariant variant) {
  switch (variant) {
    case pb::SCORER_VARIANT_RESIDUAL:
      return "residual";
    case pb::SCORER_VARIANT_PLAIN:
      return "plain";
    default:
      return "";
  }
}

}  // namespace

AnswerPipeline::AnswerPipeline(const PipelineConfig& config, const Upstreams& upstreams)
    : config_(config),
      alignment_(pb::AlignmentService::NewStub(upstreams.alignment)),
      retriever_(pb::RetrieverService::NewStub(upstreams.retriever)),
      reasoner_(pb::ReasonerService::NewStub(upstreams.reasoner)),
      direct_(upstreams.direct) {
  if (upstreams.kgstore != nullptr) {
    fallback_evidence_ = std::make_unique<ShortestPathEvidence>(upstreams.kgstore);
  }
  absl::StatusOr<std::unique_ptr<reasoner::Reasoner>> extractive =
      reasoner::Reasoner::Create(reasoner::ReasonerOptions());
  if (extractive.ok()) fallback_reasoner_ = *std::move(extractive);
  modes_.emplace(std::string(kModeKgRank), std::make_unique<KgRankMode>(config.kg_rank));
  modes_.emplace(std::string(kModeKgRag), std::make_unique<KgRagMode>(config.kg_rag));
  modes_.emplace(std::string(kModeGive), std::make_unique<GiveMode>(config.give));
  modes_.emplace(std::string(kModeIllama), std::make_unique<IllamaMode>(config.illama));
}

AnswerPipeline::~AnswerPipeline() = default;

grpc::Status AnswerPipeline::Run(const grpc::ServerContextBase& context,
                                 const pb::AnswerRequest& request, pb::AnswerResponse* response,
                                 PipelineSink* sink) const {
  const absl::Time start = absl::Now();
  const absl::Time deadline = std::min(CallerDeadline(context), start + config_.default_deadline);
  if (deadline - start < config_.min_deadline) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        absl::StrCat("deadline: less than ", Ms(config_.min_deadline),
                                     " ms left when the request arrived; nothing was run"));
  }
  // The question's intent, read once here (or the caller's override) and sent to the retriever
  // and the reasoner, so every stage and every mode reads the question alike.
  const bool intent_enabled = request.pipeline().has_intent_enabled()
                                  ? request.pipeline().intent_enabled()
                                  : config_.intent_enabled;
  absl::StatusOr<common::QuestionIntent> intent =
      common::ResolveIntent(request.intent(), !intent_enabled, request.question(), "intent");
  if (!intent.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(intent.status().message()));
  }
  common::IntentToProto(*intent, response->mutable_intent());
  // A yes/no question without options is fact verification (common::IsYesNoQuestion), resolved
  // once here so that every mode's prompt asks for the verdict the reasoner parses.
  const bool yes_no = request.task() == pb::TASK_UNSPECIFIED && request.options_size() == 0 &&
                      common::IsYesNoQuestion(request.question());
  pb::AnswerRequest yes_no_request;
  if (yes_no) {
    yes_no_request = request;
    yes_no_request.set_task(pb::TASK_FACT_VERIFICATION);
  }
  const pb::AnswerRequest& resolved = yes_no ? yes_no_request : request;
  const std::string& mode = resolved.pipeline().mode();
  if (mode.empty() || mode == kModeIbGraphRag) {
    return RunIbGraphRag(context, start, deadline, resolved, response, sink);
  }
  auto it = modes_.find(mode);
  if (it == modes_.end()) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("pipeline.mode: unknown mode '", mode, "'; allowed: ", ModeNamesList()));
  }
  const grpc::Status status =
      it->second->Run(ModeCall{context, deadline, resolved, response, sink}, *this);
  if (!status.ok()) return status;
  AddTiming(response, "total", Ms(absl::Now() - start));
  if (Expired(deadline)) return DeadlineExceeded("reason");
  return grpc::Status::OK;
}

grpc::Status AnswerPipeline::Align(const ModeCall& call) const {
  return Align(call.context, call.deadline, call.request, call.response, call.align_rejected);
}

grpc::Status AnswerPipeline::Reason(const ModeCall& call) const {
  return Reason(call.context, call.deadline, call.request, call.response, call.sink,
                call.caller_prompt);
}

pb::RetrieverService::StubInterface& AnswerPipeline::Retriever() const { return *retriever_; }

void AnswerPipeline::FinishStage(const ModeCall& call, absl::string_view stage, absl::Time started,
                                 const std::string& summary) const {
  const double ms = Ms(absl::Now() - started);
  AddTiming(call.response, stage, ms);
  if (call.sink == nullptr) return;
  pb::StageEvent event;
  event.set_stage(std::string(stage));
  event.set_duration_ms(ms);
  event.set_summary(summary);
  call.sink->OnStage(event);
}

grpc::Status AnswerPipeline::RunIbGraphRag(const grpc::ServerContextBase& context, absl::Time start,
                                           absl::Time deadline, const pb::AnswerRequest& request,
                                           pb::AnswerResponse* response, PipelineSink* sink) const {
  // 1. Alignment: without entities there is no grounded answer.
  absl::Time stage_start = absl::Now();
  grpc::Status status = Align(context, deadline, request, response);
  if (!status.ok()) return status;
  const double align_ms = Ms(absl::Now() - stage_start);
  AddTiming(response, "align", align_ms);
  if (sink != nullptr) {
    pb::StageEvent event;
    event.set_stage("align");
    event.set_duration_ms(align_ms);
    event.set_summary(absl::StrCat(response->entities_size(), " entities kept"));
    sink->OnStage(event);
  }

  // 2. Retrieval (degrades to shortest paths).
  stage_start = absl::Now();
  status = Retrieve(context, deadline, request, response);
  if (!status.ok()) return status;
  if (Expired(deadline)) return DeadlineExceeded("retrieve");
  const double retrieve_ms = Ms(absl::Now() - stage_start);
  AddTiming(response, "retrieve", retrieve_ms);
  if (sink != nullptr) {
    pb::StageEvent event;
    event.set_stage("retrieve");
    event.set_duration_ms(retrieve_ms);
    event.set_summary(absl::StrCat(response->evidence_size(), " evidence triples, ",
                                   response->paths_size(), " paths"));
    sink->OnStage(event);
  }

  // 3. Reasoning (degrades to the gateway's extractive answer).
  stage_start = absl::Now();
  status = Reason(context, deadline, request, response, sink);
  if (!status.ok()) return status;
  const double reason_ms = Ms(absl::Now() - stage_start);
  AddTiming(response, "reason", reason_ms);
  if (sink != nullptr) {
    pb::StageEvent event;
    event.set_stage("reason");
    event.set_duration_ms(reason_ms);
    event.set_summary(absl::StrCat("answered by ", response->answer().backend(),
                                   response->answer().used_llm() ? " (LLM)" : ""));
    sink->OnStage(event);
  }
  const double total_ms = Ms(absl::Now() - start);
  AddTiming(response, "total", total_ms);
  AddTiming(response, "gateway_overhead",
            std::max(0.0, total_ms - align_ms - retrieve_ms - reason_ms));
  if (Expired(deadline)) return DeadlineExceeded("reason");
  return grpc::Status::OK;
}

grpc::Status AnswerPipeline::Align(const grpc::ServerContextBase& context, absl::Time deadline,
                                   const pb::AnswerRequest& request, pb::AnswerResponse* response,
                                   std::vector<pb::AlignedEntity>* rejected) const {
  pb::AlignRequest align;
  // Options are aligned with the question: their entities become topic entities too, so the
  // evidence can connect the question to each option. Spans index into this text.
  align.set_text(common::AlignmentText(
      request.question(),
      std::vector<std::string>(request.options().begin(), request.options().end())));
  const pb::PipelineOptions& p = request.pipeline();
  pb::AlignOptions* o = align.mutable_options();
  o->set_msca_enabled(p.has_msca_enabled() ? p.msca_enabled() : config_.msca_enabled);
  if (p.has_lambda()) o->set_lambda(p.lambda());
  if (p.has_tau()) o->set_tau(p.tau());
  if (p.has_align_top_k()) o->set_top_k(p.align_top_k());

  const absl::Duration budget = StageBudget(deadline, config_.align_share, config_.align_cap);
  common::ArenaMessage<pb::AlignResponse> arena_aligned(response->GetArena());
  pb::AlignResponse& aligned = *arena_aligned;
  const grpc::Status status =
      direct_.align
          ? direct_.align(common::MakeDirectCall(context, budget), align, &aligned)
          : alignment_->Align(common::MakeChildContext(context, budget).get(), align, &aligned);
  if (!status.ok()) {
    if (Expired(deadline)) return DeadlineExceeded("align");
    switch (status.error_code()) {
      case grpc::StatusCode::INVALID_ARGUMENT:
        return grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("alignment refused the request: ", status.error_message()));
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return grpc::Status(
            grpc::StatusCode::DEADLINE_EXCEEDED,
            absl::StrCat("alignment did not answer within its budget of ", Ms(budget), " ms"));
      default:
        return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            absl::StrCat("alignment unavailable (no entities, so no grounded "
                                         "answer): ",
                                         Describe(status)));
    }
  }
  // Options read in context: each option keeps the entity of the type the question expects.
  const std::vector<std::string> options(request.options().begin(), request.options().end());
  const std::vector<OptionSpan> spans = OptionSpans(request.question(), options);
  if (!spans.empty()) {
    const std::vector<std::string> answer_types(response->intent().answer_types().begin(),
                                                response->intent().answer_types().end());
    ReadOptionsInContext(spans, ExpectedOptionTypes(spans, answer_types, aligned), &aligned);
  }
  response->mutable_entities()->Swap(aligned.mutable_kept());  // moved, not copied
  if (rejected != nullptr) rejected->assign(aligned.rejected().begin(), aligned.rejected().end());
  AddUpstreamTimings(response, "align", aligned.timings());
  for (const pb::Degradation& d : aligned.degraded()) *response->add_degraded() = d;
  pb::ArtifactVersions* v = response->mutable_versions();
  v->set_alignment_bundle_version(aligned.bundle_version());
  v->set_encoder_id(aligned.encoder_id());
  v->set_kg_version(aligned.kg_version());
  return grpc::Status::OK;
}

grpc::Status AnswerPipeline::Retrieve(const grpc::ServerContextBase& context, absl::Time deadline,
                                      const pb::AnswerRequest& request,
                                      pb::AnswerResponse* response) const {
  if (response->entities_size() == 0) return grpc::Status::OK;  // nothing to start from
  const pb::PipelineOptions& p = request.pipeline();
  pb::RetrieveRequest retrieve;
  retrieve.set_question(request.question());
  std::vector<uint32_t> kept;
  for (const pb::AlignedEntity& e : response->entities()) kept.push_back(e.entity().id());
  for (uint32_t id : common::TopicEntityIds(kept)) retrieve.add_topic_entity_ids(id);
  retrieve.set_top_k(p.has_top_k() ? p.top_k() : config_.top_k);
  retrieve.set_max_hops(p.has_max_hops() ? p.max_hops() : config_.max_hops);
  retrieve.set_max_candidates(config_.max_candidates);
  retrieve.set_max_paths(config_.max_paths);
  const bool ibrp = p.has_ibrp_enabled() ? p.ibrp_enabled() : config_.ibrp_enabled;
  retrieve.set_mode(ibrp ? pb::SCORING_MODE_IBRP : pb::SCORING_MODE_SHORTEST_PATH);
  if (ibrp) retrieve.set_scorer_variant(p.scorer_variant());
  SetIntent(*response, retrieve.mutable_intent(), &retrieve);

  // Over the network the evidence comes interned (each entity, relation and source once) and is
  // expanded here; in process it is built as triples and moved.
  if (!direct_.retrieve) retrieve.set_evidence_layout(pb::EVIDENCE_LAYOUT_INTERNED);

  const absl::Duration budget = StageBudget(deadline, config_.retrieve_share, config_.retrieve_cap);
  common::ArenaMessage<pb::RetrieveResponse> arena_retrieved(response->GetArena());
  pb::RetrieveResponse& retrieved = *arena_retrieved;
  grpc::Status status =
      direct_.retrieve
          ? direct_.retrieve(common::MakeDirectCall(context, budget), retrieve, &retrieved)
          : retriever_->Retrieve(common::MakeChildContext(context, budget).get(), retrieve,
                                 &retrieved);
  if (status.ok() && retrieved.has_interned_evidence()) {
    // A retriever that predates the layout answers with `triples`, which are used as they are;
    // one that sends both could not say which the paths index.
    const absl::Status expanded =
        retrieved.triples_size() > 0
            ? absl::InvalidArgumentError("retriever sent both triples and interned_evidence")
            : common::ExpandInternedEvidence(retrieved.interned_evidence(),
                                             retrieved.mutable_triples());
    if (!expanded.ok()) status = common::ToGrpcStatus(expanded);
  }
  if (status.ok()) {
    *response->mutable_evidence() = std::move(*retrieved.mutable_triples());
    *response->mutable_paths() = std::move(*retrieved.mutable_paths());
    AddUpstreamTimings(response, "retrieve", retrieved.timings());
    response->mutable_versions()->set_retriever_model_version(retrieved.model_version());
    response->mutable_versions()->set_retriever_scorer_variant(
        ScorerVariantLabel(retrieved.scorer_variant()));
    if (response->versions().kg_version().empty()) {
      response->mutable_versions()->set_kg_version(retrieved.kg_version());
    }
    return grpc::Status::OK;
  }
  // An ablation that asked for a scorer the deployment lacks must not silently run another.
  if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
      p.scorer_variant() != pb::SCORER_VARIANT_UNSPECIFIED &&
      absl::StartsWith(status.error_message(), "scorer_variant")) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        absl::StrCat("pipeline.", status.error_message()));
  }
  if (Expired(deadline)) return grpc::Status::OK;
  RetrieveShortestPathFallback(context, deadline, retrieve, response,
                               absl::StrCat("retriever ", Describe(status)));
  return grpc::Status::OK;
}

void AnswerPipeline::RetrieveShortestPathFallback(const grpc::ServerContextBase& context,
                                                  absl::Time deadline,
                                                  const pb::RetrieveRequest& request,
                                                  pb::AnswerResponse* response,
                                                  const std::string& why) const {
  if (fallback_evidence_ == nullptr) {
    AddDegraded(response, "retriever",
                absl::StrCat(why,
                             "; no kgstore configured for shortest-path evidence, so the "
                             "answer has no evidence"));
    return;
  }
  const absl::Time start = absl::Now();
  pb::RetrieveResponse fetched;
  const absl::Status status = fallback_evidence_->Fetch(context, deadline, request, &fetched);
  AddTiming(response, "retrieve.fallback", Ms(absl::Now() - start));
  if (!status.ok()) {
    AddDegraded(response, "retriever",
                absl::StrCat(why, "; shortest-path evidence from kgstore failed too (",
                             status.ToString(), "), so the answer has no evidence"));
    return;
  }
  *response->mutable_evidence() = std::move(*fetched.mutable_triples());
  *response->mutable_paths() = std::move(*fetched.mutable_paths());
  AddDegraded(response, "retriever",
              absl::StrCat(why, "; used shortest-path evidence from kgstore (no IBRP scoring)"));
}

grpc::Status AnswerPipeline::Reason(const grpc::ServerContextBase& context, absl::Time deadline,
                                    const pb::AnswerRequest& request, pb::AnswerResponse* response,
                                    PipelineSink* sink,
                                    const pb::CallerPrompt* caller_prompt) const {
  // On the response's arena: the evidence is swapped in and back out (pointer swaps there).
  common::ArenaMessage<pb::ReasonRequest> arena_reason(response->GetArena());
  pb::ReasonRequest& reason = *arena_reason;
  if (caller_prompt != nullptr) *reason.mutable_caller_prompt() = *caller_prompt;
  reason.set_task(request.task());
  reason.set_question(request.question());
  *reason.mutable_options() = request.options();
  // The reasoner's topic entities are the question's own: entities found in the option lines
  // (aligned so the retriever connects them) would make every option its own evidence.
  // Each entity's mention goes with it: the senses MSCA kept for one mention ("epilepsy" as the
  // disease and as the phenotype) are one question entity to the reasoner, not two.
  absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> mention_index;
  for (const pb::AlignedEntity& e : response->entities()) {
    if (e.mention().begin() >= request.question().size()) continue;
    *reason.add_topic_entities() = e.entity();
    const auto span = std::make_pair(e.mention().begin(), e.mention().end());
    reason.add_topic_mentions(
        mention_index.try_emplace(span, static_cast<uint32_t>(mention_index.size())).first->second);
  }
  reason.set_backend(request.pipeline().reasoner_backend());
  SetIntent(*response, reason.mutable_intent(), &reason);
  *reason.mutable_self_consistency() = request.pipeline().self_consistency();

  // Run() caps the deadline (default_deadline), so the time left is always finite.
  const absl::Duration budget = deadline - absl::Now() - config_.reply_reserve;
  if (budget <= absl::ZeroDuration()) return DeadlineExceeded("reason");
  // Evidence and paths, the bulk of the request, are lent to it rather than copied (a deep copy
  // of every triple per answer) and handed back as soon as the call returns.
  reason.mutable_evidence()->Swap(response->mutable_evidence());
  reason.mutable_paths()->Swap(response->mutable_paths());
  common::ArenaMessage<pb::ReasonResponse> arena_reasoned(response->GetArena());
  pb::ReasonResponse& reasoned = *arena_reasoned;
  grpc::Status status;
  if (sink == nullptr && direct_.reason) {
    status = direct_.reason(common::MakeDirectCall(context, budget), reason, &reasoned);
  } else if (sink == nullptr) {
    status = reasoner_->Reason(common::MakeChildContext(context, budget).get(), reason, &reasoned);
  } else {
    std::unique_ptr<grpc::ClientContext> child = common::MakeChildContext(context, budget);
    pb::ReasonStreamRequest stream_request;
    *stream_request.mutable_request() = reason;
    std::unique_ptr<grpc::ClientReader<pb::ReasonStreamResponse>> reader =
        reasoner_->ReasonStream(child.get(), stream_request);
    pb::ReasonStreamResponse message;
    while (reader->Read(&message)) {
      if (message.has_result()) {
        reasoned = std::move(*message.mutable_result());
      } else {
        sink->OnToken(message.token());
      }
    }
    status = reader->Finish();
  }
  response->mutable_evidence()->Swap(reason.mutable_evidence());
  response->mutable_paths()->Swap(reason.mutable_paths());
  if (status.ok()) {
    *response->mutable_answer() = std::move(*reasoned.mutable_answer());
    if (response->answer().used_llm()) {
      response->set_llm_calls(response->llm_calls() + std::max(1, response->answer().votes_size()));
    }
    AddUpstreamTimings(response, "reason", reasoned.timings());
    for (const pb::Degradation& d : reasoned.degraded()) *response->add_degraded() = d;
    response->mutable_versions()->set_prompt_version(response->answer().prompt_version());
    return grpc::Status::OK;
  }
  if (Expired(deadline)) return DeadlineExceeded("reason");
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    // A request the reasoner refuses (an unknown backend, too many samples) is the caller's
    // error, not an outage: say so rather than answering with something else.
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        absl::StrCat("reasoner refused the request: ", status.error_message()));
  }
  if (fallback_reasoner_ == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("reasoner unavailable: ", Describe(status)));
  }
  // The reasoner service itself failed: answer extractively here.
  pb::ReasonRequest extractive = reason;
  *extractive.mutable_evidence() = response->evidence();
  *extractive.mutable_paths() = response->paths();
  extractive.set_backend("");
  extractive.clear_self_consistency();
  absl::StatusOr<reasoner::ReasonRequest> core = reasoner::FromProto(extractive);
  absl::StatusOr<reasoner::ReasonResult> result =
      core.ok() ? fallback_reasoner_->Reason(*core, deadline) : core.status();
  if (!result.ok()) {
    return grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        absl::StrCat("reasoner unavailable (", Describe(status),
                     ") and the extractive fallback failed: ", result.status().ToString()));
  }
  pb::ReasonResponse converted;
  reasoner::ToProto(*result, &converted);
  *response->mutable_answer() = std::move(*converted.mutable_answer());
  response->mutable_versions()->set_prompt_version(response->answer().prompt_version());
  AddDegraded(response, "reasoner",
              absl::StrCat("reasoner ", Describe(status),
                           "; extractive answer computed by the gateway from the evidence"));
  return grpc::Status::OK;
}

}  // namespace ibgraphrag::gateway
