#include "services/retriever/ib_objective.h"

#include <cmath>

#include "gtest/gtest.h"

namespace ibgraphrag::retriever::internal {
namespace {

// One question, three candidate triples with 2-d "text embeddings" e0 = (1, 0), e1 = (0, 1),
// e2 = (0.6, 0.8); the answer y = (1, 0); candidate 2 is the only positive.
IbInputs OneQuestion() {
  IbInputs in;
  in.questions = 1;
  in.segment = torch::zeros({3}, torch::kInt64);
  in.triple_text = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f, 0.6f, 0.8f}).view({3, 2});
  in.target = torch::tensor({0.0f, 0.0f, 1.0f});
  in.question = torch::tensor({0.5f, -0.5f}).view({1, 2});
  in.answer = torch::tensor({1.0f, 0.0f}).view({1, 2});
  return in;
}

// A decoder whose g_ψ([x̃ ‖ q]) = relu(x̃): fc1 copies x̃ (2 hidden units), fc2 is the identity.
VariationalDecoder CopyingDecoder() {
  VariationalDecoder decoder(/*text_dim=*/2, /*hidden=*/2);
  torch::NoGradGuard no_grad;
  decoder->fc1->weight.copy_(
      torch::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f}).view({2, 4}));
  decoder->fc1->bias.zero_();
  decoder->fc2->weight.copy_(torch::eye(2));
  decoder->fc2->bias.zero_();
  return decoder;
}

// logits (0, 0, ln 2) -> selection p = (1/4, 1/4, 1/2).
torch::Tensor QuarterQuarterHalf() {
  return torch::tensor({0.0f, 0.0f, static_cast<float>(std::log(2.0))}).requires_grad_(true);
}

TEST(IbObjectiveTest, SimilarityLossMatchesHandComputedValue) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  const IbTerms t = ComputeIbTerms(QuarterQuarterHalf(), in, decoder, /*beta=*/2.0);
  // f(x̃) = 1/4 (1, 0) + 1/4 (0, 1) + 1/2 (0.6, 0.8) = (0.55, 0.65); cos with (1, 0).
  EXPECT_NEAR(t.selected[0][0].item<float>(), 0.55f, 1e-6);
  EXPECT_NEAR(t.selected[0][1].item<float>(), 0.65f, 1e-6);
  const double expected = -0.55 / std::sqrt(0.55 * 0.55 + 0.65 * 0.65);
  EXPECT_NEAR(t.l_sim.item<double>(), expected, 1e-6);
}

TEST(IbObjectiveTest, CompressionMatchesHandComputedValue) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  const IbTerms t = ComputeIbTerms(QuarterQuarterHalf(), in, decoder, /*beta=*/3.0);
  // g_ψ = (0.55, 0.65); decoder logits e_i · g = 0.55, 0.65, 0.85; target = candidate 2.
  const double log_r2 = 0.85 - std::log(std::exp(0.55) + std::exp(0.65) + std::exp(0.85));
  EXPECT_NEAR(t.compression.item<double>(), log_r2, 1e-6);
  EXPECT_NEAR(t.decoder_nll.item<double>(), -log_r2, 1e-6);
  // Eq. 10 with β = 3: compression + 2 · L_sim.
  EXPECT_NEAR(t.l_ib.item<double>(), log_r2 + 2.0 * t.l_sim.item<double>(), 1e-6);
}

TEST(IbObjectiveTest, SimilarityGradientReachesOnlyTheLogits) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  const torch::Tensor logits = QuarterQuarterHalf();
  const IbTerms t = ComputeIbTerms(logits, in, decoder, 2.0);
  t.l_sim.backward();
  ASSERT_TRUE(logits.grad().defined());
  EXPECT_GT(logits.grad().abs().sum().item<float>(), 1e-4);
  // The analytic gradient is the derivative of L_sim in the logits (central differences):
  // f_θ is frozen, so the selection is the only way L_sim can move.
  for (int i = 0; i < 3; ++i) {
    const double h = 1e-3;
    torch::Tensor up = logits.detach().clone(), down = logits.detach().clone();
    up[i] += h;
    down[i] -= h;
    const double numeric = (ComputeIbTerms(up, in, decoder, 2.0).l_sim.item<double>() -
                            ComputeIbTerms(down, in, decoder, 2.0).l_sim.item<double>()) /
                           (2 * h);
    EXPECT_NEAR(logits.grad()[i].item<double>(), numeric, 1e-3) << "logit " << i;
  }
}

