#include "services/reasoner/prompt_templates.h"

#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace ibgraphrag::reasoner {
namespace {

struct NamedPlaceholder {
  absl::string_view name;
  Placeholder placeholder;
};
constexpr NamedPlaceholder kPlaceholders[] = {
    {"relations", Placeholder::kRelations},
    {"triples", Placeholder::kTriples},
    {"question", Placeholder::kQuestion},
    {"options", Placeholder::kOptions},
};

// Splits "<kind>.v<N>" (or "<kind>.v<N>.txt"); false for anything else.
bool SplitVersion(absl::string_view name, std::string* kind, int* number) {
  absl::ConsumeSuffix(&name, ".txt");
  const size_t dot = name.find(".v");
  if (dot == absl::string_view::npos) return false;
  const absl::string_view k = name.substr(0, dot);
  if (k != "mcq" && k != "fact" && k != "open") return false;
  int n = 0;
  const absl::string_view digits = name.substr(dot + 2);
  if (digits.empty() || !absl::SimpleAtoi(digits, &n) || n < 1) return false;
  *kind = std::string(k);
  *number = n;
  return true;
}

absl::Status AppendSegments(absl::string_view version, absl::string_view text,
                            TemplateMessage* message) {
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("{{", pos);
    if (open == absl::string_view::npos) {
      message->segments.push_back({false, Placeholder::kQuestion, std::string(text.substr(pos))});
      break;
    }
    if (open > pos) {
      message->segments.push_back(
          {false, Placeholder::kQuestion, std::string(text.substr(pos, open - pos))});
    }
    const size_t close = text.find("}}", open + 2);
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("prompt ", version, ": '{{' without a closing '}}'"));
    }
    const absl::string_view name =
        absl::StripAsciiWhitespace(text.substr(open + 2, close - open - 2));
    bool known = false;
    for (const NamedPlaceholder& p : kPlaceholders) {
      if (p.name == name) {
        message->segments.push_back({true, p.placeholder, ""});
        known = true;
        break;
      }
    }
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("prompt ", version, ": unknown placeholder {{", name,
                       "}}; known: {{relations}}, {{triples}}, {{question}}, {{options}}"));
    }
    pos = close + 2;
  }
  return absl::OkStatus();
}

bool UsesPlaceholder(const PromptTemplate& t, Placeholder placeholder) {
  for (const TemplateMessage& message : t.messages) {
    for (const TemplateSegment& segment : message.segments) {
      if (segment.is_placeholder && segment.placeholder == placeholder) return true;
    }
  }
  return false;
}

}  // namespace

absl::string_view TemplateKindForTask(Task task) {
  switch (task) {
    case Task::kFactVerification:
      return "fact";
    case Task::kOpen:
      return "open";
    case Task::kMultipleChoice:
    case Task::kUnspecified:
      break;
  }
  return "mcq";
}

absl::StatusOr<PromptTemplate> ParsePromptTemplate(absl::string_view version,
                                                   absl::string_view text) {
  PromptTemplate result;
  if (!SplitVersion(version, &result.kind, &result.number)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prompt version '", version, "' is not <kind>.v<N> with kind mcq, fact or open"));
  }
  result.version = absl::StrCat(result.kind, ".v", result.number);
  std::vector<std::pair<std::string, std::string>> sections;  // (role, text)
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::ConsumeSuffix(&line, "\r");
    const absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(trimmed, "[[") && absl::EndsWith(trimmed, "]]")) {
      const absl::string_view role = trimmed.substr(2, trimmed.size() - 4);
      if (role != "system" && role != "user" && role != "assistant") {
        return absl::InvalidArgumentError(absl::StrCat("prompt ", result.version, " line ",
                                                       line_number, ": unknown section [[", role,
                                                       "]]; use system, user or assistant"));
      }
      sections.emplace_back(std::string(role), "");
      continue;
    }
    if (sections.empty()) {
      if (trimmed.empty() || absl::StartsWith(trimmed, "#")) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "prompt ", result.version, " line ", line_number, ": text before the first [[section]]"));
    }
    std::string& body = sections.back().second;
    if (!body.empty() || !trimmed.empty()) absl::StrAppend(&body, line, "\n");
  }
  if (sections.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt ", result.version, " has no [[system]]/[[user]] section"));
  }
  if (sections.back().first != "user") {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt ", result.version, ": the last section must be [[user]]"));
  }
  for (auto& [role, body] : sections) {
    TemplateMessage message;
    message.role = role;
    IBGR_RETURN_IF_ERROR(
        AppendSegments(result.version, absl::StripTrailingAsciiWhitespace(body), &message));
    result.messages.push_back(std::move(message));
  }
  std::vector<std::pair<Placeholder, absl::string_view>> required = {
      {Placeholder::kQuestion, "{{question}}"}, {Placeholder::kTriples, "{{triples}}"}};
  if (result.kind == "mcq") required.emplace_back(Placeholder::kOptions, "{{options}}");
  for (const auto& [placeholder, name] : required) {
    if (!UsesPlaceholder(result, placeholder)) {
      return absl::InvalidArgumentError(
          absl::StrCat("prompt ", result.version, " lacks the required placeholder ", name));
    }
  }
  return result;
}

