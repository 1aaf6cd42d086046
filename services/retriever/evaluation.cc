#include "services/retriever/evaluation.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"

namespace ibgraphrag::retriever {
namespace {

// One question's measures.
struct QuestionScores {
  double hit_at_10 = 0, hit_at_50 = 0, hit_at_100 = 0;
  double recall_at_10 = 0, recall_at_50 = 0, recall_at_100 = 0;
  double precision_at_10 = 0;
  // Fraction of the question's supervision triples among the first 10 / 100 returned: with the
  // options among the topic entities the gold answer is a topic too, so hit@K is near 1 for
  // every method; these and precision@10 tell whether the path to it was found.
  double evidence_recall_at_10 = 0, evidence_recall_at_100 = 0;
};

QuestionScores ScoreRetrieval(const GeneratedQuestion& q, const std::vector<ScoredTriple>& top) {
  const absl::flat_hash_set<uint32_t> answers(q.answers.begin(), q.answers.end());
  const absl::flat_hash_set<std::array<uint32_t, 3>> evidence(q.evidence.begin(), q.evidence.end());
  // found_by[i] = distinct answers among the first i + 1 triples.
  std::vector<size_t> found_by(std::min<size_t>(100, top.size()));
  absl::flat_hash_set<uint32_t> found;
  for (size_t i = 0; i < found_by.size(); ++i) {
    if (answers.contains(top[i].head)) found.insert(top[i].head);
    if (answers.contains(top[i].tail)) found.insert(top[i].tail);
    found_by[i] = found.size();
  }
  auto found_at = [&](size_t k) {
    return found_by.empty() ? size_t{0} : found_by[std::min(k, found_by.size()) - 1];
  };
  const double n_answers = std::max<size_t>(1, answers.size());
  QuestionScores s;
  s.hit_at_10 = found_at(10) > 0;
  s.hit_at_50 = found_at(50) > 0;
  s.hit_at_100 = found_at(100) > 0;
  s.recall_at_10 = found_at(10) / n_answers;
  s.recall_at_50 = found_at(50) / n_answers;
  s.recall_at_100 = found_at(100) / n_answers;
  int hits = 0, hits_at_10 = 0;
  for (size_t i = 0; i < std::min<size_t>(100, top.size()); ++i) {
    hits += evidence.contains({top[i].head, top[i].relation, top[i].tail}) ? 1 : 0;
    if (i == 9) hits_at_10 = hits;
  }
  if (top.size() < 10) hits_at_10 = hits;
  // Fewer than 10 triples count the missing slots as misses (precision over 10 slots).
  s.precision_at_10 = hits_at_10 / 10.0;
  const double n_evidence = std::max<size_t>(1, evidence.size());
  s.evidence_recall_at_10 = hits_at_10 / n_evidence;
  s.evidence_recall_at_100 = hits / n_evidence;
  return s;
}

// The measures of one question added to the sums of `m` (EvalMetrics or one of its PerSource).
template <typename Means>
void Accumulate(const QuestionScores& s, Means* m) {
  ++m->questions;
  m->hit_at_10 += s.hit_at_10;
  m->hit_at_50 += s.hit_at_50;
  m->hit_at_100 += s.hit_at_100;
  m->recall_at_10 += s.recall_at_10;
  m->recall_at_50 += s.recall_at_50;
  m->recall_at_100 += s.recall_at_100;
  m->evidence_precision_at_10 += s.precision_at_10;
  m->evidence_recall_at_10 += s.evidence_recall_at_10;
  m->evidence_recall_at_100 += s.evidence_recall_at_100;
}

// Sums -> means.
template <typename Means>
void Normalize(Means* m) {
  if (m->questions == 0) return;
  for (double* v : {&m->hit_at_10, &m->hit_at_50, &m->hit_at_100, &m->recall_at_10,
                    &m->recall_at_50, &m->recall_at_100, &m->evidence_precision_at_10,
                    &m->evidence_recall_at_10, &m->evidence_recall_at_100}) {
    *v /= m->questions;
  }
}

}  // namespace

std::map<std::string, double> EvalMetrics::ToMap(const std::string& prefix) const {
  std::map<std::string, double> out = {{prefix + "questions", questions},
                                       {prefix + "hit@10", hit_at_10},
                                       {prefix + "hit@50", hit_at_50},
                                       {prefix + "hit@100", hit_at_100},
                                       {prefix + "recall@10", recall_at_10},
                                       {prefix + "recall@50", recall_at_50},
                                       {prefix + "recall@100", recall_at_100},
                                       {prefix + "evidence_precision@10", evidence_precision_at_10},
                                       {prefix + "evidence_recall@10", evidence_recall_at_10},
                                       {prefix + "evidence_recall@100", evidence_recall_at_100},
                                       {prefix + "mean_retrieve_ms", mean_retrieve_ms}};
  for (const auto& [name, t] : by_source) {
    const std::string p = prefix + name + "/";
    out[p + "questions"] = t.questions;
    out[p + "hit@10"] = t.hit_at_10;
    out[p + "hit@50"] = t.hit_at_50;
    out[p + "hit@100"] = t.hit_at_100;
    out[p + "recall@10"] = t.recall_at_10;
    out[p + "recall@50"] = t.recall_at_50;
    out[p + "recall@100"] = t.recall_at_100;
    out[p + "evidence_precision@10"] = t.evidence_precision_at_10;
    out[p + "evidence_recall@10"] = t.evidence_recall_at_10;
    out[p + "evidence_recall@100"] = t.evidence_recall_at_100;
  }
  return out;
}

absl::StatusOr<EvalMetrics> EvaluateRetriever(const Retriever& retriever,
                                              const std::vector<GeneratedQuestion>& questions,
                                              const EvalOptions& options) {
  EvalMetrics m;
  size_t n = questions.size();
  if (options.max_questions > 0) n = std::min<size_t>(n, options.max_questions);
  double total_ms = 0;
  for (size_t qi = 0; qi < n; ++qi) {
    const GeneratedQuestion& q = questions[qi];
    RetrieveQuery query;
    query.question = q.text;
    query.topic_ids = q.topics;
    query.top_k = 100;
    query.max_hops = options.max_hops;
    query.max_candidates = options.max_candidates;
    query.mode = options.mode;
    const absl::Time start = absl::Now();
    absl::StatusOr<RetrieveResult> r = retriever.Retrieve(query);
    total_ms += absl::ToDoubleMilliseconds(absl::Now() - start);
    if (!r.ok()) return r.status();
    const QuestionScores s = ScoreRetrieval(q, r->triples);
    Accumulate(s, &m);
    if (!q.source.empty()) {
      Accumulate(s, &m.by_source[q.source]);
      const size_t slash = q.source.find('/');
      if (slash != std::string::npos) Accumulate(s, &m.by_source[q.source.substr(0, slash)]);
    }
  }
  for (auto& [source, t] : m.by_source) Normalize(&t);
  Normalize(&m);
  if (m.questions > 0) m.mean_retrieve_ms = total_ms / m.questions;
  return m;
}

}  // namespace ibgraphrag::retriever
