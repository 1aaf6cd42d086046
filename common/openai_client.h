// The one client for OpenAI-compatible HTTP APIs (vLLM, llama.cpp server, Ollama, TGI, TEI,
// hosted APIs) over libcurl: `/chat/completions` (whole or streamed over SSE) and `/embeddings`.
// The reasoner's LLM backends and alignment's MSCA LLM step and remote text encoder all use it,
// so they share one retry policy (jittered exponential backoff on connection errors, 408, 429
// and 5xx, Retry-After honoured, never past the caller's deadline), one connect timeout, one
// per-attempt timeout, a per-backend concurrency limit and connection reuse (a pool of curl easy
// handles, each keeping its connections alive between calls). Never logs request bodies, model
// output or the API key.
#ifndef IBGRAPHRAG_COMMON_OPENAI_CLIENT_H_
#define IBGRAPHRAG_COMMON_OPENAI_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace ibgraphrag::common {

// Receives one log line (no trailing newline). Lines carry backend names, attempts, HTTP codes
// and timings only: never prompts, inputs, model output or credentials.
using LogFn = std::function<void(absl::string_view line)>;

// Receives each piece of model output as it arrives over SSE, in order.
using TokenCallback = std::function<void(absl::string_view token)>;

// One OpenAI-compatible endpoint and how to talk to it.
struct OpenAiClientOptions {
  // Names the backend in statuses and log lines ("vllm", "embeddings"). Not empty.
  std::string name;
  // Base URL up to and including the API version, as OpenAI SDKs take it:
  // "http://127.0.0.1:8000/v1". "/chat/completions" or "/embeddings" is appended. http:// or
  // https:// only.
  std::string base_url;
  // Model name sent in every request ("meta-llama/Llama-3.1-8B-Instruct", "bge-small").
  std::string model;
  // Name of an environment variable holding the API key, read once at Create. Optional.
  std::string api_key_env;
  // Path of a file holding the API key (a mounted secret), read at Create and again on every
  // call so a rotated secret takes effect; surrounding whitespace is trimmed. Takes precedence
  // over api_key_env. Optional; with neither set no Authorization header is sent.
  std::string api_key_file;
  // Limit on one HTTP attempt (connect + generation). The caller's deadline, when earlier, wins.
  absl::Duration timeout = absl::Seconds(60);
  // Limit on establishing the TCP/TLS connection, within `timeout`. A connect that times out
  // is UNAVAILABLE and retried like a refused one.
  absl::Duration connect_timeout = absl::Seconds(5);
  // Retries after the first attempt on 408, 429, 5xx and connection errors (never on other 4xx,
  // timeouts or malformed answers). 0..10; 0 disables retrying.
  int max_retries = 2;
  // Requests in flight to this backend at once; further callers wait (until their deadline).
  // Also the most idle connections the client keeps open for reuse.
  int max_concurrency = 8;
  // Backoff before retry k (k = 0, 1, ...) is min(max_backoff, initial_backoff * 2^k), scaled by
  // a random factor in [0.5, 1] so synchronized clients spread out.
  absl::Duration initial_backoff = absl::Milliseconds(250);
  absl::Duration max_backoff = absl::Seconds(4);
  // A server's Retry-After (seconds or HTTP date) replaces the backoff, capped at this.
  absl::Duration max_retry_after = absl::Seconds(10);
  // max_tokens sent when a ChatRequest leaves it 0. At least 1.
  int max_tokens = 512;
};

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ChatRequest {
  std::vector<ChatMessage> messages;
  double temperature = 0.0;
  // Sent as "seed" when set; vLLM and OpenAI use it for reproducible sampling.
  std::optional<int64_t> seed = 0;
  // 0 = the backend's configured max_tokens.
  int max_tokens = 0;
  // Up to 4 stop sequences (OpenAI's limit); the model stops before emitting any of them.
  std::vector<std::string> stop;
};

struct ChatResponse {
  std::string content;        // the assistant message (all SSE deltas concatenated)
  std::string finish_reason;  // "stop", "length", ...; empty when the server sent none
  std::string model;          // model name the server reported; may be empty
  int attempts = 0;           // HTTP attempts made, retries included
  int prompt_tokens = -1;     // from "usage" when the server reports it, else -1
  int completion_tokens = -1;
};

struct EmbeddingsResponse {
  // vectors[i] embeds input i (the server's "index" fields put them in order), as sent: not
  // normalised, and of whatever length the model produces (the caller checks it).
  std::vector<std::vector<float>> vectors;
  std::string model;  // model name the server reported; may be empty
  int attempts = 0;   // HTTP attempts made, retries included
};

