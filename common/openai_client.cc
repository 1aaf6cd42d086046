#include "common/openai_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/openai_wire.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using Json = nlohmann::json;

// Bounds memory when a misbehaving server streams without end.
constexpr size_t kMaxResponseBytes = 32 << 20;

void EnsureCurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// State shared with libcurl's callbacks during one attempt.
struct Transfer {
  std::string backend;
  const TokenCallback* on_token = nullptr;  // set when the caller asked for a stream
  long http_status = 0;
  std::string content_type;
  std::optional<absl::Duration> retry_after;
  std::string body;  // the whole body unless it is being parsed as SSE
  ChatResponse streamed;
  std::optional<SseParser> sse;
  absl::Status abort_status;  // set when a callback stopped the transfer
};

std::optional<absl::Duration> ParseRetryAfter(absl::string_view value) {
  value = absl::StripAsciiWhitespace(value);
  int64_t seconds = 0;
  if (absl::SimpleAtoi(value, &seconds)) {
    return absl::Seconds(std::max<int64_t>(seconds, 0));
  }
  const std::string date(value);
  const time_t when = curl_getdate(date.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  return std::max(absl::ZeroDuration(), absl::FromTimeT(when) - absl::Now());
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  absl::string_view line = absl::StripAsciiWhitespace(absl::string_view(data, bytes));
  if (absl::StartsWith(line, "HTTP/")) {
    // A new status line (after "100 Continue" or a redirect) starts a fresh header set.
    transfer->content_type.clear();
    transfer->retry_after.reset();
    const size_t space = line.find(' ');
    int status = 0;
    if (space != absl::string_view::npos && absl::SimpleAtoi(line.substr(space + 1, 3), &status)) {
      transfer->http_status = status;
    }
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return bytes;
  const std::string name = absl::AsciiStrToLower(line.substr(0, colon));
  const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
  if (name == "content-type") {
    transfer->content_type = absl::AsciiStrToLower(value);
  } else if (name == "retry-after") {
    transfer->retry_after = ParseRetryAfter(value);
  }
  return bytes;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  const absl::string_view chunk(data, bytes);
  const bool success = transfer->http_status >= 200 && transfer->http_status < 300;
  // Servers that ignore "stream": true answer with plain JSON; that body is parsed whole later.
  if (transfer->on_token != nullptr && success &&
      absl::StrContains(transfer->content_type, "text/event-stream")) {
    if (!transfer->sse.has_value()) {
      transfer->sse.emplace(transfer->backend, transfer->on_token, &transfer->streamed);
    }
    if (!transfer->sse->Feed(chunk)) {
      transfer->abort_status = transfer->sse->status();
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
    return bytes;
  }
  if (transfer->body.size() + bytes > kMaxResponseBytes) {
    transfer->abort_status = absl::InternalError(absl::StrCat(
        "backend '", transfer->backend, "' sent more than ", kMaxResponseBytes, " bytes"));
    return 0;
  }
  transfer->body.append(chunk.data(), chunk.size());
  return bytes;
}

bool IsConnectionError(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

absl::StatusCode CodeForHttpStatus(long http_status) {
  switch (http_status) {
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    default:
      break;
  }
  if (http_status == 408 || http_status >= 500) return absl::StatusCode::kUnavailable;
  if (http_status >= 400) return absl::StatusCode::kInvalidArgument;
  return absl::StatusCode::kUnavailable;  // 1xx/3xx that curl did not resolve
}

bool IsRetryableHttpStatus(long http_status) {
  return http_status == 408 || http_status == 429 || http_status >= 500;
}

absl::StatusOr<std::string> ReadKeyFile(const std::string& path, absl::string_view backend) {
  absl::StatusOr<std::string> contents = ReadFileToString(path);
  if (!contents.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("backend '", backend,
                                                      "': cannot read api_key_file ", path, " (",
                                                      contents.status().message(), ")"));
  }
  std::string key(absl::StripAsciiWhitespace(*contents));
  if (key.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("backend '", backend, "': api_key_file ", path, " is empty"));
  }
  return key;
}

absl::Status WithAttempts(const absl::Status& status, int attempts, absl::string_view note) {
  return absl::Status(status.code(), absl::StrCat(status.message(), " (", attempts,
                                                  attempts == 1 ? " attempt" : " attempts",
                                                  note.empty() ? "" : "; ", note, ")"));
}

absl::Status ValidateOptions(const OpenAiClientOptions& options) {
  const std::string& name = options.name;
  if (name.empty()) return absl::InvalidArgumentError("backend name is empty");
  if (!absl::StartsWith(options.base_url, "http://") &&
      !absl::StartsWith(options.base_url, "https://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", name, "': base_url must start with http:// or https:// (got '",
                     TruncateForStatus(options.base_url, 100), "')"));
  }
  if (options.model.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("backend '", name, "': model is empty"));
  }
  if (options.timeout <= absl::ZeroDuration() || options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", name, "': timeout and connect_timeout must be positive"));
  }
  if (options.max_retries < 0 || options.max_retries > 10) {
    return absl::InvalidArgumentError(absl::StrCat("backend '", name, "': max_retries is ",
                                                   options.max_retries, "; it must be in 0..10"));
  }
  if (options.max_concurrency < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", name, "': max_concurrency must be at least 1"));
  }
  if (options.max_tokens < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", name, "': max_tokens must be at least 1"));
  }
  return absl::OkStatus();
}

