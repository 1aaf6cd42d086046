#include "services/alignment/llm_selection.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/openai_client.h"
#include "common/parallel_for.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::alignment {

const char kLlmSelectionSystemPrompt[] =
    "You are a precise and context-aware biomedical assistant designed to help users perform "
    "entity-level reasoning tasks in medical question-answering scenarios. You must follow "
    "instructions strictly, return outputs only in the specified format, and always ensure that "
    "your responses are medically relevant, factual, and grounded in the provided information. "
    "Do not make assumptions beyond the given context.";

absl::Status ValidateLlmSelectionLimits(const AlignerOptions& o) {
  if (o.max_llm_mentions < 1 || o.max_llm_mentions > kMaxLlmMentionsLimit) {
    return absl::InvalidArgumentError(absl::StrCat("max_llm_mentions: ", o.max_llm_mentions,
                                                   " outside 1..", kMaxLlmMentionsLimit));
  }
  if (o.max_llm_candidates < 1 || o.max_llm_candidates > kMaxLlmCandidatesLimit) {
    return absl::InvalidArgumentError(absl::StrCat("max_llm_candidates: ", o.max_llm_candidates,
                                                   " outside 1..", kMaxLlmCandidatesLimit));
  }
  if (o.llm_parallelism < 1 || o.llm_parallelism > kMaxLlmParallelismLimit) {
    return absl::InvalidArgumentError(absl::StrCat("llm_parallelism: ", o.llm_parallelism,
                                                   " outside 1..", kMaxLlmParallelismLimit));
  }
  if (!(o.llm_timeout > absl::ZeroDuration())) {
    return absl::InvalidArgumentError("llm_timeout: must be > 0");
  }
  return absl::OkStatus();
}

std::vector<LlmSelectionQuery> PlanLlmSelection(const AlignResult& result, int choice_below,
                                                int max_mentions, int max_candidates) {
  const size_t n = result.mentions.size();
  std::vector<int> kept(n, 0);
  for (const ScoredEntity& s : result.kept) ++kept[s.mention_index];
  std::vector<LlmSelectionQuery> queries;
  for (size_t m = 0; m < n; ++m) {
    if (kept[m] >= choice_below) continue;
    LlmSelectionQuery q;
    q.mention_index = static_cast<int>(m);
    // `rejected` is sorted by C descending, so this mention's candidates come best first.
    for (size_t r = 0; r < result.rejected.size(); ++r) {
      if (result.rejected[r].mention_index != q.mention_index) continue;
      if (static_cast<int>(q.rejected.size()) == max_candidates) break;
      q.rejected.push_back(r);
    }
    if (!q.rejected.empty()) queries.push_back(std::move(q));
  }
  // The mentions with the least support first: they are the ones the step exists for.
  std::stable_sort(queries.begin(), queries.end(),
                   [&](const LlmSelectionQuery& a, const LlmSelectionQuery& b) {
                     return kept[a.mention_index] < kept[b.mention_index];
                   });
  if (static_cast<int>(queries.size()) > max_mentions) queries.resize(max_mentions);
  return queries;
}

