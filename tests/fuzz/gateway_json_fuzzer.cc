// The HTTP gateway's JSON request bodies (common/proto_json.h JsonRequestToProto) for the public
// Answer API and alignment's Align API, followed by the gateway's request validation. The first
// byte picks the message. A body that parses must survive the API's own JSON encoding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/proto_json.h"
#include "google/protobuf/message.h"
#include "ibgraphrag/v1/alignment.pb.h"
#include "ibgraphrag/v1/gateway.pb.h"
#include "services/gateway/request_validation.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;
using ibgraphrag::fuzz::CheckOk;

// Parses `json` into `message`; when it parses, encodes it as the API does and parses that back
// to the same message. False when the body was refused (with INVALID_ARGUMENT).
bool ParseAndRoundTrip(absl::string_view json, google::protobuf::Message* message) {
  const absl::Status status = ibgraphrag::common::JsonRequestToProto(json, "request", message);
  if (!status.ok()) {
    Check(status.code() == absl::StatusCode::kInvalidArgument,
          "a refused JSON body is not INVALID_ARGUMENT");
    return false;
  }
  absl::StatusOr<std::string> line = ibgraphrag::common::ProtoToJsonLine(*message);
  CheckOk(line.status(), "ProtoToJsonLine of a parsed request");
  std::unique_ptr<google::protobuf::Message> again(message->New());
  CheckOk(ibgraphrag::common::JsonRequestToProto(*line, "request", again.get()),
          "re-parsing the API's own JSON");
  // Compared as JSON, not with MessageDifferencer: NaN round-trips but is != itself. The parser
  // reads -0 as +0 (protobuf alone prints a set -0.0 as "-0" and parses "-0" back as +0; found by
  // the 10-minute run, regressions/negative-zero-lambda), so the API's encoding of a parsed
  // request is a fixed point from the first round trip.
  absl::StatusOr<std::string> line_again = ibgraphrag::common::ProtoToJsonLine(*again);
  Check(line_again.ok() && *line_again == *line, "a request changed through a JSON round trip");
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view json(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    ibgraphrag::v1::AnswerRequest request;
    if (!ParseAndRoundTrip(json, &request)) return 0;
    const absl::Status valid = ibgraphrag::gateway::ValidateAnswerRequest(request);
    if (valid.ok()) {
      Check(!request.question().empty() &&
                request.question().size() <= ibgraphrag::gateway::kMaxQuestionBytes,
            "a question outside 1 byte..16 KiB was accepted");
      Check(request.options_size() <= ibgraphrag::gateway::kMaxOptions,
            "more than 26 options were accepted");
    } else {
      Check(valid.code() == absl::StatusCode::kInvalidArgument && !valid.message().empty(),
            "a refused AnswerRequest is not INVALID_ARGUMENT with a message");
    }
  } else {
    ibgraphrag::v1::AlignRequest request;
    ParseAndRoundTrip(json, &request);
  }
  return 0;
}
