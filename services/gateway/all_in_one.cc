#include "services/gateway/all_in_one.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "services/alignment/alignment_setup.h"
#include "services/gateway/in_process_services.h"
#include "services/retriever/model_bundle.h"

namespace ibgraphrag::gateway {

absl::StatusOr<std::optional<common::OpenAiClientOptions>> AlignmentLlmBackend(
    const reasoner::ReasonerServer::Options& reasoner, const std::string& choice) {
  const std::vector<common::OpenAiClientOptions>& backends = reasoner.reasoner.backends;
  if (choice == "none") return std::nullopt;
  // By default MSCA uses the LLM that answers, so configuring one LLM enables both steps.
  const std::string& name = !choice.empty() ? choice : reasoner.default_backend;
  for (const common::OpenAiClientOptions& b : backends) {
    if (b.name == name) return b;
  }
  if (!choice.empty()) {
    return absl::NotFoundError(absl::StrCat("--alignment_llm_backend: \"", choice,
                                            "\" is not a backend of the reasoner config"));
  }
  if (backends.empty()) return std::nullopt;
  return backends.front();  // the reasoner defaults to extractive answers, but an LLM is there
}

namespace {

// The served model was trained on topics aligned as `training.alignment_llm` says; when the
// alignment served here uses its LLM step otherwise, the topics differ from those trained on
// (docs/alignment.md "LLM selection"). Logged, not refused: the answers still work.
void WarnOnAlignmentTrainServeMismatch(const std::string& base,
                                       const alignment::AlignmentServer::Options& align) {
  absl::StatusOr<std::string> dir = retriever::ResolveRetrieverDir(base, std::nullopt);
  if (!dir.ok()) return;
  absl::StatusOr<std::string> json = common::ReadFileToString(*dir + "/manifest.json");
  if (!json.ok()) return;
  absl::StatusOr<retriever::RetrieverManifest> manifest =
      retriever::RetrieverManifestFromJson(*json);
  if (!manifest.ok()) return;
  const auto it = manifest->training.find("alignment_llm");
  const std::string trained = it == manifest->training.end() ? "none" : it->second;
  const std::string served = alignment::AlignmentLlmLabel(align.llm, align.aligner.defaults);
  if (trained == served) return;
  common::LogWarning(
      "all-in-one: the retriever model was trained on topics aligned with another LLM step "
      "than alignment serves, so it sees topics it was not trained on; serve with "
      "--alignment_config=FILE and retrain with retriever_train --alignment_config=FILE",
      {{"model_dir", *dir}, {"trained_alignment_llm", trained}, {"served_alignment_llm", served}});
}

}  // namespace

AllInOne::~AllInOne() { Shutdown(); }

absl::StatusOr<std::unique_ptr<AllInOne>> AllInOne::Start(const AllInOneOptions& options) {
  if (options.base_path.empty()) {
    return absl::InvalidArgumentError("base_path: required (run `ibgr artifacts build` first)");
  }
  common::MetricsRegistry::Options metrics_options;
  metrics_options.listen_host = options.gateway.server.listen_host;
  metrics_options.port = options.gateway.server.metrics_port;
  IBGR_ASSIGN_OR_RETURN(std::shared_ptr<common::MetricsRegistry> registry,
                        common::MetricsRegistry::Create(metrics_options));

  std::unique_ptr<AllInOne> suite(new AllInOne());
  kgstore::KgStoreServer::Options kg;
  kg.server = InProcessServerOptions(options.gateway.server, "kgstore", registry);
  kg.base_path = options.base_path;
  // Only the gateway is exposed, so nothing ingests: read-only lets several processes (and the
  // artifact builder) share the snapshot.
  kg.store.read_only = true;
  IBGR_ASSIGN_OR_RETURN(suite->kgstore_, kgstore::KgStoreServer::BuildAndStart(kg));

  alignment::AlignmentServer::Options align = options.alignment;
  align.server = InProcessServerOptions(options.gateway.server, "alignment", registry);
  align.base_path = options.base_path;
  if (!align.llm.has_value()) {
    IBGR_ASSIGN_OR_RETURN(align.llm,
                          AlignmentLlmBackend(options.reasoner, options.alignment_llm_backend));
  }
  IBGR_ASSIGN_OR_RETURN(suite->alignment_, alignment::AlignmentServer::BuildAndStart(align));
  WarnOnAlignmentTrainServeMismatch(options.base_path, align);
  if (!suite->alignment_->serving()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "alignment bundle: ", suite->alignment_->load_status().message(),
        " (build the artifacts with `ibgr artifacts build --base=", options.base_path, "`)"));
  }

  reasoner::ReasonerServer::Options reason = options.reasoner;
  reason.server = InProcessServerOptions(options.gateway.server, "reasoner", registry);
  IBGR_ASSIGN_OR_RETURN(suite->reasoner_, reasoner::ReasonerServer::BuildAndStart(reason));

  retriever::RetrieverServer::Options retrieve;
  retrieve.server = InProcessServerOptions(options.gateway.server, "retriever", registry);
  retrieve.base_path = options.base_path;
  retrieve.kg_store = suite->kgstore_->store();
  retrieve.device = options.device;
  retrieve.torch_threads = options.torch_threads;
  retrieve.default_variant = options.retriever_scorer;
  retrieve.retriever.ontology.enabled = options.ontology_expansion;
  if (!options.ontology_expansion) {
    common::LogWarning(
        "all-in-one: --ontology_expansion=false: models trained with expansion are served "
        "without it (train/serve mismatch)");
  }
  IBGR_ASSIGN_OR_RETURN(suite->retriever_, retriever::RetrieverServer::BuildAndStart(retrieve));
  if (!suite->retriever_->model_error().empty()) {
    common::LogWarning(
        "all-in-one: retriever has no model; answers will carry shortest-path evidence flagged "
        "degraded",
        {{"error", suite->retriever_->model_error()}});
  }

  GatewayServer::Options gw = options.gateway;
  if (gw.server.service_name.empty()) gw.server.service_name = "gateway";
  gw.server.metrics_registry = registry;
  gw.server.metrics_port = -1;
  gw.upstreams =
      Upstreams{suite->alignment_->InProcessChannel(), suite->retriever_->InProcessChannel(),
                suite->reasoner_->InProcessChannel(), suite->kgstore_->InProcessChannel()};
  if (options.direct_calls) {
    // The servers outlive the gateway (Shutdown stops it first), so the raw pointers hold.
    DirectCalls& calls = gw.upstreams->direct;
    calls.align =
        DirectHandler(&suite->alignment_->service(), &alignment::AlignmentServiceImpl::AlignDirect);
    calls.retrieve = DirectHandler(&suite->retriever_->service(),
                                   &retriever::RetrieverServiceImpl::RetrieveDirect);
    calls.reason =
        DirectHandler(&suite->reasoner_->service(), &reasoner::ReasonerServiceImpl::ReasonDirect);
  }
  IBGR_ASSIGN_OR_RETURN(suite->gateway_, GatewayServer::BuildAndStart(gw));
  return suite;
}

void AllInOne::WaitForTermination() {
  gateway_->WaitForTermination();
  Shutdown();
}

void AllInOne::Shutdown() {
  // Outside in: the gateway stops taking answers before the services it calls go away.
  if (gateway_ != nullptr) gateway_->Shutdown();
  if (retriever_ != nullptr) retriever_->Shutdown();
  if (alignment_ != nullptr) alignment_->Shutdown();
  if (reasoner_ != nullptr) reasoner_->Shutdown();
  if (kgstore_ != nullptr) kgstore_->Shutdown();
}

}  // namespace ibgraphrag::gateway