std::string BuildLlmSelectionPrompt(absl::string_view question, absl::string_view query_entity,
                                    const std::vector<const LinkedCandidate*>& candidates,
                                    const Lexicon& lexicon) {
  std::string prompt = absl::StrCat(
      "You are given the following inputs: a medical question (Q), a `query_entity` extracted "
      "from the question, and a list of similar entities related to the query entity, numbered "
      "from 0.\nYour task is to select **one** most relevant entity from the list of similar "
      "entities based on its contextual and semantic alignment with the question. If none of the "
      "similar entities is appropriate in the given context, return `NONE`.\n\nQ: ",
      question, "\nquery_entity: ", query_entity, "\nsimilar entities:\n");
  for (size_t i = 0; i < candidates.size(); ++i) {
    const LexiconEntry& e = lexicon.entries[candidates[i]->entry];
    absl::StrAppend(&prompt, i, ". ", e.name, " (", e.type, "; ", e.external_id, ")");
    if (!e.definition.empty())
      absl::StrAppend(&prompt, ": ", common::Utf8Prefix(e.definition, 200));
    prompt += "\n";
  }
  absl::StrAppend(
      &prompt,
      "\nRequired Output Format:\nReturn your answer as a single JSON object. The selected entity "
      "must include the following three fields: \"name\", the name of the selected entity from "
      "the similar entities list; \"id\", an integer representing the index of the selected "
      "entity within the similar entities list (starting from 0); and \"reason\", a brief "
      "justification (1-2 sentences) explaining why this entity was chosen based on the question "
      "and query entity.\nIf no appropriate entity is found in the list, return:\n"
      "{\"selected_entity\": \"NONE\"}\nOtherwise, follow the format below precisely. Do not "
      "include any additional commentary or explanation.\n"
      "{\"selected_entity\": {\"name\": \"<name>\", \"id\": <index>, \"reason\": \"<reason>\"}}");
  return prompt;
}

namespace {

using Choice = absl::StatusOr<std::optional<size_t>>;

absl::Status Unparsable(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("LLM selection: ", why));
}

bool IsNone(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  absl::ConsumeSuffix(&s, ".");
  return absl::EqualsIgnoreCase(s, "none");
}

Choice ResolveIndex(int64_t index, size_t n) {
  if (index < 0 || static_cast<size_t>(index) >= n) {
    return Unparsable(absl::StrCat("index ", index, " outside the ", n, " candidates"));
  }
  return std::optional<size_t>(static_cast<size_t>(index));
}

// An id as text: an entity id among the candidates (ids may be all digits), else an index.
Choice ResolveIdText(absl::string_view id, absl::Span<const SelectionCandidate> candidates) {
  id = absl::StripAsciiWhitespace(id);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].external_id == id) return std::optional<size_t>(i);
  }
  if (!id.empty() && id.size() <= 9 &&
      std::all_of(id.begin(), id.end(), [](char c) { return absl::ascii_isdigit(c); })) {
    return ResolveIndex(std::stoll(std::string(id)), candidates.size());
  }
  return Unparsable("the chosen id is not one of the candidates");
}

Choice ResolveName(absl::string_view name, absl::Span<const SelectionCandidate> candidates) {
  if (IsNone(name)) return std::optional<size_t>();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (absl::EqualsIgnoreCase(candidates[i].name, absl::StripAsciiWhitespace(name))) {
      return std::optional<size_t>(i);
    }
  }
  return Unparsable("the chosen name is not one of the candidates");
}

// A JSON id value: an integer index, an integral float, or text (ResolveIdText).
Choice ResolveIdJson(const nlohmann::json& id, absl::Span<const SelectionCandidate> candidates) {
  if (id.is_number_integer()) return ResolveIndex(id.get<int64_t>(), candidates.size());
  if (id.is_number_float()) {
    const double d = id.get<double>();
    if (d >= 0 && d < 1e9 && d == std::floor(d)) {
      return ResolveIndex(static_cast<int64_t>(d), candidates.size());
    }
    return Unparsable("\"id\" is not an index");
  }
  if (id.is_string()) {
    const std::string text = id.get<std::string>();
    if (IsNone(text)) return std::optional<size_t>();
    return ResolveIdText(text, candidates);
  }
  return Unparsable("\"id\" is neither an integer nor a string");
}

