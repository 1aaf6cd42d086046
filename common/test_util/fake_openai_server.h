// A scripted OpenAI-compatible HTTP/1.1 server on a loopback TCP socket, for tests of
// common/openai_client and its users. Each connection is served on its own thread: it reads one
// request, records it, answers with the next scripted response (or the handler's, or the
// default) and closes the connection (or, with SetKeepAlive, waits for the next request on it).
// Responses can be JSON, SSE streams sent in HTTP chunks, slow, errors or garbage.
#ifndef IBGRAPHRAG_COMMON_TEST_UTIL_FAKE_OPENAI_SERVER_H_
#define IBGRAPHRAG_COMMON_TEST_UTIL_FAKE_OPENAI_SERVER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace ibgraphrag::common::test_util {

struct FakeResponse {
  int status = 200;
  // Extra headers, e.g. {"Retry-After", "1"}. Content-Type is set from the kind of response.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  // Sent with Content-Length when `sse_events` is empty.
  std::string body;
  // When non-empty: a text/event-stream in chunked encoding, one "data: <event>\n\n" per chunk.
  std::vector<std::string> sse_events;
  // Wait before the status line is sent (a slow model).
  absl::Duration delay = absl::ZeroDuration();
  // Wait between SSE events.
  absl::Duration event_interval = absl::ZeroDuration();
  // Close the connection after reading the request, without answering.
  bool close_without_answer = false;

  // 200 with an OpenAI chat.completion whose message content is `content`.
  static FakeResponse Completion(absl::string_view content);
  // 200 SSE stream: a role chunk, one chunk per token, a finish chunk, then "data: [DONE]".
  static FakeResponse Stream(const std::vector<std::string>& tokens);
  // `status` with an OpenAI error body {"error": {"message": ...}}.
  static FakeResponse Error(int status, absl::string_view message);
  // `status` with `body` verbatim (e.g. malformed JSON).
  static FakeResponse Raw(int status, std::string body);
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  // When the whole request had been read.
  absl::Time received_at;

  // The first header named `name` (lower case); "" when absent.
  std::string Header(absl::string_view name) const;
};

class FakeOpenAiServer {
 public:
  using Handler = std::function<FakeResponse(const RecordedRequest&)>;

  // Binds 127.0.0.1 on an OS-picked port and starts accepting.
  static absl::StatusOr<std::unique_ptr<FakeOpenAiServer>> Start();
  ~FakeOpenAiServer();  // Stop()s
  FakeOpenAiServer(const FakeOpenAiServer&) = delete;
  FakeOpenAiServer& operator=(const FakeOpenAiServer&) = delete;

  int port() const { return port_; }
  // "http://127.0.0.1:<port>/v1", the base_url a backend config takes.
  std::string base_url() const;

  // Responses served in FIFO order, one per request.
  void Enqueue(FakeResponse response);
  // Serves requests once the queue is empty (before the default).
  void SetHandler(Handler handler);
  // Served when the queue is empty and no handler is set; initially Completion("ans: A").
  void SetDefault(FakeResponse response);

  std::vector<RecordedRequest> requests() const;
  int request_count() const;
  // Most requests in progress at once (from request read until the answer is being sent).
  int max_concurrent() const;
  // TCP connections accepted so far.
  int connection_count() const;
  // Answers with "Connection: keep-alive" and serves further requests on the same connection
  // (initially off: every answer closes its connection).
  void SetKeepAlive(bool keep_alive);

  // Stops accepting, interrupts delays and joins every connection thread. Idempotent.
  void Stop();

 private:
  FakeOpenAiServer(int listen_fd, int port);
  void AcceptLoop();
  void Serve(int fd);
  // Reads and answers one request; false when the connection must close.
  bool ServeOneRequest(int fd);
  // Reads the headers and the Content-Length body; false when the client closed, stalled past
  // the read timeout, or the server is stopping.
  bool ReadRequest(int fd, RecordedRequest* request);
  // Writes `response` (JSON body or chunked SSE events); false when the client went away.
  bool SendResponse(int fd, const FakeResponse& response);
  FakeResponse NextResponse(const RecordedRequest& request);
  // Sleeps for `duration` unless Stop() is called first; false when stopping.
  bool Wait(absl::Duration duration);

  const int listen_fd_;
  const int port_;
  absl::Notification stopping_;
  std::thread accept_thread_;
  mutable absl::Mutex mu_;
  std::vector<std::thread> connection_threads_ ABSL_GUARDED_BY(mu_);
  std::deque<FakeResponse> queue_ ABSL_GUARDED_BY(mu_);
  Handler handler_ ABSL_GUARDED_BY(mu_);
  FakeResponse default_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
  int in_progress_ ABSL_GUARDED_BY(mu_) = 0;
  int max_concurrent_ ABSL_GUARDED_BY(mu_) = 0;
  int connection_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> keep_alive_{false};
  std::atomic<bool> stopped_{false};
};

// A loopback port nothing listens on: bound to learn a free port, then closed. Connecting to it
// is refused (unless another process grabs it in between, which tests accept as unlikely).
absl::StatusOr<int> UnusedLoopbackPort();

// Collects the lines an OpenAiClient (or a core that passes its LogFn on) logs, so tests can
// check what is, and what is never, logged. Thread-safe.
class LogCapture {
 public:
  // A LogFn that appends to this capture; valid while the capture lives.
  std::function<void(absl::string_view line)> Fn();
  std::vector<std::string> lines() const;
  // Every line, each ended by "\n".
  std::string All() const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// A loopback listener that never accepts and whose accept queue is already full, so the kernel
// drops further SYNs: a connect to port() hangs, as to a firewalled host, until the client's
// connect timeout ends it (a closed port, by contrast, refuses at once).
class HangingLoopbackListener {
 public:
  static absl::StatusOr<std::unique_ptr<HangingLoopbackListener>> Create();
  ~HangingLoopbackListener();
  HangingLoopbackListener(const HangingLoopbackListener&) = delete;
  HangingLoopbackListener& operator=(const HangingLoopbackListener&) = delete;
  int port() const { return port_; }

 private:
  HangingLoopbackListener(int listen_fd, int port) : listen_fd_(listen_fd), port_(port) {}
  const int listen_fd_;
  const int port_;
  std::vector<int> queued_fds_;  // the connections that fill the accept queue
};

}  // namespace ibgraphrag::common::test_util

#endif  // IBGRAPHRAG_COMMON_TEST_UTIL_FAKE_OPENAI_SERVER_H_
