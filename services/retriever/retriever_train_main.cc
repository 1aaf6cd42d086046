// retriever_train: builds the retriever artifacts for a KG snapshot, builds training questions
// (templates from the KG and real QA questions aligned with the base's alignment bundle; split
// into train / validation / test), trains the triple scorer and publishes
// `<base>/retriever/<version>/`.
//
//   retriever_train --base=artifacts [--epochs=6] [--batch_size=16] [--lr=1e-3] [--seed=0]
//                   [--lambda1=1] [--lambda2=0.5] [--beta=2] [--device=auto] [--torch_threads=2]
//                   [--eval_baselines] [--metrics_json=out.json]
//                   [--scorer=residual|plain | --variants=residual,plain]
//                   [--encoder=hash-ngram|trained|<encoder id>]
//                   [--templates] [--qa_dir=DIR] [--qa_sets=a,b|none] [--split_seed=0]
//                   [--evaluate=N [--eval_split=validation|test|train|all]] [--data_only]
//
// --variants trains one scorer per variant on the same questions and embeddings into one version
// (the first is the default the server uses; model.bin, then model_<variant>.bin).
//
// The KG is the newest snapshot under --base (`ibgr kg build --base=...` makes one). With
// --eval_baselines the validation split is also scored with the COSINE and SHORTEST_PATH modes
// through the same Retrieve path, and everything is printed as one JSON object (and written to
// --metrics_json).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/qa/qa_split.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/evaluation.h"
#include "services/retriever/model_bundle.h"
#include "services/retriever/qa_training_data.h"
#include "services/retriever/retriever.h"
#include "services/retriever/torch_scorer.h"
#include "services/retriever/trainer.h"

ABSL_FLAG(std::string, alignment_config, "",
          "the alignment service's AlignmentConfig text proto (its --config): real QA questions "
          "are aligned with its MSCA defaults, LLM and LLM step, so training sees the topics "
          "serving gives; empty = the defaults and no LLM, as a service without --config");
ABSL_FLAG(std::string, base, "artifacts", "artifact base holding kg/<version>/");
ABSL_FLAG(int, epochs, 75,
          "most epochs of BCE + IB after the warm-up (the paper's 75 for small sets; "
          "--patience stops earlier)");
ABSL_FLAG(int, batch_size, 16, "questions per optimiser step");
ABSL_FLAG(double, lr, 1e-3, "Adam learning rate");
ABSL_FLAG(uint64_t, seed, 0, "random seed");
ABSL_FLAG(double, lambda1, 1.0, "BCE weight");
ABSL_FLAG(double, lambda2, 5.0,
          "information-bottleneck weight (0 = the BCE-only ablation; 5 chosen on the validation "
          "split, docs/retriever.md)");
ABSL_FLAG(double, beta, 5.0,
          "IB beta (> 1; 5 chosen on the validation split in issue 11, docs/retriever.md)");
ABSL_FLAG(int, hidden, 256, "scorer hidden units");
ABSL_FLAG(int, max_hops, 2, "subgraph hops for training and evaluation");
ABSL_FLAG(int, max_candidates, 0,
          "subgraph triple cap per question; 0 = 2,000 (kDefaultTrainedCandidateCap) in training, "
          "where it is recorded in the manifest and becomes the served cap, and the evaluated "
          "version's recorded cap with --evaluate");
ABSL_FLAG(int, negatives, 256, "negatives sampled per question and step");
ABSL_FLAG(int, ib_negatives, 64,
          "negatives per question in the fixed IB pool (part of --negatives; the IB softmax runs "
          "over positives + these)");
ABSL_FLAG(std::string, ib_pool, "top_k",
          "what the IB terms run over: top_k = the retriever's own current top --ib_top_k per "
          "question, recomputed every epoch, p(x|q) = its detached distribution over them; "
          "fixed = positives + --ib_negatives drawn once, p(x|q) uniform over the positives");
