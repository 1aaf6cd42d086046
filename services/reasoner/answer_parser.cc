#include "services/reasoner/answer_parser.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

bool IsWordChar(char c) { return absl::ascii_isalnum(c) || static_cast<unsigned char>(c) >= 0x80; }

// Where an inline "ans:" starts in `line` at or after `from`: a word boundary before it, so
// "humans:" is not a marker. npos when there is none.
size_t FindInlineAns(absl::string_view line, size_t from) {
  for (size_t pos = from; pos + 4 <= line.size(); ++pos) {
    if ((pos == 0 || !IsWordChar(line[pos - 1])) &&
        absl::StartsWithIgnoreCase(line.substr(pos), "ans:")) {
      return pos;
    }
  }
  return absl::string_view::npos;
}

// Splits the text after a marker at further inline "ans:" markers ("X ans: Y" -> X, Y).
void AppendAnsItems(absl::string_view rest, int line, std::vector<Candidate>* items) {
  while (true) {
    const size_t next = FindInlineAns(rest, 0);
    const absl::string_view item = absl::StripAsciiWhitespace(rest.substr(0, next));
    if (!item.empty()) items->push_back(Candidate{std::string(item), line});
    if (next == absl::string_view::npos) return;
    rest = rest.substr(next + 4);
  }
}

// Every answer item, in order: lines starting with "ans:" (also "answer:" / "final answer:"),
// and inline "ans:" items as the paper's prompt writes them ("Therefore, the answers are:
// ans: X ans: Y"). A marker standing alone takes the next non-empty line. Empty when none.
std::vector<Candidate> FindAnsItems(const std::vector<std::string>& lines) {
  std::vector<Candidate> items;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    bool found = false;
    for (absl::string_view marker : {"ans:", "ans :", "final answer:", "answer:", "answer :"}) {
      if (ConsumePrefixIgnoreCase(&line, marker)) {
        found = true;
        break;
      }
    }
    if (!found) {
      const size_t inline_pos = FindInlineAns(line, 0);
      if (inline_pos == absl::string_view::npos) continue;
      line.remove_prefix(inline_pos + 4);
    }
    const size_t before = items.size();
    AppendAnsItems(line, static_cast<int>(i), &items);
    if (items.size() > before) continue;
    // A bare marker: the answer is on the next non-empty line (unless that is a marker itself).
    for (size_t j = i + 1; j < lines.size(); ++j) {
      if (lines[j].empty()) continue;
      if (FindInlineAns(lines[j], 0) != 0)
        items.push_back(Candidate{lines[j], static_cast<int>(j)});
      break;
    }
  }
  return items;
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
std::string Explanation(const std::vector<std::string>& lines,
                        const std::vector<int>& answer_lines) {
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
    if (lines[i].empty() || std::find(answer_lines.begin(), answer_lines.end(),
                                      static_cast<int>(i)) != answer_lines.end()) {
      continue;
    }
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
    {"maybe", FactLabel::kUnknown},
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

// Candidates in the order they are looked for: JSON, every ans: item, a phrase. Empty when
// none of them is present.
std::vector<Candidate> FindCandidates(absl::string_view text, const std::vector<std::string>& lines,
                                      const std::vector<absl::string_view>& phrases) {
  if (std::optional<Candidate> json = FindJsonAnswer(text)) return {*std::move(json)};
  std::vector<Candidate> items = FindAnsItems(lines);
  if (!items.empty()) return items;
  if (std::optional<Candidate> phrase = FindPhrase(lines, phrases)) return {*std::move(phrase)};
  return {};
}

// The first non-empty line, for outputs that are nothing but the answer.
std::vector<Candidate> FirstLine(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].empty()) return {Candidate{lines[i], static_cast<int>(i)}};
  }
  return {};
}

std::vector<int> CandidateLines(const std::vector<Candidate>& candidates) {
  std::vector<int> out;
  for (const Candidate& c : candidates) out.push_back(c.line);
  return out;
}

std::string JoinLetters(const std::vector<int>& indices) {
  std::string out;
  for (int index : indices) absl::StrAppend(&out, out.empty() ? "" : ", ", OptionLetter(index));
  return out;
}

}  // namespace

