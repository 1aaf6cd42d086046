// alignment_eval: quality figures of the alignment stack on the real data.
//
//   alignment_eval --data_dir=../shared/data [--work_dir=/tmp/ibgr-align-eval] [--samples=2000]
//                  [--seed=42] [--qa_per_set=300] [--json_out=eval.json]
//                  [--encoder_dir=artifacts/encoder/1 | --encoder_id=ID --base=artifacts]
//
// 1. Held-out synonym linking: sample Disease Ontology terms with >= 2 names (and, separately,
//    HPO terms with a lay synonym), remove one synonym of each from the index, link the removed
//    string with FAISS alone (no dictionary) and report acc@1 / acc@5.
// 2. Builds the alignment bundle of the embedded KG (timed; or loads --bundle_dir) and runs Align
//    over the questions of every set in <data_dir>/qa: share of questions with >= 1 kept entity
//    and mean kept entities per question at the defaults (calibrated scores, MscaOptions' lambda
//    and tau) and over a lambda x tau grid; share of dictionary-matched and of other candidates
//    kept; the false-keep rate of 5 random KG entities per question scored like candidates; the
//    paper's lambda 0.4 / tau 0.6 on raw cosines; optionally a sample of kept entities to judge by
//    hand
//    (--print_kept) and the entities kept for a few short questions.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/alignment/aligner.h"
#include "services/alignment/bundle.h"
#include "services/alignment/calibrated_scores.h"
#include "services/alignment/candidate_index.h"
#include "services/alignment/encoder_training/heldout_linking.h"
#include "services/alignment/encoder_training/training_concepts.h"
#include "services/alignment/eval/qa_sets.h"
#include "services/alignment/lexicon.h"
#include "services/alignment/text_encoder.h"
#include "services/alignment/text_normalize.h"
#include "services/alignment/trained_encoder.h"

ABSL_FLAG(std::string, data_dir, "", "shared data directory (default $IBGR_DATA_DIR)");
ABSL_FLAG(std::string, work_dir, "/tmp/ibgr-align-eval", "where the eval bundle is written");
ABSL_FLAG(int, samples, 2000, "held-out terms per ontology");
ABSL_FLAG(int, seed, 42, "sampling seed");
ABSL_FLAG(int, qa_per_set, 300, "questions per QA set (first N; 0 = all)");
ABSL_FLAG(int, dim, 256, "hash encoder dimension");
ABSL_FLAG(std::string, encoder_dir, "",
          "evaluate this trained encoder version directory (<base>/encoder/<version>/) instead of "
          "the hash encoder; its held-out figures are printed next to the hash encoder's");
ABSL_FLAG(std::string, encoder_id, "",
          "evaluate the encoder with this id (hash-ngram-v1-d<dim> or a trained encoder's id, "
          "found under --base)");
ABSL_FLAG(std::string, base, "artifacts", "artifact base holding encoder/<version>/");
ABSL_FLAG(bool, heldout_only, false, "only the held-out synonym figures (no bundle, no QA)");
ABSL_FLAG(std::string, json_out, "", "also write the figures as JSON here");
ABSL_FLAG(bool, skip_heldout, false, "skip the held-out synonym figures");
ABSL_FLAG(std::string, bundle_dir, "",
          "evaluate this existing bundle (built with the same encoder) instead of building one");
ABSL_FLAG(int, print_kept, 0,
          "print this many kept entities (seeded sample over all sets) with their mention, for "
          "checking precision by hand");