ABSL_FLAG(int, ib_top_k, 100, "--ib_pool=top_k: candidates per question in the IB pool");
ABSL_FLAG(std::string, ib_y, "answer+explanation",
          "the IB target text y: answer, answer+explanation (the set's expert explanation where "
          "it has one: MedMCQA exp), answer+explanation+question (ablation)");
ABSL_FLAG(int, bce_warmup_epochs, 30,
          "up to N BCE-only epochs before the --epochs of BCE + IB (which start from the best "
          "warm-up checkpoint); 0 = the joint objective from the first epoch");
ABSL_FLAG(int, patience, 3,
          "stop a phase after N epochs without a new best validation key (0 = run every epoch)");
ABSL_FLAG(std::string, select_on, "real",
          "validation questions the epoch is chosen on: all, or real (the QA sets' questions, "
          "not the templated ones)");
ABSL_FLAG(int, decoder_hidden, 256, "hidden units of the IB variational decoder g_psi");
ABSL_FLAG(bool, decoder_condition_on_y, true,
          "the IB decoder also sees the answer's embedding: r_psi(x | x~, q, y) (Eq. 10's "
          "I(X~; X | Y, Q)) instead of r_psi(x | x~, q)");
ABSL_FLAG(int, diagnostics_every, 20,
          "per-term gradient norms on the scorer every N optimiser steps (0 = never)");
ABSL_FLAG(double, entity_text_dropout, 0.0,
          "probability of zeroing head/tail text features of a training row (0 = off)");
ABSL_FLAG(int, max_scored, -1,
          "candidates per question kept for the scorer, the best by the shortest-path prior "
          "(0 = all; -1 = 500 in training, recorded in the manifest; with --evaluate, the "
          "evaluated model's recorded value, as the server does)");
ABSL_FLAG(bool, ontology_expansion, true,
          "expand topic entities along DO / HPO is_a when building candidate sets; recorded in "
          "the manifest (training.ontology_expansion), which the servers follow");
ABSL_FLAG(std::string, scorer, "residual",
          "scorer variant: residual (shortest-path prior logit + learned MLP correction) or plain "
          "(the paper's MLP from a random start); with --evaluate, the variant evaluated");
ABSL_FLAG(std::string, variants, "",
          "comma list of scorer variants trained into one version, the first the default "
          "(e.g. residual,plain); empty = --scorer alone");
ABSL_FLAG(int64_t, question_seed, -1,
          "seed of the question generation; -1 = --seed + 1 (set it to vary --seed on the same "
          "questions)");
ABSL_FLAG(int, max_per_template, 1000, "questions generated per multiple-choice template");
ABSL_FLAG(int, max_per_open_template, 300,
          "open questions generated per open template (answers not among the topics: \"What "
          "drugs treat X?\"; the hubs with most answers first for a tenth of it); 0 = all");
ABSL_FLAG(int, max_dev_questions, 0,
          "validation questions evaluated per epoch, and questions --evaluate scores (0 = all)");
ABSL_FLAG(bool, templates, true, "train and evaluate on templated questions too");
ABSL_FLAG(std::string, qa_dir, "",
          "folder of the real QA sets (default $IBGR_DATA_DIR/qa, else ../shared/data/qa; when "
          "left default and missing, only templates are used)");
ABSL_FLAG(std::string, qa_sets, "",
          "comma list of QA sets (file stems, e.g. medmcqa-dev,mmlu-anatomy-test) aligned into "
          "examples with the base's alignment bundle; empty = every set in --qa_dir (yes/no sets "
          "are skipped and counted); none = no real questions");
ABSL_FLAG(uint64_t, split_seed, 0,
          "seed of the train / validation / test split (questions by text, templates by "
          "disease); `ibgr eval --qa_split` uses the same rule and default");
