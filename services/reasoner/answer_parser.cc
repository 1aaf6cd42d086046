#include "services/reasoner/answer_parser.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "services/reasoner/text_util.h"

namespace ibgraphrag::reasoner {
namespace {

using Json = nlohmann::json;

// Where the answer was found: the candidate text and the line it came from (for explanation).
struct Candidate {
  std::string text;
  int line = -1;  // index into the output's lines; -1 for JSON
};

struct Choice {
  int index = -1;
  std::string error;
};

absl::string_view StripThinking(absl::string_view text) {
  const size_t end = text.rfind("</think>");
  if (end != absl::string_view::npos) text.remove_prefix(end + 8);
  return absl::StripAsciiWhitespace(text);
}

// Drops markdown emphasis/code marks and list/quote/heading markers around a line.
std::string CleanLine(absl::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    if (c != '*' && c != '`') out.push_back(c);
  }
  absl::string_view view = absl::StripAsciiWhitespace(out);
  while (!view.empty() && (view.front() == '-' || view.front() == '>' || view.front() == '#')) {
    view.remove_prefix(1);
    view = absl::StripLeadingAsciiWhitespace(view);
  }
  return std::string(view);
}

std::vector<std::string> CleanLines(absl::string_view text) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) lines.push_back(CleanLine(line));
  return lines;
}

bool ConsumePrefixIgnoreCase(absl::string_view* text, absl::string_view prefix) {
  if (!absl::StartsWithIgnoreCase(*text, prefix)) return false;
  text->remove_prefix(prefix.size());
  return true;
}

std::optional<Candidate> FindJsonAnswer(absl::string_view text) {
  const size_t open = text.find('{');
  const size_t close = text.rfind('}');
  if (open == absl::string_view::npos || close == absl::string_view::npos || close < open) {
    return std::nullopt;
  }
  const absl::string_view object = text.substr(open, close - open + 1);
  Json json = Json::parse(object.begin(), object.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return std::nullopt;
  for (const char* key : {"answer", "ans", "final_answer", "label", "choice", "option"}) {
    auto it = json.find(key);
    if (it == json.end()) continue;
    if (it->is_string()) return Candidate{it->get<std::string>(), -1};
    if (it->is_boolean()) return Candidate{it->get<bool>() ? "true" : "false", -1};
  }
  return std::nullopt;
}

// The first "ans:" line (or "answer:" / "final answer:"); its text, or the next non-empty line
// when the marker stands alone.
std::optional<Candidate> FindAnsLine(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    bool found = false;
    for (absl::string_view marker : {"ans:", "ans :", "final answer:", "answer:", "answer :"}) {
      if (ConsumePrefixIgnoreCase(&line, marker)) {
        found = true;
        break;
      }
    }
    if (!found) continue;
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) return Candidate{std::string(line), static_cast<int>(i)};
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (!lines[j].empty()) return Candidate{lines[j], static_cast<int>(j)};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The text after the earliest of `phrases` (case-insensitive) up to the end of its line.
std::optional<Candidate> FindPhrase(const std::vector<std::string>& lines,
                                    const std::vector<absl::string_view>& phrases) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string lower = absl::AsciiStrToLower(lines[i]);
    size_t best = std::string::npos;
    size_t best_len = 0;
    for (absl::string_view phrase : phrases) {
      const size_t pos = absl::string_view(lower).find(phrase);
      if (pos != std::string::npos && (best == std::string::npos || pos < best)) {
        best = pos;
        best_len = phrase.size();
      }
    }
    if (best == std::string::npos) continue;
    absl::string_view rest = absl::string_view(lines[i]).substr(best + best_len);
    rest = absl::StripLeadingAsciiWhitespace(rest);
    absl::ConsumePrefix(&rest, ":");
    rest = absl::StripAsciiWhitespace(rest);
    if (!rest.empty()) return Candidate{std::string(rest), static_cast<int>(i)};
  }
  return std::nullopt;
}

