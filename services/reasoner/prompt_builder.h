// Renders a PromptTemplate for one request: evidence as "(head, relation, tail)" lines sorted
// by retriever score (best first), each used relation's description listed once, the question
// and lettered options.
//
// Token budget. Evidence (triple lines plus relation description lines) is trimmed to the
// request's evidence_token_budget, approximating tokens as ceil(bytes / 4): OpenAI-style BPE
// tokenizers average about four characters of English per token. Dense biomedical names split
// into more pieces, so treat the budget as approximate and leave headroom below the model's
// context. Triples are taken best-first; one that does not fit is skipped and smaller, lower
// scored ones may still enter, so the budget is filled with the best triples that fit.
#ifndef IBGRAPHRAG_SERVICES_REASONER_PROMPT_BUILDER_H_
#define IBGRAPHRAG_SERVICES_REASONER_PROMPT_BUILDER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "services/reasoner/llm_client.h"
#include "services/reasoner/prompt_templates.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

struct BuiltPrompt {
  std::vector<ChatMessage> messages;
  std::string version;             // the template's version, e.g. "mcq.v1"
  std::vector<int> evidence_used;  // evidence indices in the prompt, in prompt order
  int evidence_dropped = 0;        // evidence left out by the budget
  int evidence_tokens = 0;         // approximate tokens of the evidence block
};

// Approximate token count of `text`: ceil(bytes / 4).
int ApproxTokens(absl::string_view text);

// Renders `prompt` for `request` with at most `evidence_token_budget` (> 0) approximate tokens
// of evidence. Newlines inside names are flattened so evidence cannot forge prompt lines.
BuiltPrompt BuildPrompt(const PromptTemplate& prompt, const ReasonRequest& request,
                        int evidence_token_budget);

// Indices of `evidence` sorted by score, best first; ties keep their input order.
std::vector<int> EvidenceByScore(const std::vector<EvidenceTriple>& evidence);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_PROMPT_BUILDER_H_
