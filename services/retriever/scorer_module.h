// INTERNAL: the LibTorch module of the triple scorer, shared by torch_scorer.cc and trainer.cc
// (with ib_objective.cc, the only library files that include <torch/torch.h>) and their tests.
// Everything else uses torch_scorer.h.
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

// A training step's candidates in factorised form. The first layer is linear and a candidate's
// input splits into [z_q, z_r] (shared by every candidate of a question with that relation),
// [z_h, s_h] (shared by every candidate with that head node in that question) and [z_t, s_t];
// each distinct part is stored once per step and candidates index them.
struct FactorisedInputs {
  torch::Tensor questions;          // [B x text_dim] z_q
  torch::Tensor relations;          // [R x text_dim] z_r of the step's distinct relations
  torch::Tensor pair_question;      // [P] int64: question row of each (question, relation) pair
  torch::Tensor pair_relation;      // [P] int64: relation row of each pair
  torch::Tensor heads;              // [U_h x (text_dim + dde_dim)] z_h ‖ s_h per (question, node)
  torch::Tensor tails;              // [U_t x (text_dim + dde_dim)] z_t ‖ s_t per (question, node)
  torch::Tensor question_relation;  // [N] int64: pair row of each candidate
  torch::Tensor head;               // [N] int64: row in `heads`
  torch::Tensor tail;               // [N] int64: row in `tails`
  torch::Tensor prior;  // [N x prior_dim] structure features; undefined when prior_dim 0
};

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

  // The same logits as forward() on the materialised rows, computed the way the retriever serves
  // them: each distinct part of the input is multiplied by its block of W1 once per step and
  // gathered per candidate (autograd follows the gathers), instead of multiplying
  // [N x input_dim] rows. Three gathers and two adds per candidate.
  torch::Tensor forward_factorised(const FactorisedInputs& in) {
    const torch::Tensor& w = fc1->weight;
    const int d = config.text_dim, sd = config.dde_dim;
    auto block = [&](int offset, int width) { return w.narrow(1, offset, width); };
    const torch::Tensor w_head =
        torch::cat({block(config.h_offset(), d), block(config.sh_offset(), sd)}, 1);
    const torch::Tensor w_tail =
        torch::cat({block(config.t_offset(), d), block(config.st_offset(), sd)}, 1);
    const torch::Tensor q =
        torch::matmul(in.questions, block(config.q_offset(), d).t()) + fc1->bias;
    const torch::Tensor r = torch::matmul(in.relations, block(config.r_offset(), d).t());
    const torch::Tensor qr =
        q.index_select(0, in.pair_question) + r.index_select(0, in.pair_relation);
    const torch::Tensor pre = torch::matmul(in.heads, w_head.t()).index_select(0, in.head) +
                              torch::matmul(in.tails, w_tail.t()).index_select(0, in.tail) +
                              qr.index_select(0, in.question_relation);
    torch::Tensor logits = fc2->forward(torch::relu(pre)).squeeze(-1);
    if (config.prior_dim > 0) logits = logits + torch::matmul(in.prior, w_prior);
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
