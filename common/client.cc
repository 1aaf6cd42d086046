#include "common/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/server_interceptor.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

// Durations in service configs are JSON strings of seconds with an "s" suffix.
std::string JsonDuration(absl::Duration d) {
  return absl::StrFormat("%.6fs", absl::ToDoubleSeconds(d));
}

absl::Status Validate(const ChannelOptions& options) {
  if (options.target.empty()) return absl::InvalidArgumentError("target: must not be empty");
  if (options.max_receive_message_bytes <= 0) {
    return absl::InvalidArgumentError("max_receive_message_bytes: must be > 0");
  }
  if (options.max_send_message_bytes <= 0) {
    return absl::InvalidArgumentError("max_send_message_bytes: must be > 0");
  }
  if (options.retry_unavailable) {
    if (options.max_attempts < 2 || options.max_attempts > 5) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_attempts: ", options.max_attempts, " is outside [2, 5]"));
    }
    if (options.initial_backoff <= absl::ZeroDuration() ||
        options.initial_backoff == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError("initial_backoff: must be finite and > 0");
    }
    if (options.max_backoff < options.initial_backoff ||
        options.max_backoff == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError("max_backoff: must be finite and >= initial_backoff");
    }
    if (!(options.backoff_multiplier > 0)) {
      return absl::InvalidArgumentError("backoff_multiplier: must be > 0");
    }
  }
  if (options.max_reconnect_backoff < absl::Milliseconds(100) ||
      options.max_reconnect_backoff > absl::Seconds(120)) {
    return absl::InvalidArgumentError("max_reconnect_backoff: must be in [100ms, 120s]");
  }
  const ClientTlsOptions& tls = options.tls;
  if (tls.cert_path.empty() != tls.key_path.empty()) {
    return absl::InvalidArgumentError(tls.cert_path.empty()
                                          ? "tls.cert_path: required when tls.key_path is set"
                                          : "tls.key_path: required when tls.cert_path is set");
  }
  if (!tls.enabled && (!tls.ca_cert_path.empty() || !tls.cert_path.empty())) {
    return absl::InvalidArgumentError(
        "tls.enabled: must be true when TLS files are given (refusing to silently use "
        "plaintext)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ServiceConfigJson(const ChannelOptions& options) {
  IBGR_RETURN_IF_ERROR(Validate(options));
  nlohmann::json config;
  config["loadBalancingConfig"] = nlohmann::json::array(
      {{{options.round_robin ? "round_robin" : "pick_first", nlohmann::json::object()}}});
  if (options.retry_unavailable) {
    nlohmann::json method_config;
    // An empty name entry applies the policy to every method of every service.
    method_config["name"] = nlohmann::json::array({nlohmann::json::object()});
    method_config["retryPolicy"] = {
        {"maxAttempts", options.max_attempts},
        {"initialBackoff", JsonDuration(options.initial_backoff)},
        {"maxBackoff", JsonDuration(options.max_backoff)},
        {"backoffMultiplier", options.backoff_multiplier},
        {"retryableStatusCodes", {"UNAVAILABLE"}},
    };
    config["methodConfig"] = nlohmann::json::array({method_config});
  }
  return config.dump();
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options) {
  IBGR_ASSIGN_OR_RETURN(std::string service_config, ServiceConfigJson(options));
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(service_config);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, options.retry_unavailable ? 1 : 0);
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  args.SetMaxSendMessageSize(options.max_send_message_bytes);
  const int reconnect_ms =
      static_cast<int>(absl::ToInt64Milliseconds(options.max_reconnect_backoff));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, reconnect_ms);
  // The initial backoff (1 s by default) must not exceed the cap.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 1000));

  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls.enabled) {
    grpc::SslCredentialsOptions ssl;
    if (!options.tls.ca_cert_path.empty()) {
      IBGR_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                            ReadFileNamedByField("tls.ca_cert_path", options.tls.ca_cert_path));
    }
    if (!options.tls.cert_path.empty()) {
      IBGR_ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                            ReadFileNamedByField("tls.cert_path", options.tls.cert_path));
      IBGR_ASSIGN_OR_RETURN(ssl.pem_private_key,
                            ReadFileNamedByField("tls.key_path", options.tls.key_path));
    }
    if (!options.tls.server_name_override.empty()) {
      args.SetSslTargetNameOverride(options.tls.server_name_override);
    }
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(options.target, credentials, args);
  if (channel == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: cannot create a channel to \"", options.target, "\""));
  }
  return channel;
}

namespace {

// min(parent's deadline, now + max_budget); budgets beyond a year are "no budget", which also
// keeps the time_point arithmetic in range.
std::chrono::system_clock::time_point ChildDeadline(const grpc::ServerContextBase& parent,
                                                    absl::Duration max_budget) {
  auto deadline = std::chrono::system_clock::time_point::max();
  if (max_budget < absl::Hours(24 * 365)) {
    deadline = std::chrono::system_clock::now() +
               absl::ToChronoMilliseconds(std::max(max_budget, absl::ZeroDuration()));
  }
  return std::min(deadline, parent.deadline());
}

}  // namespace

std::unique_ptr<grpc::ClientContext> MakeChildContext(const grpc::ServerContextBase& parent,
                                                      absl::Duration max_budget) {
  // FromServerContext links the child call to the parent call: gRPC core then cancels the child
  // when the parent is cancelled and caps its deadline at the parent's.
  std::unique_ptr<grpc::ClientContext> child = grpc::ClientContext::FromServerContext(parent);
  // Also set the deadline explicitly, so it holds (and ClientContext::deadline() reports it)
  // even when the parent is not a live call.
  child->set_deadline(ChildDeadline(parent, max_budget));
  const std::string request_id = RequestIdOf(parent);
  if (!request_id.empty()) child->AddMetadata(kRequestIdMetadataKey, request_id);
  return child;
}

DirectCall MakeDirectCall(const grpc::ServerContextBase& parent, absl::Duration max_budget) {
  DirectCall call;
  const auto deadline = ChildDeadline(parent, max_budget);
  call.deadline = deadline == std::chrono::system_clock::time_point::max()
                      ? absl::InfiniteFuture()
                      : absl::FromChrono(deadline);
  call.request_id = RequestIdOf(parent);
  return call;
}

}  // namespace ibgraphrag::common
