// retriever: serves the IBRP triple retriever (`<base>/retriever/<version>/`) over gRPC.
//
//   retriever --base=artifacts [--pin_version=N] [--kgstore=host:50052 | --kg_base=DIR]
//             [--device=auto]
//             [--kgstore_tls_ca=ca.pem [--kgstore_tls_cert=c.pem --kgstore_tls_key=k.pem]]
//             [--torch_threads=1] [--watch_seconds=30] [--port=50054] [--metrics_port=9094]
//             [--scorer=residual|plain] [--encoder=hash-ngram|trained|<encoder id>]
//             [--config=server.textproto]
//
// --kgstore empty reads a read-only KG replica in this process: the newest snapshot under
// --kg_base (default --base), swapped to newer ones with --watch_seconds. That is how the
// distributed form scores without shipping subgraphs over the network (docs/retriever.md).
//
// Two builds of this file: `retriever` scores on CPU with the fused C++ loop and links no
// LibTorch (the CPU image); `retriever_torch` (IBGR_RETRIEVER_LIBTORCH) also links the LibTorch
// backend and scores on a GPU when --device resolves to one (the GPU image, prod-gpu overlay).
// --config is an ibgraphrag.config.v1.ServerConfig in protobuf text format (TLS, drain, logging);
// IBGR_* / IBGR_RETRIEVER_* environment variables override it; explicit flags override both.
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
#include "services/retriever/alignment_embedder.h"
#include "services/retriever/retriever_server.h"
#include "services/retriever/scorer_flag.h"
#ifdef IBGR_RETRIEVER_LIBTORCH
#include "services/retriever/torch_backend.h"
#endif

ABSL_FLAG(std::string, config, "", "ServerConfig text proto (TLS, drain, logging)");
ABSL_FLAG(std::string, base, "artifacts", "artifact base directory holding retriever/<version>/");
ABSL_FLAG(std::string, kgstore, "",
          "kgstore address; empty reads a read-only KG replica in process: the newest "
          "<kg_base>/kg/<version>/, followed to newer ones every --watch_seconds");
ABSL_FLAG(std::string, kg_base, "",
          "artifact base of the in-process KG replica (its kg/<version>/); empty = --base");
ABSL_FLAG(int64_t, pin_kg_version, 0,
          "serve this KG snapshot version in the replica (0 = the newest; --pin_version pins the "
          "model)");
ABSL_FLAG(std::string, kgstore_tls_ca, "", "PEM CA of kgstore's certificate (enables TLS)");
ABSL_FLAG(std::string, kgstore_tls_cert, "", "PEM client certificate for mTLS to kgstore");
ABSL_FLAG(std::string, kgstore_tls_key, "", "PEM client key for mTLS to kgstore");
ABSL_FLAG(std::string, kgstore_tls_server_name, "",
          "name checked against kgstore's certificate instead of its host name");
ABSL_FLAG(std::string, device, "auto",
          "scoring device: auto, cpu or cuda:N (cuda: the retriever_torch binary; auto is cpu in "
          "the CPU build)");
ABSL_FLAG(int, torch_threads, 1,
          "LibTorch intra-op threads (retriever_torch; checked, unused on "
          "the CPU build)");
ABSL_FLAG(bool, ontology_expansion, true,
          "allow expanding topic entities along Disease Ontology / HPO is_a (subtypes' facts join "
          "the evidence with their is_a chain) when the served model's manifest was trained with "
          "it; false forces it off (a logged train/serve mismatch, for measuring); requests may "
          "turn it off");
ABSL_FLAG(int, watch_seconds, 0,
          "poll for newer model versions (and KG replica snapshots) this often (0 = never)");
ABSL_FLAG(std::string, encoder, "",
          "text encoder: hash-ngram, trained (newest <base>/encoder/) or an encoder id; a model "
          "built with another encoder is refused (empty = the one the model's manifest names)");

