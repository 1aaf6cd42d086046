// Runs benchmark questions through a GatewayService stub with bounded concurrency and scores
// every answer. The stub is an interface so that the same runner drives a remote gateway (the
// `ibgr eval` command) or an in-process all-in-one server (end-to-end tests).
#ifndef IBGRAPHRAG_TOOLS_EVAL_EVAL_RUNNER_H_
#define IBGRAPHRAG_TOOLS_EVAL_EVAL_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/qa/qa_datasets.h"
#include "grpcpp/client_context.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "tools/eval/eval_metrics.h"

namespace ibgraphrag::eval {

// Pipeline switches sent with every request; unset fields take the gateway's defaults.
struct PipelineConfig {
  std::optional<uint32_t> top_k;        // evidence triples, 1..1000
  std::optional<bool> msca;             // MSCA on/off
  std::optional<bool> ibrp;             // IBRP on/off
  std::optional<float> lambda;          // MSCA lambda, [0, 1]
  std::optional<float> tau;             // MSCA tau, [0, 1]
  std::optional<uint32_t> align_top_k;  // alignment candidates per mention
  std::optional<uint32_t> max_hops;     // subgraph hops
  std::string backend;                  // reasoner backend; empty = the gateway's default
  // Retriever scorer variant with IBRP on: "residual" or "plain"; empty = the retriever's default.
  std::string scorer;
  // PipelineOptions.mode ("kg_rank", ...); empty = the gateway's default (ibgraphrag).
  std::string mode;
  // PipelineOptions.intent_enabled (question intent on/off); unset = the gateway's default (on).
  std::optional<bool> intent;
  // PipelineOptions.kg_rag_minimum_similarity (kg_rag mode); unset = the gateway's.
  std::optional<float> kg_rag_minimum_similarity;
  // PipelineOptions.kg_rank_reranker ("encoder" or the "ibrp" hybrid); empty = the gateway's.
  std::string kg_rank_reranker;
  // PipelineOptions.illama_reranker ("encoder" or the "ibrp" hybrid); empty = the gateway's.
  std::string illama_reranker;

  // "msca=on ibrp=off top_k=10" (fields left to the gateway read "default").
  std::string Label() const;
  void ApplyTo(v1::PipelineOptions* options) const;
};

// The ablation grid: every combination of the given values over `base` (MSCA outermost, then
// IBRP, then top_k), in that order.
std::vector<PipelineConfig> AblationGrid(const PipelineConfig& base,
                                         const std::vector<bool>& msca_values,
                                         const std::vector<bool>& ibrp_values,
                                         const std::vector<uint32_t>& top_k_values);

// The request for one item: question, options, task, pipeline.
v1::AnswerRequest BuildRequest(const QaItem& item, const PipelineConfig& pipeline);

// Adds `authorization: Bearer <api_key>` metadata (nothing when the key is empty).
void AddApiKey(grpc::ClientContext* context, const std::string& api_key);

struct RunProgress {
  size_t done = 0;
  size_t total = 0;
  size_t errors = 0;
  absl::Duration elapsed;
};

struct RunOptions {
  // Calls in flight at once, 1..kMaxConcurrency.
  int concurrency = 8;
  // Deadline of each call.
  absl::Duration deadline = absl::Seconds(30);
  // Sent as a bearer token when not empty.
  std::string api_key;
  PipelineConfig pipeline;
  // Called after every finished call, from the worker threads, one call at a time.
  std::function<void(const RunProgress&)> on_progress;
  // When the first this-many calls all fail (a wrong address or key), the remaining items are
  // not sent and are recorded as CANCELLED. 0 sends every item whatever happens.
  int fail_fast_after = 16;
};
inline constexpr int kMaxConcurrency = 256;

// Sends every item (in parallel, options.concurrency at a time) and returns one outcome per item,
// in item order. Failed calls become error outcomes; the run itself fails only for bad options
// (INVALID_ARGUMENT naming the field).
absl::StatusOr<std::vector<ItemOutcome>> RunItems(v1::GatewayService::StubInterface* stub,
                                                  const std::vector<QaItem>& items,
                                                  const RunOptions& options);

// "[=======>      ]  412/4183  9.8%  38.1 q/s  ETA 1m39s  errors 0" in `width` bar cells.
std::string FormatProgress(const RunProgress& progress, int width = 30);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_TOOLS_EVAL_EVAL_RUNNER_H_
