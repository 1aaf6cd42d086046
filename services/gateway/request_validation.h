// Limits of the public Answer API and the check every request passes before any stage runs.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_REQUEST_VALIDATION_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_REQUEST_VALIDATION_H_

#include <cstddef>

#include "absl/status/status.h"
#include "ibgraphrag/v1/gateway.pb.h"

namespace ibgraphrag::gateway {

inline constexpr size_t kMaxQuestionBytes = 16 * 1024;
inline constexpr int kMaxOptions = 26;
inline constexpr size_t kMaxOptionBytes = 1024;
inline constexpr int kMaxTopK = 1000;
inline constexpr int kMaxHops = 4;
inline constexpr int kMaxReasonerBackendBytes = 128;

// OK, or INVALID_ARGUMENT whose message starts with the offending field and states the limit:
// question (1 byte .. 16 KiB, UTF-8), options (at most 26, each 1 byte .. 1 KiB; 2 or more for
// TASK_MULTIPLE_CHOICE), pipeline.top_k / pipeline.align_top_k (1..1000), pipeline.lambda /
// pipeline.tau ([0, 1]), pipeline.max_hops (1..4), pipeline.reasoner_backend (at most 128
// bytes; whether it exists is the reasoner's call), pipeline.self_consistency.samples (0..16),
// pipeline.mode (empty or one of ModeNames(), services/gateway/modes/pipeline_mode.h).
absl::Status ValidateAnswerRequest(const ibgraphrag::v1::AnswerRequest& request);

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_REQUEST_VALIDATION_H_