namespace ibgraphrag::alignment {
namespace {

using HeldOut = training::HeldOutName;
using training::LinkAccuracy;

// Removes each held-out string from its entry, indexes every remaining name (exact flat index)
// and links the held-out strings (the held-out linking the encoder trainer reports, one set).
absl::StatusOr<LinkAccuracy> HeldOutAccuracy(const Lexicon& lexicon,
                                             const std::vector<HeldOut>& held,
                                             const TextEncoder& encoder) {
  auto accuracy = training::HeldOutAccuracy(lexicon, {held}, encoder);
  if (!accuracy.ok()) return accuracy.status();
  return accuracy->front();
}

std::vector<HeldOut> SampleDiseaseOntology(const Lexicon& lexicon, int samples, std::mt19937& rng) {
  std::vector<uint32_t> eligible;
  for (uint32_t e = 0; e < lexicon.entries.size(); ++e) {
    const LexiconEntry& entry = lexicon.entries[e];
    if (absl::StartsWith(entry.external_id, "DOID:") && !entry.synonyms.empty()) {
      eligible.push_back(e);
    }
  }
  std::shuffle(eligible.begin(), eligible.end(), rng);
  if (static_cast<int>(eligible.size()) > samples) eligible.resize(samples);
  std::vector<HeldOut> out;
  for (uint32_t e : eligible) {
    const auto& syn = lexicon.entries[e].synonyms;
    out.push_back({e, syn[rng() % syn.size()]});
  }
  return out;
}

absl::StatusOr<std::vector<HeldOut>> SampleHpoLay(const Lexicon& lexicon,
                                                  const std::string& data_dir, int samples,
                                                  std::mt19937& rng) {
  // The same reader and HP-id join as the encoder trainer's evaluation.
  IBGR_ASSIGN_OR_RETURN(
      std::vector<training::LaySynonym> lay_rows,
      training::ReadHpoLaySynonyms(absl::StrCat(data_dir, "/vocab/hpo-layperson-synonyms.tsv")));
  const absl::flat_hash_map<std::string, uint32_t> by_hp = training::EntriesByHpId(lexicon);
  std::vector<HeldOut> eligible;
  for (const training::LaySynonym& row : lay_rows) {
    auto it = by_hp.find(row.hp_id);
    if (it == by_hp.end()) continue;
    const auto& syn = lexicon.entries[it->second].synonyms;
    if (std::find(syn.begin(), syn.end(), row.lay) == syn.end()) continue;  // must be indexed
    eligible.push_back({it->second, row.lay});
  }
  std::shuffle(eligible.begin(), eligible.end(), rng);
  // One held-out string per entry, so removals do not interact.
  std::vector<HeldOut> out;
  absl::flat_hash_map<uint32_t, bool> used;
  for (const HeldOut& h : eligible) {
    if (static_cast<int>(out.size()) >= samples) break;
    if (used.emplace(h.entry, true).second) out.push_back(h);
  }
  return out;
}

// The encoder --encoder_dir / --encoder_id name, else `hash`.
absl::StatusOr<std::shared_ptr<const TextEncoder>> EncoderFromFlags(
    std::shared_ptr<const TextEncoder> hash) {
  const std::string dir = absl::GetFlag(FLAGS_encoder_dir);
  const std::string id = absl::GetFlag(FLAGS_encoder_id);
  if (!dir.empty() && !id.empty()) {
    return absl::InvalidArgumentError("--encoder_dir / --encoder_id: give at most one");
  }
  if (!dir.empty()) {
    auto trained = TrainedNameEncoder::Open(dir);
    if (!trained.ok()) return trained.status();
    return std::shared_ptr<const TextEncoder>(std::move(*trained));
  }
  if (!id.empty()) {
    auto opened = OpenEncoderById(absl::GetFlag(FLAGS_base), id);
    if (!opened.ok()) return opened.status();
    return std::shared_ptr<const TextEncoder>(std::move(*opened));
  }
  return hash;
}

// Held-out DO synonym and HPO lay synonym linking with `encoder`, printed and as JSON. The
// samples depend only on --seed and --samples, so two encoders are compared on the same strings.
// A trained encoder is only "held out" on strings it did not train on: its own test-concept
// figures are in its manifest (metrics_json).
absl::StatusOr<nlohmann::json> HeldOutFigures(const Lexicon& lexicon, const std::string& data_dir,
                                              const TextEncoder& encoder) {
  std::mt19937 rng(absl::GetFlag(FLAGS_seed));
  nlohmann::json out;
  const std::vector<HeldOut> doid =
      SampleDiseaseOntology(lexicon, absl::GetFlag(FLAGS_samples), rng);
  auto doid_acc = HeldOutAccuracy(lexicon, doid, encoder);
  if (!doid_acc.ok()) return doid_acc.status();
  std::printf("[%s] held-out DO synonyms: n=%lld acc@1=%.3f acc@5=%.3f\n", encoder.id().c_str(),
              static_cast<long long>(doid_acc->n), doid_acc->acc1, doid_acc->acc5);
  out["heldout_do"] = {{"n", doid_acc->n}, {"acc1", doid_acc->acc1}, {"acc5", doid_acc->acc5}};
  auto lay = SampleHpoLay(lexicon, data_dir, absl::GetFlag(FLAGS_samples), rng);
  if (!lay.ok()) return lay.status();
  auto lay_acc = HeldOutAccuracy(lexicon, *lay, encoder);
  if (!lay_acc.ok()) return lay_acc.status();
  std::printf("[%s] held-out HPO lay synonyms: n=%lld acc@1=%.3f acc@5=%.3f\n",
              encoder.id().c_str(), static_cast<long long>(lay_acc->n), lay_acc->acc1,
              lay_acc->acc5);
  out["heldout_hpo_lay"] = {{"n", lay_acc->n}, {"acc1", lay_acc->acc1}, {"acc5", lay_acc->acc5}};
  return out;
}

struct QuestionScores {
  std::vector<std::pair<float, float>> sr;  // (S, R) of every candidate
};

absl::Status Run() {
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty() && std::getenv("IBGR_DATA_DIR") != nullptr) {
    data_dir = std::getenv("IBGR_DATA_DIR");
  }
  if (data_dir.empty()) data_dir = "../shared/data";
  nlohmann::json report;
  absl::Time t = absl::Now();
  auto lexicon = LexiconFromDataDir(data_dir);
  if (!lexicon.ok()) return lexicon.status();
  report["kg_build_seconds"] = absl::ToDoubleSeconds(absl::Now() - t);
  report["entries"] = lexicon->entries.size();
  HashNgramEncoderOptions hash;
  hash.dim = absl::GetFlag(FLAGS_dim);
  auto hash_encoder = HashNgramEncoder::Create(hash);
  if (!hash_encoder.ok()) return hash_encoder.status();
  std::shared_ptr<const TextEncoder> baseline = std::move(*hash_encoder);
  auto encoder_or = EncoderFromFlags(baseline);
  if (!encoder_or.ok()) return encoder_or.status();
  std::shared_ptr<const TextEncoder> encoder = *std::move(encoder_or);
  report["encoder_id"] = encoder->id();
  std::printf("lexicon: %zu entries from %s (%.1f s)\n", lexicon->entries.size(), data_dir.c_str(),
              report["kg_build_seconds"].get<double>());

