// The triple scorer's parameters as plain float arrays, and their binary checkpoint format.
//
// The scorer is an MLP over z = [z_q ‖ z_h ‖ z_r ‖ z_t ‖ s_h ‖ s_t] plus a linear term over
// the triple's structure features x_p (prior_features.h: shortest-path prior logit, on-path,
// hop indicators):
//   score = sigmoid(w2 · relu(W1 z + b1) + b2 + w_p · x_p)
// Trained as a residual over the shortest-path prior: w_p starts at (1, 0, ...) and w2 at 0,
// so the untrained scorer ranks exactly like SHORTEST_PATH and the MLP learns a correction.
// W1 is stored like a torch Linear weight, [hidden x input_dim] row-major, so its column
// blocks are W_q, W_h, W_r, W_t (text_dim columns each), then W_sh, W_st (dde_dim each): the
// factorised scorer (fused_scorer.h) reads those blocks directly.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_PARAMS_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_PARAMS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ibgraphrag::retriever {

// Structure features per candidate (prior_features.h, PriorFeatures): 6 of the subgraph's shape,
// then 2 of the question's intent (MarkIntentFeatures). Models of the 6-feature format (before
// intents) fail to load with a message to retrain.
inline constexpr int kPriorFeatureDim = 8;

struct ScorerConfig {
  // Text embedding width (question, entity and relation embeddings), 1..4096.
  int text_dim = 256;
  // DDE floats per node (DdeOptions::node_dim()), 1..17.
  int dde_dim = 5;
  // Hidden units of the MLP, 1..4096.
  int hidden = 256;
  // Structure features per candidate added linearly to the logit: 0 or kPriorFeatureDim.
  int prior_dim = kPriorFeatureDim;

  int input_dim() const { return 4 * text_dim + 2 * dde_dim; }
  // Column offsets of the blocks of W1.
  int q_offset() const { return 0; }
  int h_offset() const { return text_dim; }
  int r_offset() const { return 2 * text_dim; }
  int t_offset() const { return 3 * text_dim; }
  int sh_offset() const { return 4 * text_dim; }
  int st_offset() const { return 4 * text_dim + dde_dim; }
};

// INVALID_ARGUMENT naming the field when a dimension is out of range.
absl::Status ValidateScorerConfig(const ScorerConfig& config);

struct ScorerParams {
  ScorerConfig config;
  std::vector<float> w1;  // [hidden x input_dim], row-major
  std::vector<float> b1;  // [hidden]
  std::vector<float> w2;  // [hidden]
  float b2 = 0.0f;
  std::vector<float> w_prior;  // [prior_dim]
};

// Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) like torch::nn::Linear, from a fixed seed (w_prior
// too, so tests exercise every term; the trainer's residual start is ResidualPriorInit).
ScorerParams InitScorerParams(const ScorerConfig& config, uint64_t seed);

// The residual start: w2 = 0, b2 = 0, w_prior = (1, 0, ..., 0), so the logit is the
// shortest-path prior's logit exactly (W1, b1 keep their values; they get gradient via w2).
void ResidualPriorInit(ScorerParams* params);

// Binary checkpoint: magic "IBGRMLP2", uint32 text_dim, dde_dim, hidden, prior_dim, then w1,
// b1, w2, b2, w_prior as little-endian float32. Parse gives DATA_LOSS for a wrong magic, size
// or non-finite value, and names the old "IBGRMLP1" format (before structure features) as one
// to retrain.
std::string SerializeScorerParams(const ScorerParams& params);
absl::StatusOr<ScorerParams> ParseScorerParams(std::string_view bytes);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_SCORER_PARAMS_H_
