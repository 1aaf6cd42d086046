// LibTorch side of the triple scorer behind a plain C++ header (pimpl), so only
// torch_scorer.cc and trainer.cc pay for <torch/torch.h>. Every LibTorch call is wrapped: a
// c10::Error becomes an absl::Status here, never an exception across this boundary.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TORCH_SCORER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TORCH_SCORER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "services/retriever/embedding_table.h"
#include "services/retriever/fused_scorer.h"
#include "services/retriever/scorer_params.h"

namespace ibgraphrag::retriever {

// True when LibTorch sees a CUDA device.
bool CudaAvailable();

// "auto" (cuda:0 when CUDA is available, else cpu), "cpu" or "cuda:N" -> the concrete device
// string. INVALID_ARGUMENT for anything else; FAILED_PRECONDITION for cuda without CUDA.
absl::StatusOr<std::string> ResolveDevice(std::string_view spec);

// Sets LibTorch's intra-op thread count (>= 1); process-wide.
absl::Status SetTorchThreads(int threads);

class TorchScorer {
 public:
  // Uploads `params` to `device_spec` (see ResolveDevice).
  static absl::StatusOr<std::unique_ptr<TorchScorer>> Create(const ScorerParams& params,
                                                             std::string_view device_spec);
  ~TorchScorer();
  TorchScorer(const TorchScorer&) = delete;
  TorchScorer& operator=(const TorchScorer&) = delete;

  const std::string& device() const;
  const ScorerConfig& config() const;

  // Computes the per-entity and per-relation first-layer projections on the device and keeps
  // them there for ScoreFactorised; returns CPU copies for FusedScorer. INVALID_ARGUMENT when
  // the table widths differ from the model's text_dim.
  absl::StatusOr<std::shared_ptr<const ScorerProjections>> Precompute(
      const EmbeddingTable& entities, const EmbeddingTable& relations);

  // (a) The plain MLP: materialises z for every candidate and runs both layers.
  absl::Status ScoreMlp(const CandidateBatch& batch, const EmbeddingTable& entities,
                        const EmbeddingTable& relations, absl::Span<float> out) const;

  // (b) Factorised with torch ops: index_select on the precomputed projections, add, relu,
  // matmul. FAILED_PRECONDITION before Precompute.
  absl::Status ScoreFactorised(const CandidateBatch& batch, absl::Span<float> out) const;

 private:
  struct Impl;
  explicit TorchScorer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TORCH_SCORER_H_