ABSL_FLAG(std::string, device, "auto", "auto, cpu or cuda:N");
ABSL_FLAG(int, torch_threads, 2, "LibTorch intra-op threads");
ABSL_FLAG(bool, eval_baselines, false, "also evaluate COSINE and SHORTEST_PATH on validation");
ABSL_FLAG(std::string, metrics_json, "", "write the final metrics here as JSON");
ABSL_FLAG(int64_t, evaluate, 0,
          "evaluate this existing model version (IBRP, COSINE, SHORTEST_PATH) instead of training");
ABSL_FLAG(bool, data_only, false,
          "build the training questions, print their counts per source and part (and write them "
          "to --metrics_json), and exit: no embeddings, no training, nothing written under --base");
ABSL_FLAG(std::string, dump_questions, "",
          "write every training question as JSON lines here (part, source, text, options, answer "
          "text, entity ids, evidence triples) to inspect the data");
ABSL_FLAG(bool, eval_judges, true,
          "--evaluate: also the judges that are not the supervision labels (question-only "
          "retrieval, explanation grounding, evidence tokens; evaluation.h)");
ABSL_FLAG(std::string, eval_modes, "ibrp,cosine,shortest_path",
          "--evaluate: the scoring modes scored, comma-separated (the baselines need no model, so "
          "one run of them serves every version of the same questions)");
ABSL_FLAG(std::string, eval_split, "validation",
          "split --evaluate scores: validation, test (the reported one), train or all");
ABSL_FLAG(std::string, encoder, "hash-ngram",
          "text encoder of the embeddings and questions, spelled as for `ibgr align build "
          "--encoder`: hash-ngram, trained (the newest <base>/encoder/<version>/) or an encoder id "
          "(hash-ngram-v1-d<dim>, trained-name-v1-...)");

