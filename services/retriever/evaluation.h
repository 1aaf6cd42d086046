// Retrieval quality on training-data questions (templates and real QA sets), measured through the
// real Retrieve path.
//   answer hit@K         1 when any answer entity appears (as head or tail) among the top-K
//                        retrieved triples, else 0; averaged over questions (the issue-13 table)
//   answer recall@K      fraction of a question's answer entities that appear in the top K,
//                        averaged over questions. Equal to hit@K for questions with one answer
//                        (every real QA question); lower for templates with several answers.
//   evidence precision@10  fraction of the top-10 triples that are supervision triples (on a
//                        shortest question-entity -> answer path), averaged over questions
// Judges that are not the supervision labels (EvalOptions::judges; issue 27):
//   question-only        the question retrieved from the entities of its text alone (the options
//                        are not topics): is a gold answer entity in the top 10 / 100, and does it
//                        appear before every distractor's entity (questions with options and at
//                        least one aligned distractor)
//   explanation grounding  share of the top-10 triples (as served) naming an entity the expert
//                        explanation names (MedMCQA `exp`); "beyond topics" counts only
//                        explanation entities that are not topics themselves
//   evidence tokens      the top 100 written one triple per line as the reasoner's prompt does,
//                        "(head, relation, tail)", tokens approximated as ceil(bytes / 4) per line
//                        as its prompt builder does (relation descriptions not counted): their
//                        total, and how many fit the reasoner's default budget (4,000 tokens)
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
  bool judges = false;     // also the judges above (one more Retrieve per question with options)
  int evidence_token_budget = 4000;  // the reasoner's default (reasoner.h)
};

// The judges' means over the questions each applies to (counts say how many).
struct JudgeMetrics {
  int question_only_questions = 0;  // questions with options and a question entity
  double question_only_hit_at_10 = 0;
  double question_only_hit_at_100 = 0;
  int distractor_questions = 0;  // ... of which with an aligned distractor
  double answer_above_distractors = 0;
  // The same order test on the served retrieval (the options are topics there): a scorer that
  // only prefers the options' neighbourhoods raises hit@K without raising this.
  double served_answer_above_distractors = 0;
  double served_distractor_hit_at_10 = 0;  // some distractor's entity in the served top 10
  int explained_questions = 0;             // questions whose explanation names an entity
  double explanation_grounding_at_10 = 0;
  double explanation_grounding_beyond_topics_at_10 = 0;
  int token_questions = 0;
  double evidence_tokens_top100 = 0;
  double triples_within_budget = 0;
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
  // With EvalOptions::judges: overall, and per source and kind of source as by_source.
  JudgeMetrics judges;
  std::map<std::string, JudgeMetrics> judges_by_source;
  // "hit@10" ... and "template/drug_treats/hit@10" ... as a flat map (manifest metrics, JSON),
  // every key prefixed with `prefix`.
  std::map<std::string, double> ToMap(const std::string& prefix) const;
};

absl::StatusOr<EvalMetrics> EvaluateRetriever(const Retriever& retriever,
                                              const std::vector<GeneratedQuestion>& questions,
                                              const EvalOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_EVALUATION_H_
