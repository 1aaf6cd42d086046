// ibgraphrag: the whole suite (kgstore, alignment, retriever, reasoner, gateway) in one process
// on one port, on the artifacts under --base (`ibgr artifacts build`).
//
//   ibgraphrag [--base=artifacts] [--port=50051] [--metrics_port=9091]
//              [--api_keys_file=keys] [--rate_limit_qps=N] [--reasoner_config=reasoner.textproto]
//              [--device=auto] [--torch_threads=1] [--config=server.textproto]
//
// --reasoner_config is an ibgraphrag.config.v1.ReasonerConfig (LLM backends, prompts); without
// it answers come from the extractive backend. --config is the ServerConfig of the public port;
// IBGR_* / IBGR_GATEWAY_* environment variables override it; flags override both.
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/logging.h"
#include "common/server_flags.h"
#include "ibgraphrag/config/v1/reasoner_config.pb.h"
#include "services/gateway/all_in_one.h"
#include "services/reasoner/reasoner_config.h"

ABSL_FLAG(std::string, config, "", "ServerConfig text proto of the public port");
ABSL_FLAG(std::string, base, "artifacts", "artifact base (kg/, alignment/, retriever/)");
ABSL_FLAG(std::string, api_keys_file, "",
          "file of '<key id>:<sha256 hex>' lines; re-read on change; empty = no authentication");
ABSL_FLAG(double, rate_limit_qps, 0, "requests per second per caller (0 = unlimited)");
ABSL_FLAG(double, rate_limit_burst, 0, "burst per caller (default: rate_limit_qps)");
ABSL_FLAG(std::string, reasoner_config, "",
          "ReasonerConfig text proto (LLM backends, prompts); empty = extractive answers");
ABSL_FLAG(std::string, device, "auto", "retriever scoring device: auto, cpu or cuda:N");
ABSL_FLAG(int, torch_threads, 1, "LibTorch intra-op threads of the retriever");
ABSL_FLAG(int, default_deadline_ms, 30000, "deadline for callers that set none");

namespace {

absl::Status Run() {
  using ibgraphrag::gateway::AllInOne;
  ibgraphrag::common::ServerRunner::Options defaults;
  defaults.service_name = "ibgraphrag";
  defaults.port = ibgraphrag::gateway::kDefaultGatewayPort;
  defaults.metrics_port = ibgraphrag::gateway::kDefaultGatewayMetricsPort;
  auto server_options =
      ibgraphrag::common::LoadServerOptions(absl::GetFlag(FLAGS_config), "IBGR_GATEWAY_", defaults);
  if (!server_options.ok()) return server_options.status();

  ibgraphrag::gateway::AllInOneOptions options;
  options.server = *server_options;
  options.base_path = absl::GetFlag(FLAGS_base);
  options.api_keys_file = absl::GetFlag(FLAGS_api_keys_file);
  options.rate_limit_qps = absl::GetFlag(FLAGS_rate_limit_qps);
  options.rate_limit_burst = absl::GetFlag(FLAGS_rate_limit_burst);
  options.device = absl::GetFlag(FLAGS_device);
  options.torch_threads = absl::GetFlag(FLAGS_torch_threads);
  if (absl::GetFlag(FLAGS_default_deadline_ms) < 1) {
    return absl::InvalidArgumentError("--default_deadline_ms: must be >= 1");
  }
  options.pipeline.default_deadline = absl::Milliseconds(absl::GetFlag(FLAGS_default_deadline_ms));
  ibgraphrag::config::v1::ReasonerConfig reasoner_config;
  const std::string reasoner_path = absl::GetFlag(FLAGS_reasoner_config);
  if (!reasoner_path.empty()) {
    auto loaded = ibgraphrag::common::LoadTextProtoConfig<ibgraphrag::config::v1::ReasonerConfig>(
        reasoner_path);
    if (!loaded.ok()) return loaded.status();
    reasoner_config = *std::move(loaded);
  }
  auto reasoner = ibgraphrag::reasoner::ReasonerServerOptionsFromConfig(reasoner_config);
  if (!reasoner.ok()) {
    return absl::Status(reasoner.status().code(), absl::StrCat("--reasoner_config ", reasoner_path,
                                                               ": ", reasoner.status().message()));
  }
  options.reasoner = *std::move(reasoner);

  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto suite = AllInOne::Start(options);
  if (!suite.ok()) return suite.status();
  ibgraphrag::common::LogInfo("ibgraphrag: ready",
                              {{"port", (*suite)->port()},
                               {"metrics_port", (*suite)->metrics_port()},
                               {"retriever_model", (*suite)->retriever_model_error().empty()}});
  (*suite)->WaitForTermination();
  ibgraphrag::common::LogInfo("ibgraphrag: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "IBGraphRAG all-in-one: kgstore, alignment, retriever, reasoner and gateway in one process.");
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("ibgraphrag: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
