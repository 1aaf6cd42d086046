// Retrieval quality on training-data questions (templates and real QA sets), measured through the
// real Retrieve path.
//   answer hit@K         1 when any answer entity appears (as head or tail) among the top-K
//                        retrieved triples, else 0; averaged over questions (the issue-13 table)
//   answer recall@K      fraction of a question's answer entities that appear in the top K,
//                        averaged over questions. Equal to hit@K for questions with one answer
//                        (every real QA question); lower for templates with several answers.
//   evidence precision@10  fraction of the top-10 triples that are supervision triples (on a
//                        shortest question-entity -> answer path), averaged over questions
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_EVALUATION_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_EVALUATION_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/retriever/retriever.h"
#include "services/retriever/training_data.h"

namespace ibgraphrag::retriever {

struct EvalOptions {
  ScoringMode mode = ScoringMode::kIbrp;
  int max_hops = 2;        // as in training
  int max_candidates = 0;  // subgraph cap; 0 = the served model's trained cap (as served)
  int max_questions = 0;   // evaluate the first N only; 0 = all
};

struct EvalMetrics {
  int questions = 0;
  double hit_at_10 = 0;
  double hit_at_50 = 0;
  double hit_at_100 = 0;
  double recall_at_10 = 0;
  double recall_at_50 = 0;
  double recall_at_100 = 0;
  double evidence_precision_at_10 = 0;
  double evidence_recall_at_10 = 0;  // supervision triples found in the top 10 / 100
  double evidence_recall_at_100 = 0;
  double mean_retrieve_ms = 0;
  // The same means per source (GeneratedQuestion::source, "template/drug_treats", "qa/...") and
  // per kind of source, the part before the first '/' ("template", "qa": all real questions).
  struct PerSource {
    int questions = 0;
    double hit_at_10 = 0;
    double hit_at_50 = 0;
    double hit_at_100 = 0;
    double recall_at_10 = 0;
    double recall_at_50 = 0;
    double recall_at_100 = 0;
    double evidence_precision_at_10 = 0;
    double evidence_recall_at_10 = 0;
    double evidence_recall_at_100 = 0;
  };
  std::map<std::string, PerSource> by_source;
  // "hit@10" ... and "template/drug_treats/hit@10" ... as a flat map (manifest metrics, JSON),
  // every key prefixed with `prefix`.
  std::map<std::string, double> ToMap(const std::string& prefix) const;
};

absl::StatusOr<EvalMetrics> EvaluateRetriever(const Retriever& retriever,
                                              const std::vector<GeneratedQuestion>& questions,
                                              const EvalOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_EVALUATION_H_
