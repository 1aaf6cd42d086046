#include "services/kgstore/kgstore_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "prometheus/gauge.h"

namespace ibgraphrag::kgstore {

struct KgStoreServer::Gauges {
  prometheus::Gauge* entities = nullptr;
  prometheus::Gauge* relations = nullptr;
  prometheus::Gauge* triples = nullptr;
  prometheus::Gauge* snapshot_version = nullptr;
  prometheus::Gauge* ingest_generation = nullptr;
  prometheus::Gauge* open_seconds = nullptr;
  prometheus::Gauge* memory_bytes = nullptr;
};

KgStoreServer::KgStoreServer(const Options& options)
    : options_(options), service_(&holder_), gauges_(std::make_unique<Gauges>()) {}

KgStoreServer::~KgStoreServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<KgStoreServer>> KgStoreServer::BuildAndStart(
    const Options& options) {
  if (options.snapshot_dir.empty() && options.base_path.empty()) {
    return absl::InvalidArgumentError(
        "base_path: required (artifact base holding kg/<version>/), or give snapshot_dir");
  }
  std::unique_ptr<KgStoreServer> server(new KgStoreServer(options));
  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "kgstore";
  IBGR_ASSIGN_OR_RETURN(server->runner_,
                        common::ServerRunner::BuildAndStart(runner_options, {&server->service_},
                                                            {kKgStoreServiceName}));
  auto& metrics = server->runner_->metrics();
  Gauges& g = *server->gauges_;
  IBGR_ASSIGN_OR_RETURN(g.entities,
                        metrics.GetGauge("ibgr_kgstore_entities", "Entities in the served KG."));
  IBGR_ASSIGN_OR_RETURN(
      g.relations, metrics.GetGauge("ibgr_kgstore_relations", "Relation types in the served KG."));
  IBGR_ASSIGN_OR_RETURN(g.triples,
                        metrics.GetGauge("ibgr_kgstore_triples", "Triples in the served KG."));
  IBGR_ASSIGN_OR_RETURN(g.snapshot_version,
                        metrics.GetGauge("ibgr_kgstore_snapshot_version",
                                         "Version number of the snapshot being served."));
  IBGR_ASSIGN_OR_RETURN(g.ingest_generation,
                        metrics.GetGauge("ibgr_kgstore_ingested_batches",
                                         "Ingest batches applied since the snapshot was built."));
  IBGR_ASSIGN_OR_RETURN(
      g.open_seconds,
      metrics.GetGauge("ibgr_kgstore_open_seconds", "Seconds the served snapshot took to open."));
  IBGR_ASSIGN_OR_RETURN(g.memory_bytes,
                        metrics.GetGauge("ibgr_kgstore_memory_bytes",
                                         "Bytes held by the in-memory CSR and entity index."));

  IBGR_ASSIGN_OR_RETURN(std::string dir, server->ChooseSnapshotDir());
  IBGR_RETURN_IF_ERROR(server->OpenAndServe(dir));
  server->runner_->SetServing(true);
  if (options.watch_interval > absl::ZeroDuration() && options.snapshot_dir.empty() &&
      !options.pinned_version.has_value()) {
    server->watcher_ = std::thread([s = server.get()] { s->WatchLoop(); });
  }
  return server;
}

absl::StatusOr<std::string> KgStoreServer::ChooseSnapshotDir() const {
  if (!options_.snapshot_dir.empty()) return options_.snapshot_dir;
  return ResolveSnapshotDir(options_.base_path, options_.pinned_version);
}

absl::Status KgStoreServer::OpenAndServe(const std::string& dir) {
  KgStoreOptions store_options = options_.store;
  store_options.snapshot_dir = dir;
  absl::StatusOr<std::unique_ptr<KgStore>> store = KgStore::Open(store_options);
  if (!store.ok()) {
    common::LogError("kgstore: cannot open snapshot",
                     {{"snapshot_dir", dir}, {"error", store.status().ToString()}});
    return store.status();
  }
  const KgStoreStats stats = (*store)->stats();
  const KgCounts counts = (*store)->counts();
  holder_.Swap(std::shared_ptr<KgStore>(std::move(*store)));
  serving_dir_ = dir;
  common::LogInfo("kgstore: serving snapshot", {{"snapshot_dir", dir},
                                                {"entities", counts.entities},
                                                {"triples", counts.triples},
                                                {"open_seconds", stats.open_seconds},
                                                {"read_only", stats.read_only}});
  UpdateGauges();
  return absl::OkStatus();
}

void KgStoreServer::UpdateGauges() {
  std::shared_ptr<KgStore> store = holder_.Get();
  if (store == nullptr) return;
  const KgCounts counts = store->counts();
  const KgStoreStats stats = store->stats();
  gauges_->entities->Set(static_cast<double>(counts.entities));
  gauges_->relations->Set(static_cast<double>(counts.relations));
  gauges_->triples->Set(static_cast<double>(counts.triples));
  gauges_->snapshot_version->Set(static_cast<double>(store->manifest().version));
  gauges_->ingest_generation->Set(static_cast<double>(stats.generation));
  gauges_->open_seconds->Set(stats.open_seconds);
  gauges_->memory_bytes->Set(static_cast<double>(stats.csr_bytes + stats.entity_index_bytes));
}

absl::StatusOr<bool> KgStoreServer::ReloadIfNewer() {
  IBGR_ASSIGN_OR_RETURN(std::string dir, ChooseSnapshotDir());
  if (dir == serving_dir_) return false;
  IBGR_RETURN_IF_ERROR(OpenAndServe(dir));
  return true;
}

void KgStoreServer::WatchLoop() {
  while (!stop_watch_.WaitForNotificationWithTimeout(options_.watch_interval)) {
    absl::StatusOr<bool> swapped = ReloadIfNewer();
    if (!swapped.ok()) {
      common::LogWarning("kgstore: snapshot watch failed; still serving the current one",
                         {{"error", swapped.status().ToString()}});
    }
    UpdateGauges();
  }
}

void KgStoreServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void KgStoreServer::Shutdown() {
  if (!stop_watch_.HasBeenNotified()) stop_watch_.Notify();
  if (watcher_.joinable()) watcher_.join();
  if (runner_ != nullptr) runner_->Shutdown();
}

}  // namespace ibgraphrag::kgstore
