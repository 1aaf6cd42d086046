// alignment_msca_fit: refits MSCA's calibration constants and (lambda, tau) on validation
// questions with gold entity spans, and reports where named entities are lost between candidate
// and kept (issue 28 item 2).
//
//   alignment_msca_fit --base=/tmp/t28/base | --bundle_dir=<base>/alignment/<version>
//                      [--data_dir=../shared/data]
//                      [--lookup=tools/eval/lookup/clinical_lookup.jsonl]
//                      [--json_out=fit.json] [--records_out=records.json]
//                      [--extra_points="5,8,0.9,0.4,0.5"] [--question_full_z=3,4,5,6,8 ...]
//
// 1. Gold spans without the KG: BiomixQA true/false claims are templates ("X associates Gene Y",
//    "X is not a Y", ...; gold_spans.h), and the clinical lookup set names each question's topics.
//    Parts: BiomixQA by the one question split (common/qa/qa_split.h, seed --split_seed; its
//    train part is reported, never fitted on), the lookup set by its own "split" field.
// 2. Every question is aligned once with tau 0 (everything kept) and no LLM; each candidate's raw
//    cosines and flags and the question's null are recorded, so S, R, C and the kept set are
//    replayed offline for any constants (msca_replay.h). The replay is checked against Align at
//    the bundle's constants and the default MscaOptions (the mismatch count must be 0).
// 3. Mention-level figures per set and part, the loss breakdown at the current settings, a grid
//    fit on the validation part of the two sets only (objective: F1 of kept recall and credited
//    precision, msca_replay.h; ties go to the point nearest the current one), the lambda / tau
//    sensitivity, score diagnostics (why lambda and tau move little), and the test part at the
//    current, the chosen and any --extra_points settings, once.
// 4. The two-disease scenario as a set of its own, never fitted on: questions naming two
//    diseases of the same part's claims ("Can a patient have both X and Y?"), --pairs_per_part.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/qa/qa_datasets.h"
#include "common/qa/qa_split.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/alignment/aligner.h"
#include "services/alignment/alignment_api.h"
#include "services/alignment/calibrated_scores.h"
#include "services/alignment/eval/gold_spans.h"
#include "services/alignment/eval/msca_replay.h"
#include "services/alignment/text_encoder.h"
#include "services/alignment/text_normalize.h"

ABSL_FLAG(std::string, data_dir, "", "shared data directory (default $IBGR_DATA_DIR)");
ABSL_FLAG(std::string, base, "",
          "artifact base: aligns with the newest bundle under <base>/alignment");
ABSL_FLAG(std::string, bundle_dir, "", "bundle version directory (instead of --base)");
ABSL_FLAG(std::string, lookup, "tools/eval/lookup/clinical_lookup.jsonl",
          "the clinical lookup set (JSON lines with topics and split)");
ABSL_FLAG(uint64_t, split_seed, ibgraphrag::eval::kDefaultSplitSeed,
          "seed of the BiomixQA train / validation / test split");
ABSL_FLAG(std::string, json_out, "", "also write the figures as JSON here");
ABSL_FLAG(std::string, records_out, "",
          "also write every question's recorded candidates (raw scores, flags) as JSON here");
ABSL_FLAG(std::string, question_full_z, "3,4,5,6,8", "grid of ScoreCalibration::question_full_z");
ABSL_FLAG(std::string, relatedness_full_z, "2,3,4,6,8",
          "grid of ScoreCalibration::relatedness_full_z");
ABSL_FLAG(std::string, dictionary_evidence, "0.7,0.8,0.9,1.0",
          "grid of ScoreCalibration::dictionary_evidence");
ABSL_FLAG(std::string, lambda, "0,0.2,0.4,0.6", "grid of lambda");
ABSL_FLAG(std::string, tau, "0.4,0.5,0.6,0.7,0.8", "grid of tau");
ABSL_FLAG(int, pairs_per_part, 100,
          "two-disease questions built per part from the disease names of that part's claims "
          "(reported as their own set, not fitted on); 0 = none");
ABSL_FLAG(int, loss_samples, 20, "lost gold mentions to print (train and validation parts only)");
ABSL_FLAG(int, top, 10, "best grid points to print");
ABSL_FLAG(std::string, extra_points, "",
          "more settings to report beside the current and the chosen ones (sensitivity, losses, "
          "validation and test figures), each qz,rz,dict,lambda,tau, separated by ';'. Choose "
          "them on the validation figures: the test figures are for reporting");

namespace ibgraphrag::alignment {
namespace {

namespace qa = ::ibgraphrag::eval;
using eval::CandidateRecord;
using eval::GoldSpan;
using eval::MentionMetrics;
using eval::MentionRecord;
using eval::MscaPoint;
using eval::QuestionRecord;
using eval::ReplayedScore;

constexpr char kBiomix[] = "biomixqa-true-false";
constexpr char kLookup[] = "clinical-lookup";
constexpr char kPairs[] = "disease-pairs";

// A comma-separated list of numbers.
absl::StatusOr<std::vector<float>> ParseGrid(absl::string_view flag, absl::string_view values) {
  std::vector<float> out;
  for (absl::string_view v : absl::StrSplit(values, ',', absl::SkipWhitespace())) {
    float f = 0;
    if (!absl::SimpleAtof(v, &f)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, ": not a number: ", v));
    }
    out.push_back(f);
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": empty"));
  return out;
}

