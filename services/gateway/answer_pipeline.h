// AnswerPipeline: the gateway's answer flow. alignment.Align → retriever.Retrieve →
// reasoner.Reason(Stream), each call over a gRPC channel (in-process in the all-in-one binary)
// with a share of the caller's deadline, and a degrade-rather-than-fail policy:
//
//   alignment fails               → UNAVAILABLE (no entities, no grounded answer)
//   retriever fails / has no model → shortest-path evidence asked of kgstore (ShortestPaths,
//                                    ExtractSubgraph), flagged degraded{component: "retriever"}
//   reasoner service fails         → extractive answer computed by the gateway,
//                                    flagged degraded{component: "reasoner"}
//   LLM fails (inside the reasoner)→ the reasoner's extractive fallback, its flag passed through
//   the caller's deadline expires  → DEADLINE_EXCEEDED (never a hang, never a late answer)
//
// That flow is the default mode, "ibgraphrag". PipelineOptions.mode names another published
// method (modes/: kg_rank, kg_rag), which composes the same stages (PipelineStages) its own way.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_ANSWER_PIPELINE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_ANSWER_PIPELINE_H_

#include <grpcpp/channel.h>
#include <grpcpp/server_context.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/client.h"
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "ibgraphrag/v1/reasoner.grpc.pb.h"
#include "ibgraphrag/v1/retriever.grpc.pb.h"
#include "services/gateway/modes/give_mode.h"
#include "services/gateway/modes/illama_mode.h"
#include "services/gateway/modes/kg_rag_mode.h"
#include "services/gateway/modes/kg_rank_mode.h"
#include "services/gateway/modes/pipeline_mode.h"

namespace ibgraphrag::reasoner {
class Reasoner;
}

namespace ibgraphrag::gateway {

class ShortestPathEvidence;

// The answer flow's three unary calls made on services in this process without gRPC (the
// all-in-one: AlignmentServiceImpl::AlignDirect, RetrieverServiceImpl::RetrieveDirect,
// ReasonerServiceImpl::ReasonDirect). Each gets the deadline and request id a gRPC call would
// carry and returns the status the RPC would; the messages are not serialised, parsed or copied
// between threads. A function left empty is called over its channel.
struct DirectCalls {
  std::function<grpc::Status(const common::DirectCall&, const ibgraphrag::v1::AlignRequest&,
                             ibgraphrag::v1::AlignResponse*)>
      align;
  std::function<grpc::Status(const common::DirectCall&, const ibgraphrag::v1::RetrieveRequest&,
                             ibgraphrag::v1::RetrieveResponse*)>
      retrieve;
  std::function<grpc::Status(const common::DirectCall&, const ibgraphrag::v1::ReasonRequest&,
                             ibgraphrag::v1::ReasonResponse*)>
      reason;
};

// Channels to the four services. kgstore is only used for the degraded evidence path; without
// it a failed retriever leaves the answer without evidence (still flagged). With `direct`, the
// default flow's Align, Retrieve and (unstreamed) Reason calls skip the channels; streaming and
// the other modes' calls still use them.
struct Upstreams {
  std::shared_ptr<grpc::Channel> alignment;
  std::shared_ptr<grpc::Channel> retriever;
  std::shared_ptr<grpc::Channel> reasoner;
  std::shared_ptr<grpc::Channel> kgstore;
  DirectCalls direct;
};

struct PipelineConfig {
  // Defaults for PipelineOptions fields a request leaves unset. MSCA λ, τ and K left unset go to
  // the alignment service's own defaults (calibrated for its encoder).
  uint32_t top_k = 100;
  uint32_t max_hops = 2;
  bool msca_enabled = true;
  bool ibrp_enabled = true;
  // Read each question's intent and send it to the retriever and the reasoner
  // (PipelineOptions.intent_enabled overrides per request).
  bool intent_enabled = true;
  // Candidate triples the retriever scores per request; 0 = the cap the served retriever model
  // was trained with (its manifest), so serving sees the candidates training saw.
  uint32_t max_candidates = 0;
  // Reasoning paths returned.
  uint32_t max_paths = 10;
  // Deadline applied when the caller sets none.
  absl::Duration default_deadline = absl::Seconds(30);
  // Below this much time left at the start, DEADLINE_EXCEEDED at once.
  absl::Duration min_deadline = absl::Milliseconds(5);
  // Stage budgets: a share of the time left when the stage starts, capped. The reasoner gets
  // whatever is left.
  double align_share = 0.2;
  absl::Duration align_cap = absl::Seconds(3);
  double retrieve_share = 0.35;
  absl::Duration retrieve_cap = absl::Seconds(8);
  // Time kept back from the reasoner's budget for the gateway's own fallback and reply.
  absl::Duration reply_reserve = absl::Milliseconds(3);
  // PipelineOptions.mode "kg_rank" (modes/kg_rank_mode.h).
  KgRankOptions kg_rank;
  // PipelineOptions.mode "kg_rag" (modes/kg_rag_mode.h).
  KgRagOptions kg_rag;
  // PipelineOptions.mode "give" (modes/give_mode.h).
  GiveOptions give;
  // PipelineOptions.mode "illama" (modes/illama_mode.h).
  IllamaOptions illama;
};

// Receives AnswerStream's progress; called on the handler thread, in order.
class PipelineSink {
 public:
  virtual ~PipelineSink() = default;
  virtual void OnStage(const ibgraphrag::v1::StageEvent& event) = 0;
  virtual void OnToken(const std::string& token) = 0;
};

// Runs the default mode (ibgraphrag) itself and dispatches the others (PipelineOptions.mode) to
// their PipelineMode, lending them its stages.
class AnswerPipeline final : public PipelineStages {
 public:
  // alignment, retriever and reasoner channels are required.
  AnswerPipeline(const PipelineConfig& config, const Upstreams& upstreams);
  ~AnswerPipeline();

