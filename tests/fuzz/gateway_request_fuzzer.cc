// The gateway's validation of an AnswerRequest (services/gateway/request_validation.h) on
// requests built from the fuzz bytes as a binary proto, i.e. what a gRPC caller can send.
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "common/utf8.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "services/gateway/request_validation.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ibgraphrag::fuzz::Check;
  ibgraphrag::v1::AnswerRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const absl::Status valid = ibgraphrag::gateway::ValidateAnswerRequest(request);
  if (!valid.ok()) {
    Check(valid.code() == absl::StatusCode::kInvalidArgument && !valid.message().empty(),
          "a refused AnswerRequest is not INVALID_ARGUMENT with a message");
    return 0;
  }
  namespace gw = ibgraphrag::gateway;
  Check(!request.question().empty() && request.question().size() <= gw::kMaxQuestionBytes,
        "a question outside 1 byte..16 KiB was accepted");
  Check(ibgraphrag::common::IsValidUtf8(request.question()), "a non-UTF-8 question was accepted");
  Check(request.options_size() <= gw::kMaxOptions, "more than 26 options were accepted");
  for (const auto& option : request.options()) {
    Check(!option.empty() && option.size() <= gw::kMaxOptionBytes,
          "an option outside 1 byte..1 KiB was accepted");
  }
  const auto& pipeline = request.pipeline();
  Check(!pipeline.has_lambda() || (pipeline.lambda() >= 0 && pipeline.lambda() <= 1),
        "a lambda outside [0, 1] (or NaN) was accepted");
  Check(!pipeline.has_tau() || (pipeline.tau() >= 0 && pipeline.tau() <= 1),
        "a tau outside [0, 1] (or NaN) was accepted");
  Check(pipeline.max_hops() <= gw::kMaxHops, "max_hops above 4 was accepted");
  Check(pipeline.reasoner_backend().size() <= gw::kMaxReasonerBackendBytes,
        "a reasoner_backend above 128 bytes was accepted");
  return 0;
}
