// retriever_train: builds the retriever artifacts for a KG snapshot, generates templated
// questions from it, trains the triple scorer and publishes `<base>/retriever/<version>/`.
//
//   retriever_train --base=artifacts [--epochs=6] [--batch_size=16] [--lr=1e-3] [--seed=0]
//                   [--lambda1=1] [--lambda2=0.5] [--beta=2] [--device=auto] [--torch_threads=2]
//                   [--eval_baselines] [--metrics_json=out.json]
//
// The KG is the newest snapshot under --base (`ibgr kg build --base=...` makes one). With
// --eval_baselines the dev split is also scored with the COSINE and SHORTEST_PATH modes through
// the same Retrieve path, and everything is printed as one JSON object (and written to
// --metrics_json).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/evaluation.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/retriever.h"
#include "services/retriever/torch_scorer.h"
#include "services/retriever/trainer.h"

ABSL_FLAG(std::string, base, "artifacts", "artifact base holding kg/<version>/");
ABSL_FLAG(int, epochs, 6, "training epochs");
ABSL_FLAG(int, batch_size, 16, "questions per optimiser step");
ABSL_FLAG(double, lr, 1e-3, "Adam learning rate");
ABSL_FLAG(uint64_t, seed, 0, "random seed");
ABSL_FLAG(double, lambda1, 1.0, "BCE weight");
ABSL_FLAG(double, lambda2, 0.5, "information-bottleneck weight (0 = prior-only ablation)");
ABSL_FLAG(double, beta, 2.0, "IB beta (> 1)");
ABSL_FLAG(int, hidden, 256, "scorer hidden units");
ABSL_FLAG(int, max_hops, 2, "subgraph hops for training and evaluation");
ABSL_FLAG(int, max_candidates, 2000, "subgraph triple cap per question");
ABSL_FLAG(int, negatives, 256, "negatives sampled per question and step");
ABSL_FLAG(double, entity_text_dropout, 0.0,
          "probability of zeroing head/tail text features of a training row (0 = off)");
ABSL_FLAG(double, novelty_discount, 0.8,
          "IBRP top-K novelty discount (Retriever::Options; 1 = plain score order)");
ABSL_FLAG(bool, novelty_in_baselines, false,
          "evaluation: also apply the novelty discount to SHORTEST_PATH and COSINE");
ABSL_FLAG(
    bool, residual_prior, true,
    "score = shortest-path prior logit + learned correction (false: plain MLP, random start)");
ABSL_FLAG(int64_t, question_seed, -1,
          "seed of the question generation; -1 = --seed + 1 (set it to vary --seed on the same "
          "questions)");
ABSL_FLAG(int, max_per_template, 1000, "questions generated per template");
ABSL_FLAG(int, max_dev_questions, 0, "dev questions evaluated per epoch (0 = all)");
ABSL_FLAG(std::string, device, "auto", "auto, cpu or cuda:N");
ABSL_FLAG(int, torch_threads, 2, "LibTorch intra-op threads");
ABSL_FLAG(bool, eval_baselines, false, "also evaluate COSINE and SHORTEST_PATH on dev");
ABSL_FLAG(std::string, metrics_json, "", "write the final metrics here as JSON");
ABSL_FLAG(int64_t, evaluate, 0,
          "evaluate this existing model version (IBRP, COSINE, SHORTEST_PATH) instead of training");
ABSL_FLAG(std::string, eval_split, "dev", "split --evaluate scores: dev or train");
ABSL_FLAG(std::string, encoder_id, "hash-ngram-v1-d256",
          "text encoder of the embeddings and questions, by id: hash-ngram-v1-d<dim> or a "
          "trained encoder's id (found in <base>/encoder/<version>/)");

