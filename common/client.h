// Client-side helpers for calls between IBGraphRAG services: channels with client-side
// round-robin, retries only on UNAVAILABLE with exponential backoff, TLS/mTLS; and child
// contexts that carry the caller's deadline, cancellation and request id to the next hop.
//
//   ChannelOptions channel_options;
//   channel_options.target = "dns:///kgstore-headless.ibgr.svc.cluster.local:50052";
//   IBGR_ASSIGN_OR_RETURN(auto channel, MakeChannel(channel_options));
//   auto stub = ibgraphrag::v1::KgStore::NewStub(channel);
//   ...
//   // inside a handler (ServerContext* context):
//   auto child = MakeChildContext(*context, absl::Seconds(2));
//   grpc::Status status = stub->Neighbors(child.get(), request, &response);
#ifndef IBGRAPHRAG_COMMON_CLIENT_H_
#define IBGRAPHRAG_COMMON_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ibgraphrag::common {

// Client-side TLS. Disabled = plaintext.
struct ClientTlsOptions {
  // Use TLS. Required for the fields below to have any effect.
  bool enabled = false;
  // PEM CA bundle that signs the server's certificate; empty = the system roots.
  std::string ca_cert_path;
  // mTLS: PEM client certificate chain and private key; both or neither.
  std::string cert_path;
  std::string key_path;
  // Name checked against the server certificate instead of the target's host (tests, or
  // services reached through an address the certificate does not name).
  std::string server_name_override;
};

struct ChannelOptions {
  // "host:port", "dns:///name:port" (a headless Service: one address per pod, balanced with
  // round_robin), "ipv4:127.0.0.1:50052" or "unix:///path". Required.
  std::string target;
  ClientTlsOptions tls;
  // Largest response accepted, in bytes (matches ServerRunner's default send limit).
  int max_receive_message_bytes = 64 << 20;
  // Largest request sent, in bytes.
  int max_send_message_bytes = 64 << 20;
  // Spread RPCs over every resolved address; otherwise gRPC's pick_first (one connection).
  bool round_robin = true;
  // Retry RPCs that fail with UNAVAILABLE (and only those: other codes are not transient or
  // not safe to repeat). Attempts include the first one; 2..5 (gRPC caps it at 5).
  bool retry_unavailable = true;
  int max_attempts = 3;
  // Exponential backoff between attempts: random in [0, min(initial * multiplier^(n-1), max)].
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(2);
  double backoff_multiplier = 2.0;
  // Longest wait between reconnection attempts to a peer that is down. gRPC's default grows to
  // 120 s, so a peer back after a 10 s outage went unnoticed for several more seconds
  // (tests/fault/fault_under_load_test.cc); capping it finds a restarted peer within ~1 s.
  absl::Duration max_reconnect_backoff = absl::Seconds(1);
};

// The service config MakeChannel installs, as JSON (exposed for tests and debugging).
absl::StatusOr<std::string> ServiceConfigJson(const ChannelOptions& options);

// Creates a channel (connections are made lazily). INVALID_ARGUMENT naming the field for a bad
// option or an unreadable TLS file.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options);

// A context for a downstream call made while handling `parent`: its deadline is
// min(parent's deadline, now + max_budget); the parent's cancellation propagates to it (when the
// parent is a real call); and it carries the parent's request id as `x-request-id`.
std::unique_ptr<grpc::ClientContext> MakeChildContext(const grpc::ServerContextBase& parent,
                                                      absl::Duration max_budget);

// What a service core needs of a call that reaches it without gRPC (the all-in-one calls the
// alignment, retriever and reasoner cores in its own process: no serialisation, no thread hop):
// the deadline and the request id a gRPC call would have carried.
struct DirectCall {
  absl::Time deadline = absl::InfiniteFuture();
  std::string request_id;
};

// The DirectCall of a downstream call made while handling `parent`, with MakeChildContext's
// deadline (min(parent's deadline, now + max_budget)) and the parent's request id.
DirectCall MakeDirectCall(const grpc::ServerContextBase& parent, absl::Duration max_budget);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_CLIENT_H_
