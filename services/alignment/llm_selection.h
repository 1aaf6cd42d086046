// MSCA's LLM selection step (paper §3.1, prompt of its Figure 6), run per query entity. One LLM
// call per mention shows the question, the mention and candidates numbered from 0; the LLM
// answers with the index of one candidate (the paper's JSON {"selected_entity": {"name", "id",
// "reason"}} with an integer id, a bare "2", "[2]", "Answer: 2"), an entity id, or NONE. Calls
// for several mentions run concurrently (bounded), within the request's deadline. A configured
// LLM that fails, times out or answers unparsably adds one degradation
// {component: "alignment_llm"} and leaves those mentions as without an LLM; it never fails the
// request. Two orders (MscaOptions::llm_step):
//   - before the filter (the paper's, default; PreselectWithLlm): a mention whose top-K holds
//     fewer than `llm_choice_below` entities the dictionary names (the paper's "relevant
//     entities remain insufficient", threshold 5) has the LLM pick one of its top-K; the others
//     leave the candidate set, and S, R, C and tau then filter the picks with the rest;
//   - rescue (the suite's earlier order; RunLlmSelection): after the tau split, a mention with
//     fewer than `llm_choice_below` kept entities has the LLM pick one of its rejected
//     candidates, which moves to `kept` without facing the filter.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_LLM_SELECTION_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_LLM_SELECTION_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "services/alignment/aligner.h"
#include "services/alignment/lexicon.h"

namespace ibgraphrag::common {
class OpenAiClient;
}  // namespace ibgraphrag::common

namespace ibgraphrag::alignment {

// Upper limits of the AlignerOptions that bound the step (documented in alignment_config.proto).
inline constexpr int kMaxLlmMentionsLimit = 64;
inline constexpr int kMaxLlmCandidatesLimit = 100;
inline constexpr int kMaxLlmParallelismLimit = 32;

// INVALID_ARGUMENT naming the field when max_llm_mentions, max_llm_candidates or
// llm_parallelism is outside its range, or llm_timeout is not positive.
absl::Status ValidateLlmSelectionLimits(const AlignerOptions& options);

// ---- Before the filter (LlmStep::kBeforeFilter) ----

// One LLM call: a mention and how many of its top-K candidates are shown (the first `shown`).
struct LlmPreselectionQuery {
  // Index into `links` (and AlignResult::mentions).
  int mention_index = 0;
  size_t shown = 0;
};

// The mentions that qualify (at least one candidate, fewer than `choice_below` of them named by
// the dictionary), those with the fewest named first and then in text order, at most
// `max_mentions` of them, each showing at most `max_candidates` candidates, best link first.
std::vector<LlmPreselectionQuery> PlanLlmPreselection(const std::vector<MentionLink>& links,
                                                      int choice_below, int max_mentions,
                                                      int max_candidates);

// What the LLM decided before the filter.
struct LlmPreselection {
  // Calls made.
  int calls = 0;
  // Lexicon entries the LLM picked for some mention.
  absl::flat_hash_set<uint32_t> chosen;
  // The candidates of asked mentions it did not pick (it picked another, or NONE), with the
  // mention they were proposed for.
  std::vector<std::pair<int, LinkedCandidate>> excluded;
  // Asked mentions with a candidate the dictionary names: their other candidates are look-alikes.
  absl::flat_hash_set<int> named_mentions;
};

// Narrows each planned mention's shown candidates in `links` to the LLM's pick (to none on NONE;
// candidates past max_candidates, never shown, stay), within `limits` and `deadline`. The pick is
// never a look-alike: the mention's list no longer holds the entity its words name, so MSCA
// takes the LLM's reading of them. A failed call leaves that mention's candidates as they were;
// failures add one Degradation {"alignment_llm", "LLM selection failed for k of n mentions
// (...)"} to `degraded`.
LlmPreselection PreselectWithLlm(const common::OpenAiClient& llm, const Lexicon& lexicon,
                                 absl::string_view question, int choice_below,
                                 const AlignerOptions& limits, absl::Time deadline,
                                 std::vector<MentionLink>* links,
                                 std::vector<Degradation>* degraded);

// ---- Rescue (LlmStep::kRescueRejected) ----

// One LLM call: a mention and the rejected candidates shown for it.
struct LlmSelectionQuery {
  // Index into AlignResult::mentions.
  int mention_index = 0;
  // Indexes into AlignResult::rejected of this mention's candidates, best C first (the order
  // they are numbered in the prompt).
  std::vector<size_t> rejected;
};

// The mentions that qualify (fewer than `choice_below` kept entities attributed to them, at least
// one rejected one), those with the fewest kept first and then in text order, at most
// `max_mentions` of them, each with at most `max_candidates` candidates.
std::vector<LlmSelectionQuery> PlanLlmSelection(const AlignResult& result, int choice_below,
                                                int max_mentions, int max_candidates);

// The paper's system message for the step (Figure 6), verbatim.
extern const char kLlmSelectionSystemPrompt[];

// The user message: the paper's task statement and answer format, with the question, the query
// entity (the mention as written) and the candidates numbered from 0 (name, type, id, the first
// 200 bytes of the definition). The paper also shows the answer; at serving time there is none.
std::string BuildLlmSelectionPrompt(absl::string_view question, absl::string_view query_entity,
                                    const std::vector<const LinkedCandidate*>& candidates,
                                    const Lexicon& lexicon);

// What the parser matches an answer against: the numbered candidates' ids and names.
struct SelectionCandidate {
  std::string external_id;
  std::string name;
};

// The candidate an LLM answer picks: its index into `candidates`, or nullopt for NONE. Accepts
// the paper's JSON (integer "id" = index from 0; a string "id" naming an entity id, or digits;
// "name" alone when no id), {"selected_entity": "NONE"}, and plain answers: "2", "[2]",
// "Answer: 2", "2. pneumonia", an entity id, "NONE" (any case, also inside a sentence), with or
// without code fences. INVALID_ARGUMENT for anything else, an index out of range or an id that is
// not among the candidates; the message never quotes the answer (model output is not logged).
absl::StatusOr<std::optional<size_t>> ParseLlmSelection(
    absl::string_view answer, absl::Span<const SelectionCandidate> candidates);

// Runs the step on `result` (after the threshold split) for the mentions with fewer than
// `choice_below` kept entities, within `limits` (max_llm_mentions, max_llm_candidates,
// llm_parallelism, llm_timeout per call; `deadline` when earlier): chosen entities move from
// `rejected` to the end of `kept` with chosen_by_llm = true. Failed calls add one Degradation
// {"alignment_llm", "LLM selection failed for k of n mentions (...)"}. Returns the number of
// calls made.
int RunLlmSelection(const common::OpenAiClient& llm, const Lexicon& lexicon,
                    absl::string_view question, int choice_below, const AlignerOptions& limits,
                    absl::Time deadline, AlignResult* result);

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_LLM_SELECTION_H_