  if (!absl::GetFlag(FLAGS_skip_heldout)) {
    auto figures = HeldOutFigures(*lexicon, data_dir, *encoder);
    if (!figures.ok()) return figures.status();
    report.update(*figures);
    if (encoder != baseline) {  // the hash encoder on the same samples, for comparison
      auto hash_figures = HeldOutFigures(*lexicon, data_dir, *baseline);
      if (!hash_figures.ok()) return hash_figures.status();
      report["baseline"] = *hash_figures;
      report["baseline"]["encoder_id"] = baseline->id();
    }
  }

  if (absl::GetFlag(FLAGS_heldout_only)) {
    if (!absl::GetFlag(FLAGS_json_out).empty()) {
      std::ofstream(absl::GetFlag(FLAGS_json_out)) << report.dump(2) << "\n";
    }
    return absl::OkStatus();
  }
  // Bundle of the whole embedded KG (or the one given).
  std::string bundle_dir = absl::GetFlag(FLAGS_bundle_dir);
  if (bundle_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(absl::GetFlag(FLAGS_work_dir), ec);
    BundleBuildOptions build;
    build.base_path = absl::GetFlag(FLAGS_work_dir);
    build.created_by = "alignment_eval";
    t = absl::Now();
    auto built = BuildAlignmentBundle(*lexicon, *encoder, build);
    if (!built.ok()) return built.status();
    const double build_seconds = absl::ToDoubleSeconds(absl::Now() - t);
    std::printf("bundle: %lld rows (%s), build %.1f s\n",
                static_cast<long long>(built->manifest.index_rows),
                built->manifest.index_kind.c_str(), build_seconds);
    report["bundle"] = {{"index_rows", built->manifest.index_rows},
                        {"index_kind", built->manifest.index_kind},
                        {"build_seconds", build_seconds}};
    bundle_dir = built->dir;
  }
  t = absl::Now();
  auto bundle = LoadAlignmentBundle(bundle_dir);
  if (!bundle.ok()) return bundle.status();
  const double load_seconds = absl::ToDoubleSeconds(absl::Now() - t);
  std::printf("bundle %s loaded in %.1f s\n", bundle_dir.c_str(), load_seconds);
  report["bundle_load_seconds"] = load_seconds;
  const ScoreCalibration& cal = (*bundle)->manifest.calibration;
  report["calibration"] = {{"method", cal.method},
                           {"reference_entries", cal.reference_entries},
                           {"relatedness_null_mean", cal.relatedness_null_mean},
                           {"relatedness_null_sd", cal.relatedness_null_sd},
                           {"question_full_z", cal.question_full_z},
                           {"relatedness_full_z", cal.relatedness_full_z},
                           {"dictionary_evidence", cal.dictionary_evidence}};
  auto aligner = Aligner::Create(*bundle, encoder, nullptr);
  if (!aligner.ok()) return aligner.status();
  // One request at a time with a handful of queries each: OpenMP teams only add spin-waiting
  // (as in the server, which sets the same).
  omp_set_num_threads(1);

