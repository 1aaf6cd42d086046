// The one library file that includes cpp-httplib: keep it that way (its CPPHTTPLIB_* defines come
// from pkg-config and must match Debian's build of the library).
#include "common/http_gateway.h"

#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/proto_json.h"
#include "common/proto_utf8.h"
#include "common/server_interceptor.h"
#include "common/status_macros.h"
#include "google/api/annotations.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

namespace protobuf = google::protobuf;

constexpr char kJson[] = "application/json";
// Headers passed on as gRPC metadata (the names the gateway's auth and the interceptor read).
constexpr const char* kForwardedHeaders[] = {"authorization", "x-api-key", kRequestIdMetadataKey};

// One annotated method.
struct Route {
  std::string grpc_method;  // "/ibgraphrag.v1.GatewayService/Answer"
  const protobuf::Descriptor* input = nullptr;
  const protobuf::Descriptor* output = nullptr;
  // The request field the body fills (`body: "request"`); null = the whole request (`body: "*"`).
  const protobuf::FieldDescriptor* body_field = nullptr;
  bool server_streaming = false;
};

absl::StatusOr<Route> RouteOf(const protobuf::MethodDescriptor& method,
                              const google::api::HttpRule& rule) {
  Route route;
  route.grpc_method = absl::StrCat("/", method.service()->full_name(), "/", method.name());
  route.input = method.input_type();
  route.output = method.output_type();
  route.server_streaming = method.server_streaming();
  if (rule.pattern_case() != google::api::HttpRule::kPost || method.client_streaming() ||
      rule.additional_bindings_size() > 0 || !rule.response_body().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(method.full_name(),
                     ": only `post` rules without additional bindings or "
                     "response_body, on unary or server-streaming methods, "
                     "are served over HTTP"));
  }
  if (rule.body() != "*") {
    route.body_field = route.input->FindFieldByName(rule.body());
    if (route.body_field == nullptr ||
        route.body_field->type() != protobuf::FieldDescriptor::TYPE_MESSAGE ||
        route.body_field->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat(method.full_name(), ": body \"", rule.body(),
                                                     "\" is not a message field of the request"));
    }
  }
  return route;
}

// path -> route, for every annotated method of `services`.
absl::StatusOr<absl::flat_hash_map<std::string, Route>> RoutesOf(
    const std::vector<std::string>& services) {
  absl::flat_hash_map<std::string, Route> routes;
  for (const std::string& name : services) {
    const protobuf::ServiceDescriptor* service =
        protobuf::DescriptorPool::generated_pool()->FindServiceByName(name);
    if (service == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("services: \"", name, "\" is not a service linked into this binary"));
    }
    const size_t before = routes.size();
    for (int i = 0; i < service->method_count(); ++i) {
      const protobuf::MethodDescriptor& method = *service->method(i);
      if (!method.options().HasExtension(google::api::http)) continue;
      const google::api::HttpRule& rule = method.options().GetExtension(google::api::http);
      IBGR_ASSIGN_OR_RETURN(Route route, RouteOf(method, rule));
      if (!routes.emplace(rule.post(), std::move(route)).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(method.full_name(), ": path ", rule.post(), " is already routed"));
      }
    }
    if (routes.size() == before) {
      return absl::InvalidArgumentError(
          absl::StrCat("services: \"", name, "\" has no google.api.http annotation"));
    }
  }
  return routes;
}

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// The id the interceptor returned: in initial metadata, or trailing for status-only answers.
std::string RequestIdFrom(const grpc::ClientContext& context, bool finished) {
  for (const auto* md : {&context.GetServerInitialMetadata(),
                         finished ? &context.GetServerTrailingMetadata() : nullptr}) {
    if (md == nullptr) continue;
    auto it = md->find(kRequestIdMetadataKey);
    if (it != md->end()) return std::string(it->second.data(), it->second.size());
  }
  return "";
}

void SetError(const grpc::Status& status, const std::string& request_id, httplib::Response* res) {
  res->status = HttpStatusForGrpcCode(status.error_code());
  if (!request_id.empty()) res->set_header("X-Request-Id", request_id);
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED ||
      status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    res->set_header("Retry-After", "1");
  }
  res->set_content(HttpErrorJson(status, request_id), kJson);
}