namespace {

using namespace ibgraphrag::retriever;  // NOLINT: tool main

Retriever::Options RetrieverOptionsFromFlags() {
  Retriever::Options o;
  o.max_scored_candidates = absl::GetFlag(FLAGS_max_scored);
  o.ontology.enabled = absl::GetFlag(FLAGS_ontology_expansion);
  return o;
}

// --variants (or --scorer alone), the first the version's default.
absl::StatusOr<std::vector<ScorerVariant>> VariantsFromFlags() {
  std::vector<ScorerVariant> variants;
  const std::string list = absl::GetFlag(FLAGS_variants);
  if (list.empty()) {
    IBGR_ASSIGN_OR_RETURN(ScorerVariant v,
                          ParseScorerVariant(absl::GetFlag(FLAGS_scorer), "--scorer"));
    return std::vector<ScorerVariant>{v};
  }
  for (absl::string_view name : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    IBGR_ASSIGN_OR_RETURN(ScorerVariant v, ParseScorerVariant(name, "--variants"));
    if (std::find(variants.begin(), variants.end(), v) != variants.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--variants: ", name, " given twice"));
    }
    variants.push_back(v);
  }
  if (variants.empty()) return absl::InvalidArgumentError("--variants: no variant named");
  return variants;
}

QuestionOptions QuestionOptionsFromFlags() {
  QuestionOptions qo;
  qo.max_per_template = absl::GetFlag(FLAGS_max_per_template);
  qo.max_per_open_template = absl::GetFlag(FLAGS_max_per_open_template);
  qo.max_hops = absl::GetFlag(FLAGS_max_hops);
  const int64_t question_seed = absl::GetFlag(FLAGS_question_seed);
  qo.seed =
      question_seed >= 0 ? static_cast<uint64_t>(question_seed) : absl::GetFlag(FLAGS_seed) + 1;
  qo.split_seed = absl::GetFlag(FLAGS_split_seed);
  return qo;
}

// The QA folder: --qa_dir, else $IBGR_DATA_DIR/qa, else ../shared/data/qa (the suite's data-dir
// convention); `given` tells whether the user named one (then it must exist).
std::string QaDirFromFlags(bool* given) {
  *given = !absl::GetFlag(FLAGS_qa_dir).empty();
  if (*given) return absl::GetFlag(FLAGS_qa_dir);
  const char* env = std::getenv("IBGR_DATA_DIR");
  return absl::StrCat(env != nullptr && *env != '\0' ? env : "../shared/data", "/qa");
}

// Templates and/or real QA examples as the flags say. Real questions need the QA folder and an
// alignment bundle under --base; when neither flag asked for them and one is missing, a note is
// printed and only templates are used (a KG imported without the QA sets still trains).
absl::StatusOr<ibgraphrag::retriever::TrainingDataOptions> TrainingDataOptionsFromFlags(
    const std::string& base) {
  TrainingDataOptions o;
  o.templates = absl::GetFlag(FLAGS_templates);
  o.template_options = QuestionOptionsFromFlags();
  o.alignment_base = base;
  if (const std::string config = absl::GetFlag(FLAGS_alignment_config); !config.empty()) {
    IBGR_ASSIGN_OR_RETURN(o.alignment_setup, ibgraphrag::alignment::LoadAlignmentSetup(config));
  }
  const std::string sets = absl::GetFlag(FLAGS_qa_sets);
  bool dir_given = false;
  o.qa_options.qa_dir = QaDirFromFlags(&dir_given);
  o.qa = sets != "none";
  if (o.qa && sets.empty() && !dir_given) {
    std::error_code ec;
    const bool have_qa = std::filesystem::is_directory(o.qa_options.qa_dir, ec);
    const bool have_bundle = std::filesystem::is_directory(base + "/alignment", ec);
    if (!have_qa || !have_bundle) {
      std::printf("note: no real QA questions (%s)\n",
                  have_qa ? "no alignment bundle under --base" : "no QA folder; set --qa_dir");
      o.qa = false;
    }
  }
  if (o.qa && !sets.empty()) o.qa_options.sets = absl::StrSplit(sets, ',', absl::SkipEmpty());
  o.log = [](const std::string& line) { std::printf("%s\n", line.c_str()); };
  return o;
}

// What aligned the real QA questions, for the manifest: "none", or the LLM's model and its step
// ("gpt-x before_filter"), so a served model can be matched to the alignment serving it.
std::string AlignmentLlmLabel(const ibgraphrag::retriever::TrainingDataOptions& o) {
  if (!o.qa || !o.alignment_setup.has_value()) return "none";
  return ibgraphrag::alignment::AlignmentLlmLabel(o.alignment_setup->llm,
                                                  o.alignment_setup->aligner.defaults);
}

// --dump_questions: one JSON object per question, train then validation then test.
absl::Status DumpQuestions(const QuestionSet& data, const std::string& path) {
  std::ofstream out(path);
  for (ibgraphrag::eval::QaSplit part :
       {ibgraphrag::eval::QaSplit::kTrain, ibgraphrag::eval::QaSplit::kValidation,
        ibgraphrag::eval::QaSplit::kTest}) {
    for (const GeneratedQuestion& q : data.Part(part)) {
      nlohmann::json j = {{"part", ibgraphrag::eval::QaSplitName(part)},
                          {"source", q.source},
                          {"text", q.text},
                          {"options", q.options},
                          {"answer_text", q.answer_text},
                          {"question_entities", q.question_entities},
                          {"topics", q.topics},
                          {"answers", q.answers},
                          {"evidence", q.evidence}};
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
  }
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("--dump_questions: cannot write ", path));
  return absl::OkStatus();
}

// --evaluate=N: scores an existing version on the regenerated split with every mode.
absl::Status EvaluateVersion(const std::string& base,
                             std::shared_ptr<const ibgraphrag::kgstore::KgStore> store,
                             const QuestionSet& data, int64_t version) {
  RetrieverModel::Options mo;
  mo.device = "cpu";
  IBGR_ASSIGN_OR_RETURN(mo.default_variant,
                        ParseScorerVariant(absl::GetFlag(FLAGS_scorer), "--scorer"));
  IBGR_ASSIGN_OR_RETURN(
      auto model, RetrieverModel::Load(RetrieverVersionDir(base, version), mo, TextEmbedder()));
  if (model->manifest().training_data_hash != data.hash) {
    std::printf(
        "warning: questions differ from the ones version %lld was trained on (use the "
        "same "
        "--seed/--question_seed/--max_per_template/--max_per_open_template/--max_hops/--split_seed/"
        "--templates/"
        "--qa_sets and the same alignment bundle)\n",
        static_cast<long long>(version));
  }
  Retriever retriever(RetrieverOptionsFromFlags(), std::make_shared<InProcessSubgraphSource>(store),
                      model);
  IBGR_ASSIGN_OR_RETURN(
      const ibgraphrag::eval::QaSplit split,
      ibgraphrag::eval::ParseQaSplit(absl::GetFlag(FLAGS_eval_split), "--eval_split"));
  const std::vector<GeneratedQuestion> questions = data.Part(split);
  const std::string prefix = absl::StrCat(ibgraphrag::eval::QaSplitName(split), "_");
  nlohmann::json report;
  const std::vector<std::string> modes =
      absl::StrSplit(absl::GetFlag(FLAGS_eval_modes), ',', absl::SkipEmpty());
  if (modes.empty()) return absl::InvalidArgumentError("--eval_modes: no mode named");
  for (const std::string& wanted : modes) {
    if (wanted != "ibrp" && wanted != "cosine" && wanted != "shortest_path") {
      return absl::InvalidArgumentError(
          absl::StrCat("--eval_modes: \"", wanted, "\" is not ibrp, cosine or shortest_path"));
    }
  }
  for (auto [name, mode] :
       {std::pair{"ibrp", ScoringMode::kIbrp}, std::pair{"cosine", ScoringMode::kCosine},
        std::pair{"shortest_path", ScoringMode::kShortestPath}}) {
    if (std::find(modes.begin(), modes.end(), name) == modes.end()) continue;
    EvalOptions eo;
    eo.mode = mode;
    eo.max_hops = absl::GetFlag(FLAGS_max_hops);
    // 0 (the default) = the cap the version was trained with, as served.
    eo.max_candidates = absl::GetFlag(FLAGS_max_candidates);
    eo.max_questions = absl::GetFlag(FLAGS_max_dev_questions);
    eo.judges = absl::GetFlag(FLAGS_eval_judges);
    IBGR_ASSIGN_OR_RETURN(EvalMetrics m, EvaluateRetriever(retriever, questions, eo));
    report[name] = m.ToMap(prefix);
  }
  report["version"] = version;
  std::printf("%s\n", report.dump(2).c_str());
  if (!absl::GetFlag(FLAGS_metrics_json).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_metrics_json)) << report.dump(2) << "\n";
  }
  return absl::OkStatus();
}