// The key from api_key_env (read once here); api_key_file is only checked for readability,
// since it is read again on every call.
absl::StatusOr<std::string> ResolveEnvApiKey(const OpenAiClientOptions& options) {
  if (!options.api_key_file.empty()) {
    IBGR_RETURN_IF_ERROR(ReadKeyFile(options.api_key_file, options.name).status());
    return std::string();
  }
  if (options.api_key_env.empty()) return std::string();
  const char* value = std::getenv(options.api_key_env.c_str());
  if (value == nullptr || *value == '\0') {
    return absl::FailedPreconditionError(absl::StrCat(
        "backend '", options.name, "': environment variable ", options.api_key_env, " is not set"));
  }
  return std::string(absl::StripAsciiWhitespace(value));
}

using HeaderList = std::unique_ptr<curl_slist, void (*)(curl_slist*)>;

// The key travels only inside this header list, which is freed (and never logged) after the
// attempt.
HeaderList BuildHeaders(const std::string& api_key, bool stream) {
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers =
      curl_slist_append(headers, stream ? "Accept: text/event-stream" : "Accept: application/json");
  headers = curl_slist_append(headers, "Expect:");  // no 1 s wait for "100 Continue"
  if (!api_key.empty()) {
    const std::string authorization = absl::StrCat("Authorization: Bearer ", api_key);
    headers = curl_slist_append(headers, authorization.c_str());
  }
  return HeaderList(headers, curl_slist_free_all);
}

}  // namespace

// Idle curl easy handles. A handle keeps its connection cache across curl_easy_reset, so a
// handle taken from here reuses a kept-alive connection to the backend instead of paying a new
// TCP (and TLS) handshake per call.
class OpenAiClient::HandlePool {
 public:
  explicit HandlePool(int max_idle) : max_idle_(static_cast<size_t>(max_idle)) {}
  ~HandlePool() {
    for (CURL* handle : idle_) curl_easy_cleanup(handle);
  }

  struct Releaser {
    HandlePool* pool;
    void operator()(CURL* handle) const { pool->Release(handle); }
  };
  using Handle = std::unique_ptr<CURL, Releaser>;

  // An idle handle or a new one; null when curl cannot allocate one.
  Handle Acquire() {
    CURL* handle = nullptr;
    {
      absl::MutexLock lock(&mu_);
      if (!idle_.empty()) {
        handle = idle_.back();
        idle_.pop_back();
      }
    }
    if (handle == nullptr) handle = curl_easy_init();
    return Handle(handle, Releaser{this});
  }

 private:
  void Release(CURL* handle) {
    // Drops the options (pointers into the finished attempt's stack) but keeps connections.
    curl_easy_reset(handle);
    {
      absl::MutexLock lock(&mu_);
      if (idle_.size() < max_idle_) {
        idle_.push_back(handle);
        return;
      }
    }
    curl_easy_cleanup(handle);
  }

  const size_t max_idle_;
  absl::Mutex mu_;
  std::vector<CURL*> idle_ ABSL_GUARDED_BY(mu_);
};

// One HTTP request the retry loop repeats.
struct OpenAiClient::Exchange {
  // "llm" or "embeddings": the first word of the log lines.
  absl::string_view kind;
  const std::string* url = nullptr;
  std::string body;
  // Set when the caller wants the answer streamed over SSE.
  const TokenCallback* on_token = nullptr;
};

struct OpenAiClient::AttemptResult {
  absl::Status status;
  bool retryable = false;
  bool tokens_delivered = false;
  std::optional<absl::Duration> retry_after;
  long http_status = 0;
  // A 2xx answer: the body, or the chat answer assembled from an SSE stream.
  std::string body;
  std::optional<ChatResponse> streamed;
};