// The Content-Type of a /ui/ file, from its extension.
const char* UiContentType(absl::string_view name) {
  if (absl::EndsWith(name, ".html")) return "text/html; charset=utf-8";
  if (absl::EndsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (absl::EndsWith(name, ".css")) return "text/css; charset=utf-8";
  return "text/plain; charset=utf-8";
}

// Headers of every /ui/ answer: the page may load and call only this origin (no CDN, no
// analytics, no inline script), may not be framed, and sends no Referer.
void SetUiHeaders(httplib::Response* res) {
  res->set_header("Content-Security-Policy",
                  "default-src 'self'; base-uri 'none'; form-action 'self'; "
                  "frame-ancestors 'none'");
  res->set_header("X-Content-Type-Options", "nosniff");
  res->set_header("Referrer-Policy", "no-referrer");
  res->set_header("Cache-Control", "no-cache");
}

grpc::Status InvalidArgument(const absl::Status& status) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(status.message()));
}

// File names are path segments: plain names, no folders, and an index.html to land on.
absl::Status ValidateUiFiles(
    const std::vector<std::pair<absl::string_view, absl::string_view>>& files) {
  if (files.empty()) return absl::OkStatus();
  bool has_index = false;
  for (const auto& file : files) {
    const absl::string_view name = file.first;
    const bool plain =
        !name.empty() && name[0] != '.' && std::all_of(name.begin(), name.end(), [](char c) {
          return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
        });
    if (!plain) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ui_files: \"", name, "\" is not a plain file name (letters, digits, . _ -)"));
    }
    has_index |= name == "index.html";
  }
  if (!has_index) return absl::InvalidArgumentError("ui_files: needs an index.html");
  return absl::OkStatus();
}

}  // namespace

int HttpStatusForGrpcCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:  // UNKNOWN, INTERNAL, DATA_LOSS
      return 500;
  }
}

std::string HttpErrorJson(const grpc::Status& status, absl::string_view request_id) {
  nlohmann::json body = {{"code", std::string(GrpcStatusCodeName(status.error_code()))},
                         {"message", status.error_message()}};
  if (!request_id.empty()) body["request_id"] = std::string(request_id);
  // Messages may quote request text that is not UTF-8: replace rather than throw.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<absl::Duration> ParseGrpcTimeout(absl::string_view value) {
  int64_t amount = 0;
  // Digits only: SimpleAtoi alone also takes "+5", " 5" and "5\t" (found by fuzz_grpc_timeout).
  const absl::string_view digits =
      value.size() >= 2 ? value.substr(0, value.size() - 1) : absl::string_view();
  const bool digits_ok =
      value.size() <= 9 && !digits.empty() &&
      std::all_of(digits.begin(), digits.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }) &&
      absl::SimpleAtoi(digits, &amount);
  if (digits_ok) {
    switch (value.back()) {
      case 'H':
        return absl::Hours(amount);
      case 'M':
        return absl::Minutes(amount);
      case 'S':
        return absl::Seconds(amount);
      case 'm':
        return absl::Milliseconds(amount);
      case 'u':
        return absl::Microseconds(amount);
      case 'n':
        return absl::Nanoseconds(amount);
    }
  }
  return absl::InvalidArgumentError(
      "Grpc-Timeout header: expected 1-8 digits and a unit H, M, S, m, u or n (e.g. 2S, 500m)");
}

// A server-streaming call driven synchronously on its own completion queue, one step at a time
// (the generic stub has no synchronous streaming API).
class StreamCall {
 public:
  StreamCall(grpc::GenericStub& stub, const std::string& method,
             std::unique_ptr<grpc::ClientContext> context)
      : context_(std::move(context)), call_(stub.PrepareCall(context_.get(), method, &cq_)) {}

