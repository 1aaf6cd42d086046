// Retrieval/reasoning modes of the gateway (PipelineOptions.mode, docs/modes.md). The default,
// "ibgraphrag", is the AnswerPipeline's own align -> retrieve -> reason flow; every other mode is
// a PipelineMode that composes the same stages (the suite's services behind the pipeline's
// clients, with their deadline shares and degrade policies) differently. No mode holds a copy of
// a service: alignment, retrieval and reasoning all go through PipelineStages.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_MODES_PIPELINE_MODE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_MODES_PIPELINE_MODE_H_

#include <grpcpp/server_context.h>

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "ibgraphrag/v1/alignment.pb.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "ibgraphrag/v1/reasoner.pb.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"

namespace ibgraphrag::gateway {

class PipelineSink;

inline constexpr absl::string_view kModeIbGraphRag = "ibgraphrag";
inline constexpr absl::string_view kModeKgRank = "kg_rank";
inline constexpr absl::string_view kModeKgRag = "kg_rag";
inline constexpr absl::string_view kModeGive = "give";
inline constexpr absl::string_view kModeIllama = "illama";

// The modes a request may name, default first.
const std::vector<absl::string_view>& ModeNames();
// "ibgraphrag, kg_rank": for error messages and usage text.
std::string ModeNamesList();
// True for "" (the default) and every name of ModeNames().
bool IsKnownMode(absl::string_view mode);

// One answer call as a mode sees it. `response` collects entities, evidence, answer, timings and
// degradations; `sink` (may be null) gets stage events and tokens.
struct ModeCall {
  const grpc::ServerContextBase& context;
  absl::Time deadline;
  const ibgraphrag::v1::AnswerRequest& request;
  ibgraphrag::v1::AnswerResponse* response;
  PipelineSink* sink;
  // A prompt the mode rendered itself (another paper's prompt), sent by the reasoner's LLM
  // backends in place of the served template; null = the template.
  const ibgraphrag::v1::CallerPrompt* caller_prompt = nullptr;
  // Align only: receives the candidates alignment rejected (below tau), when not null.
  std::vector<ibgraphrag::v1::AlignedEntity>* align_rejected = nullptr;
};

// The pipeline's stages, for modes to compose.
class PipelineStages {
 public:
  virtual ~PipelineStages() = default;
  // Alignment of the question and options: fills response->entities (UNAVAILABLE when the
  // service fails: no entities, no grounded answer).
  virtual grpc::Status Align(const ModeCall& call) const = 0;
  // Reasoning over response->evidence (and paths) for the question of the request: fills
  // response->answer; degrades to the gateway's extractive answer when the reasoner fails.
  virtual grpc::Status Reason(const ModeCall& call) const = 0;
  // The retriever's client (Retrieve with any scoring mode, ScoreTriples).
  virtual ibgraphrag::v1::RetrieverService::StubInterface& Retriever() const = 0;
  // Reports a finished stage: a timing and, with a sink, a stage event.
  virtual void FinishStage(const ModeCall& call, absl::string_view stage, absl::Time started,
                           const std::string& summary) const = 0;
};

// Stage steps every mode starts and ends with: alignment (then an "align" stage event), and the
// answer from call.response's evidence (then a "reason" stage event).
grpc::Status AlignStage(const ModeCall& call, const PipelineStages& stages);
grpc::Status ReasonStage(const ModeCall& call, const PipelineStages& stages);

// One intermediate LLM step through the reasoner (a draft, an extraction, a check): no evidence,
// one sample, `share` of the time left, `prompt` (may be null) in place of the template; `out`
// gets the answer. Its LLM completions count towards call.response's llm_calls.
grpc::Status AskReasoner(const ModeCall& call, const PipelineStages& stages,
                         ibgraphrag::v1::AnswerRequest request,
                         const ibgraphrag::v1::CallerPrompt* prompt, double share,
                         ibgraphrag::v1::AnswerResponse* out);

// (head id, relation, tail id) of an evidence triple: one key per triple across retrievals.
std::string EvidenceKey(const ibgraphrag::v1::EvidenceTriple& triple);

// Records that a mode step did not run as its paper has it: degraded {component: mode, reason}.
void AddModeDegradation(ibgraphrag::v1::AnswerResponse* response, absl::string_view mode,
                        std::string reason);
// "UNAVAILABLE: connection refused", for reasons.
std::string DescribeStatus(const grpc::Status& status);

class PipelineMode {
 public:
  virtual ~PipelineMode() = default;
  // Answers `call.request`; the status is the RPC's (DEADLINE_EXCEEDED, INVALID_ARGUMENT,
  // UNAVAILABLE), OK with a complete response otherwise.
  virtual grpc::Status Run(const ModeCall& call, const PipelineStages& stages) const = 0;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_MODES_PIPELINE_MODE_H_
