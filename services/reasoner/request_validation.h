// Input checks for ReasonRequest. Every failure is INVALID_ARGUMENT with a message naming the
// field and the limit, so a caller can fix the request without reading the code.
#ifndef IBGRAPHRAG_SERVICES_REASONER_REQUEST_VALIDATION_H_
#define IBGRAPHRAG_SERVICES_REASONER_REQUEST_VALIDATION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "services/reasoner/reasoner_types.h"

namespace ibgraphrag::reasoner {

struct ValidationLimits {
  // Question (or claim) length in bytes; an empty question is always rejected.
  size_t max_question_bytes = 16 * 1024;
  // Options per question; 26 because options are lettered A..Z.
  int max_options = 26;
  // Fewest options a multiple-choice question may have.
  int min_options = 2;
  // Length of one option in bytes.
  size_t max_option_bytes = 1024;
  // Evidence triples per request.
  int max_evidence = 1000;
  // Length of any one evidence string (names, ids, relation, description, source) in bytes.
  size_t max_evidence_field_bytes = 4096;
  // Reasoning paths per request, and triples per path.
  int max_paths = 1000;
  int max_path_length = 16;
  // Topic entities per request.
  int max_topic_entities = 256;
  // Self-consistency samples per request.
  int max_samples = 16;
  // Highest sampling temperature accepted (OpenAI's range is [0, 2]).
  double max_temperature = 2.0;
  // Largest evidence token budget a request may ask for.
  int max_evidence_token_budget = 1 << 20;
};

// Checks `request` against `limits`. `llm_backends` are the configured LLM backend names; the
// request's backend must be one of them, "" or "extractive". An empty evidence list is valid
// (the answer is then flagged insufficient_evidence).
absl::Status ValidateRequest(const ReasonRequest& request, const ValidationLimits& limits,
                             const std::vector<std::string>& llm_backends);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_REQUEST_VALIDATION_H_