// Questions read from the two sets, before alignment, and what could not be read.
struct GoldQuestions {
  std::vector<QuestionRecord> questions;
  std::vector<std::string> unparsed_claims;
  std::vector<std::string> unlocated_topics;  // "id: topic"
  // Disease names of the claims per part, for the two-disease questions.
  std::map<std::string, std::vector<std::string>> diseases;
};

absl::Status ReadBiomix(const std::string& data_dir, uint64_t seed, GoldQuestions* out) {
  IBGR_ASSIGN_OR_RETURN(qa::QaDataset dataset,
                        qa::LoadDataset(data_dir + "/qa/biomixqa-true-false.csv"));
  for (const qa::QaItem& item : dataset.items) {
    std::optional<eval::ClaimSpans> spans = eval::ParseBiomixClaim(item.question);
    if (!spans.has_value()) {
      out->unparsed_claims.push_back(item.question);
      continue;
    }
    QuestionRecord q;
    q.set = kBiomix;
    q.id = item.id;
    q.question = item.question;
    q.split = std::string(qa::QaSplitName(qa::SplitOfQuestion(item.question, seed)));
    q.gold = std::move(spans->gold);
    q.ignored = std::move(spans->ignored);
    for (const GoldSpan& g : q.gold) q.gold_name_keys.push_back(NormalizeForMatch(g.text));
    // A claim is its subject, its object and template words.
    q.gold_exhaustive = true;
    // The subjects of gene-association and identifier claims are diseases.
    if (spans->shape != "treats" && spans->shape != "is_a" && spans->shape != "is_not_a") {
      out->diseases[q.split].push_back(q.gold[0].text);
    }
    out->questions.push_back(std::move(q));
  }
  return absl::OkStatus();
}

// The scenario, two diseases named in one question, from the disease names of each
// part's claims (so a pair never mixes parts): seeded, distinct names, templates in turn.
void AddDiseasePairs(int per_part, uint64_t seed, GoldQuestions* out) {
  for (const auto& [split, all_names] : out->diseases) {
    // Once per name up to case and punctuation, in file order.
    std::vector<std::string> names;
    absl::flat_hash_set<std::string> seen;
    for (const std::string& name : all_names) {
      if (seen.insert(NormalizeForMatch(name)).second) names.push_back(name);
    }
    std::printf("two-disease questions, %s: %d from %zu distinct disease names\n", split.c_str(),
                names.size() < 2 ? 0 : per_part, names.size());
    if (names.size() < 2) continue;
    // Seeded by the part's name (std::hash would do, but is not specified across libraries).
    uint64_t part_seed = seed;
    for (char c : split) part_seed = part_seed * 131 + static_cast<unsigned char>(c);
    std::mt19937_64 rng(part_seed);
    for (int i = 0; i < per_part; ++i) {
      const size_t a = rng() % names.size();
      size_t b = rng() % (names.size() - 1);
      if (b >= a) ++b;
      eval::PairQuestion pair = eval::MakePairQuestion(names[a], names[b], i);
      QuestionRecord q;
      q.set = kPairs;
      q.id = absl::StrCat("pair:", split, ":", i);
      q.question = std::move(pair.question);
      q.split = split;
      q.gold = std::move(pair.gold);
      for (const GoldSpan& g : q.gold) q.gold_name_keys.push_back(NormalizeForMatch(g.text));
      q.gold_exhaustive = true;
      out->questions.push_back(std::move(q));
    }
  }
}

// The lookup set's own reader (qa::ParseLookup) does not keep "topics".
absl::Status ReadLookup(const std::string& path, GoldQuestions* out) {
  IBGR_ASSIGN_OR_RETURN(std::string content, common::ReadFileToString(path));
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n', absl::SkipWhitespace())) {
    ++line_number;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_number, ": ", e.what()));
    }
    if (!j.contains("question") || !j.contains("split") || !j.contains("topics")) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_number, ": needs question, split and topics"));
    }
    QuestionRecord q;
    q.set = kLookup;
    q.id = j.value("id", absl::StrCat("line:", line_number));
    q.question = j["question"].get<std::string>();
    const std::string split = j["split"].get<std::string>();
    q.split = split == "dev" ? "validation" : split;
    for (const auto& topic : j["topics"]) {
      const std::string name = topic.get<std::string>();
      q.gold_name_keys.push_back(NormalizeForMatch(name));
      if (std::optional<GoldSpan> span = eval::LocateTopic(q.question, name)) {
        q.gold.push_back(*std::move(span));
      } else {
        out->unlocated_topics.push_back(absl::StrCat(q.id, ": ", name));
      }
    }
    out->questions.push_back(std::move(q));
  }
  return absl::OkStatus();
}

// The question's cosine with the bundle's reference entries: QuestionNullOf in aligner.cc.
absl::Status RecordNull(const Aligner& aligner, QuestionRecord* q) {
  if (aligner.bundle().manifest.calibration.reference_entries <= 0) return absl::OkStatus();
  IBGR_ASSIGN_OR_RETURN(std::vector<float> v, aligner.encoder().Encode(q->question));
  const QuestionNull null = QuestionNullOf(aligner.bundle(), v.data());
  q->null_mean = null.mean;
  q->null_sd = null.sd;
  return absl::OkStatus();
}

