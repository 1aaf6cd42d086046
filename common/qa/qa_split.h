// The one train / validation / test rule for questions, shared by retriever training (which
// trains on `train`, picks epochs on `validation`) and `ibgr eval --qa_split` (which scores only
// the held-out `test` questions of a QA file), so that no report is made on questions the
// retriever trained on. A key (a question's normalised text, or a template's entity id) falls in
// a part by a seeded 64-bit hash: the first 70% of the hash range is train, the next 15%
// validation, the last 15% test. Deterministic across runs, machines and file orders.
#ifndef IBGRAPHRAG_COMMON_QA_QA_SPLIT_H_
#define IBGRAPHRAG_COMMON_QA_QA_SPLIT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/qa/qa_datasets.h"

namespace ibgraphrag::eval {

enum class QaSplit {
  kAll,  // no filter (only meaningful as a selection, never a question's part)
  kTrain,
  kValidation,
  kTest,
};

// The seed retriever_train's --split_seed and ibgr eval's --split_seed default to.
inline constexpr uint64_t kDefaultSplitSeed = 0;
// Parts of the hash range: [0, 0.70) train, [0.70, 0.85) validation, [0.85, 1) test.
inline constexpr double kTrainFraction = 0.70;
inline constexpr double kValidationFraction = 0.15;

// "all", "train", "validation", "test".
absl::string_view QaSplitName(QaSplit split);
// Inverse of QaSplitName; INVALID_ARGUMENT naming `field` and the accepted values otherwise.
absl::StatusOr<QaSplit> ParseQaSplit(absl::string_view name, absl::string_view field = "qa_split");

// The part `key` falls in under `seed` (never kAll).
QaSplit SplitOfKey(absl::string_view key, uint64_t seed);

// A question's split key: lower-case ASCII words (common::IsWordByte runs) joined by one space,
// so case, punctuation and spacing differences between copies of a question do not move it.
std::string NormalizeQuestionForSplit(absl::string_view question);

// SplitOfKey(NormalizeQuestionForSplit(question), seed).
QaSplit SplitOfQuestion(absl::string_view question, uint64_t seed);

// Whether a question in part `part` is selected by `wanted` (kAll selects every part).
inline bool SplitSelects(QaSplit wanted, QaSplit part) {
  return wanted == QaSplit::kAll || wanted == part;
}

// Drops the items of `items` whose question is not in `wanted` under `seed` (kAll keeps all).
// Items that carry their own part (QaItem::file_split: "dev" = validation, "test", "train")
// keep it instead of the hash rule.
void KeepSplit(QaSplit wanted, uint64_t seed, std::vector<QaItem>* items);

}  // namespace ibgraphrag::eval

#endif  // IBGRAPHRAG_COMMON_QA_QA_SPLIT_H_