const std::vector<absl::string_view>& ChoicePhrases() {
  static const auto* const kPhrases = new std::vector<absl::string_view>{
      "the correct answer is", "the answer is",   "correct answer is", "correct option is",
      "correct choice is",     "answer would be", "answer is",         "the best answer is"};
  return *kPhrases;
}

// "Option B", "Choice (B)": the word carries no meaning of its own.
absl::string_view StripChoiceWord(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  for (absl::string_view word : {"option", "choice"}) {
    absl::string_view probe = text;
    if (ConsumePrefixIgnoreCase(&probe, word) && !probe.empty() &&
        (probe.front() == ' ' || probe.front() == ':')) {
      probe.remove_prefix(1);
      return absl::StripAsciiWhitespace(probe);
    }
  }
  return text;
}

bool IsWordChar(char c) { return absl::ascii_isalnum(c) || static_cast<unsigned char>(c) >= 0x80; }

// Options whose normalised text is a phrase of `normalized`, minus those contained in another
// match ("diabetes" inside "diabetes insipidus").
std::vector<int> OptionsMentioned(absl::string_view normalized,
                                  const std::vector<std::string>& option_norms) {
  std::vector<int> matches;
  for (size_t i = 0; i < option_norms.size(); ++i) {
    if (ContainsPhrase(normalized, option_norms[i])) matches.push_back(static_cast<int>(i));
  }
  std::vector<int> maximal;
  for (int i : matches) {
    bool inside_other = false;
    for (int j : matches) {
      if (j != i && option_norms[j] != option_norms[i] &&
          ContainsPhrase(option_norms[j], option_norms[i])) {
        inside_other = true;
      }
    }
    if (!inside_other) maximal.push_back(i);
  }
  return maximal;
}

// Reads an option from `candidate`: a leading letter form, else the option text.
// `allow_mentions` accepts text that contains exactly one option (not for bare first lines).
Choice InterpretChoice(absl::string_view candidate, const std::vector<std::string>& options,
                       bool allow_mentions) {
  std::vector<std::string> norms;
  norms.reserve(options.size());
  for (const std::string& option : options) norms.push_back(NormalizeText(option));
  const int n = static_cast<int>(options.size());

  absl::string_view text = StripChoiceWord(candidate);
  absl::string_view probe = text;
  const bool bracketed = !probe.empty() && (probe.front() == '(' || probe.front() == '[');
  if (bracketed) probe.remove_prefix(1);
  if (!probe.empty() && absl::ascii_isalpha(probe.front())) {
    const char letter = probe.front();
    absl::string_view after = probe.substr(1);
    bool letter_form = false;
    if (bracketed) {
      letter_form = !after.empty() && (after.front() == ')' || after.front() == ']');
    } else if (after.empty()) {
      letter_form = true;
    } else if (!IsWordChar(after.front())) {
      const char next = after.front();
      if (absl::ascii_islower(letter)) {
        // Lower-case letters are English words ("a drug") unless marked as a label.
        letter_form = next == ')' || next == ']' || next == '.';
      } else if ((letter == 'A' || letter == 'I') && next == ' ') {
        // "A beta blocker": the article, unless the rest is option A's (or I's) own text.
        const int index = letter - 'A';
        letter_form = index < n && NormalizeText(after) == norms[index];
      } else {
        letter_form = true;
      }
    }
    if (letter_form) {
      const int index = absl::ascii_toupper(letter) - 'A';
      if (index >= n) {
        return {-1, absl::StrCat("the output names option ",
                                 std::string(1, absl::ascii_toupper(letter)),
                                 " but there are only ", n, " options")};
      }
      while (!after.empty() && !IsWordChar(after.front())) after.remove_prefix(1);
      const std::string rest = NormalizeText(after);
      if (!rest.empty() && rest != norms[index] && !ContainsPhrase(rest, norms[index])) {
        for (int j = 0; j < n; ++j) {
          if (j != index && (rest == norms[j] || absl::StartsWith(rest, norms[j] + " "))) {
            return {-1, absl::StrCat("the output's letter ", OptionLetter(index),
                                     " and its text (option ", OptionLetter(j), ") disagree")};
          }
        }
      }
      return {index, ""};
    }
  }

  const std::string normalized = NormalizeText(text);
  if (normalized.empty()) return {-1, "the answer is empty"};
  std::vector<int> exact;
  for (int i = 0; i < n; ++i) {
    if (norms[i] == normalized) exact.push_back(i);
  }
  if (exact.size() == 1) return {exact[0], ""};
  if (exact.size() > 1) return {-1, "the answer matches several identical options"};
  if (!allow_mentions) return {-1, "the output names no option"};
  const std::vector<int> mentioned = OptionsMentioned(normalized, norms);
  if (mentioned.size() == 1) return {mentioned[0], ""};
  if (mentioned.empty()) return {-1, "the answer names no option"};
  return {-1, "the answer names several options"};
}

