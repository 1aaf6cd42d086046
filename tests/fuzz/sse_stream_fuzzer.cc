// The SSE stream of a streamed chat completion (common/openai_wire.h SseParser): bytes a remote
// LLM server chose. The first byte picks a chunk size; the stream must parse the same whether
// it arrives whole or cut into chunks, and the token callback must see exactly the content.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/openai_client.h"
#include "common/openai_wire.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::common::ChatResponse;
using ibgraphrag::common::SseParser;
using ibgraphrag::common::TokenCallback;

struct Outcome {
  bool ok = true;
  std::string status;
  ChatResponse response;
  std::string tokens;  // what the callback saw, concatenated
  bool done = false;
};

Outcome Parse(absl::string_view stream, size_t chunk_size) {
  Outcome outcome;
  TokenCallback on_token = [&outcome](absl::string_view token) {
    ibgraphrag::fuzz::Check(!token.empty(), "SSE token callback got an empty token");
    outcome.tokens.append(token.data(), token.size());
  };
  SseParser parser("fuzz", &on_token, &outcome.response);
  for (size_t at = 0; at < stream.size() && outcome.ok; at += chunk_size) {
    outcome.ok = parser.Feed(stream.substr(at, chunk_size));
  }
  if (outcome.ok) outcome.ok = parser.Finish();
  outcome.status = parser.status().ToString();
  outcome.done = parser.done();
  ibgraphrag::fuzz::Check(outcome.ok == parser.status().ok(), "Feed/Finish disagree with status()");
  ibgraphrag::fuzz::Check(parser.delivered_tokens() == !outcome.tokens.empty(),
                          "delivered_tokens() disagrees with the callback");
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk_size = 1 + data[0] % 16;
  const absl::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Outcome whole = Parse(stream, stream.size() + 1);
  const Outcome chunked = Parse(stream, chunk_size);
  using ibgraphrag::fuzz::Check;
  Check(whole.ok == chunked.ok && whole.status == chunked.status,
        "chunked SSE parse ends differently from the whole parse");
  Check(whole.response.content == chunked.response.content && whole.done == chunked.done &&
            whole.response.finish_reason == chunked.response.finish_reason,
        "chunked SSE parse yields a different answer");
  if (whole.ok) {
    Check(whole.tokens == whole.response.content, "callback tokens differ from the content");
  } else {
    Check(!whole.status.empty() && whole.status.find("backend 'fuzz'") != std::string::npos,
          "an SSE error does not name the backend");
  }
  return 0;
}
