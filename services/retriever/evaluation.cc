#include "services/retriever/evaluation.h"

#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "services/retriever/triple_text.h"

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

// One question's judges (issue 27); a negative value = the judge does not apply.
struct JudgeScores {
  double question_only_hit_at_10 = -1, question_only_hit_at_100 = -1;
  double answer_above_distractors = -1;
  double served_answer_above_distractors = -1, served_distractor_hit_at_10 = -1;
  double grounding = -1, grounding_beyond_topics = -1;
  double tokens = -1, within_budget = -1;
};

constexpr size_t kNotFound = std::numeric_limits<size_t>::max();

// Rank (0-based) of the first of `top` naming an entity of `ids`, or kNotFound.
size_t FirstRankNaming(const std::vector<ScoredTriple>& top,
                       const absl::flat_hash_set<uint32_t>& ids) {
  for (size_t i = 0; i < top.size(); ++i) {
    if (ids.contains(top[i].head) || ids.contains(top[i].tail)) return i;
  }
  return kNotFound;
}

// 1 when a gold answer's first triple comes before every distractor's (and exists), else 0.
double AnswerBeforeDistractors(const std::vector<ScoredTriple>& top,
                               const absl::flat_hash_set<uint32_t>& answers,
                               const absl::flat_hash_set<uint32_t>& distractors) {
  const size_t answer = FirstRankNaming(top, answers);
  return answer != kNotFound && answer < FirstRankNaming(top, distractors) ? 1 : 0;
}

// The by_source keys a question's measures are added to: its source and the kind of source (the
// part before the first '/'); none without a source.
std::vector<std::string> SourceKeys(const std::string& source) {
  if (source.empty()) return {};
  std::vector<std::string> keys = {source};
  const size_t slash = source.find('/');
  if (slash != std::string::npos) keys.push_back(source.substr(0, slash));
  return keys;
}

void JudgeServedRetrieval(const GeneratedQuestion& q, const RetrieveResult& r, int budget,
                          JudgeScores* j) {
  const size_t n = std::min<size_t>(100, r.triples.size());
  if (!q.explanation_entities.empty()) {
    const absl::flat_hash_set<uint32_t> named(q.explanation_entities.begin(),
                                              q.explanation_entities.end());
    absl::flat_hash_set<uint32_t> beyond = named;
    for (uint32_t t : q.topics) beyond.erase(t);
    int grounded = 0, grounded_beyond = 0;
    for (size_t i = 0; i < std::min<size_t>(10, n); ++i) {
      const ScoredTriple& t = r.triples[i];
      grounded += named.contains(t.head) || named.contains(t.tail) ? 1 : 0;
      grounded_beyond += beyond.contains(t.head) || beyond.contains(t.tail) ? 1 : 0;
    }
    // Over 10 slots, as precision@10.
    j->grounding = grounded / 10.0;
    j->grounding_beyond_topics = grounded_beyond / 10.0;
  }
  auto name = [&](uint32_t id) -> absl::string_view {
    auto it = r.entities.find(id);
    return it == r.entities.end() ? absl::string_view() : absl::string_view(it->second.name);
  };
  int64_t tokens = 0;
  int within = 0;
  for (size_t i = 0; i < n; ++i) {
    const ScoredTriple& t = r.triples[i];
    auto rel = r.relations.find(t.relation);
    const std::string line = VerbaliseTriple(
        name(t.head), rel == r.relations.end() ? "" : rel->second.name, name(t.tail));
    // The prompt's line is "(head, relation, tail)\n": 5 bytes more; ceil(bytes / 4) tokens.
    tokens += static_cast<int64_t>((line.size() + 5 + 3) / 4);
    if (tokens <= budget) ++within;
  }
  j->tokens = static_cast<double>(tokens);
  j->within_budget = within;
}

void AccumulateJudges(const JudgeScores& s, JudgeMetrics* m) {
  if (s.question_only_hit_at_10 >= 0) {
    ++m->question_only_questions;
    m->question_only_hit_at_10 += s.question_only_hit_at_10;
    m->question_only_hit_at_100 += s.question_only_hit_at_100;
  }
  if (s.answer_above_distractors >= 0) {
    ++m->distractor_questions;
    m->answer_above_distractors += s.answer_above_distractors;
    m->served_answer_above_distractors += s.served_answer_above_distractors;
    m->served_distractor_hit_at_10 += s.served_distractor_hit_at_10;
  }
  if (s.grounding >= 0) {
    ++m->explained_questions;
    m->explanation_grounding_at_10 += s.grounding;
    m->explanation_grounding_beyond_topics_at_10 += s.grounding_beyond_topics;
  }
  if (s.tokens >= 0) {
    ++m->token_questions;
    m->evidence_tokens_top100 += s.tokens;
    m->triples_within_budget += s.within_budget;
  }
}

