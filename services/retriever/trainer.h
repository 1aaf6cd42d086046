// Training of the triple scorer with the information-bottleneck objective (plain C++ header;
// LibTorch lives in trainer.cc).
//
// Per question the candidate subgraph is extracted exactly as at serving time (same hops, DDE
// rounds, embeddings, structure features). Candidates on a shortest topic->answer path are
// positives. With residual_prior (the default) the scorer's logit is the shortest-path prior's
// logit plus a learned correction that starts at zero (scorer_params.h, ResidualPriorInit).
//   loss = λ1 · BCE(logits, labels; positives up-weighted)
//        + λ2 · L_IB
//   L_IB = Î(X; X̃) + (β − 1) · L_sim
//   L_sim = −cos(f(x̃), f(y)): x̃ = score-weighted mean embedding of the candidates
//           (sigmoid scores as weights; triple embedding = mean of head, relation, tail text
//           embeddings), y = mean answer-entity embedding, f a learned projection
//   Î(X; X̃) = −(1 − cos(r_ψ(x̃, q), x̄)): a variational decoder r_ψ (Gaussian latent, KL-regularised)
//           reconstructs the candidate distribution's mean embedding x̄ from the selection;
//           the better the selection reconstructs everything, the less it compressed. ψ is
//           trained on its own reconstruction loss (with x̃ detached) and frozen inside Î.
// β > 1 weighs relevance over compression. λ2 = 0 is the prior-only ablation (BCE only).
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TRAINER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TRAINER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "services/kgstore/kg_store.h"
#include "services/retriever/dde.h"
#include "services/retriever/embedding_table.h"
#include "services/retriever/scorer_params.h"
#include "services/retriever/text_embedder.h"
#include "services/retriever/training_data.h"

namespace ibgraphrag::retriever {

struct TrainerOptions {
  // Passes over the training questions (>= 0; 0 keeps the initial weights).
  int epochs = 6;
  // Questions per optimiser step (>= 1).
  int batch_size = 16;
  // Adam learning rate.
  double learning_rate = 1e-3;
  // Seed of weight init, negative sampling and shuffling.
  uint64_t seed = 0;
  // Loss weights: BCE (λ1), information bottleneck (λ2; 0 = prior-only ablation), β > 1.
  double lambda1 = 1.0;
  double lambda2 = 0.5;
  double beta = 2.0;
  // Hidden units of the scorer MLP.
  int hidden = 256;
  // Width of the IB projection f and of the decoder's latent.
  int ib_dim = 64;
  // DDE rounds (recorded in the manifest; serving uses the same).
  DdeOptions dde;
  // Subgraph hops and candidate cap per question (as served).
  int max_hops = 2;
  int max_candidates = 2000;
  // Negatives sampled per question and step (all positives are kept); up to half are hard
  // negatives (candidates sharing a positive's relation).
  int negatives_per_question = 256;
  // Probability of zeroing a training row's head and tail text blocks (z_h, z_t), with the
  // kept rows scaled by 1 / (1 - p) (inverted dropout), so the scorer cannot lean only on the
  // names of entities seen in training. 0 = off, < 1.
  double entity_text_dropout = 0.0;
  // Residual over the shortest-path prior: structure features in the logit (prior_dim 6) and
  // the ResidualPriorInit start. false = the plain MLP from a random start (prior_dim 0).
  bool residual_prior = true;
  // Up-weighting of positives in the BCE is min(negatives / positives, this).
  double max_pos_weight = 20.0;
  // "auto", "cpu" or "cuda:N".
  std::string device = "auto";
  // Retriever::Options::novelty_discount for the dev evaluation (as served).
  float novelty_discount = 0.8f;
  // Dev questions evaluated after each epoch (0 = all).
  int max_dev_questions = 0;
  // Receives progress lines (loss, samples/s, dev metrics). May be empty.
  std::function<void(const std::string&)> log;
};

struct TrainResult {
  ScorerParams best_params;               // parameters of the best dev epoch
  int best_epoch = 0;                     // 0 = initial weights
  std::map<std::string, double> metrics;  // dev metrics of best_params, training throughput
  int train_questions_used = 0;           // questions with a positive inside their subgraph
};

// Trains on `data.train`, evaluates on `data.dev` through the real Retrieve path after every
// epoch, and returns the best checkpoint by dev answer recall@10 (then recall@100).
absl::StatusOr<TrainResult> TrainRetriever(std::shared_ptr<const kgstore::KgStore> store,
                                           const QuestionSet& data,
                                           std::shared_ptr<const EmbeddingTable> entities,
                                           std::shared_ptr<const EmbeddingTable> relations,
                                           const TextEmbedder& embedder,
                                           const TrainerOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TRAINER_H_