// "why:" / "explanation:" / "rationale:" text, else the output without the answer line.
std::string Explanation(const std::vector<std::string>& lines, int answer_line) {
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    for (absl::string_view marker : {"why:", "explanation:", "rationale:", "reason:"}) {
      if (ConsumePrefixIgnoreCase(&line, marker)) {
        std::string out(absl::StripAsciiWhitespace(line));
        for (size_t j = i + 1; j < lines.size(); ++j) {
          absl::string_view next = lines[j];
          if (absl::StartsWithIgnoreCase(next, "ans:")) break;
          if (!next.empty()) absl::StrAppend(&out, "\n", next);
        }
        return out;
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (static_cast<int>(i) == answer_line || lines[i].empty()) continue;
    if (absl::StartsWithIgnoreCase(lines[i], "ans:")) continue;
    if (!out.empty()) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

struct LabelPhrase {
  absl::string_view phrase;
  FactLabel label;
};

// Negated phrases come first so "not supported" never reads as "supported".
constexpr LabelPhrase kLabelPhrases[] = {
    {"not supported", FactLabel::kRefuted},
    {"not true", FactLabel::kRefuted},
    {"not correct", FactLabel::kRefuted},
    {"not enough", FactLabel::kUnknown},
    {"cannot be determined", FactLabel::kUnknown},
    {"can not be determined", FactLabel::kUnknown},
    {"cannot determine", FactLabel::kUnknown},
    {"unsupported", FactLabel::kRefuted},
    {"refuted", FactLabel::kRefuted},
    {"refutes", FactLabel::kRefuted},
    {"refute", FactLabel::kRefuted},
    {"false", FactLabel::kRefuted},
    {"no", FactLabel::kRefuted},
    {"incorrect", FactLabel::kRefuted},
    {"contradicted", FactLabel::kRefuted},
    {"contradicts", FactLabel::kRefuted},
    {"unknown", FactLabel::kUnknown},
    {"insufficient", FactLabel::kUnknown},
    {"undetermined", FactLabel::kUnknown},
    {"uncertain", FactLabel::kUnknown},
    {"unclear", FactLabel::kUnknown},
    {"nei", FactLabel::kUnknown},
    {"supported", FactLabel::kSupported},
    {"supports", FactLabel::kSupported},
    {"support", FactLabel::kSupported},
    {"true", FactLabel::kSupported},
    {"yes", FactLabel::kSupported},
    {"correct", FactLabel::kSupported},
    {"entailed", FactLabel::kSupported},
    {"entailment", FactLabel::kSupported},
};

// The label a candidate starts with; `whole` requires the candidate to be only the label.
FactLabel InterpretLabel(absl::string_view candidate, bool whole) {
  const std::string normalized = NormalizeText(candidate);
  for (const LabelPhrase& entry : kLabelPhrases) {
    if (normalized == entry.phrase) return entry.label;
    if (!whole && absl::StartsWith(normalized, entry.phrase) &&
        normalized[entry.phrase.size()] == ' ') {
      return entry.label;
    }
  }
  return FactLabel::kUnspecified;
}

ParsedAnswer Unparseable(std::string error) {
  ParsedAnswer parsed;
  parsed.status = ParseStatus::kUnparseable;
  parsed.error = std::move(error);
  return parsed;
}

}  // namespace

ParsedAnswer ParseMultipleChoice(absl::string_view output,
                                 const std::vector<std::string>& options) {
  const absl::string_view text = StripThinking(output);
  if (text.empty()) return Unparseable("the output is empty");
  const std::vector<std::string> lines = CleanLines(text);
  std::optional<Candidate> candidate = FindJsonAnswer(text);
  bool allow_mentions = true;
  if (!candidate) candidate = FindAnsLine(lines);
  if (!candidate) candidate = FindPhrase(lines, ChoicePhrases());
  if (!candidate) {
    for (size_t i = 0; i < lines.size() && !candidate; ++i) {
      if (!lines[i].empty()) candidate = Candidate{lines[i], static_cast<int>(i)};
    }
    allow_mentions = false;  // a bare first line must be an option, not merely mention one
  }
  if (!candidate) return Unparseable("the output has no answer");
  const Choice choice = InterpretChoice(candidate->text, options, allow_mentions);
  if (choice.index < 0) return Unparseable(choice.error);
  ParsedAnswer parsed;
  parsed.status = ParseStatus::kOk;
  parsed.option_index = choice.index;
  parsed.answer = options[choice.index];
  parsed.explanation = Explanation(lines, candidate->line);
  return parsed;
}

ParsedAnswer ParseFactLabel(absl::string_view output) {
  const absl::string_view text = StripThinking(output);
  if (text.empty()) return Unparseable("the output is empty");
  const std::vector<std::string> lines = CleanLines(text);
  std::optional<Candidate> candidate = FindJsonAnswer(text);
  if (!candidate) candidate = FindAnsLine(lines);
  if (!candidate) {
    candidate = FindPhrase(lines, {"the answer is", "answer is", "the claim is", "the statement is",
                                   "verdict:", "label:", "this claim is"});
  }
  bool whole = false;
  if (!candidate) {
    for (size_t i = 0; i < lines.size() && !candidate; ++i) {
      if (!lines[i].empty()) candidate = Candidate{lines[i], static_cast<int>(i)};
    }
    whole = true;
  }
  if (!candidate) return Unparseable("the output has no answer");
  const FactLabel label = InterpretLabel(candidate->text, whole);
  if (label == FactLabel::kUnspecified) {
    return Unparseable("the answer is not a fact label (supported/refuted/unknown)");
  }
  ParsedAnswer parsed;
  parsed.status = ParseStatus::kOk;
  parsed.fact_label = label;
  parsed.answer = std::string(FactLabelName(label));
  parsed.explanation = Explanation(lines, candidate->line);
  return parsed;
}

ParsedAnswer ParseOpenAnswer(absl::string_view output) {
  const absl::string_view text = StripThinking(output);
  if (text.empty()) return Unparseable("the output is empty");
  const std::vector<std::string> lines = CleanLines(text);
  std::optional<Candidate> candidate = FindJsonAnswer(text);
  if (!candidate) candidate = FindAnsLine(lines);
  if (!candidate) candidate = FindPhrase(lines, {"the answer is"});
  if (!candidate) return Unparseable("the output has no 'ans:' line");
  std::string answer(absl::StripAsciiWhitespace(candidate->text));
  if (answer.empty()) return Unparseable("the answer is empty");
  ParsedAnswer parsed;
  parsed.status = ParseStatus::kOk;
  parsed.answer = std::move(answer);
  parsed.explanation = Explanation(lines, candidate->line);
  return parsed;
}

ParsedAnswer ParseAnswer(Task task, absl::string_view output,
                         const std::vector<std::string>& options) {
  switch (task) {
    case Task::kFactVerification:
      return ParseFactLabel(output);
    case Task::kOpen:
      return ParseOpenAnswer(output);
    case Task::kMultipleChoice:
    case Task::kUnspecified:
      break;
  }
  return ParseMultipleChoice(output, options);
}

}  // namespace ibgraphrag::reasoner
