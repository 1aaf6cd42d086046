// Retrieval quality on generated questions, measured through the real Retrieve path.
//   answer recall@K      fraction of a question's answer entities that appear (as head or
//                        tail) in the top-K retrieved triples, averaged over questions
//   evidence precision@10  fraction of the top-10 triples that lie on a shortest
//                        topic-answer path (the supervision), averaged over questions
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
  int max_hops = 2;            // as in training
  int max_candidates = 10000;  // subgraph cap, as served
  int max_questions = 0;       // evaluate the first N only; 0 = all
};

struct EvalMetrics {
  int questions = 0;
  double recall_at_10 = 0;
  double recall_at_50 = 0;
  double recall_at_100 = 0;
  double evidence_precision_at_10 = 0;
  double mean_retrieve_ms = 0;
  // The same means per question template (GeneratedQuestion::template_name).
  struct PerTemplate {
    int questions = 0;
    double recall_at_10 = 0;
    double recall_at_100 = 0;
    double evidence_precision_at_10 = 0;
  };
  std::map<std::string, PerTemplate> by_template;
  // "recall@10" ... and "drug_treats/recall@10" ... as a flat map (manifest metrics, JSON).
  std::map<std::string, double> ToMap(const std::string& prefix) const;
};

absl::StatusOr<EvalMetrics> EvaluateRetriever(const Retriever& retriever,
                                              const std::vector<GeneratedQuestion>& questions,
                                              const EvalOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_EVALUATION_H_
