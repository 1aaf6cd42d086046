// Readers for the question files under <data_dir>/qa (MedMCQA JSON lines, MMLU CSV, PubMedQA
// JSON, BiomixQA CSV), shared by the eval tool and the benchmark.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_QA_SETS_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_QA_SETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ibgraphrag::alignment::eval {

struct QuestionSet {
  std::string name;  // "medmcqa-dev", "mmlu-professional_medicine", ...
  std::vector<std::string> questions;
};

// RFC 4180 records (quoted fields may hold commas, doubled quotes and newlines).
std::vector<std::vector<std::string>> ParseCsv(const std::string& content);

// Every question set under `data_dir`/qa, questions in file order.
absl::StatusOr<std::vector<QuestionSet>> ReadQuestionSets(const std::string& data_dir);

}  // namespace ibgraphrag::alignment::eval

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_QA_SETS_H_