// The IB pool, target text and schedule flags, INVALID_ARGUMENT naming a flag with a bad value.
absl::Status IbFlagsInto(TrainerOptions* to) {
  const std::string pool = absl::GetFlag(FLAGS_ib_pool);
  if (pool == "top_k") {
    to->ib_pool = TrainerOptions::IbPool::kRetrievalTopK;
  } else if (pool == "fixed") {
    to->ib_pool = TrainerOptions::IbPool::kFixedPositives;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--ib_pool: \"", pool, "\" is not top_k or fixed"));
  }
  const std::string y = absl::GetFlag(FLAGS_ib_y);
  if (y == "answer") {
    to->ib_target_text = TrainerOptions::IbTargetText::kAnswer;
  } else if (y == "answer+explanation") {
    to->ib_target_text = TrainerOptions::IbTargetText::kAnswerExplanation;
  } else if (y == "answer+explanation+question") {
    to->ib_target_text = TrainerOptions::IbTargetText::kAnswerExplanationQuestion;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--ib_y: \"", y, "\" is not answer, answer+explanation or answer+explanation+question"));
  }
  const std::string select_on = absl::GetFlag(FLAGS_select_on);
  if (select_on != "all" && select_on != "real") {
    return absl::InvalidArgumentError(
        absl::StrCat("--select_on: \"", select_on, "\" is not all or real"));
  }
  to->select_on_real_questions = select_on == "real";
  to->ib_top_k = absl::GetFlag(FLAGS_ib_top_k);
  to->bce_warmup_epochs = absl::GetFlag(FLAGS_bce_warmup_epochs);
  to->patience = absl::GetFlag(FLAGS_patience);
  return absl::OkStatus();
}