TEST(IbObjectiveTest, DecoderConditionedOnYSeesTheAnswer) {
  // r_ψ(x | x̃, q, y): fc1 takes [x̃ ‖ q ‖ y] (6 inputs) and here copies y, so the compression
  // term follows the answer embedding; the unconditioned decoder (2d inputs) cannot.
  VariationalDecoder decoder(/*text_dim=*/2, /*hidden=*/2, /*condition_on_y=*/true);
  ASSERT_EQ(decoder->fc1->weight.size(1), 6);
  {
    torch::NoGradGuard no_grad;
    decoder->fc1->weight.copy_(torch::tensor({0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f,  //
                                              0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f})
                                   .view({2, 6}));
    decoder->fc1->bias.zero_();
    decoder->fc2->weight.copy_(torch::eye(2));
    decoder->fc2->bias.zero_();
  }
  IbInputs in = OneQuestion();
  // y = (1, 0): decoder logits e_i · y = 1, 0, 0.6; target = candidate 2.
  const double expected = 0.6 - std::log(std::exp(1.0) + std::exp(0.0) + std::exp(0.6));
  EXPECT_NEAR(ComputeIbTerms(QuarterQuarterHalf(), in, decoder, 2.0).compression.item<double>(),
              expected, 1e-6);
  in.answer = torch::tensor({0.6f, 0.8f}).view({1, 2});  // y = e2: the positive is now favoured
  EXPECT_GT(ComputeIbTerms(QuarterQuarterHalf(), in, decoder, 2.0).compression.item<double>(),
            expected + 0.1);
}

// Issue 27: with retrieval_target, p(x | q) is the selection itself, detached: the compression
// term is E_{x~p} log r_ψ(x | x̃, q) with p = (1/4, 1/4, 1/2), whatever `target` holds, and its
// gradient reaches the logits only through x̃ (not through p).
TEST(IbObjectiveTest, RetrievalTargetIsTheDetachedSelection) {
  IbInputs in = OneQuestion();
  in.retrieval_target = true;
  in.target = torch::tensor({1.0f, 0.0f, 0.0f});  // ignored
  VariationalDecoder decoder = CopyingDecoder();
  const torch::Tensor logits = QuarterQuarterHalf();
  const IbTerms t = ComputeIbTerms(logits, in, decoder, 2.0);
  const double log_norm = std::log(std::exp(0.55) + std::exp(0.65) + std::exp(0.85));
  const double expected =
      0.25 * (0.55 - log_norm) + 0.25 * (0.65 - log_norm) + 0.5 * (0.85 - log_norm);
  EXPECT_NEAR(t.compression.item<double>(), expected, 1e-6);
  EXPECT_NEAR(t.decoder_nll.item<double>(), -expected, 1e-6);
  // Same value as an explicit (constant) target equal to the selection.
  IbInputs explicit_target = OneQuestion();
  explicit_target.target = torch::tensor({0.25f, 0.25f, 0.5f});
  const torch::Tensor logits2 = QuarterQuarterHalf();
  const IbTerms u = ComputeIbTerms(logits2, explicit_target, decoder, 2.0);
  EXPECT_NEAR(u.compression.item<double>(), expected, 1e-6);
  // And the same gradient: p is detached, so only the path through x̃ carries one.
  t.compression.backward();
  u.compression.backward();
  ASSERT_TRUE(logits.grad().defined());
  EXPECT_GT(logits.grad().abs().sum().item<float>(), 1e-4);
  EXPECT_TRUE(torch::allclose(logits.grad(), logits2.grad(), 1e-6, 1e-6));
}

