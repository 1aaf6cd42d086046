// The LibTorch side of the name encoder, behind a plain C++ header (LibTorch lives in
// name_encoder_torch.cc only): train the model of services/alignment/trained_encoder.h on groups
// of synonymous names, and run its torch forward (for the parity test against the plain-C++
// TrainedNameEncoder).
//
// Training: per epoch, the current model embeds every training name; each concept's mean vector is
// indexed with FAISS (IVF, inner product) and its nearest other concepts are its hard negatives.
// Batches are composed as SapBERT's mining does: a seed concept, then its nearest neighbours, so
// confusable concepts meet in one batch. Each concept contributes two of its names (one, as a pure
// negative, when it has only one); the loss is InfoNCE over the batch (NT-Xent: every name's
// positive is the other name of its concept, all other names in the batch are negatives).
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_NAME_ENCODER_MODEL_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_NAME_ENCODER_MODEL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/alignment/name_features.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment::training {

struct NameEncoderTrainOptions {
  // Hashed features (buckets = rows of the embedding table).
  NameFeaturizerOptions features;
  // Embedding width D and MLP hidden width H (0 = no MLP).
  int dim = 256;
  int hidden = 0;
  // Passes over the training concepts (>= 0; 0 returns the initial weights).
  int epochs = 40;
  // Stop after the epoch during which this many seconds of training passed (0 = no limit). The
  // default artifact is defined by `epochs` so that it is deterministic; this is a safety cap.
  double max_seconds = 0;
  // Concepts per batch (two names each): the in-batch negatives. >= 2.
  int batch_concepts = 512;
  // InfoNCE temperature (> 0): cosines are divided by it.
  double temperature = 0.1;
  // Learning rates: row-wise sparse Adagrad on the embedding table (only the rows a batch touched
  // are updated, one accumulator per row), Adam on the MLP.
  double table_learning_rate = 0.2;
  double mlp_learning_rate = 1e-3;
  // Share of each batch filled with the mined nearest neighbours of its seed concepts (0 = random
  // batches, in-batch negatives only). [0, 1).
  double hard_negative_fraction = 0.5;
  // Neighbours mined per concept (each epoch) and taken per seed concept. 1..32.
  int hard_negatives_per_concept = 3;
  // Mine neighbours before every this many epochs (mining encodes every name and searches all
  // concepts: ~4 s on the embedded KG, against ~2 s of training steps per epoch). >= 1.
  int mine_every_epochs = 2;
  // Standard deviation of the initial embedding rows (the untrained model is then a random
  // projection of the hashed features, about as good as the hash encoder).
  double init_std = 0.1;
  // LibTorch intra-op threads. 1: a step is a chain of small ops, and on the shared 2-core VM two
  // OpenMP threads spent most of each step waiting at barriers (0.45 s a step against 0.07 s).
  // FAISS's mining search still uses OpenBLAS's own threads.
  int threads = 1;
  // Seed of the weight init, the pair sampling and the batch order.
  uint64_t seed = 1;
  // Receives progress lines (epoch, loss, seconds). May be empty.
  std::function<void(const std::string&)> log;
};

// INVALID_ARGUMENT naming the first bad field.
absl::Status ValidateNameEncoderTrainOptions(const NameEncoderTrainOptions& options);

struct NameEncoderTrainResult {
  TrainedEncoderWeights weights;
  // Mean InfoNCE loss of each epoch that ran (the first is the loss of the untrained model during
  // its first epoch).
  std::vector<double> epoch_loss;
  int epochs_run = 0;
  int64_t steps = 0;
  // Wall time of the training loop, and of the mining inside it.
  double seconds = 0;
  double mining_seconds = 0;
};

// Trains on `groups` (each: the names of one concept; groups with one name serve as negatives
// only). INVALID_ARGUMENT for bad options or when no group has two names with features.
absl::StatusOr<NameEncoderTrainResult> TrainNameEncoder(
    const std::vector<std::vector<std::string>>& groups, const NameEncoderTrainOptions& options);

// The torch forward of `weights` on `texts` (texts.size() x dim, row-major): what training
// optimises, for comparison with TrainedNameEncoder.
absl::StatusOr<std::vector<float>> TorchEncode(const TrainedEncoderWeights& weights,
                                               const std::vector<std::string>& texts);

}  // namespace ibgraphrag::alignment::training

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_NAME_ENCODER_MODEL_H_