  ~StreamCall() {
    if (!finished_) {
      context_->TryCancel();
      Finish();
    }
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  // Starts the call and sends the one request; false when the call already failed.
  bool Start(const std::string& request) {
    call_->StartCall(this);
    if (!Wait()) return false;
    call_->WriteLast(ToByteBuffer(request), grpc::WriteOptions(), this);
    return Wait();
  }

  // The next message; false at the end of the stream (then call Finish()).
  bool Read(std::string* message) {
    grpc::ByteBuffer buffer;
    call_->Read(&buffer, this);
    if (!Wait()) return false;
    absl::StatusOr<std::string> bytes = ByteBufferToString(buffer);
    if (!bytes.ok()) return false;
    *message = *std::move(bytes);
    return true;
  }

  grpc::Status Finish() {
    if (!finished_) {
      call_->Finish(&status_, this);
      Wait();
      finished_ = true;
    }
    return status_;
  }

  grpc::ClientContext& context() { return *context_; }
  bool finished() const { return finished_; }

 private:
  bool Wait() {
    void* tag;
    bool ok = false;
    return cq_.Next(&tag, &ok) && ok;
  }

  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  grpc::Status status_;
  bool finished_ = false;
};

class HttpGateway::Impl {
 public:
  Impl(const Options& options, std::shared_ptr<grpc::Channel> channel,
       absl::flat_hash_map<std::string, Route> routes)
      : options_(options),
        channel_(channel),
        stub_(channel),
        health_(grpc::health::v1::Health::NewStub(channel)),
        routes_(std::move(routes)) {}

  ~Impl() { Shutdown(); }

  absl::StatusOr<int> Bind();
  void Shutdown();

 private:
  absl::Status MakeServer();
  // GET /ui, /ui/ and /ui/<file> from options_.ui_files.
  void ServeUi();
  void HandlePost(const httplib::Request& req, httplib::Response* res);
  void HandleReady(httplib::Response* res);
  void FillErrorBody(const httplib::Request& req, httplib::Response* res) const;
  // The gRPC request bytes of an HTTP body, for `route`.
  absl::StatusOr<std::string> RequestBytes(const Route& route, const std::string& body) const;
  // A client context carrying the forwarded headers and the Grpc-Timeout deadline.
  absl::StatusOr<std::unique_ptr<grpc::ClientContext>> ContextFor(
      const httplib::Request& req) const;
  void Unary(const Route& route, std::string request, std::unique_ptr<grpc::ClientContext> ctx,
             httplib::Response* res);
  void Stream(const Route& route, const std::string& request,
              std::unique_ptr<grpc::ClientContext> ctx, httplib::Response* res);
  absl::StatusOr<std::string> MessageJson(const Route& route, const std::string& bytes) const;

  const Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  grpc::GenericStub stub_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  const absl::flat_hash_map<std::string, Route> routes_;
  std::unique_ptr<httplib::Server> server_;
  std::thread listener_;
  std::atomic<bool> stopped_{false};
};

absl::Status HttpGateway::Impl::MakeServer() {
  const ServerRunner::TlsOptions& tls = options_.tls;
  if (tls.cert_path.empty() != tls.key_path.empty()) {
    return absl::InvalidArgumentError("tls: cert_path and key_path go together");
  }
  if (tls.cert_path.empty()) {
    server_ = std::make_unique<httplib::Server>();
    return absl::OkStatus();
  }
  if (tls.require_client_cert && tls.client_ca_path.empty()) {
    return absl::InvalidArgumentError("tls.require_client_cert: needs client_ca_path");
  }
  // httplib verifies client certificates only as a requirement, so the CA is passed only for
  // mTLS; optional client certificates are not checked on the HTTP port.
  auto server = std::make_unique<httplib::SSLServer>(
      tls.cert_path.c_str(), tls.key_path.c_str(),
      tls.require_client_cert ? tls.client_ca_path.c_str() : nullptr);
  if (!server->is_valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls: cannot load ", tls.cert_path, " / ", tls.key_path,
                     tls.require_client_cert ? absl::StrCat(" / ", tls.client_ca_path) : ""));
  }
  server_ = std::move(server);
  return absl::OkStatus();
}

