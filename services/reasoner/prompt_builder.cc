#include "services/reasoner/prompt_builder.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace ibgraphrag::reasoner {
namespace {

// Appends `text` with CR/LF turned into spaces.
void AppendFlat(absl::string_view text, std::string* out) {
  const size_t start = out->size();
  out->append(text.data(), text.size());
  for (size_t i = start; i < out->size(); ++i) {
    if ((*out)[i] == '\n' || (*out)[i] == '\r') (*out)[i] = ' ';
  }
}

absl::string_view DisplayName(const EntityRef& entity) {
  return entity.name.empty() ? absl::string_view(entity.id) : absl::string_view(entity.name);
}

void AppendTripleLine(const EvidenceTriple& t, std::string* out) {
  out->push_back('(');
  AppendFlat(DisplayName(t.head), out);
  out->append(", ");
  AppendFlat(t.relation, out);
  out->append(", ");
  AppendFlat(DisplayName(t.tail), out);
  out->append(")\n");
}

void AppendRelationLine(const EvidenceTriple& t, std::string* out) {
  out->append("- ");
  AppendFlat(t.relation, out);
  out->append(": ");
  AppendFlat(t.relation_description, out);
  out->push_back('\n');
}

}  // namespace

int ApproxTokens(absl::string_view text) { return static_cast<int>((text.size() + 3) / 4); }

std::vector<int> EvidenceByScore(const std::vector<EvidenceTriple>& evidence) {
  std::vector<int> order(evidence.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&evidence](int a, int b) { return evidence[a].score > evidence[b].score; });
  return order;
}

BuiltPrompt BuildPrompt(const PromptTemplate& prompt, const ReasonRequest& request,
                        int evidence_token_budget) {
  BuiltPrompt built;
  built.version = prompt.version;

  std::string triples;
  std::string relations;
  triples.reserve(request.evidence.size() * 64);
  absl::flat_hash_set<absl::string_view> described;
  std::string line;
  int used_tokens = 0;
  for (int index : EvidenceByScore(request.evidence)) {
    const EvidenceTriple& t = request.evidence[index];
    line.clear();
    AppendTripleLine(t, &line);
    int cost = ApproxTokens(line);
    const size_t line_end = line.size();
    const bool describe = !t.relation_description.empty() && !described.contains(t.relation);
    if (describe) {
      AppendRelationLine(t, &line);
      cost = ApproxTokens(line);  // the description line is paid for once, with its first triple
    }
    if (used_tokens + cost > evidence_token_budget) {
      ++built.evidence_dropped;
      continue;
    }
    used_tokens += cost;
    triples.append(line, 0, line_end);
    if (describe) {
      relations.append(line, line_end, std::string::npos);
      described.insert(t.relation);
    }
    built.evidence_used.push_back(index);
  }
  built.evidence_tokens = used_tokens;
  if (!triples.empty()) triples.pop_back();
  if (!relations.empty()) relations.pop_back();
  if (triples.empty()) triples = "(no evidence was retrieved)";
  if (relations.empty()) relations = "(none)";

  std::string options;
  for (size_t i = 0; i < request.options.size(); ++i) {
    if (i > 0) options.push_back('\n');
    absl::StrAppend(&options, OptionLetter(static_cast<int>(i)), ") ");
    AppendFlat(request.options[i], &options);
  }

  built.messages.reserve(prompt.messages.size());
  for (const TemplateMessage& message : prompt.messages) {
    ChatMessage& out = built.messages.emplace_back();
    out.role = message.role;
    for (const TemplateSegment& segment : message.segments) {
      if (!segment.is_placeholder) {
        out.content.append(segment.literal);
        continue;
      }
      switch (segment.placeholder) {
        case Placeholder::kRelations:
          out.content.append(relations);
          break;
        case Placeholder::kTriples:
          out.content.append(triples);
          break;
        case Placeholder::kQuestion:
          out.content.append(request.question);
          break;
        case Placeholder::kOptions:
          out.content.append(options);
          break;
      }
    }
  }
  return built;
}

}  // namespace ibgraphrag::reasoner
