#include "services/retriever/torch_backend.h"

#include "common/status_macros.h"
#include "services/retriever/torch_scorer.h"

namespace ibgraphrag::retriever {
namespace {

class TorchDeviceScorer : public DeviceScorer {
 public:
  explicit TorchDeviceScorer(std::unique_ptr<TorchScorer> scorer) : scorer_(std::move(scorer)) {}
  absl::Status Score(const CandidateBatch& batch, absl::Span<float> out) const override {
    return scorer_->ScoreFactorised(batch, out);
  }

 private:
  std::unique_ptr<TorchScorer> scorer_;
};

class LibTorchBackend : public ScoringBackend {
 public:
  std::string_view name() const override { return "libtorch"; }
  absl::StatusOr<std::string> ResolveDevice(std::string_view spec) const override {
    return retriever::ResolveDevice(spec);
  }
  absl::Status SetThreads(int threads) const override { return SetTorchThreads(threads); }
  absl::StatusOr<std::unique_ptr<DeviceScorer>> CreateScorer(
      const ScorerParams& params, const EmbeddingTable& entities, const EmbeddingTable& relations,
      const std::string& device) const override {
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<TorchScorer> scorer, TorchScorer::Create(params, device));
    IBGR_RETURN_IF_ERROR(scorer->Precompute(entities, relations).status());
    return std::unique_ptr<DeviceScorer>(new TorchDeviceScorer(std::move(scorer)));
  }
};

}  // namespace

const ScoringBackend& LibTorchScoringBackend() {
  static const LibTorchBackend* const backend = new LibTorchBackend();
  return *backend;
}

}  // namespace ibgraphrag::retriever