std::string ChatRequestToJson(const ChatRequest& request, absl::string_view model,
                              int default_max_tokens, bool stream) {
  Json json = Json::object();
  json["model"] = std::string(model);
  Json messages = Json::array();
  for (const ChatMessage& message : request.messages) {
    messages.push_back({{"role", message.role}, {"content", message.content}});
  }
  json["messages"] = std::move(messages);
  json["temperature"] = request.temperature;
  if (request.seed.has_value()) json["seed"] = *request.seed;
  json["max_tokens"] = request.max_tokens > 0 ? request.max_tokens : default_max_tokens;
  if (!request.stop.empty()) json["stop"] = request.stop;
  json["n"] = 1;
  if (stream) json["stream"] = true;
  // Invalid UTF-8 in a question is replaced rather than thrown on (dump's default).
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string EmbeddingsRequestToJson(absl::Span<const std::string> inputs, absl::string_view model) {
  Json input = Json::array();
  // Empty strings are rejected by some servers; a space encodes as "nothing in particular".
  for (const std::string& text : inputs) input.push_back(text.empty() ? " " : text);
  const Json json = {{"model", std::string(model)}, {"input", std::move(input)}};
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

absl::StatusOr<std::unique_ptr<OpenAiClient>> OpenAiClient::Create(OpenAiClientOptions options,
                                                                   LogFn log) {
  IBGR_RETURN_IF_ERROR(ValidateOptions(options));
  IBGR_ASSIGN_OR_RETURN(std::string env_key, ResolveEnvApiKey(options));
  EnsureCurlGlobalInit();
  if (!log) log = [](absl::string_view) {};
  return std::unique_ptr<OpenAiClient>(
      new OpenAiClient(std::move(options), std::move(log), std::move(env_key)));
}

OpenAiClient::OpenAiClient(OpenAiClientOptions options, LogFn log, std::string env_api_key)
    : options_(std::move(options)),
      chat_url_(absl::StrCat(absl::StripSuffix(options_.base_url, "/"), "/chat/completions")),
      embeddings_url_(absl::StrCat(absl::StripSuffix(options_.base_url, "/"), "/embeddings")),
      log_(std::move(log)),
      env_api_key_(std::move(env_api_key)),
      handles_(std::make_unique<HandlePool>(options_.max_concurrency)) {}

OpenAiClient::~OpenAiClient() = default;

int OpenAiClient::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

void OpenAiClient::Log(absl::string_view line) const { log_(line); }

absl::StatusOr<std::string> OpenAiClient::ApiKey() const {
  if (!options_.api_key_file.empty()) return ReadKeyFile(options_.api_key_file, options_.name);
  return env_api_key_;
}

absl::Status OpenAiClient::AcquireSlot(absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  const int limit = options_.max_concurrency;
  auto has_slot = [this, limit]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ < limit; };
  if (!mu_.AwaitWithDeadline(absl::Condition(&has_slot), deadline)) {
    return absl::DeadlineExceededError(absl::StrCat("backend '", options_.name,
                                                    "': no free slot (max_concurrency ", limit,
                                                    ") before the deadline"));
  }
  ++in_flight_;
  return absl::OkStatus();
}

void OpenAiClient::ReleaseSlot() const {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

absl::Duration OpenAiClient::Backoff(int retry) const {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  absl::Duration base = options_.initial_backoff;
  for (int i = 0; i < retry && base < options_.max_backoff; ++i) base *= 2;
  base = std::min(base, options_.max_backoff);
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return base * jitter(rng);
}

namespace {

// How long one attempt may take: the per-attempt timeout, or less when the deadline is closer.
struct AttemptBudget {
  absl::Duration total;
  bool deadline_binds = false;  // the caller's deadline, not the timeout, set `total`
  int64_t total_ms = 0;
  int64_t connect_ms = 0;
};

AttemptBudget BudgetFor(const OpenAiClientOptions& options, absl::Time start, absl::Time deadline) {
  AttemptBudget budget;
  const absl::Duration remaining = deadline - start;
  budget.deadline_binds = remaining < options.timeout;
  budget.total = std::min(options.timeout, remaining);
  budget.total_ms = std::max<int64_t>(1, absl::ToInt64Milliseconds(budget.total));
  budget.connect_ms = std::max<int64_t>(
      1, std::min(budget.total_ms, absl::ToInt64Milliseconds(options.connect_timeout)));
  return budget;
}

void ConfigureHandle(CURL* handle, const std::string& url, const std::string& body,
                     curl_slist* headers, const AttemptBudget& budget, Transfer* transfer,
                     char* error_buffer) {
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_POST, 1L);
  curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, static_cast<long>(budget.total_ms));
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(budget.connect_ms));
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // signals are process-wide; we are threaded
  curl_easy_setopt(handle, CURLOPT_USERAGENT, "ibgraphrag/0.1");
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, transfer);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, transfer);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_VERBOSE, 0L);  // verbose output would print the key
  // A proxy from the environment must not capture loopback model servers.
  curl_easy_setopt(handle, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
}

