// HttpGateway: the HTTP/JSON face of a gRPC server (grpc-gateway's idea, in process). Routes come
// from the `google.api.http` annotations of the served methods (protos/google/api), so the
// protos, the OpenAPI document generated from them (docs/openapi.json) and the served paths
// cannot disagree. Each HTTP request becomes a gRPC call on the server's own in-process channel
// (ServerRunner::InProcessChannel): the request-id interceptor, metrics, access log, API-key
// check, rate limit, validation and deadlines of the gRPC path apply unchanged, because it IS
// the gRPC path. Only the framing differs:
//
//   POST <path>  body: the request (or its `body` field) as proto3 JSON (proto field names;
//                unknown fields refused) -> 200 and the response as JSON.
//   POST <path>  of a server-streaming method -> 200 text/event-stream, one `data: <JSON>` event
//                per message; an error after the first message is an `event: error` event.
//   GET /healthz -> 200 while the process serves HTTP (liveness).
//   GET /readyz  -> 200 when grpc.health.v1 reports SERVING for `readiness_service`, else 503.
//   GET /ui/...  -> the files of Options::ui_files (a browser page, e.g. the evidence viewer),
//                only when given, with a Content-Security-Policy of default-src 'self'.
//
// Headers forwarded as gRPC metadata: Authorization, X-Api-Key, X-Request-Id. `Grpc-Timeout`
// (gRPC's format, e.g. "2S", "500m") sets the call's deadline. The request id comes back as
// X-Request-Id. Errors: {"code": "<gRPC code name>", "message": ..., "request_id": ...} with
// the HTTP status of HttpStatusForGrpcCode. Request bodies are never logged.
#ifndef IBGRAPHRAG_COMMON_HTTP_GATEWAY_H_
#define IBGRAPHRAG_COMMON_HTTP_GATEWAY_H_

#include <grpcpp/channel.h>
#include <grpcpp/support/status.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/server_runner.h"

namespace ibgraphrag::common {

// The HTTP status of a gRPC code (the table grpc-gateway uses): INVALID_ARGUMENT 400,
// UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404, RESOURCE_EXHAUSTED 429,
// CANCELLED 499, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, ...
int HttpStatusForGrpcCode(grpc::StatusCode code);

// The JSON error body: {"code":"INVALID_ARGUMENT","message":"...","request_id":"..."}
// (request_id omitted when empty).
std::string HttpErrorJson(const grpc::Status& status, absl::string_view request_id);

// A `grpc-timeout` header value: 1..8 digits and a unit (H, M, S, m, u, n). INVALID_ARGUMENT
// naming the header otherwise.
absl::StatusOr<absl::Duration> ParseGrpcTimeout(absl::string_view value);

class HttpGateway {
 public:
  struct Options {
    // Names the front end in log lines ("gateway"). Required.
    std::string server_name;
    // Address to bind; the gRPC server's listen_host.
    std::string listen_host = "0.0.0.0";
    // Port; 0 = the OS picks a free one (read it back with port()).
    int port = 0;
    // Full gRPC service names ("ibgraphrag.v1.GatewayService") whose annotated methods become
    // routes. Each must be in the generated descriptor pool and have at least one route.
    std::vector<std::string> services;
    // The grpc.health.v1 entry /readyz checks; "" = the whole server.
    std::string readiness_service;
    // TLS of the HTTP port: the gRPC port's certificate and key; with require_client_cert the
    // client CA is required here too. Both paths empty = plaintext.
    ServerRunner::TlsOptions tls;
    // Worker threads; each serves one connection at a time, from its first request until it
    // closes or idles past keep_alive_timeout, so this bounds concurrent connections.
    int num_threads = 16;
    // Largest request body, in bytes; larger bodies get 413 RESOURCE_EXHAUSTED.
    int64_t max_body_bytes = 1 << 20;
    // An idle keep-alive connection is closed after this long (it holds a worker meanwhile).
    absl::Duration keep_alive_timeout = absl::Seconds(5);
    // Requests per connection before the server closes it.
    int keep_alive_max_requests = 1000;
    // A request whose headers or body stall this long is dropped.
    absl::Duration read_timeout = absl::Seconds(30);
    // (file name, contents) of a page served at GET /ui/<name>, "/ui/" being "index.html"
    // (required then); Content-Type from the extension (.html, .js, .css; text/plain otherwise).
    // The contents must outlive the gateway (embedded files: static). Empty = no /ui/ routes.
    std::vector<std::pair<absl::string_view, absl::string_view>> ui_files;
  };

  // Validates `options`, builds the routes and starts serving on a thread of its own. RPCs go
  // to `channel` (the server's InProcessChannel()). INVALID_ARGUMENT naming the option or the
  // method for bad options or unsupported annotations; UNAVAILABLE when the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpGateway>> Start(const Options& options,
                                                            std::shared_ptr<grpc::Channel> channel);

  // Shuts down (as Shutdown()) if still running.
  ~HttpGateway();
  HttpGateway(const HttpGateway&) = delete;
  HttpGateway& operator=(const HttpGateway&) = delete;

  // The bound port.
  int port() const { return port_; }

  // Stops accepting connections and waits for requests in flight (their gRPC calls keep their
  // deadlines). Idempotent.
  void Shutdown();

  // Options for the HTTP face of a server run by ServerRunner: its service name, host and TLS,
  // routes and readiness from `grpc_service` (a full gRPC service name), on `port`.
  static Options ForServer(const ServerRunner::Options& server, int port,
                           const std::string& grpc_service);

  class Impl;

 private:
  HttpGateway() = default;

  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_HTTP_GATEWAY_H_
