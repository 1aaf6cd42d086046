#include "services/gateway/modes/pipeline_mode.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/server_interceptor.h"

namespace ibgraphrag::gateway {

const std::vector<absl::string_view>& ModeNames() {
  static const auto* const kNames = new std::vector<absl::string_view>{
      kModeIbGraphRag, kModeKgRank, kModeKgRag, kModeGive, kModeIllama};
  return *kNames;
}

std::string ModeNamesList() { return absl::StrJoin(ModeNames(), ", "); }

bool IsKnownMode(absl::string_view mode) {
  return mode.empty() ||
         std::find(ModeNames().begin(), ModeNames().end(), mode) != ModeNames().end();
}

grpc::Status AlignStage(const ModeCall& call, const PipelineStages& stages) {
  const absl::Time started = absl::Now();
  const grpc::Status status = stages.Align(call);
  if (!status.ok()) return status;
  stages.FinishStage(call, "align", started,
                     absl::StrCat(call.response->entities_size(), " entities kept"));
  return grpc::Status::OK;
}

grpc::Status ReasonStage(const ModeCall& call, const PipelineStages& stages) {
  const absl::Time started = absl::Now();
  const grpc::Status status = stages.Reason(call);
  if (!status.ok()) return status;
  stages.FinishStage(call, "reason", started,
                     absl::StrCat("answered by ", call.response->answer().backend(),
                                  call.response->answer().used_llm() ? " (LLM)" : ""));
  return grpc::Status::OK;
}

grpc::Status AskReasoner(const ModeCall& call, const PipelineStages& stages,
                         ibgraphrag::v1::AnswerRequest request,
                         const ibgraphrag::v1::CallerPrompt* prompt, double share,
                         ibgraphrag::v1::AnswerResponse* out) {
  request.mutable_pipeline()->clear_self_consistency();
  *out->mutable_entities() = call.response->entities();
  const absl::Time until = absl::Now() + (call.deadline - absl::Now()) * share;
  const grpc::Status status =
      stages.Reason(ModeCall{call.context, until, request, out, nullptr, prompt});
  call.response->set_llm_calls(call.response->llm_calls() + out->llm_calls());
  return status;
}

std::string EvidenceKey(const ibgraphrag::v1::EvidenceTriple& triple) {
  return absl::StrCat(triple.head().id(), "\t", triple.relation(), "\t", triple.tail().id());
}

void AddModeDegradation(ibgraphrag::v1::AnswerResponse* response, absl::string_view mode,
                        std::string reason) {
  ibgraphrag::v1::Degradation* d = response->add_degraded();
  d->set_component(std::string(mode));
  d->set_reason(std::move(reason));
}

std::string DescribeStatus(const grpc::Status& status) {
  return absl::StrCat(common::GrpcStatusCodeName(status.error_code()), ": ",
                      status.error_message());
}

}  // namespace ibgraphrag::gateway
