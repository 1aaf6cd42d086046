// Templated questions with known answers generated from a KG snapshot (BiomixQA style), for
// training and evaluating the retriever:
//   "Which drug treats {disease}?"                          answers: heads of drug treats disease
//   "Which gene is associated with both {d1} and {d2}?"     answers: genes associated with both
//   "Which phenotypes does {disease} present with?"         answers: presented symptoms/phenotypes
// Supervision ("evidence") = the triples on shortest paths between the topic and answer entities
// (KgStore::ShortestPaths, undirected, at most max_hops edges). The train/dev split is BY
// ENTITY: every disease is assigned to dev with probability dev_fraction (hash of its external
// id), and a question goes to dev when any of its topic entities is a dev entity, to train
// otherwise, so no dev topic entity is ever seen in training.
#ifndef IBGRAPHRAG_SERVICES_RETRIEVER_TRAINING_DATA_H_
#define IBGRAPHRAG_SERVICES_RETRIEVER_TRAINING_DATA_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/kgstore/kg_store.h"

namespace ibgraphrag::retriever {

struct GeneratedQuestion {
  std::string text;
  std::string template_name;                      // "drug_treats", "shared_gene", "phenotypes"
  std::vector<uint32_t> topics;                   // topic entity ids
  std::vector<uint32_t> answers;                  // answer entity ids
  std::vector<std::array<uint32_t, 3>> evidence;  // (head, relation, tail) on shortest paths
};

struct QuestionSet {
  std::vector<GeneratedQuestion> train;
  std::vector<GeneratedQuestion> dev;
  // SHA-256 over every question's text, topics, answers and split: identifies the data a
  // model was trained on (recorded in the manifest).
  std::string hash;
};

struct QuestionOptions {
  // Questions kept per template (before the split), deterministic sample; 0 = all.
  int max_per_template = 1500;
  // Questions with more answers than this are skipped (too vague to supervise).
  int max_answers = 20;
  // Fraction of diseases held out for dev, 0..1.
  double dev_fraction = 0.2;
  // Longest supervision path in edges (the retrieval hops), 1..4.
  int max_hops = 2;
  // Shortest paths kept per question as evidence.
  int max_paths_per_question = 50;
  // Seed of the per-template sampling.
  uint64_t seed = 1;
};

// FAILED_PRECONDITION when the snapshot lacks the relations the templates need.
absl::StatusOr<QuestionSet> GenerateQuestions(const kgstore::KgStore& store,
                                              const QuestionOptions& options);

}  // namespace ibgraphrag::retriever

#endif  // IBGRAPHRAG_SERVICES_RETRIEVER_TRAINING_DATA_H_
