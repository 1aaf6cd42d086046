// KgStoreServer: the kgstore service on a ServerRunner, with its snapshot loaded, health, metrics
// and (optionally) a watcher that swaps to newer snapshot versions without downtime.
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KGSTORE_SERVER_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KGSTORE_SERVER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/servable_holder.h"
#include "common/server_runner.h"
#include "services/kgstore/kg_store.h"
#include "services/kgstore/kgstore_service_impl.h"

namespace ibgraphrag::kgstore {

// Default ports of the service (gRPC, Prometheus).
inline constexpr int kDefaultKgStorePort = 50052;
inline constexpr int kDefaultKgStoreMetricsPort = 9092;
// gRPC service name, also the health-check entry.
inline constexpr char kKgStoreServiceName[] = "ibgraphrag.v1.KgStoreService";

class KgStoreServer {
 public:
  struct Options {
    // Port, TLS, drain and logging settings; service_name defaults to "kgstore".
    common::ServerRunner::Options server;
    // Artifact base directory; snapshots live in `<base_path>/kg/<version>/`.
    std::string base_path;
    // Serve this version instead of the newest one.
    std::optional<int64_t> pinned_version;
    // Serve exactly this snapshot directory (overrides base_path and pinned_version).
    std::string snapshot_dir;
    // RocksDB and CSR options; snapshot_dir is filled from the fields above.
    KgStoreOptions store;
    // When > 0 and no version is pinned, check `<base_path>/kg/` this often and swap to a newer
    // snapshot once it has opened. Requests in flight finish on the snapshot they started on.
    // Meant for read-only replicas: ingests made into the old snapshot do not carry over.
    absl::Duration watch_interval = absl::ZeroDuration();
  };

  // Starts the gRPC server (health NOT_SERVING), opens the snapshot, then reports SERVING.
  // A snapshot that fails to open is an error: the process exits non-zero rather than serving
  // nothing or half a graph.
  static absl::StatusOr<std::unique_ptr<KgStoreServer>> BuildAndStart(const Options& options);

  ~KgStoreServer();

  int port() const { return runner_->port(); }
  int metrics_port() const { return runner_->metrics_port(); }
  common::ServerRunner& runner() { return *runner_; }
  // The snapshot being served (null before it is loaded).
  std::shared_ptr<KgStore> store() const { return snapshots_->Get(); }
  // Channel to this server without sockets (all-in-one mode, tests).
  std::shared_ptr<grpc::Channel> InProcessChannel() { return runner_->InProcessChannel(); }

  // Re-reads the snapshot choice (newest or pinned) and serves it if it differs from the current
  // one. Returns whether a swap happened.
  absl::StatusOr<bool> ReloadIfNewer();

  // SIGTERM/SIGINT: NOT_SERVING, grace period, drain, return.
  void WaitForTermination();
  void Shutdown();

 private:
  explicit KgStoreServer(const Options& options);
  absl::StatusOr<std::shared_ptr<KgStore>> Open(const std::string& dir);
  void UpdateGauges(const KgStore& store);

  Options options_;
  // Resolves, opens and hot-swaps snapshots; its holder is what the service reads.
  std::unique_ptr<common::ServableManager<KgStore>> snapshots_;
  std::unique_ptr<KgStoreServiceImpl> service_;
  std::unique_ptr<common::ServerRunner> runner_;
  struct Gauges;
  std::unique_ptr<Gauges> gauges_;
};

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KGSTORE_SERVER_H_
