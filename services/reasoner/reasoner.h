// The reasoning service core: validates a request, builds the prompt, calls an LLM backend
// (with self-consistency voting) or the extractive backend, parses the answer and falls back
// to the extractive answer when the LLM fails and the config allows it. Plain C++: the gRPC
// service translates ReasonRequest/ReasonResult to and from protos and nothing else.
#ifndef IBGRAPHRAG_SERVICES_REASONER_REASONER_H_
#define IBGRAPHRAG_SERVICES_REASONER_REASONER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/reasoner/confidence_calibration.h"
#include "services/reasoner/extractive_reasoner.h"
#include "services/reasoner/llm_client.h"
#include "services/reasoner/prompt_templates.h"
#include "services/reasoner/reasoner_types.h"
#include "services/reasoner/request_validation.h"

namespace ibgraphrag::reasoner {

// What to do when every LLM sample fails (after the client's retries).
enum class LlmFailurePolicy {
  // Return the LLM's status (UNAVAILABLE, DEADLINE_EXCEEDED, ...) to the caller.
  kReturnError,
  // Answer with the extractive backend, flagged degraded with the LLM's error as the reason.
  kFallBackToExtractive,
};

struct ReasonerOptions {
  // Named LLM backends; requests pick one by name. May be empty (extractive only).
  std::vector<LlmBackendConfig> backends;
  // Template directory and pinned versions; defaults serve the compiled-in templates.
  PromptLibraryOptions prompts;
  LlmFailurePolicy on_llm_failure = LlmFailurePolicy::kFallBackToExtractive;
  // Evidence budget in approximate tokens (bytes / 4) when a request leaves it 0. 4,000 fits
  // ~150 typical triples and leaves room in an 8k-context model.
  int default_evidence_token_budget = 4000;
  // Seed sent with sample i is seed + i, so samples differ yet each run repeats.
  int64_t seed = 0;
  // Stop sequences sent with every LLM request (at most 4).
  std::vector<std::string> stop_sequences;
  // Whether requests may bring their own prompt (caller_prompt; the gateway's modes do). The
  // reasoner is reachable only by the gateway (mTLS, NetworkPolicies); false refuses such
  // requests (FAILED_PRECONDITION) where that does not hold.
  bool accept_caller_prompts = true;
  // Largest caller prompt (system + user) in approximate tokens (bytes / 4): the budget the
  // reasoner's own prompts keep through evidence_token_budget, which a caller prompt bypasses.
  int max_caller_prompt_tokens = 32768;
  ValidationLimits limits;
  ExtractiveOptions extractive;
  // Calibrated confidence and abstention of extractive answers (confidence_calibration.h);
  // nullptr = raw support as confidence, answers reported "uncalibrated".
  std::shared_ptr<const CalibrationModel> calibration;
  // Receives log lines; nullptr logs to stderr. Lines never contain question text, options,
  // evidence, prompts, model output or API keys unless log_patient_text is set.
  LogFn log;
  // Debug only: also log question text and raw model output. Question text is patient data.
  bool log_patient_text = false;
};

class Reasoner {
 public:
  // Loads the prompt templates and creates one LlmClient per backend. INVALID_ARGUMENT for a
  // bad or duplicate backend config, FAILED_PRECONDITION for a missing API key, NOT_FOUND /
  // INVALID_ARGUMENT for prompt templates.
  static absl::StatusOr<std::unique_ptr<Reasoner>> Create(ReasonerOptions options);

  // Answers `request` before `deadline` (the caller's deadline). INVALID_ARGUMENT for a request
  // that fails validation; LLM errors only under LlmFailurePolicy::kReturnError (or when the
  // deadline has already passed). Thread-safe.
  absl::StatusOr<ReasonResult> Reason(const ReasonRequest& request, absl::Time deadline) const;

  // Like Reason, and calls `on_token` with the LLM's output as it arrives (the first, lowest
  // temperature sample's tokens when voting) before returning the parsed result. `on_token` runs
  // on the calling thread. The extractive backend produces no tokens; its whole answer comes in
  // the result. When the LLM fails mid-stream and the policy falls back, the result is the
  // degraded extractive answer; tokens already delivered are not retracted.
  absl::StatusOr<ReasonResult> ReasonStream(const ReasonRequest& request, absl::Time deadline,
                                            const TokenCallback& on_token) const;

  // Configured LLM backend names, in config order.
  std::vector<std::string> BackendNames() const;
  const PromptLibrary& prompts() const { return prompts_; }

 private:
  Reasoner(ReasonerOptions options, PromptLibrary prompts,
           std::map<std::string, std::unique_ptr<LlmClient>> clients);

  absl::StatusOr<ReasonResult> Run(const ReasonRequest& request, absl::Time deadline,
                                   const TokenCallback* on_token) const;
  absl::StatusOr<ReasonResult> RunLlm(const ReasonRequest& request, Task task,
                                      const LlmClient& client, absl::Time deadline,
                                      const TokenCallback* on_token) const;
  ReasonResult RunExtractive(const ReasonRequest& request, Task task) const;
  // accept_caller_prompts and max_caller_prompt_tokens: FAILED_PRECONDITION / INVALID_ARGUMENT.
  absl::Status CheckCallerPrompt(const CallerPrompt& prompt) const;
  void Log(absl::string_view line) const;

  const ReasonerOptions options_;
  const PromptLibrary prompts_;
  const std::map<std::string, std::unique_ptr<LlmClient>> clients_;
  const std::vector<std::string> backend_names_;
};

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_REASONER_H_