// The outcome of a transfer curl could not complete: a callback's abort, a connect failure
// (retryable), or a timeout (the connect phase's is retryable, the whole call's is not).
struct Failure {
  absl::Status status;
  bool retryable = false;
};

Failure ClassifyCurlError(CURLcode code, CURL* handle, const Transfer& transfer,
                          const AttemptBudget& budget, absl::Duration elapsed,
                          const char* error_buffer, bool tokens_delivered) {
  const std::string where = absl::StrCat("backend '", transfer.backend, "'");
  if (!transfer.abort_status.ok()) return {transfer.abort_status};
  const std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  if (code == CURLE_OPERATION_TIMEDOUT) {
    curl_off_t connect_us = 0;
    curl_easy_getinfo(handle, CURLINFO_CONNECT_TIME_T, &connect_us);
    if (connect_us == 0 && elapsed < budget.total - absl::Milliseconds(5)) {
      // Only the connect phase timed out and time is left: a transient connection problem.
      return {absl::UnavailableError(absl::StrCat(where, " unreachable: ", detail)),
              !tokens_delivered};
    }
    return {absl::DeadlineExceededError(
        absl::StrCat(where, " did not answer within ", budget.total_ms, " ms (",
                     budget.deadline_binds ? "the request deadline" : "the backend timeout", ")"))};
  }
  return {absl::UnavailableError(absl::StrCat(where, " unreachable: ", detail)),
          IsConnectionError(code) && !tokens_delivered};
}

// The outcome of a transfer that completed: an HTTP error, a finished (or cut) SSE stream, or
// a 2xx body the caller parses.
Failure ClassifyResponse(Transfer* transfer, bool tokens_delivered) {
  const std::string where = absl::StrCat("backend '", transfer->backend, "'");
  const long http = transfer->http_status;
  if (http < 200 || http >= 300) {
    std::string message = ServerErrorMessage(transfer->body);
    return {
        absl::Status(CodeForHttpStatus(http), absl::StrCat(where, " answered HTTP ", http,
                                                           message.empty() ? "" : ": ", message)),
        IsRetryableHttpStatus(http)};
  }
  if (!transfer->sse.has_value()) return {};
  if (!transfer->sse->Finish()) return {transfer->sse->status()};
  if (!transfer->sse->done() && transfer->streamed.finish_reason.empty()) {
    return {absl::UnavailableError(absl::StrCat(where, " closed the stream before [DONE]")),
            !tokens_delivered};
  }
  return {};
}

}  // namespace

OpenAiClient::AttemptResult OpenAiClient::Attempt(const Exchange& exchange,
                                                  const std::string& api_key,
                                                  absl::Time deadline) const {
  AttemptResult result;
  const absl::Time start = absl::Now();
  const AttemptBudget budget = BudgetFor(options_, start, deadline);
  if (budget.total <= absl::ZeroDuration()) {
    result.status = absl::DeadlineExceededError(
        absl::StrCat("backend '", options_.name, "': the request deadline passed"));
    return result;
  }
  HandlePool::Handle handle = handles_->Acquire();
  if (handle == nullptr) {
    result.status = absl::InternalError("curl_easy_init failed");
    return result;
  }
  const HeaderList headers = BuildHeaders(api_key, exchange.on_token != nullptr);
  Transfer transfer;
  transfer.backend = options_.name;
  transfer.on_token = exchange.on_token;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  ConfigureHandle(handle.get(), *exchange.url, exchange.body, headers.get(), budget, &transfer,
                  error_buffer);

  const CURLcode code = curl_easy_perform(handle.get());
  result.http_status = transfer.http_status;
  result.retry_after = transfer.retry_after;
  result.tokens_delivered = transfer.sse.has_value() && transfer.sse->delivered_tokens();
  Failure failure = code != CURLE_OK ? ClassifyCurlError(code, handle.get(), transfer, budget,
                                                         absl::Now() - start, error_buffer,
                                                         result.tokens_delivered)
                                     : ClassifyResponse(&transfer, result.tokens_delivered);
  result.status = std::move(failure.status);
  result.retryable = failure.retryable;
  if (!result.status.ok()) return result;
  if (transfer.sse.has_value()) {
    result.streamed = std::move(transfer.streamed);
  } else {
    result.body = std::move(transfer.body);
  }
  return result;
}

