// Where a model version scores. The fused C++ loop (fused_scorer.h) over projections computed
// with BLAS (ComputeProjections) is always there and needs no LibTorch: the CPU serving binaries
// (retriever, ibgraphrag) score with it and do not link LibTorch at all. A binary that links a
// device backend (torch_backend.h: the `retriever_torch` binary of the GPU image) passes it in
// RetrieverModel::Options / RetrieverServer::Options; it scores on CUDA, or with LibTorch ops on
// CPU when forced. The backend is passed, never registered globally, so which binary can use a
// GPU is decided by what it links and says so in its own main().
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SCORING_BACKEND_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SCORING_BACKEND_H_

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

// One trained scorer uploaded to a device, ready for the factorised forward pass.
class DeviceScorer {
 public:
  virtual ~DeviceScorer() = default;
  // Sigmoid scores of the batch into out[0..n). INVALID_ARGUMENT for a malformed batch.
  virtual absl::Status Score(const CandidateBatch& batch, absl::Span<float> out) const = 0;
};

class ScoringBackend {
 public:
  virtual ~ScoringBackend() = default;
  // "libtorch": shown in logs and errors.
  virtual std::string_view name() const = 0;
  // "auto" (or empty), "cpu", "cuda" or "cuda:N" -> the concrete device ("cpu", "cuda:0").
  // INVALID_ARGUMENT for another spelling, FAILED_PRECONDITION for a device that is not there.
  virtual absl::StatusOr<std::string> ResolveDevice(std::string_view spec) const = 0;
  // Intra-op threads of the backend's own kernels (>= 1); process-wide.
  virtual absl::Status SetThreads(int threads) const = 0;
  // `params` on `device` (a ResolveDevice result) with its projections of the tables.
  virtual absl::StatusOr<std::unique_ptr<DeviceScorer>> CreateScorer(
      const ScorerParams& params, const EmbeddingTable& entities, const EmbeddingTable& relations,
      const std::string& device) const = 0;
};

// A device spec as written: "auto" (or empty), "cpu", "cuda" (= cuda:0) or "cuda:N".
struct DeviceSpec {
  enum class Kind { kAuto, kCpu, kCuda };
  Kind kind = Kind::kAuto;
  int cuda_index = 0;
};
// INVALID_ARGUMENT naming `device` for any other spelling.
absl::StatusOr<DeviceSpec> ParseDeviceSpec(std::string_view spec);

// The device `spec` means for a binary with `backend` (null: CPU only, no LibTorch linked):
// without a backend "auto", "" and "cpu" are "cpu", and "cuda"/"cuda:N" is FAILED_PRECONDITION
// saying which binary scores on a GPU; anything else is INVALID_ARGUMENT naming `device`.
absl::StatusOr<std::string> ResolveScoringDevice(const ScoringBackend* backend,
                                                 std::string_view spec);

// Sets the backend's threads (>= 1, else INVALID_ARGUMENT naming torch_threads); without a backend
// it only checks the value (the fused loop runs on the request's thread).
absl::Status SetScoringThreads(const ScoringBackend* backend, int threads);

// The fused loop's per-version projections (P_head, P_tail, P_rel of fused_scorer.h), computed
// with BLAS sgemm on CPU. INVALID_ARGUMENT when the parameter arrays do not match their config or
// the table widths differ from the model's text_dim.
absl::StatusOr<std::shared_ptr<const ScorerProjections>> ComputeProjections(
    const ScorerParams& params, const EmbeddingTable& entities, const EmbeddingTable& relations);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SCORING_BACKEND_H_
