#include "services/alignment/alignment_service_impl.h"

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>

#include <chrono>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/blocking_reactor.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"

namespace ibgraphrag::alignment {
namespace {

namespace pb = ::ibgraphrag::v1;
using common::ToGrpcStatus;

absl::Time DeadlineOf(const grpc::ServerContextBase& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

void ToProto(const ScoredEntity& s, const std::vector<Mention>& mentions, pb::AlignedEntity* out) {
  pb::EntityRef* ref = out->mutable_entity();
  ref->set_id(s.candidate.kg_id);
  ref->set_external_id(s.candidate.external_id);
  ref->set_name(s.candidate.name);
  ref->set_type(s.candidate.type);
  if (s.mention_index >= 0 && s.mention_index < static_cast<int>(mentions.size())) {
    ToProto(mentions[s.mention_index], out->mutable_mention());
  }
  out->set_question_similarity(s.question_similarity);
  out->set_relatedness(s.relatedness);
  out->set_consistency(s.consistency);
  for (const std::string& id : s.source_ids) out->add_source_ids(id);
  out->set_chosen_by_llm(s.chosen_by_llm);
  out->set_link_similarity(s.candidate.similarity);
  out->set_raw_question_similarity(s.raw_question_similarity);
  out->set_raw_relatedness(s.raw_relatedness);
  out->set_dictionary_match(s.candidate.dictionary_match);
  out->set_lookalike(s.lookalike);
  out->set_excluded_by_llm(s.excluded_by_llm);
}

void AddTimings(const std::vector<StageTiming>& timings,
                google::protobuf::RepeatedPtrField<pb::StageTiming>* out) {
  for (const StageTiming& t : timings) {
    pb::StageTiming* p = out->Add();
    p->set_stage(t.stage);
    p->set_duration_ms(t.duration_ms);
  }
}

void AddDegradations(const std::vector<Degradation>& degraded,
                     google::protobuf::RepeatedPtrField<pb::Degradation>* out) {
  for (const Degradation& d : degraded) {
    pb::Degradation* p = out->Add();
    p->set_component(d.component);
    p->set_reason(d.reason);
  }
}

}  // namespace

AlignmentServiceImpl::AlignmentServiceImpl(const AlignerHolder* holder) : holder_(holder) {}

grpc::ServerUnaryReactor* AlignmentServiceImpl::ExtractMentions(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return common::RunTypedUnary<pb::ExtractMentionsRequest, pb::ExtractMentionsResponse>(
      context, request, response, [this, context](const auto& typed, auto* out) {
        return HandleExtractMentions(*context, typed, out);
      });
}

grpc::ServerUnaryReactor* AlignmentServiceImpl::Link(grpc::CallbackServerContext* context,
                                                     const grpc::ByteBuffer* request,
                                                     grpc::ByteBuffer* response) {
  return common::RunTypedUnary<pb::LinkRequest, pb::LinkResponse>(
      context, request, response,
      [this, context](const auto& typed, auto* out) { return HandleLink(*context, typed, out); });
}

grpc::ServerUnaryReactor* AlignmentServiceImpl::Align(grpc::CallbackServerContext* context,
                                                      const grpc::ByteBuffer* request,
                                                      grpc::ByteBuffer* response) {
  return common::RunTypedUnary<pb::AlignRequest, pb::AlignResponse>(
      context, request, response, [this, context](const auto& typed, auto* out) {
        return HandleAlign(DeadlineOf(*context), typed, out);
      });
}

MscaOptions MergeAlignOptions(const pb::AlignOptions& request, const MscaOptions& defaults) {
  MscaOptions o = defaults;
  if (request.has_lambda()) o.lambda = request.lambda();
  if (request.has_tau()) o.tau = request.tau();
  // Clamped only to keep the int conversion defined; ValidateMscaOptions names the field.
  if (request.has_top_k())
    o.top_k = static_cast<int>(std::min<uint32_t>(request.top_k(), 1u << 30));
  if (request.has_msca_enabled()) o.msca_enabled = request.msca_enabled();
  if (request.has_llm_choice_below()) {
    o.llm_choice_below = static_cast<int>(std::min<uint32_t>(request.llm_choice_below(), 1u << 30));
  }
  o.llm_mentions = request.llm_mentions();
  if (request.has_calibrated()) o.calibrated = request.calibrated();
  if (request.llm_step() == pb::LLM_STEP_BEFORE_FILTER) o.llm_step = LlmStep::kBeforeFilter;
  if (request.llm_step() == pb::LLM_STEP_RESCUE_REJECTED) o.llm_step = LlmStep::kRescueRejected;
  return o;
}

void ToProto(const Mention& m, pb::Mention* out) {
  out->set_begin(m.begin);
  out->set_end(m.end);
  out->set_text(m.text);
  out->set_normalized(m.normalized);
  out->set_negated(m.negated);
  out->set_uncertain(m.uncertain);
  out->set_origin(m.origin);
  out->set_expanded_from(m.expanded_from);
  out->set_expansion(m.expansion);
  out->set_expansion_id(m.expansion_id);
}

void ToProto(const AlignResult& r, const std::string& kg_version, pb::AlignResponse* out) {
  for (const ScoredEntity& s : r.kept) ToProto(s, r.mentions, out->add_kept());
  for (const ScoredEntity& s : r.rejected) ToProto(s, r.mentions, out->add_rejected());
  AddTimings(r.timings, out->mutable_timings());
  AddDegradations(r.degraded, out->mutable_degraded());
  out->set_bundle_version(absl::StrCat(r.bundle_version));
  out->set_encoder_id(r.encoder_id);
  out->set_lambda(r.effective.lambda);
  out->set_tau(r.effective.tau);
  out->set_top_k(static_cast<uint32_t>(r.effective.top_k));
  for (const Mention& m : r.mentions) ToProto(m, out->add_mentions());
  out->set_msca_enabled(r.effective.msca_enabled);
  out->set_kg_version(kg_version);
  out->set_calibrated(r.effective.calibrated);
  out->set_llm_step(r.effective.llm_step == LlmStep::kRescueRejected ? pb::LLM_STEP_RESCUE_REJECTED
                                                                     : pb::LLM_STEP_BEFORE_FILTER);
}

absl::StatusOr<std::shared_ptr<const Aligner>> AlignmentServiceImpl::Current() const {
  std::shared_ptr<const Aligner> aligner = holder_->Get();
  if (aligner == nullptr) {
    return absl::UnavailableError("alignment: no bundle loaded (see the server log)");
  }
  return aligner;
}

grpc::Status AlignmentServiceImpl::HandleExtractMentions(
    const grpc::ServerContextBase& context, const pb::ExtractMentionsRequest& request,
    pb::ExtractMentionsResponse* response) const {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const Aligner> aligner, Current());
    IBGR_ASSIGN_OR_RETURN(
        ExtractResult result,
        aligner->ExtractMentions(request.text(), request.llm_mentions(), DeadlineOf(context)));
    for (const Mention& m : result.mentions) ToProto(m, response->add_mentions());
    AddDegradations(result.degraded, response->mutable_degraded());
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status AlignmentServiceImpl::HandleLink(const grpc::ServerContextBase& context,
                                              const pb::LinkRequest& request,
                                              pb::LinkResponse* response) const {
  absl::Status status = [&]() -> absl::Status {
    IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const Aligner> aligner, Current());
    const int top_k = request.top_k() == 0
                          ? aligner->options().defaults.top_k
                          : static_cast<int>(std::min<uint32_t>(request.top_k(), 1u << 30));
    IBGR_ASSIGN_OR_RETURN(LinkResult result,
                          aligner->Link(request.text(), top_k, DeadlineOf(context)));
    for (const MentionLink& link : result.links) {
      pb::MentionCandidates* mc = response->add_mentions();
      ToProto(link.mention, mc->mutable_mention());
      for (const LinkedCandidate& c : link.candidates) {
        pb::Candidate* pc = mc->add_candidates();
        pc->mutable_entity()->set_id(c.kg_id);
        pc->mutable_entity()->set_external_id(c.external_id);
        pc->mutable_entity()->set_name(c.name);
        pc->mutable_entity()->set_type(c.type);
        pc->set_similarity(c.similarity);
        pc->set_matched_name(c.matched_name);
      }
    }
    response->set_bundle_version(absl::StrCat(aligner->bundle().manifest.version));
    response->set_encoder_id(aligner->encoder().id());
    AddTimings(result.timings, response->mutable_timings());
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

grpc::Status AlignmentServiceImpl::AlignDirect(const common::DirectCall& call,
                                               const pb::AlignRequest& request,
                                               pb::AlignResponse* response) const {
  return HandleAlign(call.deadline, request, response);
}

grpc::Status AlignmentServiceImpl::HandleAlign(absl::Time deadline, const pb::AlignRequest& request,
                                               pb::AlignResponse* response) const {
  absl::Status status = [&]() -> absl::Status {
    if (!pb::LlmStep_IsValid(request.options().llm_step())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "options.llm_step: ", request.options().llm_step(), " is not an LLM step (0, 1 or 2)"));
    }
    IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const Aligner> aligner, Current());
    const MscaOptions options = MergeAlignOptions(request.options(), aligner->options().defaults);
    IBGR_ASSIGN_OR_RETURN(AlignResult result, aligner->Align(request.text(), options, deadline));
    ToProto(result, aligner->bundle().manifest.source_kg_version, response);
    return absl::OkStatus();
  }();
  return ToGrpcStatus(status);
}

}  // namespace ibgraphrag::alignment
