#include "common/test_util/fake_openai_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common::test_util {
namespace {

using Json = nlohmann::json;

// Poll granularity: how quickly blocked socket waits notice Stop().
constexpr int kPollMs = 20;
// A client that has not sent its request by then is dropped.
constexpr absl::Duration kReadTimeout = absl::Seconds(10);

absl::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(sent));
  }
  return true;
}

// A TCP socket bound to 127.0.0.1 on an OS-picked port, listening with `backlog` unless it is
// negative; *address receives the bound address.
absl::StatusOr<int> BindLoopback(int backlog, sockaddr_in* address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  *address = sockaddr_in{};
  address->sin_family = AF_INET;
  address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address->sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(address), sizeof(*address)) != 0 ||
      (backlog >= 0 && ::listen(fd, backlog) != 0)) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    return absl::InternalError(absl::StrCat("bind/listen on 127.0.0.1: ", error));
  }
  socklen_t length = sizeof(*address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(address), &length);
  return fd;
}

}  // namespace

FakeResponse FakeResponse::Completion(absl::string_view content) {
  Json body = {
      {"id", "chatcmpl-fake"},
      {"object", "chat.completion"},
      {"created", 0},
      {"model", "fake-model"},
      {"choices",
       Json::array({{{"index", 0},
                     {"message", {{"role", "assistant"}, {"content", std::string(content)}}},
                     {"finish_reason", "stop"}}})},
      {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 5}, {"total_tokens", 105}}}};
  FakeResponse response;
  response.body = body.dump();
  return response;
}

FakeResponse FakeResponse::Stream(const std::vector<std::string>& tokens) {
  FakeResponse response;
  response.content_type = "text/event-stream";
  auto chunk = [](const Json& delta, const Json& finish) {
    return Json{
        {"id", "chatcmpl-fake"},
        {"object", "chat.completion.chunk"},
        {"created", 0},
        {"model", "fake-model"},
        {"choices", Json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}})}}
        .dump();
  };
  response.sse_events.push_back(chunk({{"role", "assistant"}}, nullptr));
  for (const std::string& token : tokens) {
    response.sse_events.push_back(chunk({{"content", token}}, nullptr));
  }
  response.sse_events.push_back(chunk(Json::object(), "stop"));
  response.sse_events.push_back("[DONE]");
  return response;
}

FakeResponse FakeResponse::Error(int status, absl::string_view message) {
  FakeResponse response;
  response.status = status;
  response.body =
      Json{{"error", {{"message", std::string(message)}, {"type", "fake_error"}}}}.dump();
  return response;
}

FakeResponse FakeResponse::Raw(int status, std::string body) {
  FakeResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

std::string RecordedRequest::Header(absl::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return "";
}

absl::StatusOr<std::unique_ptr<FakeOpenAiServer>> FakeOpenAiServer::Start() {
  sockaddr_in address;
  const absl::StatusOr<int> fd = BindLoopback(/*backlog=*/64, &address);
  if (!fd.ok()) return fd.status();
  return std::unique_ptr<FakeOpenAiServer>(new FakeOpenAiServer(*fd, ntohs(address.sin_port)));
}

FakeOpenAiServer::FakeOpenAiServer(int listen_fd, int port) : listen_fd_(listen_fd), port_(port) {
  default_ = FakeResponse::Completion("ans: A");
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

FakeOpenAiServer::~FakeOpenAiServer() { Stop(); }

std::string FakeOpenAiServer::base_url() const {
  return absl::StrCat("http://127.0.0.1:", port_, "/v1");
}

void FakeOpenAiServer::Enqueue(FakeResponse response) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(response));
}

void FakeOpenAiServer::SetHandler(Handler handler) {
  absl::MutexLock lock(&mu_);
  handler_ = std::move(handler);
}

void FakeOpenAiServer::SetDefault(FakeResponse response) {
  absl::MutexLock lock(&mu_);
  default_ = std::move(response);
}

