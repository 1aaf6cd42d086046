#include "services/alignment/eval/qa_sets.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "common/qa/qa_datasets.h"
#include "common/status_macros.h"

namespace ibgraphrag::alignment::eval {
namespace {

namespace qa = ::ibgraphrag::eval;

// The set's name in the coverage report: the file stem, with MMLU's "-test" split suffix dropped
// ("mmlu-anatomy-test" -> "mmlu-anatomy") because every MMLU set is its test split.
std::string SetName(const qa::QaDataset& dataset) {
  absl::string_view name = dataset.name;
  if (absl::StartsWith(name, "mmlu-")) absl::ConsumeSuffix(&name, "-test");
  return std::string(name);
}

}  // namespace

absl::StatusOr<std::vector<QuestionSet>> ReadQuestionSets(const std::string& data_dir) {
  // The files are read by the one question-set loader of `ibgr eval`; coverage only needs the
  // question texts.
  IBGR_ASSIGN_OR_RETURN(std::vector<std::string> paths, qa::ExpandDatasetPaths(data_dir + "/qa"));
  std::vector<QuestionSet> sets;
  for (const std::string& path : paths) {
    IBGR_ASSIGN_OR_RETURN(qa::QaDataset dataset, qa::LoadDataset(path));
    QuestionSet set;
    set.name = SetName(dataset);
    set.questions.reserve(dataset.items.size());
    for (qa::QaItem& item : dataset.items) set.questions.push_back(std::move(item.question));
    sets.push_back(std::move(set));
  }
  return sets;
}

}  // namespace ibgraphrag::alignment::eval
