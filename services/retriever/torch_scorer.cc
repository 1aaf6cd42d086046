#include "services/retriever/torch_scorer.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "services/retriever/scorer_module.h"
#include "services/retriever/scoring_backend.h"

namespace ibgraphrag::retriever {

using internal::TorchGuard;

bool CudaAvailable() {
  try {
    return torch::cuda::is_available();
  } catch (...) {
    return false;
  }
}

absl::StatusOr<std::string> ResolveDevice(std::string_view device_spec) {
  absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(device_spec);
  if (!spec.ok()) return spec.status();
  switch (spec->kind) {
    case DeviceSpec::Kind::kAuto:
      return CudaAvailable() ? "cuda:0" : "cpu";
    case DeviceSpec::Kind::kCpu:
      return std::string("cpu");
    case DeviceSpec::Kind::kCuda:
      break;
  }
  const int index = spec->cuda_index;
  if (!CudaAvailable()) {
    return absl::FailedPreconditionError(
        absl::StrCat("device: cuda:", index, " requested but LibTorch sees no CUDA device"));
  }
  const int count = static_cast<int>(torch::cuda::device_count());
  if (index >= count) {
    return absl::FailedPreconditionError(
        absl::StrCat("device: cuda:", index, " requested, ", count, " CUDA device(s) present"));
  }
  return absl::StrCat("cuda:", index);
}

absl::Status SetTorchThreads(int threads) {
  if (threads < 1) return absl::InvalidArgumentError("torch_threads: must be >= 1");
  return TorchGuard("set_num_threads", [&] {
    torch::set_num_threads(threads);
    return absl::OkStatus();
  });
}

struct TorchScorer::Impl {
  Impl(const ScorerConfig& c, const std::string& dev)
      : config(c), device_name(dev), device(dev), module(c) {}
  ScorerConfig config;
  std::string device_name;
  torch::Device device;
  mutable internal::ScorerModule module;  // inference only; LibTorch modules are not const-correct
  // Set by Precompute.
  std::shared_ptr<const ScorerProjections> projections;
  torch::Tensor p_head, p_tail, p_rel;  // [E x H], [E x H], [R x H] on `device`
};

TorchScorer::TorchScorer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TorchScorer::~TorchScorer() = default;
const std::string& TorchScorer::device() const { return impl_->device_name; }
const ScorerConfig& TorchScorer::config() const { return impl_->config; }

absl::StatusOr<std::unique_ptr<TorchScorer>> TorchScorer::Create(const ScorerParams& params,
                                                                 std::string_view device_spec) {
  if (absl::Status s = ValidateScorerConfig(params.config); !s.ok()) return s;
  const size_t in = params.config.input_dim(), h = params.config.hidden;
  if (params.w1.size() != h * in || params.b1.size() != h || params.w2.size() != h ||
      params.w_prior.size() != static_cast<size_t>(params.config.prior_dim)) {
    return absl::InvalidArgumentError("params: array sizes do not match the config");
  }
  absl::StatusOr<std::string> device = ResolveDevice(device_spec);
  if (!device.ok()) return device.status();
  std::unique_ptr<Impl> impl;
  absl::Status status = TorchGuard("TorchScorer::Create", [&] {
    impl = std::make_unique<Impl>(params.config, *device);
    impl->module->to(impl->device);
    impl->module->eval();
    internal::CopyParamsIn(params, impl->module);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return std::unique_ptr<TorchScorer>(new TorchScorer(std::move(impl)));
}

namespace {

torch::Tensor TableTensor(const EmbeddingTable& table) {
  return torch::from_blob(const_cast<float*>(table.data()), {table.rows(), table.dim()},
                          torch::TensorOptions().dtype(torch::kFloat32));
}

std::vector<float> ToVector(const torch::Tensor& t) {
  torch::Tensor c = t.to(torch::kCPU).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// The batch's id columns as one [5 x n] int64 tensor on `device`: heads, relations, tails,
// head nodes, tail nodes.
torch::Tensor IdColumns(const CandidateBatch& batch, const torch::Device& device) {
  const size_t n = batch.heads.size();
  std::vector<int64_t> v(5 * n);
  std::copy(batch.heads.begin(), batch.heads.end(), v.begin());
  std::copy(batch.relations.begin(), batch.relations.end(), v.begin() + n);
  std::copy(batch.tails.begin(), batch.tails.end(), v.begin() + 2 * n);
  std::copy(batch.head_nodes.begin(), batch.head_nodes.end(), v.begin() + 3 * n);
  std::copy(batch.tail_nodes.begin(), batch.tail_nodes.end(), v.begin() + 4 * n);
  return torch::from_blob(v.data(), {5, static_cast<int64_t>(n)}, torch::kInt64)
      .to(device, /*non_blocking=*/false, /*copy=*/true);
}

// The batch's structure features [n x prior_dim] on `device` (undefined when prior_dim is 0).
torch::Tensor PriorTensor(const CandidateBatch& batch, const ScorerConfig& c,
                          const torch::Device& device) {
  if (c.prior_dim == 0) return torch::Tensor();
  const int64_t n = static_cast<int64_t>(batch.heads.size());
  return torch::from_blob(const_cast<float*>(batch.prior.data()), {n, c.prior_dim}, torch::kFloat32)
      .to(device, false, true);
}

void CopyOut(const torch::Tensor& scores, absl::Span<float> out) {
  torch::Tensor c = scores.to(torch::kCPU).contiguous();
  std::memcpy(out.data(), c.data_ptr<float>(), c.numel() * sizeof(float));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const ScorerProjections>> TorchScorer::Precompute(
    const EmbeddingTable& entities, const EmbeddingTable& relations) {
  Impl& m = *impl_;
  const ScorerConfig& c = m.config;
  if (entities.dim() != c.text_dim || relations.dim() != c.text_dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("embeddings: entity/relation width ", entities.dim(), "/", relations.dim(),
                     ", model text_dim ", c.text_dim, " (artifacts built with another encoder?)"));
  }
  std::shared_ptr<ScorerProjections> p;
  absl::Status status = TorchGuard("TorchScorer::Precompute", [&] {
    torch::NoGradGuard no_grad;
    const torch::Tensor w1 = m.module->fc1->weight;  // [H x in]
    const torch::Tensor w_h = w1.narrow(1, c.h_offset(), c.text_dim);
    const torch::Tensor w_r = w1.narrow(1, c.r_offset(), c.text_dim);
    const torch::Tensor w_t = w1.narrow(1, c.t_offset(), c.text_dim);
    const torch::Tensor ze = TableTensor(entities).to(m.device);
    const torch::Tensor zr = TableTensor(relations).to(m.device);
    torch::Tensor head = torch::matmul(ze, w_h.t()).contiguous();
    torch::Tensor tail = torch::matmul(ze, w_t.t()).contiguous();
    torch::Tensor rel = torch::matmul(zr, w_r.t()).contiguous();
    p = std::make_shared<ScorerProjections>(ProjectionsSkeleton(internal::CopyParamsOut(m.module)));
    p->num_entities = entities.rows();
    p->num_relations = relations.rows();
    p->head = ToVector(head);
    p->tail = ToVector(tail);
    p->relation = ToVector(rel);
    if (m.device.is_cpu()) {
      // Share the CPU copies instead of holding the projections twice.
      auto opts = torch::TensorOptions().dtype(torch::kFloat32);
      head = torch::from_blob(p->head.data(), {p->num_entities, c.hidden}, opts);
      tail = torch::from_blob(p->tail.data(), {p->num_entities, c.hidden}, opts);
      rel = torch::from_blob(p->relation.data(), {p->num_relations, c.hidden}, opts);
    }
    m.p_head = head;
    m.p_tail = tail;
    m.p_rel = rel;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  m.projections = p;
  return std::shared_ptr<const ScorerProjections>(p);
}

absl::Status TorchScorer::ScoreMlp(const CandidateBatch& batch, const EmbeddingTable& entities,
                                   const EmbeddingTable& relations, absl::Span<float> out) const {
  const Impl& m = *impl_;
  const ScorerConfig& c = m.config;
  if (absl::Status s = ValidateCandidateBatch(batch, c, entities.rows(), relations.rows());
      !s.ok()) {
    return s;
  }
  const int64_t n = static_cast<int64_t>(batch.heads.size());
  const int in = c.input_dim(), d = c.text_dim, sd = c.dde_dim;
  if (n == 0) return absl::OkStatus();
  std::vector<float> z(static_cast<size_t>(n) * in);
  for (int64_t i = 0; i < n; ++i) {
    float* row = z.data() + static_cast<size_t>(i) * in;
    std::memcpy(row + c.q_offset(), batch.question.data(), d * sizeof(float));
    std::memcpy(row + c.h_offset(), entities.row(batch.heads[i]), d * sizeof(float));
    std::memcpy(row + c.r_offset(), relations.row(batch.relations[i]), d * sizeof(float));
    std::memcpy(row + c.t_offset(), entities.row(batch.tails[i]), d * sizeof(float));
    std::memcpy(row + c.sh_offset(), batch.dde->row(batch.head_nodes[i]), sd * sizeof(float));
    std::memcpy(row + c.st_offset(), batch.dde->row(batch.tail_nodes[i]), sd * sizeof(float));
  }
  return TorchGuard("TorchScorer::ScoreMlp", [&] {
    torch::NoGradGuard no_grad;
    torch::Tensor zt = torch::from_blob(z.data(), {n, in}, torch::kFloat32).to(m.device);
    CopyOut(torch::sigmoid(m.module->forward(zt, PriorTensor(batch, c, m.device))), out);
    return absl::OkStatus();
  });
}

absl::Status TorchScorer::ScoreFactorised(const CandidateBatch& batch,
                                          absl::Span<float> out) const {
  const Impl& m = *impl_;
  const ScorerConfig& c = m.config;
  if (m.projections == nullptr) {
    return absl::FailedPreconditionError("ScoreFactorised: Precompute has not run");
  }
  if (absl::Status s = ValidateCandidateBatch(batch, c, m.projections->num_entities,
                                              m.projections->num_relations);
      !s.ok()) {
    return s;
  }
  if (batch.heads.empty()) return absl::OkStatus();
  return TorchGuard("TorchScorer::ScoreFactorised", [&] {
    torch::NoGradGuard no_grad;
    const torch::Tensor w1 = m.module->fc1->weight;
    const torch::Tensor w_q = w1.narrow(1, c.q_offset(), c.text_dim);
    const torch::Tensor w_sh = w1.narrow(1, c.sh_offset(), c.dde_dim);
    const torch::Tensor w_st = w1.narrow(1, c.st_offset(), c.dde_dim);
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
    const torch::Tensor zq =
        torch::from_blob(const_cast<float*>(batch.question.data()), {c.text_dim}, f32).to(m.device);
    const torch::Tensor q = torch::matmul(w_q, zq) + m.module->fc1->bias;  // [H]
    const torch::Tensor s = torch::from_blob(const_cast<float*>(batch.dde->values.data()),
                                             {batch.dde->num_nodes, batch.dde->dim}, f32)
                                .to(m.device);
    const torch::Tensor node_h = torch::matmul(s, w_sh.t());  // [nodes x H]
    const torch::Tensor node_t = torch::matmul(s, w_st.t());
    // The five id columns go to the device in one copy (on CUDA each copy is a synchronous
    // round trip): rows heads, relations, tails, head nodes, tail nodes.
    const torch::Tensor ids = IdColumns(batch, m.device);
    torch::Tensor hidden = m.p_head.index_select(0, ids[0]);
    hidden.add_(m.p_rel.index_select(0, ids[1]));
    hidden.add_(m.p_tail.index_select(0, ids[2]));
    hidden.add_(node_h.index_select(0, ids[3]));
    hidden.add_(node_t.index_select(0, ids[4]));
    hidden.add_(q);
    hidden.relu_();
    torch::Tensor logits =
        torch::matmul(hidden, m.module->fc2->weight.squeeze(0)) + m.module->fc2->bias;
    if (c.prior_dim > 0) {
      logits = logits + torch::matmul(PriorTensor(batch, c, m.device), m.module->w_prior);
    }
    CopyOut(torch::sigmoid(logits), out);
    return absl::OkStatus();
  });
}

}  // namespace ibgraphrag::retriever
