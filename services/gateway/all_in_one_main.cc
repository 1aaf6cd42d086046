// ibgraphrag: the whole suite (kgstore, alignment, retriever, reasoner, gateway) in one process
// on one port, on the artifacts under --base (`ibgr artifacts build`).
//
//   ibgraphrag [--base=artifacts] [--port=50051] [--metrics_port=9091] [--http_port=8080]
//              [--api_keys_file=keys] [--rate_limit_qps=N] [--reasoner_config=reasoner.textproto]
//              [--device=auto] [--torch_threads=1] [--scorer=residual|plain]
//              [--config=server.textproto]
//              [--alignment_llm_backend=NAME|none | --alignment_config=alignment.textproto]
//              [--calibration=auto|none|DIR|FILE]
//
// --reasoner_config is an ibgraphrag.config.v1.ReasonerConfig (LLM backends, prompts); without
// it answers come from the extractive backend. Alignment's MSCA LLM selection step uses the same
// backend (the default one, else the first; --alignment_llm_backend picks another or "none"),
// unless --alignment_config gives alignment its own settings (MSCA defaults, llm, LLM step): the
// file retriever_train --alignment_config trains with, so serving gives the trained-on topics.
// --config is the ServerConfig of the public port; IBGR_* / IBGR_GATEWAY_* environment variables
// override it; flags override both. --calibration makes extractive confidences calibrated
// probabilities with abstention below a threshold (services/reasoner/confidence_calibration.h).
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/server_runner.h"
#include "services/gateway/all_in_one.h"
#include "services/gateway/gateway_flags.h"
#include "services/retriever/scorer_flag.h"

ABSL_FLAG(std::string, base, "artifacts", "artifact base (kg/, alignment/, retriever/)");
ABSL_FLAG(std::string, device, "auto",
          "retriever scoring device: auto or cpu (this binary scores on CPU without LibTorch; "
          "for a GPU run the distributed form with retriever_torch)");
ABSL_FLAG(int, torch_threads, 1,
          "LibTorch intra-op threads (checked only: this binary links no LibTorch)");
ABSL_FLAG(bool, ontology_expansion, true,
          "retriever: allow expanding topic entities along Disease Ontology / HPO is_a (subtypes' "
          "facts join the evidence with their is_a chain) when the served model's manifest was "
          "trained with it; false forces it off (a logged train/serve mismatch, for measuring)");
ABSL_FLAG(std::string, inprocess_calls, "direct",
          "how the gateway calls alignment, retriever and reasoner in this process: direct (their "
          "handlers on the gateway's thread, no serialisation) or grpc (in-process gRPC channels: "
          "every message serialised and parsed, each call in the services' ibgr_grpc_* metrics and "
          "access logs); answers are the same");
ABSL_FLAG(std::string, alignment_llm_backend, "",
          "reasoner backend of alignment's MSCA LLM selection step: empty = the reasoner's "
          "default backend, else its first; \"none\" = no LLM step");

namespace {

absl::Status Run() {
  using ibgraphrag::gateway::AllInOne;
  auto gateway = ibgraphrag::gateway::GatewayOptionsFromFlags("ibgraphrag");
  if (!gateway.ok()) return gateway.status();
  ibgraphrag::gateway::AllInOneOptions options;
  options.gateway = *std::move(gateway);
  options.base_path = absl::GetFlag(FLAGS_base);
  options.device = absl::GetFlag(FLAGS_device);
  options.torch_threads = absl::GetFlag(FLAGS_torch_threads);
  options.ontology_expansion = absl::GetFlag(FLAGS_ontology_expansion);
  const std::string inprocess_calls = absl::GetFlag(FLAGS_inprocess_calls);
  if (inprocess_calls != "direct" && inprocess_calls != "grpc") {
    return absl::InvalidArgumentError(
        absl::StrCat("--inprocess_calls: \"", inprocess_calls, "\" is neither direct nor grpc"));
  }
  options.direct_calls = inprocess_calls == "direct";
  auto scorer = ibgraphrag::retriever::DefaultScorerVariantFromFlag();
  if (!scorer.ok()) return scorer.status();
  options.retriever_scorer = *scorer;
  auto reasoner = ibgraphrag::gateway::InProcessReasonerOptionsFromFlags(options.base_path);
  if (!reasoner.ok()) return reasoner.status();
  options.reasoner = *std::move(reasoner);
  options.alignment_llm_backend = absl::GetFlag(FLAGS_alignment_llm_backend);
  if (ibgraphrag::gateway::InProcessAlignmentConfigGiven()) {
    if (!options.alignment_llm_backend.empty()) {
      return absl::InvalidArgumentError(
          "--alignment_config and --alignment_llm_backend: give one (the file's llm block, or "
          "its absence, decides the LLM of MSCA's step)");
    }
    auto alignment = ibgraphrag::gateway::InProcessAlignmentOptionsFromFlags(options.base_path);
    if (!alignment.ok()) return alignment.status();
    options.alignment = *std::move(alignment);
    // No llm block means no LLM, as in the alignment service and in training.
    if (!options.alignment.llm.has_value()) options.alignment_llm_backend = "none";
  }

  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto suite = AllInOne::Start(options);
  if (!suite.ok()) return suite.status();
  ibgraphrag::common::LogInfo("ibgraphrag: ready",
                              {{"port", (*suite)->port()},
                               {"metrics_port", (*suite)->metrics_port()},
                               {"http_port", (*suite)->gateway().http_port()},
                               {"retriever_model", (*suite)->retriever_model_error().empty()}});
  (*suite)->WaitForTermination();
  ibgraphrag::common::LogInfo("ibgraphrag: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "IBGraphRAG all-in-one: kgstore, alignment, retriever, reasoner and gateway in one process.");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("ibgraphrag: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
