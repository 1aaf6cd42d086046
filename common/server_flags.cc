#include "common/server_flags.h"

#include <string>

#include "absl/flags/flag.h"
#include "common/config.h"
#include "common/status_macros.h"

ABSL_FLAG(std::string, host, "", "listen address (default 0.0.0.0; tests use 127.0.0.1)");
ABSL_FLAG(int, port, -2, "gRPC port (default: the service's; 0 picks a free one)");
ABSL_FLAG(int, metrics_port, -2,
          "Prometheus /metrics port (default: the service's; 0 picks a free one; -1 disables)");

namespace ibgraphrag::common {

absl::Status ApplyServerFlagsAndEnv(ibgraphrag::config::v1::ServerConfig* config,
                                    absl::string_view service_env_prefix) {
  IBGR_RETURN_IF_ERROR(ApplyEnvOverrides(config, "IBGR_"));
  IBGR_RETURN_IF_ERROR(ApplyEnvOverrides(config, service_env_prefix));
  // -2 marks "not given": -1 and 0 are meaningful values.
  if (!absl::GetFlag(FLAGS_host).empty()) config->set_listen_host(absl::GetFlag(FLAGS_host));
  if (absl::GetFlag(FLAGS_port) != -2) config->set_port(absl::GetFlag(FLAGS_port));
  if (absl::GetFlag(FLAGS_metrics_port) != -2) {
    config->set_metrics_port(absl::GetFlag(FLAGS_metrics_port));
  }
  return ApplyLoggingConfig(*config);
}

absl::StatusOr<ServerRunner::Options> LoadServerOptions(const std::string& config_path,
                                                        absl::string_view service_env_prefix,
                                                        const ServerRunner::Options& defaults) {
  ibgraphrag::config::v1::ServerConfig config;
  if (!config_path.empty()) {
    IBGR_ASSIGN_OR_RETURN(config,
                          LoadTextProtoConfig<ibgraphrag::config::v1::ServerConfig>(config_path));
  }
  IBGR_RETURN_IF_ERROR(ApplyServerFlagsAndEnv(&config, service_env_prefix));
  return OptionsFromConfig(config, defaults);
}

}  // namespace ibgraphrag::common
