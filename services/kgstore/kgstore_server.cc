#include "services/kgstore/kgstore_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "prometheus/gauge.h"
#include "services/kgstore/snapshot_manifest.h"

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
    : options_(options), gauges_(std::make_unique<Gauges>()) {
  common::ServableManager<KgStore>::Options manager;
  manager.artifacts = SnapshotArtifacts(options.base_path).options();
  manager.pinned_version = options.pinned_version;
  manager.fixed_dir = options.snapshot_dir;
  manager.watch_interval = options.watch_interval;
  manager.log_name = "kgstore";
  snapshots_ = std::make_unique<common::ServableManager<KgStore>>(
      std::move(manager), [this](const std::string& dir, int64_t) { return Open(dir); },
      [this](const std::shared_ptr<KgStore>& store, int64_t) { UpdateGauges(*store); });
  service_ = std::make_unique<KgStoreServiceImpl>(&snapshots_->holder());
}

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
  IBGR_ASSIGN_OR_RETURN(
      server->runner_, common::ServerRunner::BuildAndStart(runner_options, {server->service_.get()},
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

  // A snapshot that does not open is fatal here (unlike a later watch, which keeps the current).
  IBGR_RETURN_IF_ERROR(server->snapshots_->ReloadIfNewer().status());
  server->runner_->SetServing(true);
  server->snapshots_->StartWatching();
  return server;
}

absl::StatusOr<std::shared_ptr<KgStore>> KgStoreServer::Open(const std::string& dir) {
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
  common::LogInfo("kgstore: serving snapshot", {{"snapshot_dir", dir},
                                                {"entities", counts.entities},
                                                {"triples", counts.triples},
                                                {"open_seconds", stats.open_seconds},
                                                {"read_only", stats.read_only}});
  return std::shared_ptr<KgStore>(*std::move(store));
}

void KgStoreServer::UpdateGauges(const KgStore& store) {
  const KgCounts counts = store.counts();
  const KgStoreStats stats = store.stats();
  gauges_->entities->Set(static_cast<double>(counts.entities));
  gauges_->relations->Set(static_cast<double>(counts.relations));
  gauges_->triples->Set(static_cast<double>(counts.triples));
  gauges_->snapshot_version->Set(static_cast<double>(store.manifest().version));
  gauges_->ingest_generation->Set(static_cast<double>(stats.generation));
  gauges_->open_seconds->Set(stats.open_seconds);
  gauges_->memory_bytes->Set(static_cast<double>(stats.csr_bytes + stats.entity_index_bytes));
}

absl::StatusOr<bool> KgStoreServer::ReloadIfNewer() { return snapshots_->ReloadIfNewer(); }

void KgStoreServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void KgStoreServer::Shutdown() {
  if (snapshots_ != nullptr) snapshots_->StopWatching();
  if (runner_ != nullptr) runner_->Shutdown();
}

}  // namespace ibgraphrag::kgstore