  // Runs the flow for a validated request. `sink` (may be null) gets stage events and tokens.
  // The returned status is the RPC's; `response` is complete when it is OK.
  grpc::Status Run(const grpc::ServerContextBase& context,
                   const ibgraphrag::v1::AnswerRequest& request,
                   ibgraphrag::v1::AnswerResponse* response, PipelineSink* sink) const;

  // PipelineStages, for the modes.
  grpc::Status Align(const ModeCall& call) const override;
  grpc::Status Reason(const ModeCall& call) const override;
  ibgraphrag::v1::RetrieverService::StubInterface& Retriever() const override;
  void FinishStage(const ModeCall& call, absl::string_view stage, absl::Time started,
                   const std::string& summary) const override;

 private:
  // The default flow: align -> retrieve (IBRP) -> reason.
  grpc::Status RunIbGraphRag(const grpc::ServerContextBase& context, absl::Time start,
                             absl::Time deadline, const ibgraphrag::v1::AnswerRequest& request,
                             ibgraphrag::v1::AnswerResponse* response, PipelineSink* sink) const;
  grpc::Status Align(const grpc::ServerContextBase& context, absl::Time deadline,
                     const ibgraphrag::v1::AnswerRequest& request,
                     ibgraphrag::v1::AnswerResponse* response,
                     std::vector<ibgraphrag::v1::AlignedEntity>* rejected = nullptr) const;
  // OK also when it degrades to shortest-path evidence; FAILED_PRECONDITION only when the request
  // named a scorer variant the served model lacks.
  grpc::Status Retrieve(const grpc::ServerContextBase& context, absl::Time deadline,
                        const ibgraphrag::v1::AnswerRequest& request,
                        ibgraphrag::v1::AnswerResponse* response) const;
  grpc::Status Reason(const grpc::ServerContextBase& context, absl::Time deadline,
                      const ibgraphrag::v1::AnswerRequest& request,
                      ibgraphrag::v1::AnswerResponse* response, PipelineSink* sink,
                      const ibgraphrag::v1::CallerPrompt* caller_prompt = nullptr) const;
  void RetrieveShortestPathFallback(const grpc::ServerContextBase& context, absl::Time deadline,
                                    const ibgraphrag::v1::RetrieveRequest& request,
                                    ibgraphrag::v1::AnswerResponse* response,
                                    const std::string& why) const;

  const PipelineConfig config_;
  std::unique_ptr<ibgraphrag::v1::AlignmentService::Stub> alignment_;
  std::unique_ptr<ibgraphrag::v1::RetrieverService::Stub> retriever_;
  std::unique_ptr<ibgraphrag::v1::ReasonerService::Stub> reasoner_;
  // The calls made without gRPC (all-in-one); an empty one goes over its stub above.
  DirectCalls direct_;
  // Shortest-path evidence from kgstore when the retriever fails (null without kgstore).
  std::unique_ptr<ShortestPathEvidence> fallback_evidence_;
  // Extractive answers when the reasoner service fails.
  std::unique_ptr<reasoner::Reasoner> fallback_reasoner_;
  // The non-default modes by name.
  absl::flat_hash_map<std::string, std::unique_ptr<PipelineMode>> modes_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_ANSWER_PIPELINE_H_
