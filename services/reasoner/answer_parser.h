// Reads an answer out of free-form LLM output without guessing. Accepted forms, in the order
// they are looked for:
//   1. JSON: {"answer": "B"} (also "ans", "label", "choice", "option"), bare or in a ``` fence;
//   2. every "ans:" item (also "answer:", "final answer:"; markdown stripped): lines starting
//      with the marker and inline items as IBGraphRAG's reasoning prompt writes them after its
//      reasoning ("Therefore, the answers are: ans: X ans: Y"). Open questions keep them all
//      (a multi-answer list); for multiple choice and fact verification they must agree, and
//      items naming different options or labels are unparseable rather than guessed;
//   3. a phrase: "the answer is B", "correct option is (B)", "the claim is supported";
//   4. a first line that is nothing but the answer: "B", "(B)", "B.", "Aspirin", "True".
// An option can be named by letter ("B", "(B)", "B)", "B." , "Option B") or by its text. A letter
// whose trailing text names a different option, or a text naming several options, is
// unparseable. Reasoning models' <think>...</think> blocks are skipped.
#ifndef IBGRAPHRAG_SERVICES_REASONER_ANSWER_PARSER_H_
#define IBGRAPHRAG_SERVICES_REASONER_ANSWER_PARSER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

struct ParsedAnswer {
  ParseStatus status = ParseStatus::kUnparseable;
  int option_index = -1;                           // multiple choice
  FactLabel fact_label = FactLabel::kUnspecified;  // fact verification
  std::string answer;  // option text, label name or free text; empty when unparseable
  // Every answer item in output order, duplicates once (open questions: the multi-answer list,
  // `answer` joins it with "; "); the one option text or label otherwise; empty when unparseable.
  std::vector<std::string> answers;
  std::string explanation;  // the "why:" line, or the output minus the answer line
  std::string error;        // why nothing was parsed (for the rationale); empty when ok
};

ParsedAnswer ParseMultipleChoice(absl::string_view output, const std::vector<std::string>& options);
// Supported/Supports/True/Yes/Correct -> kSupported; Refuted/False/No/Not supported/Incorrect
// -> kRefuted; Unknown/Insufficient/Not enough information/Uncertain -> kUnknown.
ParsedAnswer ParseFactLabel(absl::string_view output);
ParsedAnswer ParseOpenAnswer(absl::string_view output);

// Dispatches on the (resolved) task.
ParsedAnswer ParseAnswer(Task task, absl::string_view output,
                         const std::vector<std::string>& options);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_ANSWER_PARSER_H_