namespace {

using namespace ibgraphrag::retriever;  // NOLINT: tool main

Retriever::Options RetrieverOptionsFromFlags() {
  Retriever::Options o;
  o.novelty_discount = static_cast<float>(absl::GetFlag(FLAGS_novelty_discount));
  o.novelty_in_baselines = absl::GetFlag(FLAGS_novelty_in_baselines);
  return o;
}

QuestionOptions QuestionOptionsFromFlags() {
  QuestionOptions qo;
  qo.max_per_template = absl::GetFlag(FLAGS_max_per_template);
  qo.max_hops = absl::GetFlag(FLAGS_max_hops);
  const int64_t question_seed = absl::GetFlag(FLAGS_question_seed);
  qo.seed =
      question_seed >= 0 ? static_cast<uint64_t>(question_seed) : absl::GetFlag(FLAGS_seed) + 1;
  return qo;
}

// --evaluate=N: scores an existing version on the regenerated split with every mode.
absl::Status EvaluateVersion(const std::string& base,
                             std::shared_ptr<const ibgraphrag::kgstore::KgStore> store,
                             const QuestionSet& data, int64_t version) {
  RetrieverModel::Options mo;
  mo.device = "cpu";
  IBGR_ASSIGN_OR_RETURN(
      auto model, RetrieverModel::Load(RetrieverVersionDir(base, version), mo, TextEmbedder()));
  if (model->manifest().training_data_hash != data.hash) {
    std::printf(
        "warning: questions differ from the ones version %lld was trained on (use the "
        "same --seed/--max_per_template/--max_hops)\n",
        static_cast<long long>(version));
  }
  Retriever retriever(RetrieverOptionsFromFlags(), std::make_shared<InProcessSubgraphSource>(store),
                      model);
  const bool train = absl::GetFlag(FLAGS_eval_split) == "train";
  nlohmann::json report;
  for (auto [name, mode] :
       {std::pair{"ibrp", ScoringMode::kIbrp}, std::pair{"cosine", ScoringMode::kCosine},
        std::pair{"shortest_path", ScoringMode::kShortestPath}}) {
    EvalOptions eo;
    eo.mode = mode;
    eo.max_hops = absl::GetFlag(FLAGS_max_hops);
    eo.max_candidates = absl::GetFlag(FLAGS_max_candidates);
    eo.max_questions = absl::GetFlag(FLAGS_max_dev_questions);
    IBGR_ASSIGN_OR_RETURN(EvalMetrics m,
                          EvaluateRetriever(retriever, train ? data.train : data.dev, eo));
    report[name] = m.ToMap(train ? "train_" : "dev_");
  }
  report["version"] = version;
  std::printf("%s\n", report.dump(2).c_str());
  if (!absl::GetFlag(FLAGS_metrics_json).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_metrics_json)) << report.dump(2) << "\n";
  }
  return absl::OkStatus();
}