absl::StatusOr<absl::Duration> OpenAiClient::NextStep(absl::string_view kind,
                                                      const AttemptResult& result, int attempt,
                                                      absl::Duration took,
                                                      absl::Time deadline) const {
  const int max_attempts = options_.max_retries + 1;
  const std::string head =
      absl::StrCat(kind, " backend=", options_.name, " attempt=", attempt, "/", max_attempts,
                   " result=", absl::StatusCodeToString(result.status.code()),
                   " http=", result.http_status, " ms=", absl::ToInt64Milliseconds(took));
  if (result.status.ok()) {
    Log(head);
    return absl::ZeroDuration();
  }
  const bool can_retry = result.retryable && !result.tokens_delivered && attempt < max_attempts;
  if (!can_retry) {
    Log(absl::StrCat(head, " giving up"));
    return WithAttempts(result.status, attempt, "");
  }
  const absl::Duration delay = result.retry_after.has_value()
                                   ? std::min(*result.retry_after, options_.max_retry_after)
                                   : Backoff(attempt - 1);
  if (absl::Now() + delay >= deadline) {
    Log(absl::StrCat(head, " no time left to retry before the deadline"));
    return WithAttempts(result.status, attempt, "no retry: the deadline comes first");
  }
  Log(absl::StrCat(head, " retry_in_ms=", absl::ToInt64Milliseconds(delay)));
  return delay;
}

absl::StatusOr<int> OpenAiClient::Call(const Exchange& exchange, absl::Time deadline,
                                       FinishFn finish) const {
  for (int attempt = 1;; ++attempt) {
    IBGR_ASSIGN_OR_RETURN(const std::string api_key, ApiKey());
    IBGR_RETURN_IF_ERROR(AcquireSlot(deadline));
    const absl::Time start = absl::Now();
    AttemptResult result = Attempt(exchange, api_key, deadline);
    ReleaseSlot();
    if (result.status.ok()) finish(&result);
    IBGR_ASSIGN_OR_RETURN(const absl::Duration delay,
                          NextStep(exchange.kind, result, attempt, absl::Now() - start, deadline));
    if (result.status.ok()) return attempt;
    absl::SleepFor(delay);
  }
}

absl::StatusOr<ChatResponse> OpenAiClient::Complete(const ChatRequest& request, absl::Time deadline,
                                                    const TokenCallback& on_token) const {
  Exchange exchange;
  exchange.kind = "llm";
  exchange.url = &chat_url_;
  exchange.body =
      ChatRequestToJson(request, options_.model, options_.max_tokens, static_cast<bool>(on_token));
  exchange.on_token = on_token ? &on_token : nullptr;
  ChatResponse response;
  auto finish = [&](AttemptResult* result) {
    if (result->streamed.has_value()) {
      response = *std::move(result->streamed);
      return;
    }
    absl::StatusOr<ChatResponse> parsed = ParseCompletionBody(options_.name, result->body);
    if (!parsed.ok()) {
      result->status = parsed.status();
      return;
    }
    response = *std::move(parsed);
    if (on_token && !response.content.empty()) {
      // The server ignored "stream": the whole message is the one token the caller will see.
      on_token(response.content);
      result->tokens_delivered = true;
    }
  };
  IBGR_ASSIGN_OR_RETURN(response.attempts, Call(exchange, deadline, finish));
  return response;
}

absl::StatusOr<EmbeddingsResponse> OpenAiClient::Embed(absl::Span<const std::string> inputs,
                                                       absl::Time deadline) const {
  Exchange exchange;
  exchange.kind = "embeddings";
  exchange.url = &embeddings_url_;
  exchange.body = EmbeddingsRequestToJson(inputs, options_.model);
  EmbeddingsResponse response;
  auto finish = [&](AttemptResult* result) {
    absl::StatusOr<EmbeddingsResponse> parsed =
        ParseEmbeddingsBody(options_.name, result->body, inputs.size());
    if (parsed.ok()) {
      response = *std::move(parsed);
    } else {
      result->status = parsed.status();
    }
  };
  IBGR_ASSIGN_OR_RETURN(response.attempts, Call(exchange, deadline, finish));
  return response;
}

}  // namespace ibgraphrag::common