namespace {

absl::Status Run() {
  using ibgraphrag::retriever::RetrieverServer;
  ibgraphrag::common::ServerRunner::Options defaults;
  defaults.service_name = "retriever";
  defaults.port = ibgraphrag::retriever::kDefaultRetrieverPort;
  defaults.metrics_port = ibgraphrag::retriever::kDefaultRetrieverMetricsPort;
  auto server_options = ibgraphrag::common::LoadServerOptions(absl::GetFlag(FLAGS_config),
                                                              "IBGR_RETRIEVER_", defaults);
  if (!server_options.ok()) return server_options.status();

  RetrieverServer::Options options;
  options.server = *server_options;
  options.base_path = absl::GetFlag(FLAGS_base);
  auto pinned = ibgraphrag::common::PinnedVersionFromFlag();
  if (!pinned.ok()) return pinned.status();
  options.pinned_version = *pinned;
  options.kgstore_address = absl::GetFlag(FLAGS_kgstore);
  options.kg_base_path = absl::GetFlag(FLAGS_kg_base);
  if (absl::GetFlag(FLAGS_pin_kg_version) < 0) {
    return absl::InvalidArgumentError("--pin_kg_version: must be >= 0 (0 = the newest)");
  }
  if (absl::GetFlag(FLAGS_pin_kg_version) > 0) {
    if (!options.kgstore_address.empty()) {
      return absl::InvalidArgumentError(
          "--pin_kg_version: pins the in-process KG replica; with --kgstore pin kgstore instead");
    }
    options.kg_pinned_version = absl::GetFlag(FLAGS_pin_kg_version);
  }
  if (!options.kg_base_path.empty() && !options.kgstore_address.empty()) {
    return absl::InvalidArgumentError(
        "--kg_base: names the in-process KG replica, which --kgstore replaces; give one or the "
        "other");
  }
  if (!absl::GetFlag(FLAGS_kgstore_tls_ca).empty()) {
    options.kgstore_tls.enabled = true;
    options.kgstore_tls.ca_cert_path = absl::GetFlag(FLAGS_kgstore_tls_ca);
    options.kgstore_tls.cert_path = absl::GetFlag(FLAGS_kgstore_tls_cert);
    options.kgstore_tls.key_path = absl::GetFlag(FLAGS_kgstore_tls_key);
    options.kgstore_tls.server_name_override = absl::GetFlag(FLAGS_kgstore_tls_server_name);
  } else if (!absl::GetFlag(FLAGS_kgstore_tls_cert).empty()) {
    return absl::InvalidArgumentError("--kgstore_tls_cert: needs --kgstore_tls_ca");
  }
  if (options.kgstore_tls.enabled && options.kgstore_address.empty()) {
    return absl::InvalidArgumentError(
        "--kgstore_tls_ca: only for --kgstore (without it the retriever reads its own KG replica "
        "and calls no kgstore)");
  }
  options.device = absl::GetFlag(FLAGS_device);
#ifdef IBGR_RETRIEVER_LIBTORCH
  options.scoring_backend = &ibgraphrag::retriever::LibTorchScoringBackend();
#endif
  options.torch_threads = absl::GetFlag(FLAGS_torch_threads);
  options.retriever.ontology.enabled = absl::GetFlag(FLAGS_ontology_expansion);
  if (!options.retriever.ontology.enabled) {
    ibgraphrag::common::LogWarning(
        "--ontology_expansion=false: models trained with expansion are served without it "
        "(train/serve mismatch)");
  }
  if (absl::GetFlag(FLAGS_watch_seconds) < 0) {
    return absl::InvalidArgumentError("--watch_seconds: must be >= 0");
  }
  options.watch_interval = absl::Seconds(absl::GetFlag(FLAGS_watch_seconds));
  auto default_variant = ibgraphrag::retriever::DefaultScorerVariantFromFlag();
  if (!default_variant.ok()) return default_variant.status();
  options.default_variant = *default_variant;
  if (!absl::GetFlag(FLAGS_encoder).empty()) {
    auto embedder = ibgraphrag::retriever::EmbedderForSpelling(
        options.base_path, absl::GetFlag(FLAGS_encoder), "--encoder");
    if (!embedder.ok()) return embedder.status();
    options.embedder = *std::move(embedder);
  }

  // Signals arriving while the model loads must drain, not kill, the process.
  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto server = RetrieverServer::BuildAndStart(options);
  if (!server.ok()) return server.status();
  ibgraphrag::common::LogInfo(
      "retriever: ready", {{"port", (*server)->port()},
                           {"metrics_port", (*server)->metrics_port()},
                           {"scoring_backend", std::string(options.scoring_backend != nullptr
                                                               ? options.scoring_backend->name()
                                                               : std::string_view("fused-cpu"))},
                           {"model_loaded", (*server)->model_error().empty()}});
  (*server)->WaitForTermination();
  ibgraphrag::common::LogInfo("retriever: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Serves the IBRP triple retriever over gRPC.");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("retriever: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
