#include "services/retriever/retriever_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/grpc_subgraph_source.h"

namespace ibgraphrag::retriever {

RetrieverServer::~RetrieverServer() { Shutdown(); }

absl::StatusOr<std::shared_ptr<SubgraphSource>> RetrieverServer::OpenKgSource(
    const Options& options, RetrieverServer* server) {
  if (options.kg_store != nullptr) {
    server->store_ = options.kg_store;
    return std::make_shared<InProcessSubgraphSource>(server->store_);
  }
  if (options.kgstore_address.empty()) {
    // The read-only replica: the same snapshot versions kgstore serves, read where the scoring
    // is, swapped like the model when a newer one appears.
    common::ServableManager<kgstore::KgStore>::Options manager;
    const std::string& kg_base =
        options.kg_base_path.empty() ? options.base_path : options.kg_base_path;
    manager.artifacts = kgstore::SnapshotArtifacts(kg_base).options();
    manager.pinned_version = options.kg_pinned_version;
    manager.watch_interval = options.watch_interval;
    manager.log_name = "retriever KG replica";
    server->kg_snapshots_ = std::make_unique<common::ServableManager<kgstore::KgStore>>(
        std::move(manager),
        [](const std::string& dir, int64_t) -> absl::StatusOr<std::shared_ptr<kgstore::KgStore>> {
          kgstore::KgStoreOptions store_options;
          store_options.snapshot_dir = dir;
          store_options.read_only = true;
          IBGR_ASSIGN_OR_RETURN(std::unique_ptr<kgstore::KgStore> store,
                                kgstore::KgStore::Open(store_options));
          return std::shared_ptr<kgstore::KgStore>(std::move(store));
        },
        [server](const std::shared_ptr<kgstore::KgStore>& store, int64_t) {
          server->OnKgSwap(*store);
        });
    // No snapshot that opens: fatal here, as for kgstore (a later watch keeps the current one).
    IBGR_RETURN_IF_ERROR(server->kg_snapshots_->ReloadIfNewer().status());
    return std::make_shared<ServedSnapshotSubgraphSource>(server->kg_snapshots_->shared_holder());
  }
  common::ChannelOptions channel_options;
  channel_options.target = options.kgstore_address;
  channel_options.tls = options.kgstore_tls;
  IBGR_ASSIGN_OR_RETURN(auto channel, common::MakeChannel(channel_options));
  return std::make_shared<GrpcSubgraphSource>(std::move(channel));
}

absl::StatusOr<std::unique_ptr<RetrieverServer>> RetrieverServer::BuildAndStart(
    const Options& options) {
  if (options.base_path.empty()) {
    return absl::InvalidArgumentError(
        "base_path: required (artifact base holding retriever/<version>/)");
  }
  IBGR_RETURN_IF_ERROR(SetScoringThreads(options.scoring_backend, options.torch_threads));
  // A device this binary cannot score on is a start-up error (exit 1 naming retriever_torch),
  // not a model that never loads. (With a backend, a missing GPU is found when the model loads:
  // NOT_SERVING, retried by the watcher.)
  if (options.scoring_backend == nullptr) {
    IBGR_RETURN_IF_ERROR(ResolveScoringDevice(nullptr, options.device).status());
  }
  std::unique_ptr<RetrieverServer> server(new RetrieverServer());
  // KG source first: without it nothing can be served.
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<SubgraphSource> source,
                        OpenKgSource(options, server.get()));

  // Models: a failure leaves the server up and NOT_SERVING (the watcher retries).
  common::ServableManager<const RetrieverModel>::Options manager;
  manager.artifacts = RetrieverArtifacts(options.base_path).options();
  manager.pinned_version = options.pinned_version;
  manager.watch_interval = options.watch_interval;
  manager.log_name = "retriever";
  RetrieverModel::Options model_options;
  model_options.device = options.device;
  model_options.backend = options.scoring_backend;
  model_options.encoder_base_path = options.base_path;  // trained encoders in <base>/encoder/
  model_options.default_variant = options.default_variant;
  // No explicit encoder: the one the model's manifest names.
  const TextEmbedder embedder = options.embedder.value_or(TextEmbedder());
  RetrieverServer* s = server.get();
  server->models_ = std::make_unique<common::ServableManager<const RetrieverModel>>(
      std::move(manager),
      [model_options, embedder](const std::string& dir, int64_t) {
        return RetrieverModel::Load(dir, model_options, embedder);
      },
      [s](const std::shared_ptr<const RetrieverModel>& model, int64_t) { s->OnModelSwap(*model); });
  server->retriever_ = std::make_unique<Retriever>(
      options.retriever, std::move(source), server->models_->shared_holder(),
      [models = server->models_.get()] { return models->load_status(); });
  server->service_ = std::make_unique<RetrieverServiceImpl>(server->retriever_.get());
  server->LoadDocuments(options);

  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "retriever";
  IBGR_ASSIGN_OR_RETURN(
      server->runner_, common::ServerRunner::BuildAndStart(runner_options, {server->service_.get()},
                                                           {kRetrieverServiceName}));
  IBGR_ASSIGN_OR_RETURN(
      server->model_version_gauge_,
      server->runner_->metrics().GetGauge("ibgr_retriever_model_version",
                                          "Version of the served retriever model (0 = none)."));
  IBGR_RETURN_IF_ERROR(server->RegisterVariantCounters());
  absl::StatusOr<bool> loaded = server->models_->ReloadIfNewer();
  if (!loaded.ok()) {
    common::LogError("retriever: no model loaded; staying NOT_SERVING",
                     {{"error", loaded.status().ToString()}});
  }
  if (server->kg_snapshots_ != nullptr) {
    IBGR_ASSIGN_OR_RETURN(server->kg_version_gauge_,
                          server->runner_->metrics().GetGauge(
                              "ibgr_retriever_kg_snapshot_version",
                              "Version of the KG snapshot the retriever's replica serves."));
    server->kg_version_gauge_->Set(
        static_cast<double>(server->kg_snapshots_->holder().Get()->manifest().version));
    server->kg_snapshots_->StartWatching();
  }
  server->models_->StartWatching();
  server->documents_->StartWatching();
  return server;
}

