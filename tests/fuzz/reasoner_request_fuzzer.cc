// The reasoner's request checks as a gRPC caller reaches them: the fuzz bytes as a binary
// ibgraphrag.v1.ReasonRequest, mapped to the core request (FromProto), then ValidateRequest
// (services/reasoner/request_validation.h) with the default limits and one LLM backend.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ibgraphrag/v1/reasoner.pb.h"
#include "services/reasoner/reasoner_service_impl.h"
#include "services/reasoner/reasoner_types.h"
#include "services/reasoner/request_validation.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;
using ibgraphrag::reasoner::ReasonRequest;
using ibgraphrag::reasoner::ValidationLimits;

// What an accepted request may rely on downstream (prompt building indexes evidence by path).
void CheckAccepted(const ReasonRequest& request, const ValidationLimits& limits) {
  Check(!request.question.empty() && request.question.size() <= limits.max_question_bytes,
        "a question outside 1 byte..16 KiB was accepted");
  Check(static_cast<int>(request.options.size()) <= limits.max_options,
        "more than 26 options were accepted");
  Check(static_cast<int>(request.evidence.size()) <= limits.max_evidence,
        "more evidence than the limit was accepted");
  Check(static_cast<int>(request.paths.size()) <= limits.max_paths,
        "more paths than the limit was accepted");
  for (const auto& path : request.paths) {
    Check(static_cast<int>(path.triple_indices.size()) <= limits.max_path_length,
          "a path longer than the limit was accepted");
    for (int index : path.triple_indices) {
      Check(index >= 0 && index < static_cast<int>(request.evidence.size()),
            "a path index outside the evidence was accepted");
    }
  }
  Check(request.self_consistency.samples >= 0 &&
            request.self_consistency.samples <= limits.max_samples,
        "self_consistency.samples outside 0..16 was accepted");
  for (double temperature : request.self_consistency.temperatures) {
    Check(temperature >= 0 && temperature <= limits.max_temperature,
          "a temperature outside [0, 2] (or NaN) was accepted");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ibgraphrag::v1::ReasonRequest proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<ReasonRequest> request = ibgraphrag::reasoner::FromProto(proto);
  if (!request.ok()) {
    Check(request.status().code() == absl::StatusCode::kInvalidArgument,
          "FromProto refused a request without INVALID_ARGUMENT");
    return 0;
  }
  const ValidationLimits limits;
  const std::vector<std::string> backends = {"vllm"};
  const absl::Status valid = ibgraphrag::reasoner::ValidateRequest(*request, limits, backends);
  if (!valid.ok()) {
    Check(valid.code() == absl::StatusCode::kInvalidArgument && !valid.message().empty(),
          "a refused ReasonRequest is not INVALID_ARGUMENT with a message");
    return 0;
  }
  CheckAccepted(*request, limits);
  return 0;
}
