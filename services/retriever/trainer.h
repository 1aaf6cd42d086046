// Training of the triple scorer with the paper's objective (plain C++ header; LibTorch lives in
// trainer.cc and ib_objective.cc).
//
// Per question the candidate set is built exactly as at serving time (candidate_set.h: same hops,
// DDE rounds, embeddings, structure features). Candidates on a shortest topic->answer path are
// positives. With residual_prior (the default) the scorer's logit is the shortest-path prior's
// logit plus a learned correction that starts at zero (scorer_params.h, ResidualPriorInit).
//   loss (Eq. 3) = λ1 · BCE(logits, labels; positives up-weighted) + λ2 · L_IB
//   L_IB (Eq. 10) = compression (Eqs. 8-9) + (β − 1) · L_sim (Eq. 6), ib_objective.h
// f_θ in L_IB is the `embedder` passed in, frozen, applied to each candidate triple written out
// as text (triple_text.h); y is the gold answer text (plus the expert explanation, by default).
// By default (TrainerOptions::ib_pool = kRetrievalTopK, issue 27) every distinct candidate
// triple is embedded once when the samples are built, and before every epoch each question's IB
// pool becomes the scorer's current top K; p(x|q) is the scorer's own detached distribution
// over it. The IB rows are not BCE rows, so λ2 = 0 and λ2 > 0 see the same BCE candidates and
// the ablation isolates L_IB. kFixedPositives keeps the pool of before (positives +
// `ib_negatives` negatives, fixed, p(x|q) uniform over the positives). Training runs a BCE
// warm-up, then BCE + IB, each phase with early stopping (TrainerOptions). β > 1 weighs
// relevance over compression. λ2 = 0 is the BCE-only ablation.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TRAINER_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TRAINER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "services/kgstore/kg_store.h"
#include "services/retriever/candidate_set.h"
#include "services/retriever/dde.h"
#include "services/retriever/embedding_table.h"
#include "services/retriever/scorer_params.h"
#include "services/retriever/text_embedder.h"
#include "services/retriever/training_data.h"

