// Client for one OpenAI-compatible `/v1/chat/completions` backend (vLLM, llama.cpp server,
// Ollama, TGI, hosted APIs) over libcurl. Adds what a service needs around the HTTP call: a
// per-call timeout bounded by the caller's deadline, retries with jittered exponential backoff
// on transient failures only, a per-backend concurrency limit, SSE streaming and precise
// absl status codes. Never logs prompts, outputs or the API key.
#ifndef IBGRAPHRAG_SERVICES_REASONER_LLM_CLIENT_H_
#define IBGRAPHRAG_SERVICES_REASONER_LLM_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ibgraphrag::reasoner {

// Receives one log line (no trailing newline). Lines carry backend names, attempts, HTTP codes
// and timings only: never prompts, model output or credentials.
using LogFn = std::function<void(absl::string_view line)>;

// Receives each piece of model output as it arrives over SSE, in order.
using TokenCallback = std::function<void(absl::string_view token)>;

// The default LogFn: one line to stderr, prefixed "[reasoner] ".
void LogToStderr(absl::string_view line);

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

// One named backend of the reasoner config.
struct LlmBackendConfig {
  // Name requests select the backend by; not "" and not "extractive".
  std::string name;
  // Base URL up to and including the API version, as OpenAI SDKs take it:
  // "http://127.0.0.1:8000/v1". "/chat/completions" is appended. http:// or https:// only.
  std::string base_url;
  // Model name sent in every request ("meta-llama/Llama-3.1-8B-Instruct").
  std::string model;
  // Name of an environment variable holding the API key, read once at Create. Optional.
  std::string api_key_env;
  // Path of a file holding the API key (a mounted secret), read at Create and again on every
  // call so a rotated secret takes effect; surrounding whitespace is trimmed. Takes precedence
  // over api_key_env. Optional; with neither set no Authorization header is sent.
  std::string api_key_file;
  // Limit on one HTTP attempt (connect + generation). The caller's deadline, when earlier, wins.
  absl::Duration timeout = absl::Seconds(60);
  // Limit on establishing the TCP/TLS connection, within `timeout`.
  absl::Duration connect_timeout = absl::Seconds(5);
  // Retries after the first attempt on 429, 5xx and connection errors (never on other 4xx,
  // timeouts or malformed answers). 0 disables retrying.
  int max_retries = 2;
  // Requests in flight to this backend at once; further callers wait (until their deadline).
  int max_concurrency = 8;
  // Backoff before retry k (k = 0, 1, ...) is min(max_backoff, initial_backoff * 2^k), scaled by
  // a random factor in [0.5, 1] so synchronized clients spread out.
  absl::Duration initial_backoff = absl::Milliseconds(250);
  absl::Duration max_backoff = absl::Seconds(4);
  // A server's Retry-After (seconds or HTTP date) replaces the backoff, capped at this.
  absl::Duration max_retry_after = absl::Seconds(10);
  // max_tokens sent when a ChatRequest leaves it 0.
  int max_tokens = 512;
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

class LlmClient {
 public:
  // Checks the config (name, URL scheme, limits) and resolves the API key. FAILED_PRECONDITION
  // when a configured key source is missing, INVALID_ARGUMENT for a bad config field.
  static absl::StatusOr<std::unique_ptr<LlmClient>> Create(LlmBackendConfig config,
                                                           LogFn log = nullptr);
  ~LlmClient();
  LlmClient(const LlmClient&) = delete;
  LlmClient& operator=(const LlmClient&) = delete;

  // Sends `request` and returns the assistant message. With `on_token`, streams over SSE and
  // calls it for every content delta before returning. Thread-safe.
  //
  // Each attempt is bounded by min(config.timeout, deadline - now); backoff sleeps never run
  // past `deadline`. Once a token has reached `on_token` the call is not retried (the caller
  // would see text twice). Codes: DEADLINE_EXCEEDED (deadline or per-call timeout, or no
  // concurrency slot in time), UNAVAILABLE (connection failure or 5xx after retries),
  // RESOURCE_EXHAUSTED (429 after retries), INVALID_ARGUMENT (400/413/422 and other 4xx),
  // UNAUTHENTICATED (401), PERMISSION_DENIED (403), NOT_FOUND (404), INTERNAL (malformed JSON or
  // SSE), FAILED_PRECONDITION (API key file unreadable).
  absl::StatusOr<ChatResponse> Complete(const ChatRequest& request, absl::Time deadline,
                                        const TokenCallback& on_token = nullptr) const;

  const LlmBackendConfig& config() const { return config_; }
  // Requests in flight now (holding a concurrency slot).
  int in_flight() const;

 private:
  struct AttemptResult;

  LlmClient(LlmBackendConfig config, LogFn log, std::string env_api_key);

  absl::StatusOr<std::string> ApiKey() const;
  // Waits for a concurrency slot until `deadline`.
  absl::Status AcquireSlot(absl::Time deadline) const;
  void ReleaseSlot() const;
  AttemptResult Attempt(const std::string& body, const std::string& api_key, absl::Time deadline,
                        const TokenCallback& on_token) const;
  absl::Duration Backoff(int retry) const;
  void Log(absl::string_view line) const;

  const LlmBackendConfig config_;
  const std::string url_;
  const LogFn log_;
  const std::string env_api_key_;
  mutable absl::Mutex mu_;
  mutable int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

// Serialises the JSON body of a chat completion request (exposed for tests and benchmarks).
std::string ChatRequestToJson(const ChatRequest& request, absl::string_view model,
                              int default_max_tokens, bool stream);

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_LLM_CLIENT_H_