struct ReplayCheck {
  int64_t questions = 0;
  int64_t kept_set_mismatches = 0;  // questions whose replayed kept set differs from Align's
  int64_t score_mismatches = 0;     // candidates whose replayed S, R or C differs from Align's
};

// Aligns `q` with everything kept and records its candidates; then aligns it at the default
// options and compares Align's kept set and scores with the replay at the bundle's constants.
absl::Status AlignAndRecord(const Aligner& aligner, QuestionRecord* q, ReplayCheck* check) {
  MscaOptions all;
  all.tau = 0.0f;  // every candidate kept: the thresholds are replayed offline
  all.llm_choice_below = 0;
  IBGR_ASSIGN_OR_RETURN(AlignResult result, aligner.Align(q->question, all));
  for (const Mention& m : result.mentions) {
    q->mentions.push_back({m.begin, m.end, m.text, !m.matches.empty()});
  }
  for (const auto* list : {&result.kept, &result.rejected}) {
    for (const ScoredEntity& e : *list) {
      CandidateRecord c;
      c.entry = e.candidate.entry;
      c.external_id = e.candidate.external_id;
      c.name = e.candidate.name;
      c.type = e.candidate.type;
      c.name_key = NormalizeForMatch(e.candidate.name);
      c.mention = e.mention_index;
      c.raw_question_similarity = e.raw_question_similarity;
      c.raw_relatedness = e.raw_relatedness;
      c.dictionary_match = e.candidate.dictionary_match;
      c.lookalike = e.lookalike;
      q->candidates.push_back(std::move(c));
    }
  }
  // Align lists each entity once; Link (the same mentions and top-K) shows who proposed it.
  IBGR_ASSIGN_OR_RETURN(LinkResult links, aligner.Link(q->question, all.top_k));
  if (links.links.size() != q->mentions.size()) {
    return absl::InternalError(absl::StrCat("Link and Align found different mentions in ", q->id));
  }
  absl::flat_hash_map<uint32_t, std::vector<int>> proposers;
  for (size_t m = 0; m < links.links.size(); ++m) {
    for (const LinkedCandidate& c : links.links[m].candidates) {
      proposers[c.entry].push_back(static_cast<int>(m));
    }
  }
  for (CandidateRecord& c : q->candidates) c.proposed_by = proposers[c.entry];
  IBGR_RETURN_IF_ERROR(RecordNull(aligner, q));

  MscaOptions defaults;
  defaults.llm_choice_below = 0;
  IBGR_ASSIGN_OR_RETURN(AlignResult served, aligner.Align(q->question, defaults));
  const ScoreCalibration& cal = aligner.bundle().manifest.calibration;
  const std::vector<ReplayedScore> replay = eval::Replay(*q, cal, eval::CurrentPoint(cal));
  absl::flat_hash_set<uint32_t> replayed_kept, served_kept;
  for (size_t i = 0; i < replay.size(); ++i) {
    if (replay[i].kept) replayed_kept.insert(q->candidates[i].entry);
    // The tau-0 run scored with the same constants and lambda: its S, R, C are the replay's.
    const ScoredEntity& e =
        i < result.kept.size() ? result.kept[i] : result.rejected[i - result.kept.size()];
    check->score_mismatches += replay[i].s != e.question_similarity ||
                               replay[i].r != e.relatedness || replay[i].c != e.consistency;
  }
  for (const ScoredEntity& e : served.kept) served_kept.insert(e.candidate.entry);
  ++check->questions;
  check->kept_set_mismatches += replayed_kept != served_kept;
  return absl::OkStatus();
}

// How a gold span stands with the candidates of its question.
enum class SpanCoverage {
  kNoMention,   // no mention overlapping it proposed a candidate (usually: no such mention)
  kElsewhere,   // its mentions proposed candidates, all attributed to other mentions
  kCandidates,  // candidates attributed to an overlapping mention
};

bool OnSpan(const QuestionRecord& q, int mention, const GoldSpan& g) {
  const MentionRecord& m = q.mentions[mention];
  return eval::Overlaps(m.begin, m.end, g.begin, g.end);
}

SpanCoverage CoverageOf(const QuestionRecord& q, const GoldSpan& g) {
  SpanCoverage coverage = SpanCoverage::kNoMention;
  for (const CandidateRecord& c : q.candidates) {
    if (OnSpan(q, c.mention, g)) return SpanCoverage::kCandidates;
    for (int p : c.proposed_by) {
      if (OnSpan(q, p, g)) coverage = SpanCoverage::kElsewhere;
    }
  }
  return coverage;
}