// Trains one scorer per variant on the same data and embeddings (the first is the default).
absl::StatusOr<std::vector<TrainedScorer>> TrainVariants(
    std::shared_ptr<const ibgraphrag::kgstore::KgStore> store, const QuestionSet& data,
    std::shared_ptr<const EmbeddingTable> entities, std::shared_ptr<const EmbeddingTable> relations,
    const TextEmbedder& embedder, TrainerOptions options,
    const std::vector<ScorerVariant>& variants) {
  std::vector<TrainedScorer> scorers;
  for (ScorerVariant variant : variants) {
    std::printf("training the %s scorer\n", ScorerVariantName(variant));
    options.residual_prior = variant == ScorerVariant::kResidual;
    IBGR_ASSIGN_OR_RETURN(TrainResult trained,
                          TrainRetriever(store, data, entities, relations, embedder, options));
    TrainedScorer scorer;
    scorer.variant = variant;
    scorer.params = std::move(trained.best_params);
    scorer.training = {{"residual_prior", options.residual_prior ? "true" : "false"},
                       {"best_epoch", absl::StrCat(trained.best_epoch)},
                       {"warmup_epochs_run", absl::StrCat(trained.warmup_epochs_run)}};
    scorer.metrics = std::move(trained.metrics);
    scorers.push_back(std::move(scorer));
  }
  return scorers;
}

