#include "services/gateway/gateway_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/server_flags.h"
#include "services/alignment/alignment_setup.h"
#include "services/reasoner/reasoner_config.h"

ABSL_FLAG(std::string, config, "",
          "ServerConfig text proto of the public port (TLS, drain, logging)");
ABSL_FLAG(std::string, api_keys_file, "",
          "file of '<key id>:<sha256 hex>' lines; re-read on change; empty = no authentication");
ABSL_FLAG(double, rate_limit_qps, 0, "requests per second per caller (0 = unlimited)");
ABSL_FLAG(double, rate_limit_burst, 0, "burst per caller (default: rate_limit_qps)");
ABSL_FLAG(int, default_deadline_ms, 30000, "deadline for callers that set none");
ABSL_FLAG(int, retriever_max_candidates, 0,
          "candidate triples the retriever scores per answer, 1..100000; 0 = the cap the served "
          "retriever model was trained with (recommended: training and serving then agree)");
ABSL_FLAG(int, http_port, -1,
          "HTTP/JSON port (POST /v1/answer, /v1/answer:stream, GET /healthz, /readyz) on the "
          "gRPC port's host and TLS; -1 = off, 0 = the OS picks");
ABSL_FLAG(std::string, reasoner_config, "",
          "ReasonerConfig text proto of the reasoner in this process (LLM backends, prompts); "
          "empty = extractive answers. gateway: only with --reasoner=local");
ABSL_FLAG(std::string, calibration, "auto",
          "extractive confidence calibration of the reasoner in this process: auto (the newest "
          "<base>/calibration/<version>; none without a base or a fitted version), none, a "
          "version directory or a calibration.json file. gateway: only with --reasoner=local");

ABSL_FLAG(std::string, alignment_config, "",
          "AlignmentConfig text proto of the alignment in this process (as the alignment service "
          "reads with --config): encoder, MSCA defaults, llm block (none when absent), LLM-step "
          "bounds, FAISS settings, bundle_version; give the same file to retriever_train "
          "--alignment_config so the model is trained on the served topics. gateway: only with "
          "--alignment=local");

namespace ibgraphrag::gateway {

absl::StatusOr<GatewayServer::Options> GatewayOptionsFromFlags(const std::string& service_name) {
  common::ServerRunner::Options defaults;
  defaults.service_name = service_name;
  defaults.port = kDefaultGatewayPort;
  defaults.metrics_port = kDefaultGatewayMetricsPort;
  absl::StatusOr<common::ServerRunner::Options> server =
      common::LoadServerOptions(absl::GetFlag(FLAGS_config), "IBGR_GATEWAY_", defaults);
  if (!server.ok()) return server.status();
  if (absl::GetFlag(FLAGS_default_deadline_ms) < 1) {
    return absl::InvalidArgumentError("--default_deadline_ms: must be >= 1");
  }
  GatewayServer::Options options;
  options.server = *std::move(server);
  options.api_keys_file = absl::GetFlag(FLAGS_api_keys_file);
  options.rate_limit_qps = absl::GetFlag(FLAGS_rate_limit_qps);
  options.rate_limit_burst = absl::GetFlag(FLAGS_rate_limit_burst);
  if (absl::GetFlag(FLAGS_http_port) < -1 || absl::GetFlag(FLAGS_http_port) > 65535) {
    return absl::InvalidArgumentError("--http_port: must be -1 (off), 0 (pick) or 1..65535");
  }
  options.http_port = absl::GetFlag(FLAGS_http_port);
  options.pipeline.default_deadline = absl::Milliseconds(absl::GetFlag(FLAGS_default_deadline_ms));
  const int max_candidates = absl::GetFlag(FLAGS_retriever_max_candidates);
  if (max_candidates < 0 || max_candidates > 100000) {
    return absl::InvalidArgumentError(
        "--retriever_max_candidates: must be 0 (the model's trained cap) or 1..100000");
  }
  options.pipeline.max_candidates = static_cast<uint32_t>(max_candidates);
  return options;
}

absl::StatusOr<reasoner::ReasonerServer::Options> InProcessReasonerOptionsFromFlags(
    const std::string& base) {
  return reasoner::LoadReasonerOptionsFromFlags(absl::GetFlag(FLAGS_reasoner_config),
                                                absl::GetFlag(FLAGS_calibration), base);
}

bool InProcessReasonerFlagsGiven() {
  return !absl::GetFlag(FLAGS_reasoner_config).empty() ||
         absl::GetFlag(FLAGS_calibration) != "auto";
}

absl::StatusOr<alignment::AlignmentServer::Options> InProcessAlignmentOptionsFromFlags(
    const std::string& base) {
  alignment::AlignmentServer::Options options;
  options.base_path = base;
  options.encoder.base_path = base;
  const std::string path = absl::GetFlag(FLAGS_alignment_config);
  if (path.empty()) return options;
  absl::StatusOr<alignment::AlignmentSetup> setup = alignment::LoadAlignmentSetup(path);
  if (!setup.ok()) {
    return absl::Status(setup.status().code(),
                        absl::StrCat("--alignment_config: ", setup.status().message()));
  }
  alignment::ApplyAlignmentSetup(*setup, &options);
  return options;
}

bool InProcessAlignmentConfigGiven() { return !absl::GetFlag(FLAGS_alignment_config).empty(); }

}  // namespace ibgraphrag::gateway