namespace ibgraphrag::retriever {

struct TrainerOptions {
  // Passes over the training questions with the joint objective, after the BCE warm-up (>= 0;
  // 0 with no warm-up keeps the initial weights). With `patience`, an upper bound.
  int epochs = 75;
  // Questions per optimiser step (>= 1).
  int batch_size = 16;
  // Adam learning rate.
  double learning_rate = 1e-3;
  // Seed of weight init, negative sampling and shuffling.
  uint64_t seed = 0;
  // Loss weights: BCE (λ1), information bottleneck (λ2; 0 = the BCE-only ablation), β > 1.
  // λ2 5 (over 0.1, 0.5, 2 with the re-targeted IB, issue 27) and β 5 (issue 11) were chosen on
  // the validation split (docs/retriever.md, "Quality (issue 27)").
  double lambda1 = 1.0;
  double lambda2 = 5.0;
  double beta = 5.0;
  // Hidden units of the scorer MLP.
  int hidden = 256;
  // Hidden units of the variational decoder's g_ψ (Appendix A.2).
  int decoder_hidden = 256;
  // The decoder also sees f_θ(y): r_ψ(x | x̃, q, y), Eq. 10's conditioning on Y (ib_objective.h).
  bool decoder_condition_on_y = true;
  // Which candidates the IB terms run over, and what the retrieval distribution p(x | q) of
  // Eqs. 7-9 is (ib_objective.h):
  //   kRetrievalTopK  the retriever's own current top `ib_top_k` candidates per question,
  //                   recomputed before every epoch from text embeddings of every candidate
  //                   computed once (f_θ is frozen); p(x | q) = the retriever's selection
  //                   distribution over them, detached. The paper's X: what the retriever
  //                   selects, with its real confusers in it.
  //   kFixedPositives (before issue 27) a fixed pool per question, its positives plus
  //                   `ib_negatives` negatives drawn once; p(x | q) uniform over the positives.
  enum class IbPool { kFixedPositives, kRetrievalTopK };
  IbPool ib_pool = IbPool::kRetrievalTopK;
  // kRetrievalTopK: candidates per question in the IB pool (the gateway's default top_k).
  int ib_top_k = 100;
  // kFixedPositives: negatives per question in the fixed IB pool (drawn once per question,
  // embedded once; part of negatives_per_question). The IB softmax runs over positives + these.
  int ib_negatives = 64;
  // The target text y of L_sim (Eq. 6; and of the decoder when conditioned on y): the gold
  // answer text, plus the expert explanation where the set has one (MedMCQA `exp`), plus the
  // question itself (an ablation).
  enum class IbTargetText { kAnswer, kAnswerExplanation, kAnswerExplanationQuestion };
  IbTargetText ib_target_text = IbTargetText::kAnswerExplanation;
  // Schedule. Up to `bce_warmup_epochs` BCE-only epochs first (0 = none: the joint objective
  // from the first epoch); then up to `epochs` epochs of BCE + λ2·L_IB, starting from the best
  // warm-up checkpoint with a fresh optimiser. λ2 = 0 runs the same schedule with BCE alone, so
  // the ablation differs in L_IB only (the warm-up is identical: the decoder's own ML fit moves
  // only the decoder).
  int bce_warmup_epochs = 30;
  // A phase stops after this many epochs without a new best validation key; 0 = never early.
  int patience = 3;
  // The validation key (recall@10 + 10⁻³·recall@100) over the real QA questions of the
  // validation split only (sources "qa/..."), not the templated ones; all when there are none.
  bool select_on_real_questions = true;
  // Every this many optimiser steps, per-term gradient norms on the scorer are measured and
  // logged (three extra backward passes on those steps); 0 = never.
  int diagnostics_every = 20;
  // Threads that embed the IB pools' triple texts while samples are built.
  int build_threads = 2;
  // LibTorch intra-op (OpenMP) threads while optimising on CPU, restored afterwards; 0 = leave
  // the process setting. 1 by default: with OpenBLAS the GEMMs run on OpenBLAS's own threads,
  // and a second OpenMP thread spin-waits against them on a 2-core machine (measured: 33-38
  // questions/s with 2 OpenMP threads, 190-450 with 1, both using both cores for the GEMMs).
  int cpu_optimise_threads = 1;
  // DDE rounds (recorded in the manifest; serving uses the same).
  DdeOptions dde;
  // Subgraph hops and candidate cap per question (as served).
  int max_hops = 2;
  int max_candidates = 2000;
  // Candidates kept per question after pruning by the prior (CandidateSetOptions::max_scored);
  // the serving default, so training sees what serving scores.
  int max_scored = kDefaultMaxScoredCandidates;
  // Ontology expansion of the topic entities (CandidateSetOptions::ontology; the serving
  // default, on), so training sees the subtypes' facts serving adds.
  bool ontology_expansion = true;
  // Negatives sampled per question and step (all positives are kept); up to half are hard
  // negatives (candidates sharing a positive's relation).
  int negatives_per_question = 256;
  // Probability of zeroing an entity's text block (z_h or z_t) for one question in one step
  // (per question and subgraph node, head and tail side apart, since the trainer computes each
  // such part once per step), with the kept ones scaled by 1 / (1 - p) (inverted dropout), so
  // the scorer cannot lean only on the names of entities seen in training. 0 = off, < 1.
  double entity_text_dropout = 0.0;
  // Residual over the shortest-path prior: structure features in the logit (prior_dim 6) and
  // the ResidualPriorInit start. false = the plain MLP from a random start (prior_dim 0).
  bool residual_prior = true;
  // Up-weighting of positives in the BCE is min(negatives / positives, this).
  double max_pos_weight = 20.0;
  // "auto", "cpu" or "cuda:N".
  std::string device = "auto";
  // Validation questions evaluated after each epoch (0 = all).
  int max_dev_questions = 0;
  // Receives progress lines (loss terms, samples/s, validation metrics). May be empty.
  std::function<void(const std::string&)> log;
};

struct TrainResult {
  ScorerParams best_params;   // parameters of the best validation epoch
  int best_epoch = 0;         // 0 = initial weights; epochs count across both phases
  int warmup_epochs_run = 0;  // BCE-only epochs run before the joint phase
  // Validation metrics of best_params ("validation_recall@10" ...), training throughput, and
  // "best_in_warmup" (1: no joint epoch beat the BCE warm-up), "validation_selected_on_real"
  // (1: the validation_* metrics are over the real QA questions only), and
  // per epoch e the training curves "epoch<e>/loss", "/bce", "/l_sim", "/compression",
  // "/decoder_nll", "/l_ib", "/selection_entropy", "/grad_norm_bce", "/grad_norm_l_sim",
  // "/grad_norm_compression" (unweighted terms, on the scorer's parameters),
  // "/questions_per_second", "/cpu_ms_per_question" (process CPU time, all threads),
  // "/validation_recall@10".
  std::map<std::string, double> metrics;
  int train_questions_used = 0;  // questions with a positive inside their subgraph
};

// Trains on `data.train`, evaluates on the validation questions through the real Retrieve path
// after every epoch, and returns the best checkpoint by validation answer recall@10 (then
// recall@100). Test questions are never read. INVALID_ARGUMENT naming the option for bad options.
absl::StatusOr<TrainResult> TrainRetriever(std::shared_ptr<const kgstore::KgStore> store,
                                           const QuestionSet& data,
                                           std::shared_ptr<const EmbeddingTable> entities,
                                           std::shared_ptr<const EmbeddingTable> relations,
                                           const TextEmbedder& embedder,
                                           const TrainerOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TRAINER_H_