absl::StatusOr<int> HttpGateway::Impl::Bind() {
  IBGR_RETURN_IF_ERROR(MakeServer());
  const int threads = options_.num_threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Debian builds httplib with Nagle on; answers and events are small writes that must go out now.
  server_->set_tcp_nodelay(true);
  server_->set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  server_->set_read_timeout(std::max<int64_t>(1, absl::ToInt64Seconds(options_.read_timeout)), 0);
  server_->set_keep_alive_timeout(
      std::max<int64_t>(1, absl::ToInt64Seconds(options_.keep_alive_timeout)));
  server_->set_keep_alive_max_count(static_cast<size_t>(options_.keep_alive_max_requests));
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"SERVING"})", kJson);
  });
  server_->Get("/readyz",
               [this](const httplib::Request&, httplib::Response& res) { HandleReady(&res); });
  if (!options_.ui_files.empty()) ServeUi();
  server_->Post(
      ".*", [this](const httplib::Request& req, httplib::Response& res) { HandlePost(req, &res); });
  server_->set_error_handler(
      [this](const httplib::Request& req, httplib::Response& res) { FillErrorBody(req, &res); });
  server_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        SetError(grpc::Status(grpc::StatusCode::INTERNAL, "internal error"), "", &res);
      });
  const int port =
      options_.port == 0
          ? server_->bind_to_any_port(options_.listen_host)
          : (server_->bind_to_port(options_.listen_host, options_.port) ? options_.port : -1);
  if (port < 0) {
    return absl::UnavailableError(
        absl::StrCat("http_port: cannot bind ", options_.listen_host, ":", options_.port));
  }
  listener_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the server runs: wait, so that a quick Shutdown() cannot be lost
  // (bounded, in case the listener ends at once).
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  while (!server_->is_running() && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  return port;
}

void HttpGateway::Impl::ServeUi() {
  server_->Get("/ui", [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/ui/", 301);
  });
  for (const auto& file : options_.ui_files) {
    // Each file is its own exact route (httplib patterns are regular expressions: the dots are
    // escaped), so no request path is ever mapped onto the file system.
    const std::string path =
        file.first == "index.html"
            ? "/ui/"
            : absl::StrCat("/ui/", absl::StrReplaceAll(file.first, {{".", "\\."}}));
    server_->Get(path, [file](const httplib::Request&, httplib::Response& res) {
      SetUiHeaders(&res);
      res.set_content(file.second.data(), file.second.size(), UiContentType(file.first));
    });
  }
}

void HttpGateway::Impl::Shutdown() {
  if (stopped_.exchange(true)) return;
  if (server_ != nullptr) server_->stop();
  // listen_after_bind returns once every worker has finished its request.
  if (listener_.joinable()) listener_.join();
}

void HttpGateway::Impl::FillErrorBody(const httplib::Request& req, httplib::Response* res) const {
  if (!res->body.empty()) return;  // a handler's own JSON error
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  std::string message = absl::StrCat("HTTP ", res->status);
  if (res->status == 404) {
    code = grpc::StatusCode::NOT_FOUND;
    message = absl::StrCat("no route for ", req.method, " ", req.path,
                           " (POST the annotated paths, GET /healthz or /readyz",
                           options_.ui_files.empty() ? "" : ", GET /ui/", ")");
  } else if (res->status == 413) {
    code = grpc::StatusCode::RESOURCE_EXHAUSTED;
    message = absl::StrCat("request body: larger than ", options_.max_body_bytes, " bytes");
  } else if (res->status == 400) {
    code = grpc::StatusCode::INVALID_ARGUMENT;
    message = "malformed HTTP request";
  }
  res->set_content(HttpErrorJson(grpc::Status(code, message), ""), kJson);
}

void HttpGateway::Impl::HandleReady(httplib::Response* res) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(options_.readiness_service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  const grpc::Status status = health_->Check(&context, request, &response);
  if (!status.ok()) {
    SetError(status, "", res);
    return;
  }
  const bool serving = response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  res->status = serving ? 200 : 503;
  res->set_content(
      absl::StrCat(R"({"status":")",
                   grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()),
                   R"("})"),
      kJson);
}

