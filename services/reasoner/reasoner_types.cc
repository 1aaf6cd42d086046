#include "services/reasoner/reasoner_types.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace ibgraphrag::reasoner {

absl::string_view TaskName(Task task) {
  switch (task) {
    case Task::kMultipleChoice:
      return "MULTIPLE_CHOICE";
    case Task::kFactVerification:
      return "FACT_VERIFICATION";
    case Task::kOpen:
      return "OPEN";
    case Task::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

absl::string_view FactLabelName(FactLabel label) {
  switch (label) {
    case FactLabel::kSupported:
      return "SUPPORTED";
    case FactLabel::kRefuted:
      return "REFUTED";
    case FactLabel::kUnknown:
      return "UNKNOWN";
    case FactLabel::kUnspecified:
      break;
  }
  return "UNSPECIFIED";
}

Task ResolveTask(const ReasonRequest& request) {
  if (request.task != Task::kUnspecified) return request.task;
  if (!request.options.empty()) return Task::kMultipleChoice;
  return common::IsYesNoQuestion(request.question) ? Task::kFactVerification : Task::kOpen;
}

absl::string_view QuestionClassName(QuestionClass question_class) {
  switch (question_class) {
    case QuestionClass::kKgLookup:
      return "kg_lookup";
    case QuestionClass::kClinicalReasoning:
      return "clinical_reasoning";
    case QuestionClass::kClaim:
      return "claim";
  }
  return "clinical_reasoning";
}

namespace {
int WordCount(absl::string_view text) {
  int words = 0;
  for (absl::string_view w : absl::StrSplit(text, absl::ByAnyChar(" \t\n\r"), absl::SkipEmpty())) {
    words += std::any_of(w.begin(), w.end(), [](char c) { return absl::ascii_isalnum(c); }) ? 1 : 0;
  }
  return words;
}

// Sentence ends: '.', '?' or '!' followed by a space or the end ("e.g. " counts; a vignette has
// many more than two anyway).
int SentenceCount(absl::string_view text) {
  int sentences = 0;
  bool words_since_end = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (absl::ascii_isalnum(c)) words_since_end = true;
    const bool end = (c == '.' || c == '?' || c == '!') &&
                     (i + 1 == text.size() || absl::ascii_isspace(text[i + 1]));
    if (end && words_since_end) {
      ++sentences;
      words_since_end = false;
    }
  }
  return sentences + (words_since_end ? 1 : 0);
}
}  // namespace

QuestionClass ClassifyQuestion(absl::string_view question, const std::vector<std::string>& options,
                               Task task, const common::QuestionIntent& intent) {
  if (task == Task::kFactVerification) return QuestionClass::kClaim;
  if (intent.kinds.empty()) return QuestionClass::kClinicalReasoning;
  if (WordCount(question) > kMaxLookupQuestionWords || SentenceCount(question) > 2) {
    return QuestionClass::kClinicalReasoning;
  }
  for (const std::string& option : options) {
    if (WordCount(option) > kMaxLookupOptionWords) return QuestionClass::kClinicalReasoning;
  }
  return QuestionClass::kKgLookup;
}

std::string OptionLetter(int index) {
  if (index < 0 || index >= 26) return "";
  return std::string(1, static_cast<char>('A' + index));
}

std::vector<double> SampleTemperatures(const SelfConsistencyOptions& options) {
  if (!options.temperatures.empty()) return options.temperatures;
  // Greedy first so a single sample (and the tie-break) is the deterministic answer; then a
  // spread that diversifies reasoning without drifting into incoherent text.
  static constexpr double kSchedule[] = {0.0, 0.3, 0.5, 0.7, 0.9, 1.0};
  constexpr int kScheduleSize = sizeof(kSchedule) / sizeof(kSchedule[0]);
  const int samples = options.samples > 1 ? options.samples : 1;
  std::vector<double> temperatures;
  temperatures.reserve(samples);
  for (int i = 0; i < samples; ++i) {
    temperatures.push_back(kSchedule[i < kScheduleSize ? i : kScheduleSize - 1]);
  }
  return temperatures;
}

}  // namespace ibgraphrag::reasoner