// Why a gold span with candidates kept none of them at `point`; `detail` shows the candidate
// that came closest (the best named one by C, else the best by C). With kElsewhere coverage the
// candidates its mentions proposed are considered, wherever they were attributed.
std::string LossReason(const QuestionRecord& q, const std::vector<ReplayedScore>& scores,
                       const GoldSpan& g, SpanCoverage coverage, const MscaPoint& point,
                       std::string* detail) {
  int best = -1, best_named = -1;
  for (size_t i = 0; i < q.candidates.size(); ++i) {
    const CandidateRecord& c = q.candidates[i];
    bool on = OnSpan(q, c.mention, g);
    if (coverage == SpanCoverage::kElsewhere) {
      for (int p : c.proposed_by) on = on || OnSpan(q, p, g);
    }
    if (!on) continue;
    if (best < 0 || scores[i].c > scores[best].c) best = static_cast<int>(i);
    if (c.dictionary_match && (best_named < 0 || scores[i].c > scores[best_named].c)) {
      best_named = static_cast<int>(i);
    }
  }
  const int shown = best_named >= 0 ? best_named : best;
  const CandidateRecord& c = q.candidates[shown];
  const ReplayedScore& s = scores[shown];
  *detail = absl::StrFormat("%s (%s, %s%s%s) under \"%s\": S=%.3f R=%.3f C=%.3f%s, %d candidates",
                            c.name, c.external_id, c.type, c.dictionary_match ? ", named" : "",
                            c.lookalike ? ", look-alike" : "", q.mentions[c.mention].text, s.s, s.r,
                            s.c, s.kept ? " kept" : "", q.candidates.size());
  if (coverage == SpanCoverage::kElsewhere) {
    return "every candidate of its mention attributed to another mention";
  }
  if (best_named >= 0) {
    if (q.candidates.size() == 1) return "named, the only candidate (R = 0)";
    if (point.lambda > 0) {
      absl::StrAppendFormat(detail, ", R needed %.3f",
                            (point.tau - (1 - point.lambda) * s.s) / point.lambda);
    }
    return "named, C < tau: R too low";
  }
  bool span_named = false;
  for (const MentionRecord& m : q.mentions) {
    span_named = span_named || (m.named && eval::Overlaps(m.begin, m.end, g.begin, g.end));
  }
  if (span_named) return "named entity attributed to another mention; the rest look-alikes";
  if (c.lookalike) return "look-alike only: S scaled by 1 - dictionary_evidence";
  return s.s < point.tau ? "embedding-only: S below tau" : "embedding-only: C < tau (R low)";
}

struct Group {
  std::string set;    // kBiomix, kLookup, kPairs or "both" (kBiomix and kLookup)
  std::string split;  // "train", "validation", "test"
};

// "both" is the two real sets; the two-disease questions are a set of their own.
bool InGroup(const QuestionRecord& q, const Group& g) {
  const bool set = g.set == q.set || (g.set == "both" && q.set != kPairs);
  return set && g.split == q.split;
}

// Gold spans per part that no mention overlaps, and those whose mentions proposed candidates
// but kept none at `point`, by reason (LossReason). Samples (optional) come from the train and
// validation parts only: test questions are not looked at one by one.
nlohmann::json LossBreakdown(const std::vector<QuestionRecord>& questions, const std::string& set,
                             const ScoreCalibration& cal, const MscaPoint& point,
                             std::vector<std::string>* samples,
                             std::vector<std::string>* uncovered) {
  nlohmann::json losses = nlohmann::json::object();
  for (const char* split : {"train", "validation", "test"}) {
    std::map<std::string, int> reasons;
    int no_mention = 0, lost = 0, total = 0;
    const bool sample = std::string(split) != "test";
    for (const QuestionRecord& q : questions) {
      if (!InGroup(q, {set, split})) continue;
      const std::vector<ReplayedScore> scores = eval::Replay(q, cal, point);
      for (const GoldSpan& g : q.gold) {
        ++total;
        const SpanCoverage coverage = CoverageOf(q, g);
        if (coverage == SpanCoverage::kNoMention) {
          ++no_mention;
          if (sample && uncovered != nullptr) {
            uncovered->push_back(
                absl::StrCat(q.set, " ", q.id, ": \"", g.text, "\" in \"", q.question, "\""));
          }
          continue;
        }
        bool kept = false;
        for (size_t i = 0; i < q.candidates.size(); ++i) {
          kept = kept || (scores[i].kept && OnSpan(q, q.candidates[i].mention, g));
        }
        if (kept) continue;
        ++lost;
        std::string detail;
        const std::string reason = LossReason(q, scores, g, coverage, point, &detail);
        ++reasons[reason];
        if (sample && samples != nullptr) {
          samples->push_back(absl::StrCat("[", q.set, " ", q.split, "] \"", g.text, "\" in \"",
                                          q.question, "\"\n      ", reason, "; closest: ", detail));
        }
      }
    }
    std::printf("  %-14s %-10s gold %d: no mention %d, proposed but nothing kept %d\n", set.c_str(),
                split, total, no_mention, lost);
    nlohmann::json& j = losses[split];
    j = {{"gold_mentions", total}, {"no_mention", no_mention}, {"lost_after_candidates", lost}};
    for (const auto& [reason, n] : reasons) {
      std::printf("    %4d  %s\n", n, reason.c_str());
      j["reasons"][reason] = n;
    }
  }
  return losses;
}

MentionMetrics Evaluate(const std::vector<QuestionRecord>& questions, const Group& group,
                        const ScoreCalibration& cal, const MscaPoint& point) {
  MentionMetrics m;
  for (const QuestionRecord& q : questions) {
    if (InGroup(q, group)) m.Add(q, eval::Replay(q, cal, point));
  }
  return m;
}

nlohmann::json PointJson(const MscaPoint& p) {
  return {{"question_full_z", p.question_full_z},
          {"relatedness_full_z", p.relatedness_full_z},
          {"dictionary_evidence", p.dictionary_evidence},
          {"lambda", p.lambda},
          {"tau", p.tau}};
}