absl::StatusOr<std::string> HttpGateway::Impl::RequestBytes(const Route& route,
                                                            const std::string& body) const {
  std::unique_ptr<protobuf::Message> request(
      protobuf::MessageFactory::generated_factory()->GetPrototype(route.input)->New());
  protobuf::Message* target =
      route.body_field == nullptr
          ? request.get()
          : request->GetReflection()->MutableMessage(request.get(), route.body_field);
  IBGR_RETURN_IF_ERROR(JsonRequestToProto(body, "request body", target));
  return request->SerializeAsString();
}

absl::StatusOr<std::unique_ptr<grpc::ClientContext>> HttpGateway::Impl::ContextFor(
    const httplib::Request& req) const {
  auto context = std::make_unique<grpc::ClientContext>();
  for (const char* header : kForwardedHeaders) {
    if (!req.has_header(header)) continue;
    const std::string value = req.get_header_value(header);
    // gRPC metadata values are printable ASCII; say which header rather than fail the call.
    for (const char c : value) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte > 0x7e) {
        return absl::InvalidArgumentError(
            absl::StrCat(header, " header: only printable ASCII characters are allowed"));
      }
    }
    context->AddMetadata(header, value);
  }
  if (req.has_header("grpc-timeout")) {
    IBGR_ASSIGN_OR_RETURN(absl::Duration timeout,
                          ParseGrpcTimeout(req.get_header_value("grpc-timeout")));
    context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
  return context;
}

void HttpGateway::Impl::HandlePost(const httplib::Request& req, httplib::Response* res) {
  auto route = routes_.find(req.path);
  if (route == routes_.end()) {
    res->status = 404;
    FillErrorBody(req, res);
    return;
  }
  absl::StatusOr<std::unique_ptr<grpc::ClientContext>> context = ContextFor(req);
  if (!context.ok()) return SetError(InvalidArgument(context.status()), "", res);
  absl::StatusOr<std::string> request = RequestBytes(route->second, req.body);
  if (!request.ok()) return SetError(InvalidArgument(request.status()), "", res);
  if (route->second.server_streaming) {
    Stream(route->second, *request, *std::move(context), res);
  } else {
    Unary(route->second, *std::move(request), *std::move(context), res);
  }
}

absl::StatusOr<std::string> HttpGateway::Impl::MessageJson(const Route& route,
                                                           const std::string& bytes) const {
  std::unique_ptr<protobuf::Message> message(
      protobuf::MessageFactory::generated_factory()->GetPrototype(route.output)->New());
  if (!message->ParseFromString(bytes)) {
    return absl::InternalError(
        absl::StrCat("cannot parse the ", route.output->full_name(), " the server returned"));
  }
  return ProtoToJsonLine(*message);
}

void HttpGateway::Impl::Unary(const Route& route, std::string request,
                              std::unique_ptr<grpc::ClientContext> context,
                              httplib::Response* res) {
  const grpc::ByteBuffer request_buffer = ToByteBuffer(request);
  grpc::ByteBuffer response_buffer;
  grpc::Status status;
  absl::Notification done;
  stub_.UnaryCall(context.get(), route.grpc_method, grpc::StubOptions(), &request_buffer,
                  &response_buffer, [&](grpc::Status s) {
                    status = std::move(s);
                    done.Notify();
                  });
  done.WaitForNotification();
  const std::string request_id = RequestIdFrom(*context, /*finished=*/true);
  if (!status.ok()) return SetError(status, request_id, res);
  absl::StatusOr<std::string> bytes = ByteBufferToString(response_buffer);
  if (!bytes.ok())
    return SetError(grpc::Status(grpc::StatusCode::INTERNAL, "bad response"), "", res);
  if (!request_id.empty()) res->set_header("X-Request-Id", request_id);
  absl::StatusOr<std::string> json = MessageJson(route, *bytes);
  if (!json.ok()) {
    return SetError(grpc::Status(grpc::StatusCode::INTERNAL, std::string(json.status().message())),
                    request_id, res);
  }
  res->set_content(*std::move(json), kJson);
}