ParsedAnswer ParseMultipleChoice(absl::string_view output,
                                 const std::vector<std::string>& options) {
  const absl::string_view text = StripThinking(output);
  if (text.empty()) return Unparseable("the output is empty");
  const std::vector<std::string> lines = CleanLines(text);
  std::vector<Candidate> candidates = FindCandidates(text, lines, ChoicePhrases());
  // A bare first line must be an option, not merely mention one.
  const bool allow_mentions = !candidates.empty();
  if (candidates.empty()) candidates = FirstLine(lines);
  if (candidates.empty()) return Unparseable("the output has no answer");
  // Every ans: item is read; they must name one option (a list naming several is not guessed).
  std::vector<int> chosen;
  for (const Candidate& candidate : candidates) {
    const Choice choice = InterpretChoice(candidate.text, options, allow_mentions);
    if (choice.index < 0) return Unparseable(choice.error);
    if (std::find(chosen.begin(), chosen.end(), choice.index) == chosen.end()) {
      chosen.push_back(choice.index);
    }
  }
  if (chosen.size() > 1) {
    return Unparseable(absl::StrCat("the ans: lines name several options (", JoinLetters(chosen),
                                    ") where one was asked for"));
  }
  ParsedAnswer parsed;
  parsed.status = ParseStatus::kOk;
  parsed.option_index = chosen.front();
  parsed.answer = options[chosen.front()];
  parsed.answers = {parsed.answer};
  parsed.explanation = Explanation(lines, CandidateLines(candidates));
  return parsed;
}

ParsedAnswer ParseFactLabel(absl::string_view output) {
  const absl::string_view text = StripThinking(output);
  if (text.empty()) return Unparseable("the output is empty");
  const std::vector<std::string> lines = CleanLines(text);
  std::vector<Candidate> candidates =
      FindCandidates(text, lines,
                     {"the answer is", "answer is", "the claim is", "the statement is",
                      "verdict:", "label:", "this claim is"});
  const bool whole = candidates.empty();  // a bare first line must be only the label
  if (candidates.empty()) candidates = FirstLine(lines);
  if (candidates.empty()) return Unparseable("the output has no answer");
  FactLabel label = FactLabel::kUnspecified;
  for (const Candidate& candidate : candidates) {
    const FactLabel item = InterpretLabel(candidate.text, whole);
    if (item == FactLabel::kUnspecified) {
      return Unparseable("the answer is not a fact label (supported/refuted/unknown)");
    }
    if (label != FactLabel::kUnspecified && item != label) {
      return Unparseable(absl::StrCat("the ans: lines disagree (", FactLabelName(label), ", ",
                                      FactLabelName(item), ")"));
    }
    label = item;
  }
  ParsedAnswer parsed;
  parsed.status = ParseStatus::kOk;
  parsed.fact_label = label;
  parsed.answer = std::string(FactLabelName(label));
  parsed.answers = {parsed.answer};
  parsed.explanation = Explanation(lines, CandidateLines(candidates));
  return parsed;
}

ParsedAnswer ParseOpenAnswer(absl::string_view output) {
  const absl::string_view text = StripThinking(output);
  if (text.empty()) return Unparseable("the output is empty");
  const std::vector<std::string> lines = CleanLines(text);
  const std::vector<Candidate> candidates = FindCandidates(text, lines, {"the answer is"});
  if (candidates.empty()) return Unparseable("the output has no 'ans:' line");
  // A multi-answer list: every item, duplicates (after normalisation) once, in output order.
  ParsedAnswer parsed;
  std::vector<std::string> seen;
  for (const Candidate& candidate : candidates) {
    std::string item(absl::StripAsciiWhitespace(candidate.text));
    std::string key = NormalizeText(item);
    if (key.empty() || std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(std::move(key));
    parsed.answers.push_back(std::move(item));
  }
  if (parsed.answers.empty()) return Unparseable("the answer is empty");
  parsed.status = ParseStatus::kOk;
  parsed.answer = absl::StrJoin(parsed.answers, "; ");
  parsed.explanation = Explanation(lines, CandidateLines(candidates));
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
