#include "services/retriever/ib_objective.h"

#include <cmath>

namespace ibgraphrag::retriever::internal {
namespace {

namespace F = torch::nn::functional;

// Σ_i values_i per segment: [segments] (values [n]) or [segments, d] (values [n, d]).
torch::Tensor SegmentSum(const torch::Tensor& values, const torch::Tensor& segment,
                         int64_t segments) {
  std::vector<int64_t> shape = values.sizes().vec();
  shape[0] = segments;
  return torch::zeros(shape, values.options()).index_add(0, segment, values);
}

}  // namespace

torch::Tensor SegmentLogSoftmax(const torch::Tensor& scores, const torch::Tensor& segment,
                                int64_t segments) {
  // The per-segment max only stabilises exp(); softmax does not depend on it, so it is detached.
  const torch::Tensor max = torch::zeros({segments}, scores.options())
                                .scatter_reduce(0, segment, scores.detach(), "amax",
                                                /*include_self=*/false);
  const torch::Tensor shifted = scores - max.index_select(0, segment);
  const torch::Tensor log_norm = SegmentSum(shifted.exp(), segment, segments).log();
  return shifted - log_norm.index_select(0, segment);
}

torch::Tensor SelectionWeightedText(const torch::Tensor& log_selection,
                                    const torch::Tensor& triple_text, const torch::Tensor& segment,
                                    int64_t segments) {
  return SegmentSum(triple_text * log_selection.exp().unsqueeze(1), segment, segments);
}

torch::Tensor SimilarityLoss(const torch::Tensor& selected, const torch::Tensor& answer) {
  return -F::cosine_similarity(selected, answer, F::CosineSimilarityFuncOptions().dim(1)).mean();
}

VariationalDecoderImpl::VariationalDecoderImpl(int text_dim, int hidden, bool condition_on_y)
    : fc1(register_module("fc1", torch::nn::Linear((condition_on_y ? 3 : 2) * text_dim, hidden))),
      fc2(register_module("fc2", torch::nn::Linear(hidden, text_dim))),
      condition_on_y(condition_on_y) {}

torch::Tensor VariationalDecoderImpl::forward(const torch::Tensor& selected,
                                              const torch::Tensor& question,
                                              const torch::Tensor& answer, bool frozen) {
  const torch::Tensor in = condition_on_y ? torch::cat({selected, question, answer}, 1)
                                          : torch::cat({selected, question}, 1);
  if (!frozen) return fc2->forward(torch::relu(fc1->forward(in)));
  const torch::Tensor h = torch::relu(F::linear(in, fc1->weight.detach(), fc1->bias.detach()));
  return F::linear(h, fc2->weight.detach(), fc2->bias.detach());
}

torch::Tensor ReconstructionLogLikelihood(VariationalDecoder& decoder,
                                          const torch::Tensor& selected, const IbInputs& inputs,
                                          bool frozen) {
  // r_ψ(i | x̃, q[, y]) = softmax_i(g_ψ([x̃ ‖ q[‖ y]]) · f_θ(triple_i)) over the question's
  // candidates.
  const torch::Tensor query = decoder->forward(selected, inputs.question, inputs.answer, frozen);
  const torch::Tensor logits = (query.index_select(0, inputs.segment) * inputs.triple_text).sum(1);
  const torch::Tensor log_r = SegmentLogSoftmax(logits, inputs.segment, inputs.questions);
  // E_{x~p(x|q)} log r_ψ(x | x̃, q); log_r is finite (a log-softmax), so a zero p(x|q) adds 0.
  return SegmentSum(inputs.target * log_r, inputs.segment, inputs.questions).mean();
}

IbTerms ComputeIbTerms(const torch::Tensor& logits, const IbInputs& given,
                       VariationalDecoder& decoder, double beta) {
  IbTerms t;
  // Soft selection p(x̃ | x, q) and its text embedding f_θ(x̃).
  t.log_selection = SegmentLogSoftmax(logits, given.segment, given.questions);
  IbInputs inputs = given;
  if (inputs.retrieval_target) inputs.target = t.log_selection.detach().exp();
  t.selected =
      SelectionWeightedText(t.log_selection, inputs.triple_text, inputs.segment, inputs.questions);
  // Relevance, Eq. 6 (I(X̃; Y | Q) ≈ E cos, Eqs. 4-5).
  t.l_sim = SimilarityLoss(t.selected, inputs.answer);
  // Compression, Eqs. 7-9: the variational bound with ψ frozen, gradient through x̃ only.
  t.compression = ReconstructionLogLikelihood(decoder, t.selected, inputs, /*frozen=*/true);
  // ψ's maximum-likelihood fit (Appendix A.2), on a detached x̃ so the scorer is not moved by it.
  t.decoder_nll =
      -ReconstructionLogLikelihood(decoder, t.selected.detach(), inputs, /*frozen=*/false);
  // Eq. 10: L_IB = compression − (β − 1)·relevance, relevance = −L_sim.
  t.l_ib = t.compression + (beta - 1.0) * t.l_sim;
  return t;
}

double MeanSelectionEntropy(const torch::Tensor& log_selection, const torch::Tensor& segment,
                            int64_t segments) {
  torch::NoGradGuard no_grad;
  const torch::Tensor lp = log_selection.detach();
  const torch::Tensor entropy = SegmentSum(-(lp.exp() * lp), segment, segments);
  const torch::Tensor counts = SegmentSum(torch::ones_like(lp), segment, segments);
  const torch::Tensor norm = counts.log().clamp_min(1e-12);
  const torch::Tensor normalised =
      torch::where(counts > 1.5, entropy / norm, torch::zeros_like(entropy));
  return normalised.mean().item<double>();
}

}  // namespace ibgraphrag::retriever::internal