// {"selected_entity": {...} | "NONE" | <index> | null}, or the entity object on its own.
Choice FromJson(const nlohmann::json& j, absl::Span<const SelectionCandidate> candidates) {
  const nlohmann::json& sel =
      j.is_object() && j.contains("selected_entity") ? j.at("selected_entity") : j;
  if (sel.is_null()) return std::optional<size_t>();
  if (sel.is_string() || sel.is_number()) return ResolveIdJson(sel, candidates);
  if (!sel.is_object()) return Unparsable("\"selected_entity\" is not an object");
  if (sel.contains("id") && !sel.at("id").is_null()) {
    return ResolveIdJson(sel.at("id"), candidates);
  }
  if (sel.contains("name") && sel.at("name").is_string()) {
    return ResolveName(sel.at("name").get<std::string>(), candidates);
  }
  return Unparsable("JSON without \"id\" or \"name\"");
}

// Drops a leading label: "Answer:", "The answer is", "id =", "Selected entity:" ...
absl::string_view StripLabel(absl::string_view s) {
  for (absl::string_view label :
       {"the answer is", "final answer", "answer", "selected_entity", "selected entity", "selected",
        "selection", "choice", "index", "id"}) {
    // A whole word only: "identified" is no "id" label.
    if (absl::StartsWithIgnoreCase(s, label) &&
        (s.size() == label.size() || !absl::ascii_isalnum(s[label.size()]))) {
      s.remove_prefix(label.size());
      s = absl::StripLeadingAsciiWhitespace(s);
      if (!s.empty() && (s[0] == ':' || s[0] == '=')) s.remove_prefix(1);
      return absl::StripLeadingAsciiWhitespace(s);
    }
  }
  return s;
}

bool ContainsWordNone(absl::string_view s) {
  const std::string lower = absl::AsciiStrToLower(s);
  for (size_t at = lower.find("none"); at != std::string::npos; at = lower.find("none", at + 1)) {
    const bool starts = at == 0 || !absl::ascii_isalnum(lower[at - 1]);
    const bool ends = at + 4 == lower.size() || !absl::ascii_isalnum(lower[at + 4]);
    if (starts && ends) return true;
  }
  return false;
}

// Plain answers: an index ("2", "[2]", "Answer: 2", "2. pneumonia"), an entity id, or NONE.
Choice FromPlainText(absl::string_view answer, absl::Span<const SelectionCandidate> candidates) {
  absl::string_view s = absl::StripAsciiWhitespace(answer);
  while (!s.empty() && (s.front() == '`' || s.back() == '`')) {
    s = absl::StripAsciiWhitespace(absl::StripSuffix(absl::StripPrefix(s, "`"), "`"));
  }
  s = StripLabel(s);
  while (!s.empty() && absl::StrContains("[(\"'#* ", s.front())) s.remove_prefix(1);
  // An entity id first: ids may be all digits (gene ids), and then they are not indexes.
  absl::string_view token = s.substr(0, s.find_first_of(" \t\n\"'`])"));
  absl::ConsumeSuffix(&token, ".");
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!token.empty() && candidates[i].external_id == token) return std::optional<size_t>(i);
  }
  size_t digits = 0;
  while (digits < s.size() && absl::ascii_isdigit(s[digits])) ++digits;
  if (digits > 0 && digits <= 9 &&
      (digits == s.size() || !(absl::ascii_isalnum(s[digits]) || s[digits] == ':'))) {
    return ResolveIndex(std::stoll(std::string(s.substr(0, digits))), candidates.size());
  }
  if (ContainsWordNone(answer)) return std::optional<size_t>();
  return Unparsable("the answer is neither the JSON format, an index, an id nor NONE");
}

// The JSON object inside an answer (models wrap JSON in prose or code fences); "" when none.
absl::string_view JsonObjectIn(absl::string_view answer) {
  const size_t b = answer.find('{');
  const size_t e = answer.rfind('}');
  if (b == absl::string_view::npos || e == absl::string_view::npos || e < b) return "";
  return answer.substr(b, e - b + 1);
}

}  // namespace

absl::StatusOr<std::optional<size_t>> ParseLlmSelection(
    absl::string_view answer, absl::Span<const SelectionCandidate> candidates) {
  const absl::string_view json_text = JsonObjectIn(answer);
  if (!json_text.empty()) {
    const nlohmann::json j = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr,
                                                   /*allow_exceptions=*/false);
    if (!j.is_discarded()) return FromJson(j, candidates);
  }
  return FromPlainText(answer, candidates);
}

