#include "services/alignment/eval/gold_spans.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ibgraphrag::alignment::eval {
namespace {

// The span [begin, end) of `text` without surrounding spaces and a final full stop; empty
// text when nothing is left.
GoldSpan TrimmedSpan(absl::string_view text, size_t begin, size_t end) {
  while (begin < end && absl::ascii_isspace(text[begin])) ++begin;
  while (end > begin && (absl::ascii_isspace(text[end - 1]) || text[end - 1] == '.')) --end;
  GoldSpan span;
  span.begin = static_cast<uint32_t>(begin);
  span.end = static_cast<uint32_t>(end);
  span.text = std::string(text.substr(begin, end - begin));
  return span;
}

// Letters, digits and UTF-8 bytes: the bytes a word is made of, as in Tokenize.
bool IsWordByte(char c) { return absl::ascii_isalnum(c) || static_cast<unsigned char>(c) >= 0x80; }

// Where `needle` occurs in `text` as whole words (both lower-cased), or npos.
size_t FindWords(absl::string_view text, absl::string_view needle) {
  if (needle.empty()) return absl::string_view::npos;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + 1)) {
    const size_t end = at + needle.size();
    if ((at == 0 || !IsWordByte(text[at - 1])) && (end == text.size() || !IsWordByte(text[end]))) {
      return at;
    }
  }
  return absl::string_view::npos;
}

}  // namespace

std::optional<ClaimSpans> ParseBiomixClaim(absl::string_view claim) {
  ClaimSpans out;
  constexpr absl::string_view kDoidPrefix = "Disease ontology identifier for ";
  if (absl::StartsWithIgnoreCase(claim, kDoidPrefix)) {
    // The identifier is the last word; the disease name may itself contain " is ".
    const size_t is = claim.rfind(" is ");
    if (is == absl::string_view::npos || is < kDoidPrefix.size()) return std::nullopt;
    GoldSpan subject = TrimmedSpan(claim, kDoidPrefix.size(), is);
    GoldSpan identifier = TrimmedSpan(claim, is + 4, claim.size());
    if (subject.text.empty() || identifier.text.empty()) return std::nullopt;
    out.shape = "doid";
    out.gold.push_back(std::move(subject));
    out.ignored.push_back(std::move(identifier));
    return out;
  }
  // The first template whose connector occurs wins; " is not a " before " is a " only for
  // clarity (neither contains the other).
  static constexpr std::pair<absl::string_view, absl::string_view> kShapes[] = {
      {"not_associated_gene", " is not associated with Gene "},
      {"associates_gene", " associates Gene "},
      {"is_not_a", " is not a "},
      {"is_a", " is a "},
      {"treats", " treats "},
  };
  for (const auto& [shape, connector] : kShapes) {
    const size_t at = claim.find(connector);
    if (at == absl::string_view::npos) continue;
    GoldSpan subject = TrimmedSpan(claim, 0, at);
    GoldSpan object = TrimmedSpan(claim, at + connector.size(), claim.size());
    if (subject.text.empty() || object.text.empty()) return std::nullopt;
    out.shape = std::string(shape);
    out.gold.push_back(std::move(subject));
    out.gold.push_back(std::move(object));
    return out;
  }
  return std::nullopt;
}

std::optional<GoldSpan> LocateTopic(absl::string_view question, absl::string_view topic) {
  const std::string text = absl::AsciiStrToLower(question);
  const std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(topic));
  std::vector<std::string> tries = {name};
  const std::vector<absl::string_view> words = absl::StrSplit(name, ' ', absl::SkipEmpty());
  if (name.size() > 1 && name.back() == 's') tries.push_back(name.substr(0, name.size() - 1));
  for (size_t keep = words.size() - (words.empty() ? 0 : 1); keep >= 2; --keep) {
    tries.push_back(absl::StrJoin(words.begin(), words.begin() + keep, " "));
  }
  for (const std::string& t : tries) {
    const size_t at = FindWords(text, t);
    if (at == absl::string_view::npos) continue;
    GoldSpan span;
    span.begin = static_cast<uint32_t>(at);
    span.end = static_cast<uint32_t>(at + t.size());
    span.text = std::string(question.substr(at, t.size()));
    return span;
  }
  return std::nullopt;
}

PairQuestion MakePairQuestion(absl::string_view a, absl::string_view b, int template_index) {
  // {prefix, middle, suffix}: prefix a middle b suffix.
  static constexpr absl::string_view kTemplates[kPairTemplateCount][3] = {
      {"Can a patient have both ", " and ", "?"},
      {"Is ", " more common in people with ", "?"},
      {"What do ", " and ", " have in common?"},
      {"A patient with ", " is evaluated for ", ". Which tests help?"},
  };
  const auto& t =
      kTemplates[((template_index % kPairTemplateCount) + kPairTemplateCount) % kPairTemplateCount];
  PairQuestion out;
  out.question = std::string(t[0]);
  GoldSpan first{static_cast<uint32_t>(out.question.size()), 0, std::string(a)};
  absl::StrAppend(&out.question, a);
  first.end = static_cast<uint32_t>(out.question.size());
  absl::StrAppend(&out.question, t[1]);
  GoldSpan second{static_cast<uint32_t>(out.question.size()), 0, std::string(b)};
  absl::StrAppend(&out.question, b);
  second.end = static_cast<uint32_t>(out.question.size());
  absl::StrAppend(&out.question, t[2]);
  out.gold = {std::move(first), std::move(second)};
  return out;
}

}  // namespace ibgraphrag::alignment::eval
