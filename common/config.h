// Server configuration files (protobuf text format, schema in
// protos/ibgraphrag/config/v1/server_config.proto), environment overrides for ports and secrets,
// validation, and the mapping onto ServerRunner::Options. A service main.cc:
//
//   IBGR_ASSIGN_OR_RETURN(auto config, LoadTextProtoConfig<KgStoreConfig>(config_path));
//   IBGR_RETURN_IF_ERROR(ApplyEnvOverrides(config.mutable_server(), "IBGR_"));
//   IBGR_RETURN_IF_ERROR(ApplyLoggingConfig(config.server()));
//   ServerRunner::Options defaults;
//   defaults.service_name = "kgstore";
//   defaults.port = 50052;
//   IBGR_ASSIGN_OR_RETURN(ServerRunner::Options options,
//                         OptionsFromConfig(config.server(), defaults));
#ifndef IBGRAPHRAG_COMMON_CONFIG_H_
#define IBGRAPHRAG_COMMON_CONFIG_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/server_runner.h"
#include "google/protobuf/message.h"
#include "ibgraphrag/config/v1/server_config.pb.h"

namespace ibgraphrag::common {

// Parses the text-format file at `path` into `message` (cleared first). NOT_FOUND when the file
// does not exist; INVALID_ARGUMENT "<path>:<line>:<column>: <what>" for syntax errors and
// unknown fields (the parser's message names the field).
absl::Status ParseTextProtoFile(const std::string& path, google::protobuf::Message* message);

// Same, from a string; `source_name` stands in for the path in error messages.
absl::Status ParseTextProto(absl::string_view text, absl::string_view source_name,
                            google::protobuf::Message* message);

template <typename ProtoT>
absl::StatusOr<ProtoT> LoadTextProtoConfig(const std::string& path) {
  ProtoT config;
  absl::Status status = ParseTextProtoFile(path, &config);
  if (!status.ok()) return status;
  return config;
}

// Overrides fields from environment variables named `prefix` + suffix, so Kubernetes can inject
// ports and secret paths without editing the file:
//   PORT, METRICS_PORT                 integers
//   LISTEN_HOST                        string
//   TLS_CERT, TLS_KEY, TLS_CLIENT_CA   file paths
//   TLS_REQUIRE_CLIENT_CERT, LOG_PAYLOADS   true/false/1/0
//   LOG_LEVEL                          debug/info/warning/error
// Unset or empty variables leave the field alone. INVALID_ARGUMENT naming the variable when a
// value does not parse. Typical prefixes: "IBGR_" (all services) or "IBGR_KGSTORE_".
absl::Status ApplyEnvOverrides(ibgraphrag::config::v1::ServerConfig* config,
                               absl::string_view prefix);

// Checks ranges and consistency and that the TLS files exist: INVALID_ARGUMENT naming the field
// (e.g. "tls.key_file: required when tls.cert_file is set").
absl::Status ValidateServerConfig(const ibgraphrag::config::v1::ServerConfig& config);

// Validates `config` and maps it onto `defaults`: fields the config leaves unset keep the
// default value. No side effects.
absl::StatusOr<ServerRunner::Options> OptionsFromConfig(
    const ibgraphrag::config::v1::ServerConfig& config,
    ServerRunner::Options defaults = ServerRunner::Options());

// Sets the global log level (when log_level is set) and, when log_payloads is true, the payload
// switch. Call it right after loading the config so that start-up logging already obeys it.
// INVALID_ARGUMENT for an unknown log_level value.
absl::Status ApplyLoggingConfig(const ibgraphrag::config::v1::ServerConfig& config);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_CONFIG_H_