TEST(IbObjectiveTest, CompressionMovesLogitsNotTheFrozenDecoder) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  const torch::Tensor logits = QuarterQuarterHalf();
  const IbTerms t = ComputeIbTerms(logits, in, decoder, 2.0);
  t.compression.backward();
  ASSERT_TRUE(logits.grad().defined());
  EXPECT_GT(logits.grad().abs().sum().item<float>(), 1e-4);
  for (const torch::Tensor& p : decoder->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(IbObjectiveTest, DecoderLossMovesOnlyTheDecoder) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  const torch::Tensor logits = QuarterQuarterHalf();
  const IbTerms t = ComputeIbTerms(logits, in, decoder, 2.0);
  t.decoder_nll.backward();
  EXPECT_FALSE(logits.grad().defined());
  double decoder_grad = 0;
  for (const torch::Tensor& p : decoder->parameters()) {
    if (p.grad().defined()) decoder_grad += p.grad().abs().sum().item<double>();
  }
  EXPECT_GT(decoder_grad, 1e-4);
}

TEST(IbObjectiveTest, SimilarityLossChangesOnlyWithTheSelection) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  const double base = ComputeIbTerms(QuarterQuarterHalf(), in, decoder, 2.0).l_sim.item<double>();
  // Shifting every logit by a constant leaves the softmax selection, hence L_sim, unchanged.
  const torch::Tensor shifted = QuarterQuarterHalf().detach() + 7.5f;
  EXPECT_NEAR(ComputeIbTerms(shifted, in, decoder, 2.0).l_sim.item<double>(), base, 1e-6);
  // Selecting e0 = y more strongly lowers it.
  const torch::Tensor toward_answer = torch::tensor({3.0f, 0.0f, 0.0f});
  EXPECT_LT(ComputeIbTerms(toward_answer, in, decoder, 2.0).l_sim.item<double>(), base - 0.1);
}

TEST(IbObjectiveTest, DecoderMaximumLikelihoodStepLowersItsNll) {
  const IbInputs in = OneQuestion();
  VariationalDecoder decoder = CopyingDecoder();
  torch::optim::SGD sgd(decoder->parameters(), torch::optim::SGDOptions(0.5));
  const torch::Tensor logits = QuarterQuarterHalf().detach();
  const double before = ComputeIbTerms(logits, in, decoder, 2.0).decoder_nll.item<double>();
  for (int i = 0; i < 5; ++i) {
    sgd.zero_grad();
    ComputeIbTerms(logits, in, decoder, 2.0).decoder_nll.backward();
    sgd.step();
  }
  const double after = ComputeIbTerms(logits, in, decoder, 2.0).decoder_nll.item<double>();
  EXPECT_LT(after, before - 0.05);
}

TEST(IbObjectiveTest, SegmentSoftmaxIsPerQuestion) {
  // Two questions: (0, ln 3) and (100, 100, 100): each normalised on its own, no overflow.
  const torch::Tensor scores =
      torch::tensor({0.0f, static_cast<float>(std::log(3.0)), 100.0f, 100.0f, 100.0f});
  const torch::Tensor segment = torch::tensor({0, 0, 1, 1, 1}, torch::kInt64);
  const torch::Tensor p = SegmentLogSoftmax(scores, segment, 2).exp();
  EXPECT_NEAR(p[0].item<float>(), 0.25f, 1e-6);
  EXPECT_NEAR(p[1].item<float>(), 0.75f, 1e-6);
  for (int i = 2; i < 5; ++i) EXPECT_NEAR(p[i].item<float>(), 1.0f / 3.0f, 1e-6);
}

TEST(IbObjectiveTest, SelectionEntropyIsNormalised) {
  const torch::Tensor segment = torch::tensor({0, 0, 0, 1, 1, 1}, torch::kInt64);
  // Question 0 uniform (entropy 1), question 1 nearly one-hot (entropy ~0): mean ~0.5.
  const torch::Tensor scores = torch::tensor({1.0f, 1.0f, 1.0f, 50.0f, 0.0f, 0.0f});
  const double h = MeanSelectionEntropy(SegmentLogSoftmax(scores, segment, 2), segment, 2);
  EXPECT_NEAR(h, 0.5, 1e-4);
}

}  // namespace
}  // namespace ibgraphrag::retriever::internal
