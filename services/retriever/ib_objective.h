// INTERNAL (LibTorch): the information-bottleneck terms of the retriever's training objective,
// as the paper writes them (IBGraphRAG §3.2 "IB-guided target path optimization", Eqs. 3-10,
// Appendix A.2). Used by trainer.cc; unit-tested on their own (ib_objective_test.cc).
//
// Per question, x = its candidate triples in the step (positives + sampled negatives), each
// written out as text (triple_text.h) and embedded by the suite's FROZEN text encoder f_θ.
//   selection      p(x̃_i | x, q) = softmax_i(logit_i) over the question's candidates
//                  (temperature 1; a soft selection, so gradients reach every logit)
//   f_θ(x̃)         = Σ_i p_i · f_θ(triple_i): the gradient reaches the scorer only through p
//   L_sim (Eq. 6)  = −cos(f_θ(x̃), f_θ(y)), y = the gold answer text (with the expert explanation
//                  and the question as TrainerOptions::ib_target_text asks)
//   decoder r_ψ    (App. A.2) r_ψ(i | x̃, q) = softmax_i(g_ψ([f_θ(x̃) ‖ z_q]) · f_θ(triple_i)), g_ψ a
//                  small MLP; ψ is fitted by maximum likelihood to the retrieval target
//                  p(x | q) with x̃ detached. p(x | q) is either the retriever's own detached
//                  distribution over its current top K (IbInputs::retrieval_target) or, as
//                  before issue 27, uniform over the question's supervision positives
//   compression    (Eqs. 8-9) E_{x~p(x|q)} log r_ψ(x | x̃, q) with ψ frozen: how much of x the
//                  selection still lets the decoder reconstruct; the gradient reaches the
//                  scorer through x̃
//   L_IB (Eq. 10)  = compression − (β − 1) · I(X̃; Y | Q) = compression + (β − 1) · L_sim
// The total (Eq. 3) is λ1 · BCE + λ2 · L_IB, plus ψ's own ML loss, which moves ψ only.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_IB_OBJECTIVE_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_IB_OBJECTIVE_H_

#include <torch/torch.h>

#include <cstdint>

namespace ibgraphrag::retriever::internal {

// One step's IB inputs: the candidates of `questions` questions, concatenated.
struct IbInputs {
  int64_t questions = 0;
  torch::Tensor segment;      // [n] int64: the question (0..questions-1) of each candidate
  torch::Tensor triple_text;  // [n, d] f_θ(verbalised triple); constant (f_θ is frozen)
  // [n] p(x | q): 1/|positives| on a question's positives, else 0 (the fixed pool). Ignored
  // with retrieval_target.
  torch::Tensor target;
  // p(x | q) is the retriever's own distribution over the pool, i.e. the selection softmax,
  // detached (the pool is then the retriever's current top K; issue 27). Eqs. 7-9 take p(x | q)
  // as "the original retrieval probability distribution".
  bool retrieval_target = false;
  torch::Tensor question;  // [questions, d] z_q
  torch::Tensor answer;    // [questions, d] f_θ(y)
};

struct IbTerms {
  torch::Tensor log_selection;  // [n] log p(x̃_i | x, q)
  torch::Tensor selected;       // [questions, d] f_θ(x̃)
  torch::Tensor l_sim;          // Eq. 6, mean over questions
  torch::Tensor compression;    // Eqs. 8-9 with ψ frozen, mean over questions
  torch::Tensor decoder_nll;    // ψ's ML loss (x̃ detached): −E log r_ψ(x | x̃, q)
  torch::Tensor l_ib;           // Eq. 10
};

// log softmax of `scores` [n] within each segment (numerically stable per segment).
torch::Tensor SegmentLogSoftmax(const torch::Tensor& scores, const torch::Tensor& segment,
                                int64_t segments);

// f_θ(x̃) = Σ_i p_i · f_θ(triple_i) per question: [segments, d].
torch::Tensor SelectionWeightedText(const torch::Tensor& log_selection,
                                    const torch::Tensor& triple_text, const torch::Tensor& segment,
                                    int64_t segments);

// Eq. 6: −mean_q cos(f_θ(x̃), f_θ(y)).
torch::Tensor SimilarityLoss(const torch::Tensor& selected, const torch::Tensor& answer);

// g_ψ of the variational decoder r_ψ(x | x̃, q) (Appendix A.2): [x̃ ‖ q] (2d) -> relu(hidden)
// -> d, a query vector whose dot with each candidate's text embedding is its decoder logit.
// condition_on_y: r_ψ(x | x̃, q, y), input [x̃ ‖ q ‖ f_θ(y)] (3d): Eq. 10's I(X̃; X | Y, Q), which
// the paper adopts so that the compression term does not penalise target-relevant information
// (Appendix A.2 and the issue describe the decoder's input as [x̃ ‖ q]; both are selectable).
struct VariationalDecoderImpl : torch::nn::Module {
  VariationalDecoderImpl(int text_dim, int hidden, bool condition_on_y = false);
  // frozen: ψ's weights enter detached, so only the inputs receive gradients. `answer` (f_θ(y))
  // is used only when conditioned on y.
  torch::Tensor forward(const torch::Tensor& selected, const torch::Tensor& question,
                        const torch::Tensor& answer, bool frozen);
  torch::nn::Linear fc1, fc2;
  bool condition_on_y;
};
TORCH_MODULE(VariationalDecoder);

// E_{x~p(x|q)} log r_ψ(x | x̃, q), averaged over questions.
torch::Tensor ReconstructionLogLikelihood(VariationalDecoder& decoder,
                                          const torch::Tensor& selected, const IbInputs& inputs,
                                          bool frozen);

// All terms for the scorer's `logits` [n]; beta > 1.
IbTerms ComputeIbTerms(const torch::Tensor& logits, const IbInputs& inputs,
                       VariationalDecoder& decoder, double beta);

// Mean over questions of the selection's entropy divided by log(candidates) (1 = uniform,
// 0 = one triple takes all); questions with a single candidate count as 0.
double MeanSelectionEntropy(const torch::Tensor& log_selection, const torch::Tensor& segment,
                            int64_t segments);

}  // namespace ibgraphrag::retriever::internal

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_IB_OBJECTIVE_H_