std::vector<RecordedRequest> FakeOpenAiServer::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

int FakeOpenAiServer::request_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(requests_.size());
}

int FakeOpenAiServer::connection_count() const {
  absl::MutexLock lock(&mu_);
  return connection_count_;
}

void FakeOpenAiServer::SetKeepAlive(bool keep_alive) { keep_alive_.store(keep_alive); }

int FakeOpenAiServer::max_concurrent() const {
  absl::MutexLock lock(&mu_);
  return max_concurrent_;
}

void FakeOpenAiServer::Stop() {
  if (stopped_.exchange(true)) return;
  stopping_.Notify();
  if (accept_thread_.joinable()) accept_thread_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    threads.swap(connection_threads_);
  }
  for (std::thread& thread : threads) thread.join();
}

bool FakeOpenAiServer::Wait(absl::Duration duration) {
  if (duration <= absl::ZeroDuration()) return !stopping_.HasBeenNotified();
  return !stopping_.WaitForNotificationWithTimeout(duration);
}

void FakeOpenAiServer::AcceptLoop() {
  while (!stopping_.HasBeenNotified()) {
    pollfd poll_fd{listen_fd_, POLLIN, 0};
    if (::poll(&poll_fd, 1, kPollMs) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    absl::MutexLock lock(&mu_);
    connection_threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

FakeResponse FakeOpenAiServer::NextResponse(const RecordedRequest& request) {
  Handler handler;
  {
    absl::MutexLock lock(&mu_);
    if (!queue_.empty()) {
      FakeResponse response = std::move(queue_.front());
      queue_.pop_front();
      return response;
    }
    if (!handler_) return default_;
    handler = handler_;
  }
  return handler(request);
}

void FakeOpenAiServer::Serve(int fd) {
  {
    absl::MutexLock lock(&mu_);
    ++connection_count_;
  }
  while (ServeOneRequest(fd) && keep_alive_.load()) {
  }
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

bool FakeOpenAiServer::ServeOneRequest(int fd) {
  RecordedRequest request;
  if (!ReadRequest(fd, &request)) return false;
  request.received_at = absl::Now();
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back(request);
    ++in_progress_;
    max_concurrent_ = std::max(max_concurrent_, in_progress_);
  }
  const FakeResponse response = NextResponse(request);
  const bool proceed = !response.close_without_answer && Wait(response.delay);
  {
    // Counted out before the answer leaves, so a client that has its answer never overlaps
    // with this request in the count.
    absl::MutexLock lock(&mu_);
    --in_progress_;
  }
  if (!proceed) return false;
  return SendResponse(fd, response);
}

bool FakeOpenAiServer::ReadRequest(int fd, RecordedRequest* request) {
  // Reads until the headers end, then the Content-Length body.
  std::string data;
  size_t header_end = std::string::npos;
  size_t content_length = 0;
  bool sent_continue = false;
  const absl::Time give_up = absl::Now() + kReadTimeout;
  char buffer[16384];
  while (true) {
    if (header_end != std::string::npos && data.size() >= header_end + 4 + content_length) break;
    if (stopping_.HasBeenNotified() || absl::Now() > give_up) return false;
    pollfd poll_fd{fd, POLLIN, 0};
    if (::poll(&poll_fd, 1, kPollMs) <= 0) continue;
    const ssize_t received = ::recv(fd, buffer, sizeof(buffer), 0);
    if (received <= 0) return false;
    data.append(buffer, static_cast<size_t>(received));
    if (header_end == std::string::npos &&
        (header_end = data.find("\r\n\r\n")) != std::string::npos) {
      std::vector<absl::string_view> lines =
          absl::StrSplit(absl::string_view(data).substr(0, header_end), "\r\n");
      std::vector<absl::string_view> request_line = absl::StrSplit(lines[0], ' ');
      if (request_line.size() >= 2) {
        request->method = std::string(request_line[0]);
        request->path = std::string(request_line[1]);
      }
      for (size_t i = 1; i < lines.size(); ++i) {
        const size_t colon = lines[i].find(':');
        if (colon == absl::string_view::npos) continue;
        std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
        std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
        if (name == "content-length") {
          size_t length = 0;
          if (absl::SimpleAtoi(value, &length)) content_length = length;
        }
        if (name == "expect" && absl::EqualsIgnoreCase(value, "100-continue") && !sent_continue) {
          SendAll(fd, "HTTP/1.1 100 Continue\r\n\r\n");
          sent_continue = true;
        }
        request->headers.emplace_back(std::move(name), std::move(value));
      }
    }
  }
  request->body = data.substr(header_end + 4, content_length);
  return true;
}

bool FakeOpenAiServer::SendResponse(int fd, const FakeResponse& response) {
  const bool sse = !response.sse_events.empty();
  const absl::string_view connection =
      keep_alive_.load() ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  bool ok = true;
  std::string head =
      absl::StrCat("HTTP/1.1 ", response.status, " ", ReasonPhrase(response.status),
                   "\r\nContent-Type: ", sse ? "text/event-stream" : response.content_type, "\r\n");
  for (const auto& [name, value] : response.headers)
    absl::StrAppend(&head, name, ": ", value, "\r\n");
  if (sse) {
    absl::StrAppend(&head, "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n", connection,
                    "\r\n");
    ok = SendAll(fd, head);
    for (size_t i = 0; ok && i < response.sse_events.size(); ++i) {
      if (i > 0 && !Wait(response.event_interval)) ok = false;
      if (!ok) break;
      const std::string event = absl::StrCat("data: ", response.sse_events[i], "\n\n");
      ok = SendAll(fd, absl::StrFormat("%x\r\n%s\r\n", event.size(), event));
    }
    ok = ok && SendAll(fd, "0\r\n\r\n");
  } else {
    absl::StrAppend(&head, "Content-Length: ", response.body.size(), "\r\n", connection, "\r\n");
    ok = SendAll(fd, head) && SendAll(fd, response.body);
  }
  return ok;
}

std::function<void(absl::string_view line)> LogCapture::Fn() {
  return [this](absl::string_view line) {
    absl::MutexLock lock(&mu_);
    lines_.emplace_back(line);
  };
}

std::vector<std::string> LogCapture::lines() const {
  absl::MutexLock lock(&mu_);
  return lines_;
}

std::string LogCapture::All() const {
  absl::MutexLock lock(&mu_);
  std::string all;
  for (const std::string& line : lines_) absl::StrAppend(&all, line, "\n");
  return all;
}

absl::StatusOr<int> UnusedLoopbackPort() {
  sockaddr_in address;
  const absl::StatusOr<int> fd = BindLoopback(/*backlog=*/-1, &address);
  if (!fd.ok()) return fd.status();
  ::close(*fd);
  return static_cast<int>(ntohs(address.sin_port));
}

absl::StatusOr<std::unique_ptr<HangingLoopbackListener>> HangingLoopbackListener::Create() {
  sockaddr_in address;
  const absl::StatusOr<int> fd = BindLoopback(/*backlog=*/0, &address);
  if (!fd.ok()) return fd.status();
  std::unique_ptr<HangingLoopbackListener> listener(
      new HangingLoopbackListener(*fd, ntohs(address.sin_port)));
  // Non-blocking connects fill the queue (a backlog of 0 holds one or two connections, depending
  // on the kernel) without this thread waiting on the ones that no longer fit.
  for (int i = 0; i < 3; ++i) {
    const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (client < 0) break;
    listener->queued_fds_.push_back(client);
    (void)::connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  }
  absl::SleepFor(absl::Milliseconds(50));  // lets the handshakes land in the queue
  return listener;
}

HangingLoopbackListener::~HangingLoopbackListener() {
  for (const int fd : queued_fds_) ::close(fd);
  ::close(listen_fd_);
}

}  // namespace ibgraphrag::common::test_util
