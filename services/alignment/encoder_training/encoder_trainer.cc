#include "services/alignment/encoder_training/encoder_trainer.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/proto_json.h"
#include "common/status_macros.h"
#include "ibgraphrag/artifacts/v1/manifests.pb.h"
#include "nlohmann/json.hpp"
#include "services/alignment/encoder_training/heldout_linking.h"
#include "services/alignment/encoder_training/training_concepts.h"
#include "services/alignment/trained_encoder.h"

namespace ibgraphrag::alignment::training {
namespace {

// The split and the held-out strings every figure is computed on.
struct EvalPlan {
  Lexicon lexicon;
  ConceptSet concepts;
  EvalSamples validation, seen, test;
};

absl::StatusOr<EvalPlan> PlanEvaluation(const LexiconSourceOptions& sources,
                                        const std::string& data_dir, const EncoderSplitOptions& s,
                                        const std::function<void(const std::string&)>& log) {
  EvalPlan plan;
  const absl::Time start = absl::Now();
  IBGR_ASSIGN_OR_RETURN(plan.lexicon, LoadLexicon(sources));
  plan.concepts = BuildConcepts(plan.lexicon, ConceptOptions());
  IBGR_RETURN_IF_ERROR(
      AssignSplits(s.seed, s.validation_fraction, s.test_fraction, &plan.concepts));
  IBGR_ASSIGN_OR_RETURN(
      std::vector<LaySynonym> lay,
      ReadHpoLaySynonyms(absl::StrCat(data_dir, "/vocab/hpo-layperson-synonyms.tsv")));
  plan.validation =
      SampleEvalNames(plan.lexicon, plan.concepts, lay, Split::kValidation, s.eval_samples, s.seed);
  plan.test =
      SampleEvalNames(plan.lexicon, plan.concepts, lay, Split::kTest, s.eval_samples, s.seed);
  plan.seen = SampleSeenHoldout(plan.lexicon, plan.concepts, lay, s.seen_holdout_fraction, s.seed);
  int64_t per_split[3] = {0, 0, 0};
  for (const Concept& c : plan.concepts.concepts) ++per_split[static_cast<int>(c.split)];
  if (log) {
    log(absl::StrFormat(
        "lexicon: %zu entries -> %zu concepts (train %lld, validation %lld, test %lld), %.1f s",
        plan.lexicon.entries.size(), plan.concepts.concepts.size(),
        static_cast<long long>(per_split[0]), static_cast<long long>(per_split[1]),
        static_cast<long long>(per_split[2]), absl::ToDoubleSeconds(absl::Now() - start)));
  }
  return plan;
}

std::vector<HeldOutName> Concat(const std::vector<HeldOutName>& a,
                                const std::vector<HeldOutName>& b) {
  std::vector<HeldOutName> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

struct EvalSet {
  std::string name;
  const std::vector<HeldOutName>* names;
};

std::vector<EvalSet> EvalSets(const EvalPlan& plan, bool with_test) {
  std::vector<EvalSet> sets = {
      {"validation_do", &plan.validation.do_synonyms},
      {"validation_hpo_lay", &plan.validation.hpo_lay},
      {"seen_heldout_do", &plan.seen.do_synonyms},
      {"seen_heldout_hpo_lay", &plan.seen.hpo_lay},
  };
  if (with_test) {
    sets.push_back({"test_do", &plan.test.do_synonyms});
    sets.push_back({"test_hpo_lay", &plan.test.hpo_lay});
  }
  return sets;
}

// acc@1 / acc@5 of the trained encoder, the hash encoder and exact match on every set.
absl::StatusOr<nlohmann::json> Evaluate(const EvalPlan& plan, const TextEncoder& trained,
                                        bool with_test) {
  const std::vector<EvalSet> sets = EvalSets(plan, with_test);
  std::vector<std::vector<HeldOutName>> held;
  for (const EvalSet& s : sets) held.push_back(*s.names);
  IBGR_ASSIGN_OR_RETURN(auto hash, HashNgramEncoder::Create(HashNgramEncoderOptions()));
  IBGR_ASSIGN_OR_RETURN(std::vector<LinkAccuracy> t, HeldOutAccuracy(plan.lexicon, held, trained));
  IBGR_ASSIGN_OR_RETURN(std::vector<LinkAccuracy> h, HeldOutAccuracy(plan.lexicon, held, *hash));
  const std::vector<LinkAccuracy> x = ExactMatchAccuracy(plan.lexicon, held);
  nlohmann::json out = nlohmann::json::object();
  auto row = [](const LinkAccuracy& a) {
    return nlohmann::json{{"acc1", a.acc1}, {"acc5", a.acc5}};
  };
  for (size_t i = 0; i < sets.size(); ++i) {
    out[sets[i].name] = {
        {"n", t[i].n}, {"trained", row(t[i])}, {"hash", row(h[i])}, {"exact", row(x[i])}};
  }
  out["encoders"] = {{"trained", trained.id()}, {"hash", hash->id()}};
  return out;
}

std::string MetricsTable(const nlohmann::json& metrics) {
  std::string table = absl::StrFormat("%-22s %5s | %-13s | %-13s | %-13s\n", "set", "n",
                                      "trained @1 @5", "hash @1 @5", "exact @1 @5");
  for (const auto& [name, m] : metrics.items()) {
    if (!m.contains("n")) continue;
    table += absl::StrFormat("%-22s %5d | %.3f  %.3f  | %.3f  %.3f  | %.3f  %.3f\n", name,
                             m["n"].get<int>(), m["trained"]["acc1"].get<double>(),
                             m["trained"]["acc5"].get<double>(), m["hash"]["acc1"].get<double>(),
                             m["hash"]["acc5"].get<double>(), m["exact"]["acc1"].get<double>(),
                             m["exact"]["acc5"].get<double>());
  }
  return table;
}

nlohmann::json ConfigJson(const EncoderTrainOptions& o) {
  const NameEncoderTrainOptions& m = o.model;
  return {{"seed", o.split.seed},
          {"validation_fraction", o.split.validation_fraction},
          {"test_fraction", o.split.test_fraction},
          {"seen_holdout_fraction", o.split.seen_holdout_fraction},
          {"eval_samples", o.split.eval_samples},
          {"buckets", m.features.buckets},
          {"min_ngram", m.features.min_ngram},
          {"max_ngram", m.features.max_ngram},
          {"ngram_weight", m.features.ngram_weight},
          {"word_weight", m.features.word_weight},
          {"bigram_weight", m.features.bigram_weight},
          {"dim", m.dim},
          {"hidden", m.hidden},
          {"epochs", m.epochs},
          {"max_seconds", m.max_seconds},
          {"batch_concepts", m.batch_concepts},
          {"temperature", m.temperature},
          {"table_learning_rate", m.table_learning_rate},
          {"mlp_learning_rate", m.mlp_learning_rate},
          {"hard_negative_fraction", m.hard_negative_fraction},
          {"hard_negatives_per_concept", m.hard_negatives_per_concept},
          {"mine_every_epochs", m.mine_every_epochs},
          {"init_std", m.init_std},
          {"threads", m.threads}};
}

absl::Status ValidateEncoderSplitOptions(const EncoderSplitOptions& s) {
  if (!(s.seen_holdout_fraction >= 0 && s.seen_holdout_fraction <= 1)) {
    return absl::InvalidArgumentError("seen_holdout_fraction: must be in [0, 1]");
  }
  if (s.eval_samples < 0) return absl::InvalidArgumentError("eval_samples: must be >= 0");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainedEncoderResult> TrainAndPublishEncoder(const EncoderTrainOptions& options) {
  const absl::Time start = absl::Now();
  const std::string data_dir =
      options.data_dir.empty() ? options.sources.data_dir : options.data_dir;
  if (data_dir.empty()) return absl::InvalidArgumentError("data_dir: required");
  const EncoderSplitOptions& split = options.split;
  IBGR_RETURN_IF_ERROR(ValidateEncoderSplitOptions(split));
  NameEncoderTrainOptions model = options.model;
  model.seed = split.seed;
  if (!model.log) model.log = options.log;
  IBGR_RETURN_IF_ERROR(ValidateNameEncoderTrainOptions(model));
  IBGR_ASSIGN_OR_RETURN(EvalPlan plan,
                        PlanEvaluation(options.sources, data_dir, split, options.log));

  TrainedEncoderResult result;
  const auto groups =
      TrainingGroups(plan.concepts, Concat(plan.seen.do_synonyms, plan.seen.hpo_lay));
  result.training_data_digest = TrainingDataDigest(groups);
  if (options.log) {
    const auto multi =
        std::count_if(groups.begin(), groups.end(), [](const auto& g) { return g.size() >= 2; });
    options.log(absl::StrFormat("training: %zu concepts (%lld with >= 2 names), digest %s",
                                groups.size(), static_cast<long long>(multi),
                                result.training_data_digest));
  }
  IBGR_ASSIGN_OR_RETURN(NameEncoderTrainResult trained, TrainNameEncoder(groups, model));
  result.training_seconds = trained.seconds;
  result.weights = std::move(trained.weights);

  IBGR_ASSIGN_OR_RETURN(auto encoder,
                        TrainedNameEncoder::FromWeights(result.weights, "trained-name-candidate"));
  IBGR_ASSIGN_OR_RETURN(nlohmann::json metrics, Evaluate(plan, *encoder, options.evaluate_test));
  metrics["training"] = {
      {"seconds", trained.seconds},
      {"mining_seconds", trained.mining_seconds},
      {"epochs", trained.epochs_run},
      {"steps", trained.steps},
      {"final_loss", trained.epoch_loss.empty() ? 0.0 : trained.epoch_loss.back()},
      {"epoch_loss", trained.epoch_loss},
      {"concepts", groups.size()}};
  result.metrics_json = metrics.dump();
  result.metrics_table = MetricsTable(metrics);

  if (!options.base_path.empty()) {
    TrainedEncoderArtifactInfo info;
    info.training_data_digest = result.training_data_digest;
    info.training_config_json = ConfigJson(options).dump();
    info.metrics_json = result.metrics_json;
    info.training_seconds = result.training_seconds;
    info.lexicon_source = plan.lexicon.source;
    IBGR_ASSIGN_OR_RETURN(result.encoder_dir,
                          PublishTrainedEncoder(options.base_path, result.weights, info));
    IBGR_ASSIGN_OR_RETURN(std::string bytes, SerializeTrainedEncoderWeights(result.weights));
    result.encoder_id = TrainedEncoderId(result.weights.dim, common::Sha256Hex(bytes));
  }
  result.total_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

absl::StatusOr<std::string> EvaluateEncoderArtifact(const EncoderEvalOptions& options) {
  const std::string data_dir =
      options.data_dir.empty() ? options.sources.data_dir : options.data_dir;
  if (data_dir.empty()) return absl::InvalidArgumentError("data_dir: required");
  if (options.encoder_dir.empty()) return absl::InvalidArgumentError("encoder_dir: required");
  const EncoderSplitOptions& split = options.split;
  IBGR_RETURN_IF_ERROR(ValidateEncoderSplitOptions(split));
  IBGR_ASSIGN_OR_RETURN(auto encoder, TrainedNameEncoder::Open(options.encoder_dir));
  IBGR_ASSIGN_OR_RETURN(EvalPlan plan,
                        PlanEvaluation(options.sources, data_dir, split, options.log));
  IBGR_ASSIGN_OR_RETURN(nlohmann::json metrics, Evaluate(plan, *encoder, /*with_test=*/true));
  return absl::StrCat("encoder ", encoder->id(), "\n", MetricsTable(metrics));
}

// The split settings an encoder was trained with, from its manifest (defaults when absent).
absl::Status ReadTrainingSplit(const std::string& encoder_dir, EncoderSplitOptions* split) {
  IBGR_ASSIGN_OR_RETURN(std::string json,
                        common::ReadFileToString(absl::StrCat(encoder_dir, "/manifest.json")));
  ::ibgraphrag::artifacts::v1::EncoderManifest manifest;
  IBGR_RETURN_IF_ERROR(common::JsonToProto(json, "encoder manifest.json", &manifest));
  if (manifest.training_config_json().empty()) return absl::OkStatus();
  const nlohmann::json config =
      nlohmann::json::parse(manifest.training_config_json(), nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) {
    return absl::DataLossError("encoder manifest.json: training_config_json is not a JSON object");
  }
  split->seed = config.value("seed", split->seed);
  split->validation_fraction = config.value("validation_fraction", split->validation_fraction);
  split->test_fraction = config.value("test_fraction", split->test_fraction);
  split->seen_holdout_fraction =
      config.value("seen_holdout_fraction", split->seen_holdout_fraction);
  return absl::OkStatus();
}

}  // namespace ibgraphrag::alignment::training
