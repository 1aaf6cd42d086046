#include "services/alignment/eval/msca_replay.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "services/alignment/aligner.h"
#include "services/alignment/calibrated_scores.h"

namespace ibgraphrag::alignment::eval {
namespace {

double Ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / b : 0.0; }

}  // namespace

MscaPoint CurrentPoint(const ScoreCalibration& calibration) {
  MscaPoint point;
  point.question_full_z = calibration.question_full_z;
  point.relatedness_full_z = calibration.relatedness_full_z;
  point.dictionary_evidence = calibration.dictionary_evidence;
  const MscaOptions defaults;
  point.lambda = defaults.lambda;
  point.tau = defaults.tau;
  return point;
}

std::vector<ReplayedScore> Replay(const QuestionRecord& q, const ScoreCalibration& calibration,
                                  const MscaPoint& point) {
  const size_t n = q.candidates.size();
  const QuestionNull null{q.null_mean, q.null_sd};
  std::vector<ReplayedScore> out(n);
  for (size_t i = 0; i < n; ++i) {
    const CandidateRecord& c = q.candidates[i];
    ReplayedScore& s = out[i];
    s.s = CalibratedS(c.raw_question_similarity, null, point.question_full_z,
                      point.dictionary_evidence, c.dictionary_match, c.lookalike);
    s.r = CalibratedR(c.raw_relatedness, calibration.relatedness_null_mean,
                      calibration.relatedness_null_sd, point.relatedness_full_z, n);
    s.c = Consistency(s.s, s.r, point.lambda);
    s.kept = s.c >= point.tau;
  }
  return out;
}

void MentionMetrics::Add(const QuestionRecord& q, const std::vector<ReplayedScore>& scores) {
  ++questions;
  auto on = [&](const CandidateRecord& c, const GoldSpan& span) {
    const MentionRecord& m = q.mentions[c.mention];
    return Overlaps(m.begin, m.end, span.begin, span.end);
  };
  // Entities kept for each gold span; credited: see kept_credited.
  absl::flat_hash_set<size_t> credited;
  int kept_spans = 0;
  for (const GoldSpan& g : q.gold) {
    bool candidate = false, proposed = false;
    int best = -1;
    bool named = false;
    for (size_t i = 0; i < q.candidates.size(); ++i) {
      for (int p : q.candidates[i].proposed_by) {
        const MentionRecord& m = q.mentions[p];
        proposed = proposed || Overlaps(m.begin, m.end, g.begin, g.end);
      }
      if (!on(q.candidates[i], g)) continue;
      proposed = true;
      candidate = true;
      if (!scores[i].kept) continue;
      if (q.candidates[i].dictionary_match) {
        credited.insert(i);
        named = true;
      }
      if (best < 0 || scores[i].c > scores[best].c) best = static_cast<int>(i);
    }
    if (best >= 0 && !named) credited.insert(best);
    ++gold;
    gold_with_candidate += candidate;
    gold_proposed += proposed;
    gold_kept += best >= 0;
    kept_spans += best >= 0;
  }
  if (!q.gold.empty()) {
    ++questions_with_gold;
    questions_all_gold_kept += kept_spans == static_cast<int>(q.gold.size());
  }
  for (size_t i = 0; i < q.candidates.size(); ++i) {
    const CandidateRecord& c = q.candidates[i];
    (c.dictionary_match ? named_candidates : embedding_candidates) += 1;
    if (!scores[i].kept) continue;
    (c.dictionary_match ? named_kept : embedding_kept) += 1;
    bool ignored = false;
    for (const GoldSpan& g : q.ignored) ignored = ignored || on(c, g);
    if (ignored) continue;
    bool gold_span = false;
    for (const GoldSpan& g : q.gold) gold_span = gold_span || on(c, g);
    ++kept;
    kept_on_gold += gold_span;
    kept_judged += gold_span || q.gold_exhaustive;
    kept_credited += credited.contains(i);
  }
  for (const std::string& key : q.gold_name_keys) {
    ++gold_names;
    bool found = false;
    for (size_t i = 0; i < q.candidates.size() && !found; ++i) {
      found = scores[i].kept && q.candidates[i].name_key == key;
    }
    gold_names_kept += found;
  }
}

double MentionMetrics::CandidateRecall() const { return Ratio(gold_with_candidate, gold); }
double MentionMetrics::ProposedRecall() const { return Ratio(gold_proposed, gold); }
double MentionMetrics::KeptRecall() const { return Ratio(gold_kept, gold); }
double MentionMetrics::OverlapPrecision() const { return Ratio(kept_on_gold, kept); }
double MentionMetrics::CreditedPrecision() const { return Ratio(kept_credited, kept_judged); }
double MentionMetrics::F1() const {
  const double r = KeptRecall(), p = CreditedPrecision();
  return r + p > 0 ? 2 * r * p / (r + p) : 0.0;
}
double MentionMetrics::AllGoldKept() const {
  return Ratio(questions_all_gold_kept, questions_with_gold);
}
double MentionMetrics::MeanKept() const {
  return questions > 0 ? static_cast<double>(named_kept + embedding_kept) / questions : 0.0;
}
double MentionMetrics::NamedKeptShare() const { return Ratio(named_kept, named_candidates); }
double MentionMetrics::EmbeddingKeptShare() const {
  return Ratio(embedding_kept, embedding_candidates);
}
double MentionMetrics::NameRecall() const { return Ratio(gold_names_kept, gold_names); }

}  // namespace ibgraphrag::alignment::eval