class OpenAiClient {
 public:
  // Checks the options (name, URL scheme, limits) and resolves the API key. FAILED_PRECONDITION
  // when a configured key source is missing, INVALID_ARGUMENT naming a bad field. A null `log`
  // drops log lines.
  static absl::StatusOr<std::unique_ptr<OpenAiClient>> Create(OpenAiClientOptions options,
                                                              LogFn log = nullptr);
  ~OpenAiClient();
  OpenAiClient(const OpenAiClient&) = delete;
  OpenAiClient& operator=(const OpenAiClient&) = delete;

  // POSTs `request` to /chat/completions and returns the assistant message. With `on_token`,
  // streams over SSE and calls it for every content delta before returning. Thread-safe.
  //
  // Each attempt is bounded by min(options.timeout, deadline - now); backoff sleeps never run
  // past `deadline`. Once a token has reached `on_token` the call is not retried (the caller
  // would see text twice). Codes: DEADLINE_EXCEEDED (deadline or per-call timeout, or no
  // concurrency slot in time), UNAVAILABLE (connection failure or 5xx after retries),
  // RESOURCE_EXHAUSTED (429 after retries), INVALID_ARGUMENT (400/413/422 and other 4xx),
  // UNAUTHENTICATED (401), PERMISSION_DENIED (403), NOT_FOUND (404), INTERNAL (malformed JSON or
  // SSE), FAILED_PRECONDITION (API key file unreadable).
  absl::StatusOr<ChatResponse> Complete(const ChatRequest& request, absl::Time deadline,
                                        const TokenCallback& on_token = nullptr) const;

  // POSTs `inputs` to /embeddings (one request; the caller batches) with the same retry policy,
  // timeouts and codes as Complete, except that a malformed answer (not JSON, missing or
  // duplicate indices, a vector count other than inputs.size(), non-numeric values) is
  // DATA_LOSS: the vectors would silently corrupt whatever index they go into. Empty inputs are
  // sent as " ", since some servers reject empty strings. Thread-safe.
  absl::StatusOr<EmbeddingsResponse> Embed(absl::Span<const std::string> inputs,
                                           absl::Time deadline) const;

  const OpenAiClientOptions& options() const { return options_; }
  // Requests in flight now (holding a concurrency slot).
  int in_flight() const;

 private:
  class HandlePool;
  struct Exchange;
  struct AttemptResult;
  // Turns a completed attempt's body into the caller's result; may fail it (non-retryable).
  using FinishFn = absl::FunctionRef<void(AttemptResult* result)>;

  OpenAiClient(OpenAiClientOptions options, LogFn log, std::string env_api_key);

  // The retry loop shared by Complete and Embed: runs attempts of `exchange` until one succeeds
  // (and `finish` accepts it), a non-retryable error, the retry limit or the deadline. Returns
  // the number of attempts made.
  absl::StatusOr<int> Call(const Exchange& exchange, absl::Time deadline, FinishFn finish) const;
  // Logs the attempt ("<kind> backend=... attempt=i/n result=...") and decides what follows it:
  // the backoff to sleep before the next attempt (zero after a success), or the final status.
  absl::StatusOr<absl::Duration> NextStep(absl::string_view kind, const AttemptResult& result,
                                          int attempt, absl::Duration took,
                                          absl::Time deadline) const;
  // One HTTP request with a pooled curl handle, bounded by the timeouts and the deadline.
  AttemptResult Attempt(const Exchange& exchange, const std::string& api_key,
                        absl::Time deadline) const;

  absl::StatusOr<std::string> ApiKey() const;
  // Waits for a concurrency slot until `deadline`.
  absl::Status AcquireSlot(absl::Time deadline) const;
  void ReleaseSlot() const;
  absl::Duration Backoff(int retry) const;
  void Log(absl::string_view line) const;

  const OpenAiClientOptions options_;
  const std::string chat_url_;
  const std::string embeddings_url_;
  const LogFn log_;
  const std::string env_api_key_;
  const std::unique_ptr<HandlePool> handles_;
  mutable absl::Mutex mu_;
  mutable int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

// Serialises the JSON body of a chat completion request (exposed for tests and benchmarks).
std::string ChatRequestToJson(const ChatRequest& request, absl::string_view model,
                              int default_max_tokens, bool stream);

// Serialises the JSON body of an embeddings request (exposed for tests).
std::string EmbeddingsRequestToJson(absl::Span<const std::string> inputs, absl::string_view model);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_OPENAI_CLIENT_H_
