#include "tools/ibgr/encoder_commands.h"

#include <cstdio>
#include <string>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "services/alignment/encoder_training/encoder_trainer.h"
#include "tools/ibgr/cli_common.h"

ABSL_DECLARE_FLAG(std::string, data_dir);
ABSL_DECLARE_FLAG(std::string, base);
ABSL_DECLARE_FLAG(std::string, snapshot_dir);
ABSL_DECLARE_FLAG(std::string, umls_dir);

namespace {
const ibgraphrag::alignment::training::EncoderTrainOptions kDefaults;
}  // namespace

ABSL_FLAG(uint64_t, seed, kDefaults.split.seed, "encoder: seed of the split, init and batch order");
ABSL_FLAG(double, seconds, kDefaults.model.max_seconds,
          "encoder train: stop after the epoch during which this many seconds passed (0 = run "
          "--encoder_epochs)");
ABSL_FLAG(int, encoder_epochs, kDefaults.model.epochs, "encoder train: passes over the concepts");
ABSL_FLAG(int, encoder_dim, kDefaults.model.dim, "encoder train: vector width D");
ABSL_FLAG(int, encoder_hidden, kDefaults.model.hidden,
          "encoder train: residual MLP hidden width (0 = none)");
ABSL_FLAG(int, encoder_buckets, kDefaults.model.features.buckets,
          "encoder train: hashed feature buckets (embedding rows)");
ABSL_FLAG(int, batch_concepts, kDefaults.model.batch_concepts, "encoder train: concepts per batch");
ABSL_FLAG(double, temperature, kDefaults.model.temperature, "encoder train: InfoNCE temperature");
ABSL_FLAG(double, table_lr, kDefaults.model.table_learning_rate,
          "encoder train: learning rate of the embedding table");
ABSL_FLAG(double, mlp_lr, kDefaults.model.mlp_learning_rate, "encoder train: MLP learning rate");
ABSL_FLAG(double, hard_negative_fraction, kDefaults.model.hard_negative_fraction,
          "encoder train: share of a batch filled with mined nearest concepts");
ABSL_FLAG(int, hard_negatives, kDefaults.model.hard_negatives_per_concept,
          "encoder train: mined neighbours taken per seed concept");
ABSL_FLAG(int, eval_samples, kDefaults.split.eval_samples,
          "encoder: held-out strings per evaluation set (0 = all)");
ABSL_FLAG(bool, eval_test, true,
          "encoder train: also report the test split (choose settings on validation only)");
ABSL_FLAG(bool, publish, true, "encoder train: publish under <base>/encoder/<version>/");
ABSL_FLAG(std::string, metrics_json_out, "", "encoder train: also write the figures here (JSON)");
ABSL_FLAG(int, mine_every, kDefaults.model.mine_every_epochs,
          "encoder train: mine hard negatives before every N-th epoch");
ABSL_FLAG(int, encoder_threads, kDefaults.model.threads, "encoder train: LibTorch threads");
ABSL_FLAG(std::string, encoder_dir, "", "encoder eval: the encoder version directory");

namespace ibgraphrag::cli {
namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
  return 1;
}

void Log(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

alignment::LexiconSourceOptions Sources(std::string* data_dir) {
  *data_dir =
      absl::GetFlag(FLAGS_data_dir).empty() ? DefaultDataDir() : absl::GetFlag(FLAGS_data_dir);
  alignment::LexiconSourceOptions sources;
  sources.snapshot_dir = absl::GetFlag(FLAGS_snapshot_dir);
  if (sources.snapshot_dir.empty()) sources.data_dir = *data_dir;
  sources.umls_dir = absl::GetFlag(FLAGS_umls_dir);
  return sources;
}

alignment::training::EncoderTrainOptions TrainOptionsFromFlags() {
  alignment::training::EncoderTrainOptions o;
  o.sources = Sources(&o.data_dir);
  if (absl::GetFlag(FLAGS_publish)) o.base_path = absl::GetFlag(FLAGS_base);
  o.split.seed = absl::GetFlag(FLAGS_seed);
  o.split.eval_samples = absl::GetFlag(FLAGS_eval_samples);
  o.evaluate_test = absl::GetFlag(FLAGS_eval_test);
  alignment::training::NameEncoderTrainOptions& m = o.model;
  m.max_seconds = absl::GetFlag(FLAGS_seconds);
  m.epochs = absl::GetFlag(FLAGS_encoder_epochs);
  m.dim = absl::GetFlag(FLAGS_encoder_dim);
  m.hidden = absl::GetFlag(FLAGS_encoder_hidden);
  m.features.buckets = absl::GetFlag(FLAGS_encoder_buckets);
  m.batch_concepts = absl::GetFlag(FLAGS_batch_concepts);
  m.temperature = absl::GetFlag(FLAGS_temperature);
  m.table_learning_rate = absl::GetFlag(FLAGS_table_lr);
  m.mlp_learning_rate = absl::GetFlag(FLAGS_mlp_lr);
  m.hard_negative_fraction = absl::GetFlag(FLAGS_hard_negative_fraction);
  m.hard_negatives_per_concept = absl::GetFlag(FLAGS_hard_negatives);
  m.threads = absl::GetFlag(FLAGS_encoder_threads);
  m.mine_every_epochs = absl::GetFlag(FLAGS_mine_every);
  o.log = Log;
  return o;
}

}  // namespace

int EncoderTrain(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "ibgr encoder train takes flags only (see --help)\n");
    return 2;
  }
  auto result = alignment::training::TrainAndPublishEncoder(TrainOptionsFromFlags());
  if (!result.ok()) return Fail(result.status());
  if (!absl::GetFlag(FLAGS_metrics_json_out).empty()) {
    if (auto s = common::WriteStringToFileAtomic(absl::GetFlag(FLAGS_metrics_json_out),
                                                 result->metrics_json);
        !s.ok()) {
      return Fail(s);
    }
  }
  std::printf("encoder: %s\ndirectory: %s\ntraining data digest: %s\n",
              result->encoder_id.empty() ? "(not published)" : result->encoder_id.c_str(),
              result->encoder_dir.empty() ? "-" : result->encoder_dir.c_str(),
              result->training_data_digest.c_str());
  std::printf("training: %.1f s (total %.1f s)\n%s", result->training_seconds,
              result->total_seconds, result->metrics_table.c_str());
  return 0;
}

int EncoderEval(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::fprintf(stderr, "ibgr encoder eval takes flags only (see --help)\n");
    return 2;
  }
  alignment::training::EncoderEvalOptions o;
  o.sources = Sources(&o.data_dir);
  o.encoder_dir = absl::GetFlag(FLAGS_encoder_dir);
  o.split.eval_samples = absl::GetFlag(FLAGS_eval_samples);
  o.log = Log;
  if (o.encoder_dir.empty()) return Fail(absl::InvalidArgumentError("--encoder_dir: required"));
  if (auto s = alignment::training::ReadTrainingSplit(o.encoder_dir, &o.split); !s.ok()) {
    return Fail(s);
  }
  auto table = alignment::training::EvaluateEncoderArtifact(o);
  if (!table.ok()) return Fail(table.status());
  std::printf("%s", table->c_str());
  return 0;
}

}  // namespace ibgraphrag::cli
