// INTERNAL: the LibTorch module of the triple scorer, shared by torch_scorer.cc and trainer.cc
// only (the two files allowed to include <torch/torch.h>). Everything else uses torch_scorer.h.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_MODULE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_MODULE_H_

#include <torch/torch.h>

#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/torch_guard.h"
#include "services/retriever/scorer_params.h"

namespace ibgraphrag::retriever::internal {

struct ScorerModuleImpl : torch::nn::Module {
  explicit ScorerModuleImpl(const ScorerConfig& c)
      : config(c),
        fc1(register_module("fc1", torch::nn::Linear(c.input_dim(), c.hidden))),
        fc2(register_module("fc2", torch::nn::Linear(c.hidden, 1))),
        w_prior(register_parameter("w_prior", torch::zeros({c.prior_dim}))) {}

  // Logits [N] for inputs z [N x input_dim] and structure features x_p [N x prior_dim] (an
  // undefined tensor when prior_dim is 0).
  torch::Tensor forward(const torch::Tensor& z, const torch::Tensor& xp) {
    torch::Tensor logits = fc2->forward(torch::relu(fc1->forward(z))).squeeze(-1);
    if (config.prior_dim > 0) logits = logits + torch::matmul(xp, w_prior);
    return logits;
  }

  ScorerConfig config;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
  torch::Tensor w_prior;  // [prior_dim]
};
TORCH_MODULE(ScorerModule);

inline void CopyParamsIn(const ScorerParams& p, ScorerModule& m) {
  torch::NoGradGuard no_grad;
  auto cpu = torch::TensorOptions().dtype(torch::kFloat32);
  const int h = p.config.hidden, in = p.config.input_dim();
  auto dev = m->fc1->weight.device();
  m->fc1->weight.copy_(torch::from_blob(const_cast<float*>(p.w1.data()), {h, in}, cpu).to(dev));
  m->fc1->bias.copy_(torch::from_blob(const_cast<float*>(p.b1.data()), {h}, cpu).to(dev));
  m->fc2->weight.copy_(torch::from_blob(const_cast<float*>(p.w2.data()), {1, h}, cpu).to(dev));
  m->fc2->bias.fill_(p.b2);
  if (p.config.prior_dim > 0) {
    m->w_prior.copy_(
        torch::from_blob(const_cast<float*>(p.w_prior.data()), {p.config.prior_dim}, cpu).to(dev));
  }
}

inline ScorerParams CopyParamsOut(ScorerModule& m) {
  torch::NoGradGuard no_grad;
  ScorerParams p;
  p.config = m->config;
  auto flat = [](const torch::Tensor& t) {
    torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  };
  p.w1 = flat(m->fc1->weight);
  p.b1 = flat(m->fc1->bias);
  p.w2 = flat(m->fc2->weight);
  p.b2 = flat(m->fc2->bias)[0];
  if (p.config.prior_dim > 0) p.w_prior = flat(m->w_prior);
  return p;
}

// LibTorch exceptions -> absl::Status (one definition for the suite).
using common::TorchGuard;

}  // namespace ibgraphrag::retriever::internal

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_MODULE_H_
