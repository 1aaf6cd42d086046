#include "services/retriever/retriever_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "services/kgstore/snapshot_manifest.h"
#include "services/retriever/grpc_subgraph_source.h"
#include "services/retriever/torch_scorer.h"

namespace ibgraphrag::retriever {

RetrieverServer::~RetrieverServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<RetrieverServer>> RetrieverServer::BuildAndStart(
    const Options& options) {
  if (options.base_path.empty()) {
    return absl::InvalidArgumentError(
        "base_path: required (artifact base holding retriever/<version>/)");
  }
  IBGR_RETURN_IF_ERROR(SetTorchThreads(options.torch_threads));
  std::unique_ptr<RetrieverServer> server(new RetrieverServer());

  // KG source first: without it nothing can be served.
  std::shared_ptr<SubgraphSource> source;
  if (options.kg_store != nullptr) {
    server->store_ = options.kg_store;
    source = std::make_shared<InProcessSubgraphSource>(server->store_);
  } else if (options.kgstore_address.empty()) {
    IBGR_ASSIGN_OR_RETURN(std::string dir,
                          kgstore::ResolveSnapshotDir(options.base_path, std::nullopt));
    kgstore::KgStoreOptions store_options;
    store_options.snapshot_dir = dir;
    store_options.read_only = true;
    IBGR_ASSIGN_OR_RETURN(std::unique_ptr<kgstore::KgStore> store,
                          kgstore::KgStore::Open(store_options));
    server->store_ = std::move(store);
    source = std::make_shared<InProcessSubgraphSource>(server->store_);
    common::LogInfo("retriever: KG opened in process", {{"snapshot_dir", dir}});
  } else {
    common::ChannelOptions channel_options;
    channel_options.target = options.kgstore_address;
    channel_options.tls = options.kgstore_tls;
    IBGR_ASSIGN_OR_RETURN(auto channel, common::MakeChannel(channel_options));
    source = std::make_shared<GrpcSubgraphSource>(std::move(channel));
  }

  // Model: failures leave the server up and NOT_SERVING.
  // No explicit encoder: the one the model's manifest names.
  const TextEmbedder embedder = options.embedder.value_or(TextEmbedder());
  std::shared_ptr<const RetrieverModel> model;
  absl::StatusOr<std::string> model_dir =
      ResolveRetrieverDir(options.base_path, options.pinned_model_version);
  if (model_dir.ok()) {
    RetrieverModel::Options model_options;
    model_options.device = options.device;
    absl::StatusOr<std::shared_ptr<const RetrieverModel>> loaded =
        RetrieverModel::Load(*model_dir, model_options, embedder);
    if (loaded.ok()) {
      model = *std::move(loaded);
    } else {
      server->model_error_ = loaded.status().ToString();
    }
  } else {
    server->model_error_ = model_dir.status().ToString();
  }
  server->retriever_ = std::make_unique<Retriever>(options.retriever, std::move(source), model,
                                                   server->model_error_);
  server->service_ = std::make_unique<RetrieverServiceImpl>(server->retriever_.get());

  common::ServerRunner::Options runner_options = options.server;
  if (runner_options.service_name.empty()) runner_options.service_name = "retriever";
  IBGR_ASSIGN_OR_RETURN(
      server->runner_, common::ServerRunner::BuildAndStart(runner_options, {server->service_.get()},
                                                           {kRetrieverServiceName}));
  if (model == nullptr) {
    common::LogError("retriever: no model loaded; staying NOT_SERVING",
                     {{"error", server->model_error_}});
  } else {
    common::LogInfo("retriever: serving model", {{"model_dir", *model_dir},
                                                 {"version", model->version()},
                                                 {"device", model->device()},
                                                 {"encoder", model->manifest().encoder_id}});
    server->runner_->SetServing(true);
  }
  return server;
}

void RetrieverServer::WaitForTermination() {
  runner_->WaitForTermination();
  Shutdown();
}

void RetrieverServer::Shutdown() {
  if (runner_ != nullptr) runner_->Shutdown();
}

}  // namespace ibgraphrag::retriever