absl::Status Run(int argc, char** argv) {
  const std::string base = absl::GetFlag(FLAGS_base);
  IBGR_RETURN_IF_ERROR(SetTorchThreads(absl::GetFlag(FLAGS_torch_threads)));
  IBGR_ASSIGN_OR_RETURN(std::string kg_dir,
                        ibgraphrag::kgstore::ResolveSnapshotDir(base, std::nullopt));
  ibgraphrag::kgstore::KgStoreOptions store_options;
  store_options.snapshot_dir = kg_dir;
  store_options.read_only = true;
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<ibgraphrag::kgstore::KgStore> opened,
                        ibgraphrag::kgstore::KgStore::Open(store_options));
  std::shared_ptr<const ibgraphrag::kgstore::KgStore> store = std::move(opened);
  const std::string kg_version = absl::StrCat(store->manifest().version);
  std::printf("KG %s: %lld entities\n", kg_dir.c_str(),
              static_cast<long long>(store->num_entities()));

  absl::Time t0 = absl::Now();
  IBGR_ASSIGN_OR_RETURN(QuestionSet data, GenerateQuestions(*store, QuestionOptionsFromFlags()));
  std::printf("questions: %zu train, %zu dev (split by entity), hash %s, %.1fs\n",
              data.train.size(), data.dev.size(), data.hash.substr(0, 16).c_str(),
              absl::ToDoubleSeconds(absl::Now() - t0));

  if (absl::GetFlag(FLAGS_evaluate) > 0) {
    return EvaluateVersion(base, store, data, absl::GetFlag(FLAGS_evaluate));
  }

  // Artifacts into a staging directory that becomes the version on success (and is removed on
  // failure).
  using ibgraphrag::common::ArtifactStaging;
  IBGR_ASSIGN_OR_RETURN(ArtifactStaging staging_dir,
                        ArtifactStaging::CreateVersion(RetrieverArtifacts(base)));
  const int64_t version = staging_dir.version();
  const std::string& staging = staging_dir.dir();
  IBGR_ASSIGN_OR_RETURN(const TextEmbedder embedder,
                        EmbedderForId(base, absl::GetFlag(FLAGS_encoder_id)));
  RetrieverManifest manifest;
  manifest.version = version;
  manifest.kg_version = kg_version;
  std::string cmd;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&cmd, i ? " " : "", argv[i]);
  manifest.created_by = cmd;
  t0 = absl::Now();
  IBGR_ASSIGN_OR_RETURN(ArtifactTexts texts, ArtifactTextsFromStore(*store));
  IBGR_RETURN_IF_ERROR(BuildRetrieverArtifacts(texts, embedder, staging, &manifest));
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const EmbeddingTable> entities,
                        EmbeddingTable::Open(staging + "/" + kEntityEmbeddingsFile));
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<const EmbeddingTable> relations,
                        EmbeddingTable::Open(staging + "/" + kRelationEmbeddingsFile));
  std::printf("artifacts: %lld entity and %lld relation embeddings (%s) in %.1fs\n",
              static_cast<long long>(entities->rows()), static_cast<long long>(relations->rows()),
              embedder.id.c_str(), absl::ToDoubleSeconds(absl::Now() - t0));

  TrainerOptions to;
  to.epochs = absl::GetFlag(FLAGS_epochs);
  to.batch_size = absl::GetFlag(FLAGS_batch_size);
  to.learning_rate = absl::GetFlag(FLAGS_lr);
  to.seed = absl::GetFlag(FLAGS_seed);
  to.lambda1 = absl::GetFlag(FLAGS_lambda1);
  to.lambda2 = absl::GetFlag(FLAGS_lambda2);
  to.beta = absl::GetFlag(FLAGS_beta);
  to.hidden = absl::GetFlag(FLAGS_hidden);
  to.max_hops = absl::GetFlag(FLAGS_max_hops);
  to.max_candidates = absl::GetFlag(FLAGS_max_candidates);
  to.negatives_per_question = absl::GetFlag(FLAGS_negatives);
  to.entity_text_dropout = absl::GetFlag(FLAGS_entity_text_dropout);
  to.max_dev_questions = absl::GetFlag(FLAGS_max_dev_questions);
  to.device = absl::GetFlag(FLAGS_device);
  to.residual_prior = absl::GetFlag(FLAGS_residual_prior);
  to.novelty_discount = static_cast<float>(absl::GetFlag(FLAGS_novelty_discount));
  to.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  IBGR_ASSIGN_OR_RETURN(TrainResult trained,
                        TrainRetriever(store, data, entities, relations, embedder, to));

  manifest.dde = to.dde;
  manifest.training_data_hash = data.hash;
  manifest.training = {{"epochs", absl::StrCat(to.epochs)},
                       {"batch_size", absl::StrCat(to.batch_size)},
                       {"lr", absl::StrCat(to.learning_rate)},
                       {"seed", absl::StrCat(to.seed)},
                       {"lambda1", absl::StrCat(to.lambda1)},
                       {"lambda2", absl::StrCat(to.lambda2)},
                       {"beta", absl::StrCat(to.beta)},
                       {"max_hops", absl::StrCat(to.max_hops)},
                       {"max_candidates", absl::StrCat(to.max_candidates)},
                       {"negatives", absl::StrCat(to.negatives_per_question)},
                       {"entity_text_dropout", absl::StrCat(to.entity_text_dropout)},
                       {"residual_prior", to.residual_prior ? "true" : "false"},
                       {"novelty_discount", absl::StrCat(to.novelty_discount)},
                       {"train_questions", absl::StrCat(data.train.size())},
                       {"dev_questions", absl::StrCat(data.dev.size())},
                       {"device", to.device}};
  manifest.metrics = trained.metrics;
  nlohmann::json report;
  report["ibrp"] = trained.metrics;
  if (absl::GetFlag(FLAGS_eval_baselines)) {
    LoadedRetrieverVersion v;
    v.manifest = manifest;
    v.manifest.scorer = trained.best_params.config;
    v.params = trained.best_params;
    v.entities = entities;
    v.relations = relations;
    RetrieverModel::Options mo;
    mo.device = "cpu";
    IBGR_ASSIGN_OR_RETURN(auto model, RetrieverModel::FromParts(std::move(v), mo, embedder));
    Retriever retriever(RetrieverOptionsFromFlags(),
                        std::make_shared<InProcessSubgraphSource>(store), model);
    for (auto [name, mode] : {std::pair{"cosine", ScoringMode::kCosine},
                              std::pair{"shortest_path", ScoringMode::kShortestPath}}) {
      EvalOptions eo;
      eo.mode = mode;
      eo.max_hops = to.max_hops;
      eo.max_candidates = to.max_candidates;
      eo.max_questions = to.max_dev_questions;
      IBGR_ASSIGN_OR_RETURN(EvalMetrics m, EvaluateRetriever(retriever, data.dev, eo));
      report[name] = m.ToMap("dev_");
    }
  }
  IBGR_RETURN_IF_ERROR(PublishRetrieverVersion(&staging_dir, trained.best_params, manifest));
  report["version"] = version;
  report["dir"] = RetrieverVersionDir(base, version);
  std::printf("%s\n", report.dump(2).c_str());
  if (!absl::GetFlag(FLAGS_metrics_json).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_metrics_json)) << report.dump(2) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Trains the IBRP triple retriever on questions generated from a KG.");
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run(argc, argv);
  if (!status.ok()) {
    std::fprintf(stderr, "retriever_train: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