void HttpGateway::Impl::Stream(const Route& route, const std::string& request,
                               std::unique_ptr<grpc::ClientContext> context,
                               httplib::Response* res) {
  auto call = std::make_shared<StreamCall>(stub_, route.grpc_method, std::move(context));
  std::string first;
  // Read up to the first message before answering, so that a refused call (key, rate limit,
  // validation) gets its own HTTP status instead of a 200 with an error event.
  if (!call->Start(request) || !call->Read(&first)) {
    const grpc::Status status = call->Finish();
    return SetError(status.ok() ? grpc::Status(grpc::StatusCode::INTERNAL, "empty stream") : status,
                    RequestIdFrom(call->context(), /*finished=*/true), res);
  }
  const std::string request_id = RequestIdFrom(call->context(), /*finished=*/false);
  if (!request_id.empty()) res->set_header("X-Request-Id", request_id);
  res->set_header("Cache-Control", "no-cache");
  res->set_chunked_content_provider("text/event-stream", [this, &route, call, first, request_id](
                                                             size_t, httplib::DataSink& sink) {
    std::string message = first;
    do {
      absl::StatusOr<std::string> json = MessageJson(route, message);
      if (!json.ok()) {
        // An event the client cannot be sent ends the stream with an error event, not a gap.
        const std::string event = absl::StrCat(
            "event: error\ndata: ",
            HttpErrorJson(
                grpc::Status(grpc::StatusCode::INTERNAL, std::string(json.status().message())),
                request_id),
            "\n\n");
        sink.write(event.data(), event.size());
        sink.done();
        return true;  // ~StreamCall cancels the call
      }
      const std::string event = absl::StrCat("data: ", *json, "\n\n");
      // The client went away: ~StreamCall cancels the call.
      if (!sink.write(event.data(), event.size())) return false;
    } while (call->Read(&message));
    const grpc::Status status = call->Finish();
    if (!status.ok()) {
      const std::string event =
          absl::StrCat("event: error\ndata: ", HttpErrorJson(status, request_id), "\n\n");
      sink.write(event.data(), event.size());
    }
    sink.done();
    return true;
  });
}

absl::StatusOr<std::unique_ptr<HttpGateway>> HttpGateway::Start(
    const Options& options, std::shared_ptr<grpc::Channel> channel) {
  if (options.server_name.empty()) return absl::InvalidArgumentError("server_name: required");
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError("http_port: must be 0 (pick) or 1..65535");
  }
  if (options.num_threads < 1) return absl::InvalidArgumentError("num_threads: must be >= 1");
  if (options.max_body_bytes < 1) return absl::InvalidArgumentError("max_body_bytes: must be >= 1");
  if (options.keep_alive_max_requests < 1) {
    return absl::InvalidArgumentError("keep_alive_max_requests: must be >= 1");
  }
  if (channel == nullptr) return absl::InvalidArgumentError("channel: required");
  IBGR_RETURN_IF_ERROR(ValidateUiFiles(options.ui_files));
  IBGR_ASSIGN_OR_RETURN(auto routes, RoutesOf(options.services));
  std::unique_ptr<HttpGateway> gateway(new HttpGateway());
  gateway->impl_ = std::make_unique<Impl>(options, std::move(channel), std::move(routes));
  IBGR_ASSIGN_OR_RETURN(gateway->port_, gateway->impl_->Bind());
  LogInfo(absl::StrCat(options.server_name, ": HTTP/JSON listening"),
          {{"http_port", gateway->port_}, {"tls", !options.tls.cert_path.empty()}});
  return gateway;
}

HttpGateway::Options HttpGateway::ForServer(const ServerRunner::Options& server, int port,
                                            const std::string& grpc_service) {
  Options http;
  http.server_name = server.service_name;
  http.listen_host = server.listen_host;
  http.port = port;
  http.services = {grpc_service};
  http.readiness_service = grpc_service;
  http.tls = server.tls;
  return http;
}

HttpGateway::~HttpGateway() { Shutdown(); }

void HttpGateway::Shutdown() {
  if (impl_ != nullptr) impl_->Shutdown();
}

}  // namespace ibgraphrag::common
