// The JSON body of an unstreamed chat completion and of a failed answer (common/openai_wire.h
// ParseCompletionBody, ServerErrorMessage): bytes a remote LLM server chose.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/openai_wire.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ibgraphrag::fuzz::Check;
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ibgraphrag::common::ChatResponse> parsed =
      ibgraphrag::common::ParseCompletionBody("fuzz", body);
  if (parsed.ok()) {
    Check(parsed->attempts == 0, "a parsed body claims attempts");
  } else {
    Check(parsed.status().code() == absl::StatusCode::kInternal,
          "a malformed chat body is not INTERNAL (the documented code)");
    Check(parsed.status().message().find("backend 'fuzz'") != absl::string_view::npos,
          "a chat body error does not name the backend");
  }
  const std::string message = ibgraphrag::common::ServerErrorMessage(body);
  Check(message.size() <= ibgraphrag::common::kMaxQuotedErrorBytes + 3,
        "ServerErrorMessage quotes more than kMaxQuotedErrorBytes");
  return 0;
}
