// The wire formats of OpenAI-compatible answers, apart from the transport (common/openai_client.h)
// so they can be tested and fuzzed without a server: the SSE stream of a streamed chat
// completion, the JSON body of a whole one, the JSON body of an embeddings answer and the error
// text a server puts in a failed answer. Everything here reads bytes a remote server chose:
// malformed input is a status, never a crash or an exception.
#ifndef IBGRAPHRAG_COMMON_OPENAI_WIRE_H_
#define IBGRAPHRAG_COMMON_OPENAI_WIRE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/openai_client.h"

namespace ibgraphrag::common {

// Server error messages are quoted in statuses only this far: enough to say what was wrong.
inline constexpr size_t kMaxQuotedErrorBytes = 200;

// `text` cut to `limit` bytes, with "..." appended when it was cut.
std::string TruncateForStatus(absl::string_view text, size_t limit);

// The error text an OpenAI-compatible server put in its body: {"error": {"message": ...}},
// {"error": "..."} (llama.cpp, Ollama) or {"detail": ...} (FastAPI servers), at most
// kMaxQuotedErrorBytes (+ "..."). Empty when none.
std::string ServerErrorMessage(absl::string_view body);

// Reads one SSE stream of chat.completion.chunk events; each "data:" event's JSON delta is
// appended to `response` and handed to `on_token` (may be null). Bytes may arrive split anywhere.
class SseParser {
 public:
  SseParser(absl::string_view backend, const TokenCallback* on_token, ChatResponse* response)
      : backend_(backend), on_token_(on_token), response_(response) {}

  // Consumes bytes; false (with status()) when the stream is malformed (INTERNAL) or reports an
  // error event (UNAVAILABLE). Not to be called again after it returned false.
  bool Feed(absl::string_view bytes);
  // Flushes an event not terminated by a blank line (some servers close right after it).
  bool Finish();

  // A "data: [DONE]" event arrived; later events are ignored.
  bool done() const { return done_; }
  // At least one non-empty content delta reached the response (and the callback).
  bool delivered_tokens() const { return delivered_tokens_; }
  const absl::Status& status() const { return status_; }

 private:
  bool HandleLine(absl::string_view line);
  bool Dispatch();

  const std::string backend_;
  const TokenCallback* const on_token_;
  ChatResponse* const response_;
  std::string buffer_;
  std::string data_;
  bool has_data_ = false;
  bool done_ = false;
  bool delivered_tokens_ = false;
  absl::Status status_;
};

// A whole (unstreamed) chat completion body: choices[0].message.content (a string or null),
// finish_reason, model and usage. INTERNAL naming `backend` when the body is not JSON or has no
// string choices[0].message.content. `attempts` is left 0.
absl::StatusOr<ChatResponse> ParseCompletionBody(absl::string_view backend, absl::string_view body);

// An embeddings body with exactly `input_count` vectors, put in order by their "index" fields
// (the position when absent). DATA_LOSS naming `backend` for anything else: not JSON, another
// vector count, a missing, out-of-range or duplicate index, an empty or non-numeric embedding.
// `attempts` is left 0.
absl::StatusOr<EmbeddingsResponse> ParseEmbeddingsBody(absl::string_view backend,
                                                       absl::string_view body, size_t input_count);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_OPENAI_WIRE_H_
