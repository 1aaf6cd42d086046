// alignment: serves an alignment bundle (`<base>/alignment/<version>/`) over gRPC (MSCA entity
// alignment, usable without the rest of the suite).
//
//   alignment --base=artifacts [--pin_version=N] [--port=50053] [--metrics_port=9093]
//             [--config=alignment.textproto] [--host=0.0.0.0] [--watch_seconds=30]
//             [--http_port=8083]
//
// --config is an ibgraphrag.config.v1.AlignmentConfig in protobuf text format (encoder, MSCA
// defaults, optional LLM, TLS, drain, logging); IBGR_* / IBGR_ALIGNMENT_* environment variables
// override its server part; flags given explicitly override both.
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/logging.h"
#include "common/pin_version_flag.h"
#include "common/server_flags.h"
#include "common/server_runner.h"
#include "common/status_macros.h"
#include "ibgraphrag/config/v1/alignment_config.pb.h"
#include "services/alignment/alignment_server.h"
#include "services/alignment/alignment_setup.h"

ABSL_FLAG(std::string, config, "", "AlignmentConfig text proto (encoder, defaults, LLM, TLS)");
ABSL_FLAG(std::string, base, "",
          "artifact base directory holding alignment/<version>/ "
          "(default: config base_path, else \"artifacts\")");
ABSL_FLAG(std::string, bundle_dir, "", "serve exactly this bundle directory");
ABSL_FLAG(int, watch_seconds, 0, "poll for newer bundle versions this often (0 = never)");
ABSL_FLAG(int, http_port, -1,
          "HTTP/JSON port (POST /v1/align, GET /healthz, /readyz) on the gRPC port's host and "
          "TLS; -1 = off, 0 = the OS picks");

namespace {

namespace cfg = ::ibgraphrag::config::v1;
using ibgraphrag::alignment::AlignmentServer;

absl::Status Run() {
  cfg::AlignmentConfig config;
  if (!absl::GetFlag(FLAGS_config).empty()) {
    auto loaded =
        ibgraphrag::common::LoadTextProtoConfig<cfg::AlignmentConfig>(absl::GetFlag(FLAGS_config));
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
  }
  cfg::ServerConfig* server_config = config.mutable_server();
  if (auto s = ibgraphrag::common::ApplyServerFlagsAndEnv(server_config, "IBGR_ALIGNMENT_");
      !s.ok())
    return s;

  ibgraphrag::common::ServerRunner::Options defaults;
  defaults.service_name = "alignment";
  defaults.port = ibgraphrag::alignment::kDefaultAlignmentPort;
  defaults.metrics_port = ibgraphrag::alignment::kDefaultAlignmentMetricsPort;
  auto server_options = ibgraphrag::common::OptionsFromConfig(*server_config, defaults);
  if (!server_options.ok()) return server_options.status();

  AlignmentServer::Options options;
  options.server = *server_options;
  options.base_path = !absl::GetFlag(FLAGS_base).empty() ? absl::GetFlag(FLAGS_base)
                      : !config.base_path().empty()      ? config.base_path()
                                                         : "artifacts";
  auto pinned = ibgraphrag::common::PinnedVersionFromFlag();
  if (!pinned.ok()) return pinned.status();
  // --pin_version, else the config's bundle_version (ApplyAlignmentSetup), else the newest.
  if (pinned->has_value()) options.pinned_version = *pinned;
  options.bundle_dir = absl::GetFlag(FLAGS_bundle_dir);
  if (absl::GetFlag(FLAGS_watch_seconds) < 0) {
    return absl::InvalidArgumentError("--watch_seconds: must be >= 0");
  }
  options.watch_interval = absl::Seconds(absl::GetFlag(FLAGS_watch_seconds));
  if (absl::GetFlag(FLAGS_http_port) < -1 || absl::GetFlag(FLAGS_http_port) > 65535) {
    return absl::InvalidArgumentError("--http_port: must be -1 (off), 0 (pick) or 1..65535");
  }
  options.http_port = absl::GetFlag(FLAGS_http_port);
  auto setup = ibgraphrag::alignment::AlignmentSetupFromConfig(config);
  if (!setup.ok()) return setup.status();
  ibgraphrag::alignment::ApplyAlignmentSetup(*setup, &options);

  // Signals arriving while the bundle loads must drain, not kill, the process.
  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto server = AlignmentServer::BuildAndStart(options);
  if (!server.ok()) return server.status();
  ibgraphrag::common::LogInfo("alignment: ready", {{"port", (*server)->port()},
                                                   {"metrics_port", (*server)->metrics_port()},
                                                   {"http_port", (*server)->http_port()},
                                                   {"serving", (*server)->serving()}});
  (*server)->WaitForTermination();
  ibgraphrag::common::LogInfo("alignment: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves an alignment bundle (mentions, FAISS candidates, MSCA) over gRPC.");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("alignment: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