std::string PointText(const MscaPoint& p) {
  return absl::StrFormat("qz=%g rz=%g dict=%g lambda=%g tau=%g", p.question_full_z,
                         p.relatedness_full_z, p.dictionary_evidence, p.lambda, p.tau);
}

nlohmann::json MetricsJson(const MentionMetrics& m) {
  return {{"questions", m.questions},
          {"gold_mentions", m.gold},
          {"candidate_recall", m.CandidateRecall()},
          {"proposed_recall", m.ProposedRecall()},
          {"kept_recall", m.KeptRecall()},
          {"all_gold_kept", m.AllGoldKept()},
          {"overlap_precision", m.OverlapPrecision()},
          {"credited_precision", m.CreditedPrecision()},
          {"f1", m.F1()},
          {"mean_kept", m.MeanKept()},
          {"named_candidates_kept", m.NamedKeptShare()},
          {"embedding_candidates_kept", m.EmbeddingKeptShare()},
          {"embedding_kept", m.embedding_kept},
          {"gold_name_recall", m.NameRecall()}};
}

void PrintMetricsHeader() {
  std::printf("  %-20s %-10s %4s %5s | %6s %6s %6s %6s | %6s %6s %6s | %5s %7s %7s %6s\n", "set",
              "part", "q", "gold", "prop_r", "cand_r", "kept_r", "all_q", "ovl_p", "cred_p", "F1",
              "kept/q", "named_k", "embed_k", "name_r");
}

void PrintMetrics(const Group& g, const MentionMetrics& m) {
  std::printf(
      "  %-20s %-10s %4lld %5lld | %6.3f %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f | %5.2f %7.3f %7.4f "
      "%6.3f\n",
      g.set.c_str(), g.split.c_str(), static_cast<long long>(m.questions),
      static_cast<long long>(m.gold), m.ProposedRecall(), m.CandidateRecall(), m.KeptRecall(),
      m.AllGoldKept(), m.OverlapPrecision(), m.CreditedPrecision(), m.F1(), m.MeanKept(),
      m.NamedKeptShare(), m.EmbeddingKeptShare(), m.NameRecall());
}

// Probability that a random element of `high` exceeds one of `low` (ties count half): how well
// a score separates two kinds of candidates (0.5 = not at all).
double Auc(const std::vector<double>& high, std::vector<double> low) {
  if (high.empty() || low.empty()) return 0.5;
  std::sort(low.begin(), low.end());
  double wins = 0;
  for (double h : high) {
    const auto lo = std::lower_bound(low.begin(), low.end(), h);
    const auto hi = std::upper_bound(lo, low.end(), h);
    wins += (lo - low.begin()) + 0.5 * (hi - lo);
  }
  return wins / (static_cast<double>(high.size()) * low.size());
}

// Why lambda and tau move little: what kinds of candidates there are, how well the question
// similarity and relatedness (as z-scores, before clamping) tell named candidates from the
// others, and how many reach the top of the scale (S or R clamped at 1) at `points`.
nlohmann::json ScoreDiagnostics(const std::vector<QuestionRecord>& questions,
                                const std::string& split, const ScoreCalibration& cal,
                                const std::vector<std::pair<std::string, MscaPoint>>& points) {
  std::vector<double> s_named, s_other, r_named, r_other;
  int64_t lookalikes = 0;
  for (const QuestionRecord& q : questions) {
    if (!InGroup(q, {"both", split})) continue;
    for (const CandidateRecord& c : q.candidates) {
      const double sz =
          q.null_sd > 1e-6 ? (c.raw_question_similarity - q.null_mean) / q.null_sd : 0.0;
      const double rz = (c.raw_relatedness - cal.relatedness_null_mean) / cal.relatedness_null_sd;
      (c.dictionary_match ? s_named : s_other).push_back(sz);
      (c.dictionary_match ? r_named : r_other).push_back(rz);
      lookalikes += c.lookalike;
    }
  }
  auto share_at_least = [](const std::vector<double>& v, double x) {
    return v.empty() ? 0.0
                     : static_cast<double>(
                           std::count_if(v.begin(), v.end(), [x](double z) { return z >= x; })) /
                           v.size();
  };
  nlohmann::json j = {{"part", split},
                      {"named_candidates", s_named.size()},
                      {"other_candidates", s_other.size()},
                      {"other_that_are_lookalikes", lookalikes},
                      {"auc_question_z_named_vs_other", Auc(s_named, s_other)},
                      {"auc_relatedness_z_named_vs_other", Auc(r_named, r_other)}};
  std::printf(
      "\nScore diagnostics (%s, both sets): %zu named candidates, %zu others (%lld of them "
      "look-alikes); named vs others AUC: question z %.3f, relatedness z %.3f\n",
      split.c_str(), s_named.size(), s_other.size(), static_cast<long long>(lookalikes),
      Auc(s_named, s_other), Auc(r_named, r_other));
  for (const auto& [name, p] : points) {
    const double sn = share_at_least(s_named, p.question_full_z);
    const double so = share_at_least(s_other, p.question_full_z);
    const double rn = share_at_least(r_named, p.relatedness_full_z);
    const double ro = share_at_least(r_other, p.relatedness_full_z);
    std::printf(
        "  %s (qz=%g rz=%g): S at 1 before the dictionary: named %.2f others %.2f; R at 1: "
        "named %.2f others %.2f\n",
        name.c_str(), p.question_full_z, p.relatedness_full_z, sn, so, rn, ro);
    j["saturation"][name] = {{"question_full_z", p.question_full_z},
                             {"relatedness_full_z", p.relatedness_full_z},
                             {"s_at_one_named", sn},
                             {"s_at_one_other", so},
                             {"r_at_one_named", rn},
                             {"r_at_one_other", ro}};
  }
  return j;
}