absl::StatusOr<bool> RetrieverServer::ReloadKgIfNewer() {
  if (kg_snapshots_ == nullptr) {
    return absl::FailedPreconditionError("the retriever reads the KG through kgstore");
  }
  return kg_snapshots_->ReloadIfNewer();
}

void RetrieverServer::OnKgSwap(const kgstore::KgStore& store) {
  common::LogInfo(
      "retriever: KG replica serving snapshot",
      {{"snapshot_dir", store.stats().snapshot_dir}, {"version", store.manifest().version}});
  if (kg_version_gauge_ != nullptr) {
    kg_version_gauge_->Set(static_cast<double>(store.manifest().version));
  }
}

void RetrieverServer::LoadDocuments(const Options& options) {
  common::ServableManager<const SubgraphDocuments>::Options manager;
  manager.artifacts = DocumentsArtifacts(options.base_path).options();
  manager.watch_interval = options.watch_interval;
  manager.log_name = "retriever documents";
  documents_ = std::make_unique<common::ServableManager<const SubgraphDocuments>>(
      std::move(manager),
      [](const std::string& dir, int64_t) { return SubgraphDocuments::Load(dir); },
      [](const std::shared_ptr<const SubgraphDocuments>& docs, int64_t version) {
        common::LogInfo("retriever: serving subgraph documents",
                        {{"version", version},
                         {"documents", docs->size()},
                         {"encoder", docs->manifest().encoder_id()}});
      });
  service_->SetDocuments(documents_->shared_holder(),
                         [docs = documents_.get()] { return docs->load_status(); });
  absl::StatusOr<bool> loaded = documents_->ReloadIfNewer();
  if (!loaded.ok()) {
    common::LogInfo("retriever: no subgraph documents (illama mode unavailable)",
                    {{"error", loaded.status().ToString()}});
  }
}

absl::Status RetrieverServer::RegisterVariantCounters() {
  constexpr char kName[] = "ibgr_retriever_ibrp_requests_total";
  constexpr char kHelp[] = "IBRP Retrieve calls answered, by the scorer variant that ranked them.";
  IBGR_ASSIGN_OR_RETURN(prometheus::Counter * residual,
                        runner_->metrics().GetCounter(kName, kHelp, {{"variant", "residual"}}));
  IBGR_ASSIGN_OR_RETURN(prometheus::Counter * plain,
                        runner_->metrics().GetCounter(kName, kHelp, {{"variant", "plain"}}));
  service_->SetVariantCounters(residual, plain);
  return absl::OkStatus();
}

void RetrieverServer::OnModelSwap(const RetrieverModel& model) {
  std::vector<std::string> variants;
  for (ScorerVariant v : model.variants()) variants.push_back(ScorerVariantName(v));
  common::LogInfo("retriever: serving model",
                  {{"version", model.version()},
                   {"device", model.device()},
                   {"encoder", model.manifest().encoder_id},
                   {"scorer_variants", absl::StrJoin(variants, ",")},
                   {"default_scorer_variant", ScorerVariantName(model.default_variant())},
                   {"candidate_cap", model.candidate_cap()}});
  if (model_version_gauge_ != nullptr) {
    model_version_gauge_->Set(static_cast<double>(model.manifest().version));
  }
  if (runner_ != nullptr) runner_->SetServing(true);
}

std::string RetrieverServer::model_error() const {
  const absl::Status status = models_->load_status();
  return status.ok() ? std::string() : status.ToString();
}

void RetrieverServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void RetrieverServer::Shutdown() {
  if (kg_snapshots_ != nullptr) kg_snapshots_->StopWatching();
  if (models_ != nullptr) models_->StopWatching();
  if (documents_ != nullptr) documents_->StopWatching();
  if (runner_ != nullptr) runner_->Shutdown();
}

}  // namespace ibgraphrag::retriever