  auto sets = eval::ReadQuestionSets(data_dir);
  if (!sets.ok()) return sets.status();
  const std::vector<float> lambdas = {0.0f, 0.2f, 0.4f, 0.6f};
  const float kDefaultLambda = MscaOptions().lambda;
  const float kDefaultTau = MscaOptions().tau;
  const std::vector<float> taus = {0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
  MscaOptions options;
  options.tau = 0.0f;  // keep everything; thresholds are applied below per grid point
  options.llm_choice_below = 0;
  MscaOptions raw_options = options;
  raw_options.calibrated = false;
  const AlignmentBundle& b = **bundle;
  const int dim = b.manifest.dim;
  std::mt19937 pick(absl::GetFlag(FLAGS_seed));
  struct KeptSample {
    std::string set, question, mention, entity, id;
    bool dictionary;
    float consistency;
  };
  std::vector<KeptSample> kept_samples;
  report["qa"] = nlohmann::json::array();
  std::printf(
      "\n%-27s %4s %5s %5s | calibrated, default lambda and tau: %5s %5s %6s %6s %6s %6s | "
      "raw: %5s | share>=1 kept at tau 0.4..0.8\n",
      "set", "n", "ments", "q>=1m", "q>=1k", "kept", "q:dict", "dict", "other", "random", "q>=1k");
  for (const eval::QuestionSet& set : *sets) {
    const int limit = absl::GetFlag(FLAGS_qa_per_set);
    const size_t n =
        limit > 0 ? std::min<size_t>(limit, set.questions.size()) : set.questions.size();
    // Per question: (S, R, dictionary) of every candidate, (S, R) on the raw scale, and the
    // calibrated (S, R) of 5 random KG entities against the same question and candidates.
    struct Scores {
      std::vector<std::tuple<float, float, bool>> cal;
      std::vector<std::pair<float, float>> raw;
      std::vector<std::pair<float, float>> random;
    };
    std::vector<Scores> scores;
    double mentions = 0, with_mention = 0;
    for (size_t i = 0; i < n; ++i) {
      const std::string& q = set.questions[i];
      if (q.empty() || q.size() > kMaxTextBytes || !IsValidUtf8(q)) continue;
      auto result = (*aligner)->Align(q, options);
      if (!result.ok()) return result.status();
      auto raw = (*aligner)->Align(q, raw_options);
      if (!raw.ok()) return raw.status();
      Scores s;
      std::vector<uint32_t> entries;
      for (const auto* list : {&result->kept, &result->rejected}) {
        for (const ScoredEntity& e : *list) {
          s.cal.emplace_back(e.question_similarity, e.relatedness, e.candidate.dictionary_match);
          entries.push_back(e.candidate.entry);
          if (e.consistency >= kDefaultTau && absl::GetFlag(FLAGS_print_kept) > 0) {
            const Mention& m = result->mentions[e.mention_index];
            kept_samples.push_back({set.name, q, m.text, e.candidate.name, e.candidate.external_id,
                                    e.candidate.dictionary_match, e.consistency});
          }
        }
      }
      for (const auto* list : {&raw->kept, &raw->rejected}) {
        for (const ScoredEntity& e : *list)
          s.raw.emplace_back(e.question_similarity, e.relatedness);
      }
      if (!entries.empty() && cal.method == "null-z-v1") {
        // Random entities scored exactly as Align scores a candidate (ScoreCalibration).
        auto vq = encoder->Encode(q);
        if (!vq.ok()) return vq.status();
        const QuestionNull null = QuestionNullOf(b, vq->data());
        for (int k = 0; k < 5; ++k) {
          const uint32_t e = pick() % b.lexicon.entries.size();
          const double sq = Dot(b.enriched_row(e), vq->data(), dim);
          double rel = 0;
          for (uint32_t c : entries) rel += Dot(b.enriched_row(e), b.enriched_row(c), dim);
          rel /= entries.size();
          const float S = CalibratedS(sq, null, cal.question_full_z, cal.dictionary_evidence,
                                      /*dictionary_match=*/false, /*lookalike=*/false);
          const float R = ScaleZ(rel, cal.relatedness_null_mean, cal.relatedness_null_sd,
                                 cal.relatedness_full_z);
          s.random.emplace_back(S, R);
        }
      }
      mentions += result->mentions.size();
      with_mention += !result->mentions.empty();
      scores.push_back(std::move(s));
    }
    const double m = std::max<size_t>(1, scores.size());
    auto keep = [](float lambda, float tau, float S, float R) {
      return (1 - lambda) * S + lambda * R >= tau;
    };
    auto evaluate = [&](float lambda, float tau, bool raw_scale) {
      double with_kept = 0, kept = 0;
      for (const Scores& s : scores) {
        int k = 0;
        if (raw_scale) {
          for (const auto& [S, R] : s.raw) k += keep(lambda, tau, S, R);
        } else {
          for (const auto& [S, R, d] : s.cal) k += keep(lambda, tau, S, R);
        }
        with_kept += k > 0;
        kept += k;
      }
      return std::make_pair(with_kept / m, kept / m);
    };
    const auto [share_def, kept_def] = evaluate(kDefaultLambda, kDefaultTau, false);
    // The paper's raw cosines at the paper's lambda 0.4, tau 0.6.
    const auto [share_raw, kept_raw] = evaluate(0.4f, 0.6f, true);
    // Dictionary-matched and other candidates, and random entities, kept at the defaults.
    double q_dict = 0, q_dict_kept = 0, dict = 0, dict_kept = 0, other = 0, other_kept = 0,
           random = 0, random_kept = 0;
    for (const Scores& s : scores) {
      bool has = false, any = false;
      for (const auto& [S, R, d] : s.cal) {
        const bool k = keep(kDefaultLambda, kDefaultTau, S, R);
        (d ? dict : other) += 1;
        (d ? dict_kept : other_kept) += k;
        has = has || d;
        any = any || (d && k);
      }
      q_dict += has;
      q_dict_kept += any;
      for (const auto& [S, R] : s.random) {
        random += 1;
        random_kept += keep(kDefaultLambda, kDefaultTau, S, R);
      }
    }
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    nlohmann::json grid = nlohmann::json::array();
    std::string grid_text;
    for (float lambda : lambdas) {
      for (float tau : taus) {
        const auto [share, kept] = evaluate(lambda, tau, false);
        grid.push_back(
            {{"lambda", lambda}, {"tau", tau}, {"share_with_kept", share}, {"mean_kept", kept}});
        if (lambda == 0.4f) absl::StrAppendFormat(&grid_text, " %.2f", share);
      }
    }
    std::printf("%-27s %4zu %5.1f %5.2f | %47s %5.2f %5.2f %6.2f %6.2f %6.2f %6.3f | %10.2f |%s\n",
                set.name.c_str(), scores.size(), mentions / m, with_mention / m, "", share_def,
                kept_def, ratio(q_dict_kept, q_dict), ratio(dict_kept, dict),
                ratio(other_kept, other), ratio(random_kept, random), share_raw, grid_text.c_str());
    report["qa"].push_back({{"set", set.name},
                            {"questions", scores.size()},
                            {"mean_mentions", mentions / m},
                            {"share_with_mention", with_mention / m},
                            {"share_with_kept_default", share_def},
                            {"mean_kept_default", kept_def},
                            {"share_with_dictionary_match_kept", ratio(q_dict_kept, q_dict)},
                            {"dictionary_candidates_kept", ratio(dict_kept, dict)},
                            {"other_candidates_kept", ratio(other_kept, other)},
                            {"other_candidates_kept_per_question", other_kept / m},
                            {"random_entities_kept", ratio(random_kept, random)},
                            {"raw_share_with_kept_default", share_raw},
                            {"raw_mean_kept_default", kept_raw},
                            {"grid", grid}});
  }
  // A seeded sample of kept entities to judge by hand (question shortened around the mention).
  std::shuffle(kept_samples.begin(), kept_samples.end(), pick);
  for (int i = 0; i < absl::GetFlag(FLAGS_print_kept) && i < static_cast<int>(kept_samples.size());
       ++i) {
    const KeptSample& k = kept_samples[i];
    const size_t at = k.question.find(k.mention);
    const size_t from = at == std::string::npos || at < 60 ? 0 : at - 60;
    std::string context = k.question.substr(from, 140);
    for (char& c : context) c = c == '\n' ? ' ' : c;
    std::printf("kept %2d [%s] C=%.2f%s  \"%s\" -> %s (%s)\n    ...%s...\n", i + 1, k.set.c_str(),
                k.consistency, k.dictionary ? " dict" : "", k.mention.c_str(), k.entity.c_str(),
                k.id.c_str(), context.c_str());
  }
  // Short questions the gateway must handle.
  for (const char* q : {"Which drug treats type 2 diabetes?", "What are the symptoms of asthma?",
                        "Is metformin used for diabetes?", "What causes Parkinson disease?"}) {
    auto r = (*aligner)->Align(q, MscaOptions());
    if (!r.ok()) return r.status();
    std::string kept;
    for (const ScoredEntity& e : r->kept) {
      absl::StrAppendFormat(&kept, " %s (%s, C=%.2f)", e.candidate.name, e.candidate.external_id,
                            e.consistency);
    }
    std::printf("short: \"%s\" kept %zu of %zu:%s\n", q, r->kept.size(),
                r->kept.size() + r->rejected.size(), kept.c_str());
  }
  if (!absl::GetFlag(FLAGS_json_out).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_json_out)) << report.dump(2) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ibgraphrag::alignment

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Quality figures of the alignment stack on the real data.");
  absl::ParseCommandLine(argc, argv);
  absl::Status status = ibgraphrag::alignment::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "alignment_eval: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
