// kgstore: serves a KG snapshot (`<base>/kg/<version>/`) over gRPC.
//
//   kgstore --base=artifacts [--pin_version=N] [--port=50052] [--metrics_port=9092]
//           [--config=kgstore.textproto] [--read_only] [--watch_seconds=30]
//
// --config is an ibgraphrag.config.v1.ServerConfig in protobuf text format (TLS, drain, logging);
// IBGR_* / IBGR_KGSTORE_* environment variables override it (see common/config.h); flags given
// explicitly on the command line override both.
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/config.h"
#include "common/logging.h"
#include "common/pin_version_flag.h"
#include "common/server_flags.h"
#include "common/server_runner.h"
#include "services/kgstore/kgstore_server.h"

ABSL_FLAG(std::string, config, "", "ServerConfig text proto (TLS, drain, logging)");
ABSL_FLAG(std::string, base, "artifacts", "artifact base directory holding kg/<version>/");
ABSL_FLAG(std::string, snapshot_dir, "", "serve exactly this snapshot directory");
ABSL_FLAG(bool, read_only, false, "open read-only (replicas); Ingest is refused");
ABSL_FLAG(int, watch_seconds, 0, "poll for newer snapshot versions this often (0 = never)");
ABSL_FLAG(int, block_cache_mb, 64, "RocksDB block cache for entity records, MiB");

namespace {

absl::Status Run() {
  using ibgraphrag::kgstore::KgStoreServer;
  ibgraphrag::common::ServerRunner::Options defaults;
  defaults.service_name = "kgstore";
  defaults.port = ibgraphrag::kgstore::kDefaultKgStorePort;
  defaults.metrics_port = ibgraphrag::kgstore::kDefaultKgStoreMetricsPort;
  auto server_options =
      ibgraphrag::common::LoadServerOptions(absl::GetFlag(FLAGS_config), "IBGR_KGSTORE_", defaults);
  if (!server_options.ok()) return server_options.status();

  KgStoreServer::Options options;
  options.server = *server_options;
  options.base_path = absl::GetFlag(FLAGS_base);
  auto pinned = ibgraphrag::common::PinnedVersionFromFlag();
  if (!pinned.ok()) return pinned.status();
  options.pinned_version = *pinned;
  options.snapshot_dir = absl::GetFlag(FLAGS_snapshot_dir);
  options.store.read_only = absl::GetFlag(FLAGS_read_only);
  options.store.block_cache_bytes = int64_t{absl::GetFlag(FLAGS_block_cache_mb)} << 20;
  options.watch_interval = absl::Seconds(absl::GetFlag(FLAGS_watch_seconds));

  // Signals arriving while the snapshot loads must drain, not kill, the process.
  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto server = KgStoreServer::BuildAndStart(options);
  if (!server.ok()) return server.status();
  ibgraphrag::common::LogInfo(
      "kgstore: ready", {{"port", (*server)->port()}, {"metrics_port", (*server)->metrics_port()}});
  (*server)->WaitForTermination();
  ibgraphrag::common::LogInfo("kgstore: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Serves a knowledge-graph snapshot over gRPC.");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("kgstore: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
