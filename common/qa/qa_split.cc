#include "common/qa/qa_split.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/text_words.h"

namespace ibgraphrag::eval {
namespace {

// FNV-1a over the bytes, then splitmix64's finaliser so nearby keys spread over the whole range.
uint64_t SeededHash(absl::string_view key, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9e3779b97f4a7c15ull);
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

absl::string_view QaSplitName(QaSplit split) {
  switch (split) {
    case QaSplit::kAll:
      return "all";
    case QaSplit::kTrain:
      return "train";
    case QaSplit::kValidation:
      return "validation";
    case QaSplit::kTest:
      return "test";
  }
  return "all";
}

absl::StatusOr<QaSplit> ParseQaSplit(absl::string_view name, absl::string_view field) {
  for (QaSplit s : {QaSplit::kAll, QaSplit::kTrain, QaSplit::kValidation, QaSplit::kTest}) {
    if (name == QaSplitName(s)) return s;
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": unknown split \"", name,
                                                 "\" (accepted: all, train, validation, test)"));
}

QaSplit SplitOfKey(absl::string_view key, uint64_t seed) {
  // The top 53 bits as a fraction in [0, 1).
  const double u = static_cast<double>(SeededHash(key, seed) >> 11) * 0x1.0p-53;
  if (u < kTrainFraction) return QaSplit::kTrain;
  if (u < kTrainFraction + kValidationFraction) return QaSplit::kValidation;
  return QaSplit::kTest;
}

std::string NormalizeQuestionForSplit(absl::string_view question) {
  std::string out;
  out.reserve(question.size());
  bool in_word = false;
  for (unsigned char c : question) {
    if (common::IsWordByte(c)) {
      if (!in_word && !out.empty()) out.push_back(' ');
      out.push_back(absl::ascii_tolower(c));
      in_word = true;
    } else {
      in_word = false;
    }
  }
  return out;
}

QaSplit SplitOfQuestion(absl::string_view question, uint64_t seed) {
  return SplitOfKey(NormalizeQuestionForSplit(question), seed);
}

void KeepSplit(QaSplit wanted, uint64_t seed, std::vector<QaItem>* items) {
  if (wanted == QaSplit::kAll) return;
  items->erase(std::remove_if(items->begin(), items->end(),
                              [&](const QaItem& item) {
                                // A set that names its own parts (the lookup set: dev / test)
                                // keeps them: dev is the validation part.
                                if (!item.file_split.empty()) {
                                  const QaSplit own = item.file_split == "test" ? QaSplit::kTest
                                                      : item.file_split == "train"
                                                          ? QaSplit::kTrain
                                                          : QaSplit::kValidation;
                                  return own != wanted;
                                }
                                return SplitOfQuestion(item.question, seed) != wanted;
                              }),
               items->end());
}

}  // namespace ibgraphrag::eval