struct GridResult {
  MscaPoint point;
  MentionMetrics metrics;
  double distance = 0;  // from the current point, for ties
};

absl::Status Run() {
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  if (data_dir.empty() && std::getenv("IBGR_DATA_DIR") != nullptr) {
    data_dir = std::getenv("IBGR_DATA_DIR");
  }
  if (data_dir.empty()) data_dir = "../shared/data";
  IBGR_ASSIGN_OR_RETURN(const std::vector<float> grid_qz,
                        ParseGrid("question_full_z", absl::GetFlag(FLAGS_question_full_z)));
  IBGR_ASSIGN_OR_RETURN(const std::vector<float> grid_rz,
                        ParseGrid("relatedness_full_z", absl::GetFlag(FLAGS_relatedness_full_z)));
  IBGR_ASSIGN_OR_RETURN(const std::vector<float> grid_dict,
                        ParseGrid("dictionary_evidence", absl::GetFlag(FLAGS_dictionary_evidence)));
  IBGR_ASSIGN_OR_RETURN(const std::vector<float> grid_lambda,
                        ParseGrid("lambda", absl::GetFlag(FLAGS_lambda)));
  IBGR_ASSIGN_OR_RETURN(const std::vector<float> grid_tau,
                        ParseGrid("tau", absl::GetFlag(FLAGS_tau)));

  GoldQuestions gold;
  IBGR_RETURN_IF_ERROR(ReadBiomix(data_dir, absl::GetFlag(FLAGS_split_seed), &gold));
  IBGR_RETURN_IF_ERROR(ReadLookup(absl::GetFlag(FLAGS_lookup), &gold));
  AddDiseasePairs(absl::GetFlag(FLAGS_pairs_per_part), absl::GetFlag(FLAGS_split_seed), &gold);
  std::vector<QuestionRecord>& questions = gold.questions;

  LocalAlignerOptions open;
  open.bundle_dir = absl::GetFlag(FLAGS_bundle_dir);
  open.base_path = absl::GetFlag(FLAGS_base);
  if (open.bundle_dir.empty() && open.base_path.empty()) {
    return absl::InvalidArgumentError("give --base or --bundle_dir");
  }
  absl::Time t = absl::Now();
  IBGR_ASSIGN_OR_RETURN(std::unique_ptr<Aligner> aligner, OpenLocalAligner(open));
  const ScoreCalibration& cal = aligner->bundle().manifest.calibration;
  if (cal.method != "null-z-v1") {
    return absl::FailedPreconditionError(
        absl::StrCat("bundle ", aligner->bundle().dir, " has no calibration (", cal.method, ")"));
  }
  std::printf("bundle %s (encoder %s) opened in %.1f s\n", aligner->bundle().dir.c_str(),
              aligner->encoder().id().c_str(), absl::ToDoubleSeconds(absl::Now() - t));
  // One question at a time: OpenMP teams only add spin-waiting (as in alignment_eval).
  omp_set_num_threads(1);

  t = absl::Now();
  ReplayCheck check;
  for (QuestionRecord& q : questions) {
    IBGR_RETURN_IF_ERROR(AlignAndRecord(*aligner, &q, &check));
  }
  std::printf(
      "aligned %zu questions in %.1f s; replay vs Align at the bundle's constants: "
      "%lld of %lld kept sets differ, %lld candidate scores differ\n",
      questions.size(), absl::ToDoubleSeconds(absl::Now() - t),
      static_cast<long long>(check.kept_set_mismatches), static_cast<long long>(check.questions),
      static_cast<long long>(check.score_mismatches));
  // Every figure below is a replay: if it does not reproduce Align, none of them means anything.
  if (check.kept_set_mismatches != 0 || check.score_mismatches != 0) {
    return absl::FailedPreconditionError(
        "the offline replay does not reproduce Aligner::Align at the bundle's constants: "
        "msca_replay.cc no longer computes S, R, C as aligner.cc does");
  }

  nlohmann::json report;
  report["bundle_dir"] = aligner->bundle().dir;
  report["encoder_id"] = aligner->encoder().id();
  report["split_seed"] = absl::GetFlag(FLAGS_split_seed);
  report["replay_check"] = {{"questions", check.questions},
                            {"kept_set_mismatches", check.kept_set_mismatches},
                            {"score_mismatches", check.score_mismatches}};
  report["unparsed_claims"] = gold.unparsed_claims;
  report["unlocated_topics"] = gold.unlocated_topics;
  std::map<std::string, int> parts;
  for (const QuestionRecord& q : questions) ++parts[absl::StrCat(q.set, " ", q.split)];
  std::printf("questions per set and part:");
  for (const auto& [name, n] : parts) {
    std::printf("  %s: %d", name.c_str(), n);
    report["questions"][name] = n;
  }
  std::printf("\nunparsed claims (skipped): %zu", gold.unparsed_claims.size());
  for (const std::string& c : gold.unparsed_claims) std::printf("  \"%s\"", c.c_str());
  std::printf("\nlookup topics not found in their question (left out of the span figures): %zu",
              gold.unlocated_topics.size());
  for (const std::string& c : gold.unlocated_topics) std::printf("  [%s]", c.c_str());
  std::printf("\n");

  std::vector<Group> groups;
  for (const char* split : {"train", "validation", "test"}) {
    for (const char* set : {kBiomix, kLookup, "both", kPairs}) {
      if (std::string(split) == "train" && std::string(set) == kLookup) continue;
      if (std::string(split) == "train" && std::string(set) == "both") continue;
      groups.push_back({set, split});
    }
  }
  const MscaPoint current = eval::CurrentPoint(cal);

  // Loss breakdown at the current settings, with samples.
  std::printf("\nGold mentions lost at the current settings (%s)\n", PointText(current).c_str());
  std::vector<std::string> samples, uncovered;
  report["losses_current"] = LossBreakdown(questions, "both", cal, current, &samples, &uncovered);
  report["losses_current_pairs"] =
      LossBreakdown(questions, kPairs, cal, current, &samples, &uncovered);
  report["loss_samples"] = samples;
  report["no_mention_samples"] = uncovered;
  std::printf("\nLost after candidates (train and validation, %zu; first %d):\n", samples.size(),
              absl::GetFlag(FLAGS_loss_samples));
  for (int i = 0; i < absl::GetFlag(FLAGS_loss_samples) && i < static_cast<int>(samples.size());
       ++i) {
    std::printf("  %2d %s\n", i + 1, samples[i].c_str());
  }
  std::printf("No mention (train and validation, %zu):\n", uncovered.size());
  for (const std::string& u : uncovered) std::printf("  %s\n", u.c_str());

  // Grid fit on the validation part of both sets pooled.
  const Group fit_group{"both", "validation"};
  auto span = [](const std::vector<float>& grid, float v) {
    const auto [lo, hi] = std::minmax_element(grid.begin(), grid.end());
    return *hi > *lo ? std::abs(v) / (*hi - *lo) : 0.0;
  };
  std::vector<GridResult> grid;
  for (float qz : grid_qz) {
    for (float rz : grid_rz) {
      for (float dict : grid_dict) {
        for (float lambda : grid_lambda) {
          for (float tau : grid_tau) {
            GridResult r;
            r.point = {qz, rz, dict, lambda, tau};
            r.metrics = Evaluate(questions, fit_group, cal, r.point);
            r.distance = span(grid_qz, qz - current.question_full_z) +
                         span(grid_rz, rz - current.relatedness_full_z) +
                         span(grid_dict, dict - current.dictionary_evidence) +
                         span(grid_lambda, lambda - current.lambda) +
                         span(grid_tau, tau - current.tau);
            grid.push_back(std::move(r));
          }
        }
      }
    }
  }
  // Best F1; among equal F1 the point nearest the current one (each axis scaled to its range),
  // so a constant moves only when moving it helps.
  std::stable_sort(grid.begin(), grid.end(), [](const GridResult& a, const GridResult& b) {
    if (a.metrics.F1() != b.metrics.F1()) return a.metrics.F1() > b.metrics.F1();
    return a.distance < b.distance;
  });
  const MscaPoint chosen = grid.front().point;
  const MentionMetrics at_current = Evaluate(questions, fit_group, cal, current);
  int ties = 0;
  for (const GridResult& r : grid) ties += r.metrics.F1() == grid.front().metrics.F1();
  std::printf(
      "\nGrid fit on the validation part (both sets pooled), %zu points; objective F1 of "
      "kept recall and credited precision\n  current %s: F1 %.4f (recall %.3f, "
      "precision %.3f)\n  best %d points (%d tie at the top):\n",
      grid.size(), PointText(current).c_str(), at_current.F1(), at_current.KeptRecall(),
      at_current.CreditedPrecision(), absl::GetFlag(FLAGS_top), ties);
  nlohmann::json top = nlohmann::json::array();
  for (int i = 0; i < absl::GetFlag(FLAGS_top) && i < static_cast<int>(grid.size()); ++i) {
    const GridResult& r = grid[i];
    std::printf("    %s  F1 %.4f  recall %.3f  cred_p %.3f  ovl_p %.3f  kept/q %.2f\n",
                PointText(r.point).c_str(), r.metrics.F1(), r.metrics.KeptRecall(),
                r.metrics.CreditedPrecision(), r.metrics.OverlapPrecision(), r.metrics.MeanKept());
    nlohmann::json j = PointJson(r.point);
    j["metrics"] = MetricsJson(r.metrics);
    top.push_back(std::move(j));
  }
  report["fit"] = {{"objective", "F1(kept_recall, credited_precision), validation, both sets"},
                   {"points", grid.size()},
                   {"tied_at_best", ties},
                   {"current", PointJson(current)},
                   {"current_metrics", MetricsJson(at_current)},
                   {"chosen", PointJson(chosen)},
                   {"top", top}};

  std::vector<std::pair<std::string, MscaPoint>> compared = {{"current", current},
                                                             {"chosen", chosen}};
  for (absl::string_view text :
       absl::StrSplit(absl::GetFlag(FLAGS_extra_points), ';', absl::SkipWhitespace())) {
    IBGR_ASSIGN_OR_RETURN(const std::vector<float> v, ParseGrid("extra_points", text));
    if (v.size() != 5) {
      return absl::InvalidArgumentError(
          absl::StrCat("--extra_points: \"", text, "\" is not qz,rz,dict,lambda,tau"));
    }
    compared.emplace_back(absl::StrCat("extra ", compared.size() - 1),
                          MscaPoint{v[0], v[1], v[2], v[3], v[4]});
  }
  for (size_t i = 1; i < compared.size(); ++i) {
    std::printf("\nGold mentions lost at %s (%s)\n", compared[i].first.c_str(),
                PointText(compared[i].second).c_str());
    report["losses"][compared[i].first] =
        LossBreakdown(questions, "both", cal, compared[i].second, nullptr, nullptr);
    report["losses_pairs"][compared[i].first] =
        LossBreakdown(questions, kPairs, cal, compared[i].second, nullptr, nullptr);
  }

  // Lambda and tau sensitivity on the validation part around each compared setting.
  std::printf(
      "\nlambda / tau sensitivity (validation, both sets): recall, credited precision, "
      "kept per question, share of other candidates kept\n");
  nlohmann::json sensitivity = nlohmann::json::object();
  for (const auto& [name, base] : compared) {
    std::printf("  at the %s constants (qz=%g rz=%g dict=%g)\n", name.c_str(), base.question_full_z,
                base.relatedness_full_z, base.dictionary_evidence);
    nlohmann::json rows = nlohmann::json::array();
    for (float lambda : grid_lambda) {
      std::printf("    lambda %.1f |", lambda);
      for (float tau : grid_tau) {
        MscaPoint p = base;
        p.lambda = lambda;
        p.tau = tau;
        const MentionMetrics m = Evaluate(questions, fit_group, cal, p);
        std::printf(" tau %.1f: r %.3f p %.3f k %.2f e %.3f |", tau, m.KeptRecall(),
                    m.CreditedPrecision(), m.MeanKept(), m.EmbeddingKeptShare());
        nlohmann::json j = PointJson(p);
        j["metrics"] = MetricsJson(m);
        rows.push_back(std::move(j));
      }
      std::printf("\n");
    }
    sensitivity[name] = std::move(rows);
  }
  report["sensitivity"] = std::move(sensitivity);

  // Before (current) and after (chosen, and any extra points) per set and part: the test part
  // is read here, once.
  nlohmann::json table = nlohmann::json::array();
  for (const auto& [name, point] : compared) {
    std::printf("\n%s: %s\n", name.c_str(), PointText(point).c_str());
    PrintMetricsHeader();
    for (const Group& g : groups) {
      const MentionMetrics m = Evaluate(questions, g, cal, point);
      PrintMetrics(g, m);
      nlohmann::json j = MetricsJson(m);
      j["settings"] = name;
      j["point"] = PointJson(point);
      j["set"] = g.set;
      j["part"] = g.split;
      table.push_back(std::move(j));
    }
  }
  report["before_after"] = std::move(table);
  report["score_diagnostics"] = ScoreDiagnostics(questions, "validation", cal, compared);

  if (!absl::GetFlag(FLAGS_json_out).empty()) {
    std::ofstream(absl::GetFlag(FLAGS_json_out)) << report.dump(2) << "\n";
  }
  if (!absl::GetFlag(FLAGS_records_out).empty()) {
    nlohmann::json records = nlohmann::json::array();
    for (const QuestionRecord& q : questions) {
      nlohmann::json j = {{"set", q.set},
                          {"id", q.id},
                          {"question", q.question},
                          {"split", q.split},
                          {"null_mean", q.null_mean},
                          {"null_sd", q.null_sd}};
      for (const GoldSpan& g : q.gold) j["gold"].push_back({g.begin, g.end, g.text});
      for (const GoldSpan& g : q.ignored) j["ignored"].push_back({g.begin, g.end, g.text});
      for (const MentionRecord& m : q.mentions) {
        j["mentions"].push_back(
            {{"begin", m.begin}, {"end", m.end}, {"text", m.text}, {"named", m.named}});
      }
      for (const CandidateRecord& c : q.candidates) {
        j["candidates"].push_back({{"entry", c.entry},
                                   {"external_id", c.external_id},
                                   {"name", c.name},
                                   {"type", c.type},
                                   {"mention", c.mention},
                                   {"proposed_by", c.proposed_by},
                                   {"raw_s", c.raw_question_similarity},
                                   {"raw_r", c.raw_relatedness},
                                   {"dictionary_match", c.dictionary_match},
                                   {"lookalike", c.lookalike}});
      }
      records.push_back(std::move(j));
    }
    std::ofstream(absl::GetFlag(FLAGS_records_out))
        << records.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ibgraphrag::alignment

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Refits MSCA's calibration constants, lambda and tau on validation questions with gold "
      "entity spans and reports the mention-level losses.");
  absl::ParseCommandLine(argc, argv);
  absl::Status status = ibgraphrag::alignment::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "alignment_msca_fit: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
