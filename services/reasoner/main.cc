// reasoner: answers questions from evidence triples over gRPC, with an OpenAI-compatible LLM
// backend (vLLM, llama.cpp server, Ollama, TGI, hosted APIs) or the extractive backend.
//
//   reasoner [--config=reasoner.textproto] [--host=0.0.0.0] [--port=50055]
//            [--metrics_port=9095] [--prompt_dir=DIR] [--base=artifacts]
//            [--calibration=auto|none|DIR|FILE]
//
// --config is an ibgraphrag.config.v1.ReasonerConfig in protobuf text format (backends, prompts,
// failure policy, and the `server` block: TLS, drain, logging). IBGR_* and IBGR_REASONER_*
// environment variables override the `server` block (see common/config.h); flags given on the
// command line override both. An invalid config exits with status 1 and a message naming the
// field; the server never starts half-configured. With --base, --calibration=auto (the default)
// loads the newest <base>/calibration/<version>, as the all-in-one server does, so the two forms
// answer alike; without --base there is no calibration unless one is named.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/config.h"
#include "common/logging.h"
#include "common/server_flags.h"
#include "common/server_runner.h"
#include "ibgraphrag/config/v1/reasoner_config.pb.h"
#include "services/reasoner/reasoner_config.h"
#include "services/reasoner/reasoner_server.h"

ABSL_FLAG(std::string, config, "", "ReasonerConfig text proto (backends, prompts, server)");
ABSL_FLAG(std::string, base, "",
          "artifact base directory (read for --calibration=auto only); empty: none");
ABSL_FLAG(std::string, calibration, "auto",
          "extractive confidence calibration: auto (the newest <base>/calibration/<version>; "
          "none without --base or a fitted version), none, a version directory or a "
          "calibration.json file");
ABSL_FLAG(std::string, prompt_dir, "",
          "directory of prompt templates <kind>.v<N>.txt (overrides prompts.directory)");

namespace {

absl::Status Run() {
  using ibgraphrag::reasoner::ReasonerServer;
  ibgraphrag::config::v1::ReasonerConfig config;
  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (!config_path.empty()) {
    auto loaded = ibgraphrag::common::LoadTextProtoConfig<ibgraphrag::config::v1::ReasonerConfig>(
        config_path);
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
  }
  ibgraphrag::config::v1::ServerConfig* server = config.mutable_server();
  if (auto s = ibgraphrag::common::ApplyServerFlagsAndEnv(server, "IBGR_REASONER_"); !s.ok())
    return s;
  if (!absl::GetFlag(FLAGS_prompt_dir).empty()) {
    config.mutable_prompts()->set_directory(absl::GetFlag(FLAGS_prompt_dir));
  }

  auto options = ibgraphrag::reasoner::ReasonerServerOptionsFromConfig(config);
  if (!options.ok()) {
    return absl::Status(options.status().code(),
                        absl::StrCat("invalid config", config_path.empty() ? "" : " " + config_path,
                                     ": ", options.status().message()));
  }

  auto calibration = ibgraphrag::reasoner::LoadCalibrationFlag(absl::GetFlag(FLAGS_calibration),
                                                               absl::GetFlag(FLAGS_base));
  if (!calibration.ok()) return calibration.status();
  options->reasoner.calibration = *std::move(calibration);

  // Signals arriving while the server starts must drain, not kill, the process.
  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto reasoner = ReasonerServer::BuildAndStart(*options);
  if (!reasoner.ok()) return reasoner.status();
  ibgraphrag::common::LogInfo("reasoner: ready", {{"port", (*reasoner)->port()},
                                                  {"metrics_port", (*reasoner)->metrics_port()}});
  (*reasoner)->WaitForTermination();
  ibgraphrag::common::LogInfo("reasoner: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Answers questions from knowledge-graph evidence over gRPC (LLM or extractive backend).");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("reasoner: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