namespace {

// One mention's call: prompt, completion, parsed choice (an index into `shown`).
Choice AskAboutMention(const common::OpenAiClient& llm, const Lexicon& lexicon,
                       absl::string_view question, absl::string_view mention,
                       const std::vector<const LinkedCandidate*>& shown,
                       absl::Duration call_timeout, absl::Time deadline) {
  std::vector<SelectionCandidate> refs;
  for (const LinkedCandidate* c : shown) refs.push_back({c->external_id, c->name});
  common::ChatRequest request;
  request.messages.push_back({"system", kLlmSelectionSystemPrompt});
  request.messages.push_back({"user", BuildLlmSelectionPrompt(question, mention, shown, lexicon)});
  IBGR_ASSIGN_OR_RETURN(common::ChatResponse response,
                        llm.Complete(request, std::min(deadline, absl::Now() + call_timeout)));
  return ParseLlmSelection(response.content, refs);
}

// One call per query, `threads` at once; choices[q] answers queries[q]. `mention_of(q)` is the
// query's mention text, `shown_of(q)` the candidates shown for it.
template <typename Query, typename MentionFn, typename ShownFn>
std::vector<Choice> AskAll(const common::OpenAiClient& llm, const Lexicon& lexicon,
                           absl::string_view question, const std::vector<Query>& queries,
                           const AlignerOptions& limits, absl::Time deadline, MentionFn mention_of,
                           ShownFn shown_of) {
  std::vector<Choice> choices(queries.size(), Choice(std::optional<size_t>()));
  const int threads = std::min(limits.llm_parallelism, static_cast<int>(queries.size()));
  common::ParallelFor(queries.size(), threads, [&](size_t q) {
    choices[q] = AskAboutMention(llm, lexicon, question, mention_of(queries[q]),
                                 shown_of(queries[q]), limits.llm_timeout, deadline);
  });
  return choices;
}

// Moves the chosen entities from `rejected` to the end of `kept`, in plan order.
void ApplyChoices(const std::vector<LlmSelectionQuery>& queries, const std::vector<Choice>& choices,
                  AlignResult* result) {
  std::vector<size_t> moved;
  for (size_t q = 0; q < queries.size(); ++q) {
    if (!choices[q].ok() || !choices[q]->has_value()) continue;
    const size_t r = queries[q].rejected[**choices[q]];
    ScoredEntity chosen = result->rejected[r];
    chosen.chosen_by_llm = true;
    result->kept.push_back(std::move(chosen));
    moved.push_back(r);
  }
  std::sort(moved.rbegin(), moved.rend());
  for (size_t r : moved) result->rejected.erase(result->rejected.begin() + r);
}

// One degradation for all failed calls: how many, and the first error.
void ReportFailures(const std::vector<Choice>& choices, absl::string_view fallback,
                    std::vector<Degradation>* degraded) {
  int failed = 0;
  const absl::Status* first = nullptr;
  for (const Choice& c : choices) {
    if (c.ok()) continue;
    ++failed;
    if (first == nullptr) first = &c.status();
  }
  if (failed == 0) return;
  degraded->push_back(
      {"alignment_llm", absl::StrCat("LLM selection failed for ", failed, " of ", choices.size(),
                                     " mentions (", first->ToString(), "); ", fallback)});
}

}  // namespace

