#include "services/retriever/evaluation.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/time/clock.h"

namespace ibgraphrag::retriever {

std::map<std::string, double> EvalMetrics::ToMap(const std::string& prefix) const {
  std::map<std::string, double> out = {{prefix + "questions", questions},
                                       {prefix + "recall@10", recall_at_10},
                                       {prefix + "recall@50", recall_at_50},
                                       {prefix + "recall@100", recall_at_100},
                                       {prefix + "evidence_precision@10", evidence_precision_at_10},
                                       {prefix + "mean_retrieve_ms", mean_retrieve_ms}};
  for (const auto& [name, t] : by_template) {
    const std::string p = prefix + name + "/";
    out[p + "questions"] = t.questions;
    out[p + "recall@10"] = t.recall_at_10;
    out[p + "recall@100"] = t.recall_at_100;
    out[p + "evidence_precision@10"] = t.evidence_precision_at_10;
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
    const absl::flat_hash_set<uint32_t> answers(q.answers.begin(), q.answers.end());
    const absl::flat_hash_set<std::array<uint32_t, 3>> evidence(q.evidence.begin(),
                                                                q.evidence.end());
    auto recall_at = [&](size_t k) {
      absl::flat_hash_set<uint32_t> found;
      for (size_t i = 0; i < std::min(k, r->triples.size()); ++i) {
        const ScoredTriple& t = r->triples[i];
        if (answers.contains(t.head)) found.insert(t.head);
        if (answers.contains(t.tail)) found.insert(t.tail);
      }
      return static_cast<double>(found.size()) / static_cast<double>(answers.size());
    };
    const double r10 = recall_at(10), r100 = recall_at(100);
    m.recall_at_10 += r10;
    m.recall_at_50 += recall_at(50);
    m.recall_at_100 += r100;
    int hits = 0;
    const size_t k = std::min<size_t>(10, r->triples.size());
    for (size_t i = 0; i < k; ++i) {
      const ScoredTriple& t = r->triples[i];
      hits += evidence.contains({t.head, t.relation, t.tail}) ? 1 : 0;
    }
    const double p10 = k == 0 ? 0.0 : static_cast<double>(hits) / 10.0;
    m.evidence_precision_at_10 += p10;
    if (!q.template_name.empty()) {
      EvalMetrics::PerTemplate& t = m.by_template[q.template_name];
      ++t.questions;
      t.recall_at_10 += r10;
      t.recall_at_100 += r100;
      t.evidence_precision_at_10 += p10;
    }
  }
  for (auto& [name, t] : m.by_template) {
    t.recall_at_10 /= t.questions;
    t.recall_at_100 /= t.questions;
    t.evidence_precision_at_10 /= t.questions;
  }
  m.questions = static_cast<int>(n);
  if (n > 0) {
    m.recall_at_10 /= n;
    m.recall_at_50 /= n;
    m.recall_at_100 /= n;
    m.evidence_precision_at_10 /= n;
    m.mean_retrieve_ms = total_ms / n;
  }
  return m;
}

}  // namespace ibgraphrag::retriever