absl::Status Run(int argc, char** argv) {
  // Flags first: a typo must not cost the question build.
  if (absl::GetFlag(FLAGS_max_candidates) < 0) {
    return absl::InvalidArgumentError("--max_candidates: must be >= 0 (0 = the default cap)");
  }
  IBGR_ASSIGN_OR_RETURN(const std::vector<ScorerVariant> variants, VariantsFromFlags());
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
  IBGR_ASSIGN_OR_RETURN(TrainingDataOptions data_options, TrainingDataOptionsFromFlags(base));
  IBGR_ASSIGN_OR_RETURN(QuestionSet data, BuildTrainingData(*store, data_options));
  std::printf("questions: %zu train, %zu validation, %zu test, hash %s, %.1fs\n", data.train.size(),
              data.validation.size(), data.test.size(), data.hash.substr(0, 16).c_str(),
              absl::ToDoubleSeconds(absl::Now() - t0));

  if (const std::string dump = absl::GetFlag(FLAGS_dump_questions); !dump.empty()) {
    IBGR_RETURN_IF_ERROR(DumpQuestions(data, dump));
  }
  if (absl::GetFlag(FLAGS_data_only)) {
    nlohmann::json counts = data.CountsMap();
    counts["hash"] = data.hash;
    std::printf("%s\n", counts.dump(2).c_str());
    if (!absl::GetFlag(FLAGS_metrics_json).empty()) {
      std::ofstream(absl::GetFlag(FLAGS_metrics_json)) << counts.dump(2) << "\n";
    }
    return absl::OkStatus();
  }
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
                        EmbedderForSpelling(base, absl::GetFlag(FLAGS_encoder), "--encoder"));
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
  to.max_candidates = absl::GetFlag(FLAGS_max_candidates) > 0 ? absl::GetFlag(FLAGS_max_candidates)
                                                              : kDefaultTrainedCandidateCap;
  to.negatives_per_question = absl::GetFlag(FLAGS_negatives);
  to.entity_text_dropout = absl::GetFlag(FLAGS_entity_text_dropout);
  to.ib_negatives = absl::GetFlag(FLAGS_ib_negatives);
  to.decoder_hidden = absl::GetFlag(FLAGS_decoder_hidden);
  to.decoder_condition_on_y = absl::GetFlag(FLAGS_decoder_condition_on_y);
  IBGR_RETURN_IF_ERROR(IbFlagsInto(&to));
  to.diagnostics_every = absl::GetFlag(FLAGS_diagnostics_every);
  to.max_dev_questions = absl::GetFlag(FLAGS_max_dev_questions);
  to.device = absl::GetFlag(FLAGS_device);
  to.max_scored = absl::GetFlag(FLAGS_max_scored) < 0 ? kDefaultMaxScoredCandidates
                                                      : absl::GetFlag(FLAGS_max_scored);
  to.ontology_expansion = absl::GetFlag(FLAGS_ontology_expansion);
  to.log = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  IBGR_ASSIGN_OR_RETURN(std::vector<TrainedScorer> scorers,
                        TrainVariants(store, data, entities, relations, embedder, to, variants));
  const TrainedScorer& trained = scorers.front();

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
                       {"ib_negatives", absl::StrCat(to.ib_negatives)},
                       {"decoder_hidden", absl::StrCat(to.decoder_hidden)},
                       {"decoder_condition_on_y", to.decoder_condition_on_y ? "true" : "false"},
                       {"ib_pool", absl::GetFlag(FLAGS_ib_pool)},
                       {"ib_top_k", absl::StrCat(to.ib_top_k)},
                       {"ib_y", absl::GetFlag(FLAGS_ib_y)},
                       {"bce_warmup_epochs", absl::StrCat(to.bce_warmup_epochs)},
                       {"patience", absl::StrCat(to.patience)},
                       {"select_on", absl::GetFlag(FLAGS_select_on)},
                       {"entity_text_dropout", absl::StrCat(to.entity_text_dropout)},
                       {"max_scored", absl::StrCat(to.max_scored)},
                       {"ontology_expansion", to.ontology_expansion ? "true" : "false"},
                       {"train_questions", absl::StrCat(data.train.size())},
                       {"validation_questions", absl::StrCat(data.validation.size())},
                       {"test_questions", absl::StrCat(data.test.size())},
                       {"split_seed", absl::StrCat(absl::GetFlag(FLAGS_split_seed))},
                       {"templates", absl::GetFlag(FLAGS_templates) ? "true" : "false"},
                       {"qa_sets", absl::GetFlag(FLAGS_qa_sets)},
                       {"alignment_config", absl::GetFlag(FLAGS_alignment_config)},
                       {"alignment_llm", AlignmentLlmLabel(data_options)},
                       {"device", to.device}};
  manifest.max_candidates = to.max_candidates;
  manifest.metrics = trained.metrics;
  // Questions per source and part, and the skip counts, beside the metrics they explain.
  for (const auto& [key, n] : data.CountsMap()) manifest.metrics[key] = n;
  nlohmann::json report;
  report["ibrp"] = trained.metrics;
  report["scorer"] = ScorerVariantName(trained.variant);
  for (const TrainedScorer& t : scorers) {
    report[absl::StrCat("ibrp_", ScorerVariantName(t.variant))] = t.metrics;
  }
  if (absl::GetFlag(FLAGS_eval_baselines)) {
    LoadedRetrieverVersion v;
    v.manifest = manifest;
    v.manifest.scorer = trained.params.config;
    v.params = trained.params;
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
      IBGR_ASSIGN_OR_RETURN(EvalMetrics m, EvaluateRetriever(retriever, data.validation, eo));
      report[name] = m.ToMap("validation_");
    }
  }
  IBGR_RETURN_IF_ERROR(PublishRetrieverVersion(&staging_dir, scorers, manifest));
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
