// Offline replay of MSCA's threshold for alignment_msca_fit (issue 28): each question is aligned
// once with everything kept, its candidates' raw cosines and flags are recorded, and calibrated
// S, R, C and the kept set are recomputed here for any calibration constants and any (lambda,
// tau). The replay is exact because none of those settings changes the candidate set: mentions,
// FAISS candidates, raw R (mean cosine to the other candidates) and the look-alike flags come
// before the threshold. The tool checks it against Aligner::Align at the bundle's constants.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_MSCA_REPLAY_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_MSCA_REPLAY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "services/alignment/bundle.h"
#include "services/alignment/eval/gold_spans.h"

namespace ibgraphrag::alignment::eval {

struct MentionRecord {
  uint32_t begin = 0;
  uint32_t end = 0;
  std::string text;
  // The mention names at least one lexicon entry exactly (dictionary match).
  bool named = false;
};

// One candidate as Align scored it (ScoredEntity), with what calibration needs.
struct CandidateRecord {
  uint32_t entry = 0;
  std::string external_id;
  std::string name;
  std::string type;
  std::string name_key;  // NormalizeForMatch(name)
  // Index into QuestionRecord::mentions of the mention that linked it best (Align lists each
  // entity once, under that mention), and every mention whose top-K holds it.
  int mention = 0;
  std::vector<int> proposed_by;
  float raw_question_similarity = 0;
  float raw_relatedness = 0;
  bool dictionary_match = false;
  // Not named, and every mention that proposed it names another entry exactly.
  bool lookalike = false;
};

struct QuestionRecord {
  std::string set;
  std::string id;
  std::string question;
  std::string split;  // "train", "validation" or "test"
  std::vector<GoldSpan> gold;
  std::vector<GoldSpan> ignored;
  // The names the gold entities go by (a lookup set's topics, a claim's subject and object) as
  // NormalizeForMatch keys, matched against kept entities' name_key.
  std::vector<std::string> gold_name_keys;
  // Whether the gold spans name every entity of the question (a templated claim's subject and
  // object do; a lookup question's topics leave out entities the question also names, such as
  // "rhabdomyolysis" in "Can atorvastatin cause rhabdomyolysis?"). Kept entities outside the
  // gold spans count against precision only when it is true.
  bool gold_exhaustive = false;
  // The question's cosine with the bundle's reference entries (QuestionNullOf in aligner.cc).
  double null_mean = 0;
  double null_sd = 0;
  std::vector<MentionRecord> mentions;
  std::vector<CandidateRecord> candidates;
};

// What the replay varies: ScoreCalibration's constants (with the bundle's R null) and C's
// weight and threshold. The defaults are the constants before issue 28's refit, kept for the
// hand-computed tests; CurrentPoint gives the served ones.
struct MscaPoint {
  float question_full_z = 5.0f;
  float relatedness_full_z = 3.0f;
  float dictionary_evidence = 0.9f;
  float lambda = 0.4f;
  float tau = 0.6f;
};

// The served point: a bundle's calibration constants and the default MscaOptions' lambda, tau.
MscaPoint CurrentPoint(const ScoreCalibration& calibration);

struct ReplayedScore {
  float s = 0;
  float r = 0;
  float c = 0;
  bool kept = false;
};

// Calibrated S, R, C and kept (C >= tau) of every candidate of `q`, computed float for float as
// CalibrateScores and ScoreCandidates in aligner.cc do; `calibration` supplies the R null.
std::vector<ReplayedScore> Replay(const QuestionRecord& q, const ScoreCalibration& calibration,
                                  const MscaPoint& point);

// Mention-level figures over a set of questions at one MscaPoint. A gold span is "covered" by a
// candidate or kept entity whose (best-linking) mention overlaps it.
struct MentionMetrics {
  int64_t questions = 0;
  int64_t questions_with_gold = 0;
  int64_t questions_all_gold_kept = 0;
  int64_t gold = 0;
  int64_t gold_with_candidate = 0;
  // ... or proposed by an overlapping mention but attributed to another one.
  int64_t gold_proposed = 0;
  int64_t gold_kept = 0;
  // Kept entities, leaving out those on ignored spans.
  int64_t kept = 0;
  // ... attributed to a mention overlapping a gold span.
  int64_t kept_on_gold = 0;
  // Kept entities that are credited to a gold span: every kept entity its mention names exactly
  // (one concept can be several KG nodes: a disease and a side effect of the same name), else
  // the best kept one only; the others kept for the same span are other concepts.
  int64_t kept_credited = 0;
  // Kept entities precision is judged on: all when the gold is exhaustive, else those on gold
  // spans.
  int64_t kept_judged = 0;
  int64_t named_candidates = 0;
  int64_t named_kept = 0;
  int64_t embedding_candidates = 0;  // not dictionary-matched
  int64_t embedding_kept = 0;
  // Gold names with a kept entity of that name (NormalizeForMatch: case, punctuation, plurals).
  int64_t gold_names = 0;
  int64_t gold_names_kept = 0;

  void Add(const QuestionRecord& q, const std::vector<ReplayedScore>& scores);

  double CandidateRecall() const;
  double ProposedRecall() const;
  double KeptRecall() const;
  // Share of kept entities attributed to a gold span (the plain definition; a lower bound where
  // the gold is not exhaustive).
  double OverlapPrecision() const;
  // kept_credited / kept_judged: penalises keeping several concepts for one span and, where the
  // gold is exhaustive, entities kept outside the gold spans.
  double CreditedPrecision() const;
  // Harmonic mean of KeptRecall and CreditedPrecision: the fit's objective.
  double F1() const;
  double AllGoldKept() const;
  double MeanKept() const;
  double NamedKeptShare() const;
  double EmbeddingKeptShare() const;
  double NameRecall() const;
};

}  // namespace ibgraphrag::alignment::eval

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_MSCA_REPLAY_H_
