#include "services/retriever/scoring_backend.h"

#include <cblas.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/error_echo.h"
#include "common/status_macros.h"

namespace ibgraphrag::retriever {
namespace {

// C[rows x hidden] = Z[rows x d] * W_block^T, where W_block is the d-column block of W1
// [hidden x input_dim] starting at `offset` (row-major, leading dimension input_dim).
std::vector<float> Project(const EmbeddingTable& table, const ScorerParams& params, int offset) {
  const ScorerConfig& c = params.config;
  std::vector<float> out(static_cast<size_t>(table.rows()) * c.hidden);
  if (table.rows() == 0) return out;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(table.rows()), c.hidden,
              c.text_dim, 1.0f, table.data(), c.text_dim, params.w1.data() + offset, c.input_dim(),
              0.0f, out.data(), c.hidden);
  return out;
}

}  // namespace

absl::StatusOr<DeviceSpec> ParseDeviceSpec(std::string_view spec) {
  const absl::string_view s(spec.data(), spec.size());  // absl's is not std's here
  if (s.empty() || s == "auto") return DeviceSpec{DeviceSpec::Kind::kAuto, 0};
  if (s == "cpu") return DeviceSpec{DeviceSpec::Kind::kCpu, 0};
  absl::string_view index = s;
  int n = 0;
  if (absl::ConsumePrefix(&index, "cuda") &&
      (index.empty() ||
       (absl::ConsumePrefix(&index, ":") && absl::SimpleAtoi(index, &n) && n >= 0))) {
    return DeviceSpec{DeviceSpec::Kind::kCuda, n};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device: \"", common::EchoForError(s), "\" is not auto, cpu or cuda:N"));
}

absl::StatusOr<std::string> ResolveScoringDevice(const ScoringBackend* backend,
                                                 std::string_view spec) {
  if (backend != nullptr) return backend->ResolveDevice(spec);
  IBGR_ASSIGN_OR_RETURN(const DeviceSpec parsed, ParseDeviceSpec(spec));
  if (parsed.kind != DeviceSpec::Kind::kCuda) return std::string("cpu");
  return absl::FailedPreconditionError(absl::StrCat(
      "device: cuda:", parsed.cuda_index,
      " needs the LibTorch build of the retriever (binary retriever_torch, image "
      "ibgraphrag-torch; deploy/k8s/overlays/prod-gpu); this binary scores on CPU only"));
}

absl::Status SetScoringThreads(const ScoringBackend* backend, int threads) {
  if (threads < 1) return absl::InvalidArgumentError("torch_threads: must be >= 1");
  return backend == nullptr ? absl::OkStatus() : backend->SetThreads(threads);
}

absl::StatusOr<std::shared_ptr<const ScorerProjections>> ComputeProjections(
    const ScorerParams& params, const EmbeddingTable& entities, const EmbeddingTable& relations) {
  const ScorerConfig& c = params.config;
  if (absl::Status s = ValidateScorerConfig(c); !s.ok()) return s;
  const size_t in = c.input_dim(), h = c.hidden;
  if (params.w1.size() != h * in || params.b1.size() != h || params.w2.size() != h ||
      params.w_prior.size() != static_cast<size_t>(c.prior_dim)) {
    return absl::InvalidArgumentError("params: array sizes do not match the config");
  }
  if (entities.dim() != c.text_dim || relations.dim() != c.text_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("embeddings: entity/relation width ", entities.dim(), "/", relations.dim(),
                     ", model text_dim ", c.text_dim, " (artifacts built with another encoder?)"));
  }
  auto p = std::make_shared<ScorerProjections>(ProjectionsSkeleton(params));
  p->num_entities = entities.rows();
  p->num_relations = relations.rows();
  p->head = Project(entities, params, c.h_offset());
  p->tail = Project(entities, params, c.t_offset());
  p->relation = Project(relations, params, c.r_offset());
  return std::shared_ptr<const ScorerProjections>(std::move(p));
}

}  // namespace ibgraphrag::retriever
