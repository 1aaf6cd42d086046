// The question texts of every set under <data_dir>/qa, for alignment_eval's QA coverage and the
// alignment benchmark. The files are parsed by the one question-set loader (tools/eval/
// qa_datasets.h, library ibgr_qa_datasets); this is only the per-set projection to texts.
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

// Every question set under `data_dir`/qa (files sorted by name), questions in file order.
// NOT_FOUND when the folder is missing; INVALID_ARGUMENT naming the file and line of a
// malformed record or a file of no known format.
absl::StatusOr<std::vector<QuestionSet>> ReadQuestionSets(const std::string& data_dir);

}  // namespace ibgraphrag::alignment::eval

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_EVAL_QA_SETS_H_
