// The command-line flags every service binary shares (--host, --port, --metrics_port) and the one
// precedence rule they follow: flags > environment > config file > program defaults.
// Linked only into service executables (library ibgr_server_flags), so tools do not grow
// server flags.
#ifndef IBGRAPHRAG_COMMON_SERVER_FLAGS_H_
#define IBGRAPHRAG_COMMON_SERVER_FLAGS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/server_runner.h"
#include "ibgraphrag/config/v1/server_config.pb.h"

namespace ibgraphrag::common {

// Applies, in order: environment overrides with prefix "IBGR_", then with
// `service_env_prefix` (e.g. "IBGR_KGSTORE_", which wins), then the --host/--port/--metrics_port
// flags given on the command line, then the resulting logging settings (ApplyLoggingConfig).
// INVALID_ARGUMENT naming the variable or field when a value does not parse.
absl::Status ApplyServerFlagsAndEnv(ibgraphrag::config::v1::ServerConfig* config,
                                    absl::string_view service_env_prefix);

// For services whose config file is a plain ServerConfig: loads `config_path` (empty = no file),
// applies ApplyServerFlagsAndEnv and maps the result onto `defaults` (OptionsFromConfig).
absl::StatusOr<ServerRunner::Options> LoadServerOptions(const std::string& config_path,
                                                        absl::string_view service_env_prefix,
                                                        const ServerRunner::Options& defaults);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_SERVER_FLAGS_H_