absl::StatusOr<PromptLibrary> PromptLibrary::Load(const PromptLibraryOptions& options) {
  // version name -> template; the directory's copy of a version replaces the compiled-in one.
  std::map<std::string, PromptTemplate> templates;
  for (const auto& [file, text] : CompiledInPromptFiles()) {
    IBGR_ASSIGN_OR_RETURN(PromptTemplate parsed, ParsePromptTemplate(file, text));
    templates[parsed.version] = std::move(parsed);
  }
  if (!options.directory.empty()) {
    std::error_code error;
    const std::filesystem::path dir(options.directory);
    if (!std::filesystem::is_directory(dir, error)) {
      return absl::NotFoundError(
          absl::StrCat("prompt directory ", options.directory, " does not exist"));
    }
    std::filesystem::directory_iterator it(dir, error);
    if (error) {
      return absl::NotFoundError(
          absl::StrCat("cannot list prompt directory ", options.directory, ": ", error.message()));
    }
    for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
      if (error) {
        return absl::NotFoundError(absl::StrCat("cannot list prompt directory ", options.directory,
                                                ": ", error.message()));
      }
      const std::string name = it->path().filename().string();
      std::string kind;
      int number = 0;
      if (!absl::EndsWith(name, ".txt") || !SplitVersion(name, &kind, &number)) continue;
      IBGR_ASSIGN_OR_RETURN(std::string text, common::ReadFileToString(it->path().string()));
      IBGR_ASSIGN_OR_RETURN(PromptTemplate parsed, ParsePromptTemplate(name, text));
      templates[parsed.version] = std::move(parsed);
    }
  }
  auto pick = [&templates](absl::string_view kind,
                           const std::string& pinned) -> absl::StatusOr<PromptTemplate> {
    if (!pinned.empty()) {
      auto it = templates.find(pinned);
      if (it == templates.end() || it->second.kind != kind) {
        return absl::NotFoundError(
            absl::StrCat("pinned prompt version '", pinned, "' is not available for kind ", kind));
      }
      return it->second;
    }
    const PromptTemplate* best = nullptr;
    for (const auto& [version, t] : templates) {
      if (t.kind == kind && (best == nullptr || t.number > best->number)) best = &t;
    }
    if (best == nullptr) {
      return absl::NotFoundError(absl::StrCat("no prompt template of kind ", kind));
    }
    return *best;
  };
  PromptLibrary library;
  IBGR_ASSIGN_OR_RETURN(library.mcq_, pick("mcq", options.multiple_choice_version));
  IBGR_ASSIGN_OR_RETURN(library.fact_, pick("fact", options.fact_verification_version));
  IBGR_ASSIGN_OR_RETURN(library.open_, pick("open", options.open_version));
  return library;
}

const PromptTemplate& PromptLibrary::ForTask(Task task) const {
  switch (task) {
    case Task::kFactVerification:
      return fact_;
    case Task::kOpen:
      return open_;
    case Task::kMultipleChoice:
    case Task::kUnspecified:
      break;
  }
  return mcq_;
}

}  // namespace ibgraphrag::reasoner