std::vector<LlmPreselectionQuery> PlanLlmPreselection(const std::vector<MentionLink>& links,
                                                      int choice_below, int max_mentions,
                                                      int max_candidates) {
  std::vector<LlmPreselectionQuery> queries;
  std::vector<int> named(links.size(), 0);
  for (size_t m = 0; m < links.size(); ++m) {
    for (const LinkedCandidate& c : links[m].candidates) named[m] += c.dictionary_match;
    if (links[m].candidates.empty() || named[m] >= choice_below) continue;
    queries.push_back(
        {static_cast<int>(m), std::min<size_t>(links[m].candidates.size(), max_candidates)});
  }
  // The mentions the dictionary settles least first: they are the ones the step exists for.
  std::stable_sort(queries.begin(), queries.end(),
                   [&](const LlmPreselectionQuery& a, const LlmPreselectionQuery& b) {
                     return named[a.mention_index] < named[b.mention_index];
                   });
  if (static_cast<int>(queries.size()) > max_mentions) queries.resize(max_mentions);
  return queries;
}

LlmPreselection PreselectWithLlm(const common::OpenAiClient& llm, const Lexicon& lexicon,
                                 absl::string_view question, int choice_below,
                                 const AlignerOptions& limits, absl::Time deadline,
                                 std::vector<MentionLink>* links,
                                 std::vector<Degradation>* degraded) {
  LlmPreselection out;
  const std::vector<LlmPreselectionQuery> queries =
      PlanLlmPreselection(*links, choice_below, limits.max_llm_mentions, limits.max_llm_candidates);
  if (queries.empty()) return out;
  const std::vector<Choice> choices = AskAll(
      llm, lexicon, question, queries, limits, deadline,
      [&](const LlmPreselectionQuery& q) -> absl::string_view {
        return (*links)[q.mention_index].mention.text;
      },
      [&](const LlmPreselectionQuery& q) {
        std::vector<const LinkedCandidate*> shown;
        for (size_t i = 0; i < q.shown; ++i)
          shown.push_back(&(*links)[q.mention_index].candidates[i]);
        return shown;
      });
  out.calls = static_cast<int>(queries.size());
  for (size_t q = 0; q < queries.size(); ++q) {
    if (!choices[q].ok()) continue;  // that mention goes through MSCA as without an LLM
    const int m = queries[q].mention_index;
    std::vector<LinkedCandidate>& candidates = (*links)[m].candidates;
    const std::optional<size_t> pick = *choices[q];
    std::vector<LinkedCandidate> kept;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (candidates[i].dictionary_match) out.named_mentions.insert(m);
      // Candidates past max_llm_candidates were not shown: the LLM did not pass them over, so
      // they go through MSCA as without an LLM.
      const bool shown = i < queries[q].shown;
      const bool picked = shown && pick.has_value() && i == *pick;
      if (picked) out.chosen.insert(candidates[i].entry);
      if (picked || !shown) {
        kept.push_back(std::move(candidates[i]));
      } else {
        out.excluded.emplace_back(m, std::move(candidates[i]));
      }
    }
    candidates = std::move(kept);
  }
  ReportFailures(choices, "their top-K candidates went through MSCA without it", degraded);
  return out;
}

int RunLlmSelection(const common::OpenAiClient& llm, const Lexicon& lexicon,
                    absl::string_view question, int choice_below, const AlignerOptions& limits,
                    absl::Time deadline, AlignResult* result) {
  const std::vector<LlmSelectionQuery> queries =
      PlanLlmSelection(*result, choice_below, limits.max_llm_mentions, limits.max_llm_candidates);
  if (queries.empty()) return 0;
  const std::vector<Choice> choices = AskAll(
      llm, lexicon, question, queries, limits, deadline,
      [&](const LlmSelectionQuery& q) -> absl::string_view {
        return result->mentions[q.mention_index].text;
      },
      [&](const LlmSelectionQuery& q) {
        std::vector<const LinkedCandidate*> shown;
        for (size_t r : q.rejected) shown.push_back(&result->rejected[r].candidate);
        return shown;
      });
  ApplyChoices(queries, choices, result);
  ReportFailures(choices, "threshold result kept for them", &result->degraded);
  return static_cast<int>(queries.size());
}

}  // namespace ibgraphrag::alignment
