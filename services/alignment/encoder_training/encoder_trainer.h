// Training of the biomedical name encoder (issue 12): all names of one concept should sit
// together, so alignment links synonyms the dictionary does not spell. One entry point for the
// CLI (`ibgr encoder train`) and `ibgr artifacts build`: assemble concepts from the lexicon of the
// embedded KG (names, synonyms, lay synonyms, abbreviations, xref-joined entries, abbreviation
// expansions), split them by concept, train the hashed-feature model of
// services/alignment/trained_encoder.h with LibTorch (InfoNCE, in-batch + FAISS-mined hard
// negatives), evaluate on held-out strings and publish <base>/encoder/<version>/.
// Plain C++ header: LibTorch lives in name_encoder_torch.cc only.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_ENCODER_TRAINER_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_ENCODER_TRAINER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "services/alignment/alignment_api.h"
#include "services/alignment/encoder_training/name_encoder_model.h"

namespace ibgraphrag::alignment::training {

// How concepts are split and which held-out strings are evaluated; training and a later
// evaluation of the same encoder must use the same values (the manifest records them).
struct EncoderSplitOptions {
  // Seed of the split and the held-out samples (also the training seed).
  uint64_t seed = 1;
  // Shares of validation and test concepts (the rest trains), by a seeded hash of the concept's
  // smallest external id, so a concept never crosses splits. Each in [0, 0.5].
  double validation_fraction = 0.1;
  double test_fraction = 0.1;
  // Share of the train concepts with >= 3 names whose one synonym is held out of training (the
  // "held-out synonyms of seen concepts" figures). [0, 1].
  double seen_holdout_fraction = 0.1;
  // Evaluation samples per set (DO synonyms, HPO lay synonyms) and split; 0 = all eligible.
  int eval_samples = 2000;
};

struct EncoderTrainOptions {
  // Where the lexicon comes from (data_dir: the embedded KG, ~4 s; or a KG snapshot; + UMLS).
  LexiconSourceOptions sources;
  // The shared data directory, for the HPO lay-synonym file the evaluation samples from
  // (<data_dir>/vocab/hpo-layperson-synonyms.tsv); defaults to sources.data_dir.
  std::string data_dir;
  // Publish under <base_path>/encoder/<version>/; empty trains and evaluates without publishing.
  std::string base_path;
  EncoderSplitOptions split;
  // Model shape and the optimiser (see name_encoder_model.h); its seed is split.seed.
  NameEncoderTrainOptions model;
  // Also evaluate on the test split (the final figures; hyper-parameters are chosen on the
  // validation split only).
  bool evaluate_test = true;
  // Receives progress lines. May be empty.
  std::function<void(const std::string&)> log;
};

struct TrainedEncoderResult {
  // The published directory and the encoder id (empty when base_path was empty).
  std::string encoder_dir;
  std::string encoder_id;
  // Wall time of the training loop (what --seconds bounds) and of the whole call.
  double training_seconds = 0;
  double total_seconds = 0;
  // SHA-256 hex over the training concepts' names in their fixed order.
  std::string training_data_digest;
  // Figures (validation, test, seen-holdout; trained vs hash vs exact) as a JSON object, and the
  // same as a printable table.
  std::string metrics_json;
  std::string metrics_table;
  // Weights of the trained model (what was published).
  TrainedEncoderWeights weights;
};

// Loads the lexicon, assembles and splits the concepts, trains, evaluates and (with base_path)
// publishes. INVALID_ARGUMENT naming a bad option.
absl::StatusOr<TrainedEncoderResult> TrainAndPublishEncoder(const EncoderTrainOptions& options);

struct EncoderEvalOptions {
  LexiconSourceOptions sources;
  std::string data_dir;
  // The encoder to evaluate: an artifact directory <base>/encoder/<version>.
  std::string encoder_dir;
  // Must be what the encoder was trained with for "test" to mean unseen concepts
  // (ReadTrainingSplit fills it from the manifest).
  EncoderSplitOptions split;
  std::function<void(const std::string&)> log;
};

// Sets seed and split fractions of `split` from the training config recorded in
// <encoder_dir>/manifest.json (left as they are when it has none), so "test" means concepts that
// encoder never saw. DATA_LOSS for an unreadable manifest.
absl::Status ReadTrainingSplit(const std::string& encoder_dir, EncoderSplitOptions* split);

// The same figures for an already published encoder; returns the printable table.
absl::StatusOr<std::string> EvaluateEncoderArtifact(const EncoderEvalOptions& options);

}  // namespace ibgraphrag::alignment::training

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_ENCODER_TRAINING_ENCODER_TRAINER_H_