void NormalizeJudges(JudgeMetrics* m) {
  auto mean = [](double* v, int n) {
    if (n > 0) *v /= n;
  };
  mean(&m->question_only_hit_at_10, m->question_only_questions);
  mean(&m->question_only_hit_at_100, m->question_only_questions);
  mean(&m->answer_above_distractors, m->distractor_questions);
  mean(&m->served_answer_above_distractors, m->distractor_questions);
  mean(&m->served_distractor_hit_at_10, m->distractor_questions);
  mean(&m->explanation_grounding_at_10, m->explained_questions);
  mean(&m->explanation_grounding_beyond_topics_at_10, m->explained_questions);
  mean(&m->evidence_tokens_top100, m->token_questions);
  mean(&m->triples_within_budget, m->token_questions);
}

void JudgesToMap(const JudgeMetrics& j, const std::string& p, std::map<std::string, double>* out) {
  (*out)[p + "question_only/questions"] = j.question_only_questions;
  (*out)[p + "question_only/hit@10"] = j.question_only_hit_at_10;
  (*out)[p + "question_only/hit@100"] = j.question_only_hit_at_100;
  (*out)[p + "question_only/distractor_questions"] = j.distractor_questions;
  (*out)[p + "question_only/answer_above_distractors"] = j.answer_above_distractors;
  (*out)[p + "served/answer_above_distractors"] = j.served_answer_above_distractors;
  (*out)[p + "served/distractor_hit@10"] = j.served_distractor_hit_at_10;
  (*out)[p + "explanation/questions"] = j.explained_questions;
  (*out)[p + "explanation/grounding@10"] = j.explanation_grounding_at_10;
  (*out)[p + "explanation/grounding_beyond_topics@10"] =
      j.explanation_grounding_beyond_topics_at_10;
  (*out)[p + "evidence_tokens/top100"] = j.evidence_tokens_top100;
  (*out)[p + "evidence_tokens/triples_within_budget"] = j.triples_within_budget;
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
  if (judges.token_questions > 0) {
    JudgesToMap(judges, prefix + "judge/", &out);
    for (const auto& [name, j] : judges_by_source) {
      JudgesToMap(j, prefix + name + "/judge/", &out);
    }
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
    const std::vector<std::string> keys = SourceKeys(q.source);
    for (const std::string& key : keys) Accumulate(s, &m.by_source[key]);
    if (!options.judges) continue;
    JudgeScores j;
    JudgeServedRetrieval(q, *r, options.evidence_token_budget, &j);
    if (!q.options.empty() && !q.question_entities.empty()) {
      // The question alone: its own entities are the topics, the options are not.
      query.topic_ids = q.question_entities;
      IBGR_ASSIGN_OR_RETURN(RetrieveResult alone, retriever.Retrieve(query));
      const absl::flat_hash_set<uint32_t> answers(q.answers.begin(), q.answers.end());
      absl::flat_hash_set<uint32_t> distractors(q.topics.begin(), q.topics.end());
      for (uint32_t e : q.question_entities) distractors.erase(e);
      for (uint32_t e : q.answers) distractors.erase(e);
      const size_t answer_rank = FirstRankNaming(alone.triples, answers);
      j.question_only_hit_at_10 = answer_rank < 10 ? 1 : 0;
      j.question_only_hit_at_100 = answer_rank < 100 ? 1 : 0;
      if (!distractors.empty()) {
        j.answer_above_distractors = AnswerBeforeDistractors(alone.triples, answers, distractors);
        j.served_answer_above_distractors =
            AnswerBeforeDistractors(r->triples, answers, distractors);
        j.served_distractor_hit_at_10 = FirstRankNaming(r->triples, distractors) < 10 ? 1 : 0;
      }
    }
    AccumulateJudges(j, &m.judges);
    for (const std::string& key : keys) AccumulateJudges(j, &m.judges_by_source[key]);
  }
  for (auto& [source, t] : m.by_source) Normalize(&t);
  Normalize(&m);
  NormalizeJudges(&m.judges);
  for (auto& [source, j] : m.judges_by_source) NormalizeJudges(&j);
  if (m.questions > 0) m.mean_retrieve_ms = total_ms / m.questions;
  return m;
}

}  // namespace ibgraphrag::retriever
