// The reasoner's reading of free-form LLM output (services/reasoner/answer_parser.h), for every
// task. The input is "<options block>\0<model output>": the options block holds up to 26
// newline-separated options (empty or absent = no options), the rest is what the model said.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "services/reasoner/answer_parser.h"
#include "services/reasoner/reasoner_types.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;
using ibgraphrag::reasoner::FactLabel;
using ibgraphrag::reasoner::ParsedAnswer;
using ibgraphrag::reasoner::ParseStatus;
using ibgraphrag::reasoner::Task;

void CheckCommon(const ParsedAnswer& parsed) {
  if (parsed.status == ParseStatus::kOk) {
    Check(parsed.error.empty(), "a parsed answer carries an error");
    Check(!parsed.answers.empty(), "a parsed answer has no answer items");
  } else {
    Check(!parsed.error.empty(), "an unparseable answer does not say why");
    Check(parsed.option_index == -1 && parsed.fact_label == FactLabel::kUnspecified,
          "an unparseable answer names an option or a label");
  }
}

void CheckMultipleChoice(const ParsedAnswer& parsed, const std::vector<std::string>& options) {
  CheckCommon(parsed);
  if (parsed.status != ParseStatus::kOk) return;
  Check(parsed.option_index >= 0 && parsed.option_index < static_cast<int>(options.size()),
        "a parsed option index is outside the options");
  Check(parsed.answer == options[parsed.option_index], "the answer is not the chosen option");
}

void CheckFactLabel(const ParsedAnswer& parsed) {
  CheckCommon(parsed);
  if (parsed.status != ParseStatus::kOk) return;
  Check(parsed.fact_label == FactLabel::kSupported || parsed.fact_label == FactLabel::kRefuted ||
            parsed.fact_label == FactLabel::kUnknown,
        "a parsed fact label is not supported/refuted/unknown");
}

void CheckOpen(const ParsedAnswer& parsed) {
  CheckCommon(parsed);
  if (parsed.status != ParseStatus::kOk) return;
  for (const std::string& item : parsed.answers) Check(!item.empty(), "an empty answer item");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  std::vector<std::string> options;
  absl::string_view output = input;
  if (split != absl::string_view::npos) {
    for (absl::string_view option : absl::StrSplit(input.substr(0, split), '\n')) {
      if (options.size() == 26) break;
      options.emplace_back(option);
    }
    output = input.substr(split + 1);
  }
  if (!options.empty()) {
    CheckMultipleChoice(ibgraphrag::reasoner::ParseMultipleChoice(output, options), options);
    CheckMultipleChoice(ParseAnswer(Task::kMultipleChoice, output, options), options);
  }
  CheckFactLabel(ibgraphrag::reasoner::ParseFactLabel(output));
  CheckOpen(ibgraphrag::reasoner::ParseOpenAnswer(output));
  // kUnspecified is resolved by the caller; the parser must still not crash on it.
  ParseAnswer(Task::kUnspecified, output, options);
  ParseAnswer(Task::kFactVerification, output, options);
  ParseAnswer(Task::kOpen, output, options);
  return 0;
}
