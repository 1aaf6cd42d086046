#include "services/reasoner/reasoner_types.h"

#include <string>
#include <vector>

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
  return request.options.empty() ? Task::kOpen : Task::kMultipleChoice;
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
