// gateway: the public IBGraphRAG API (Answer, AnswerStream) in front of the four services.
//
//   gateway --alignment=HOST:50053|local --retriever=HOST:50054 --reasoner=HOST:50055|local
//           [--base=artifacts] [--calibration=auto|none|DIR|FILE] [--reasoner_config=FILE]
//           [--alignment_config=FILE] [--alignment_watch_seconds=30]
//           [--kgstore=HOST:50052] [--api_keys_file=/etc/ibgr/keys/api_keys]
//           [--rate_limit_qps=20 --rate_limit_burst=40]
//           [--upstream_ca=ca.pem [--upstream_cert=c.pem --upstream_key=k.pem]]
//           [--port=50051] [--metrics_port=9091] [--http_port=8080] [--config=server.textproto]
//
// Addresses may be dns:///name:port of a headless Service (client-side round robin over its
// pods). --config is an ibgraphrag.config.v1.ServerConfig (TLS of the public port, drain,
// logging); IBGR_* / IBGR_GATEWAY_* environment variables override it; flags override both.
//
// --reasoner=local answers in this process instead of calling a reasoner service: one network
// call fewer per answer, for the extractive backend (or the LLM backends of --reasoner_config,
// each gateway pod then calling the LLM). --base and --calibration then give its extractive
// confidence calibration as they do to the reasoner (auto: the newest <base>/calibration/<v>).
//
// --alignment=local finds the question's entities in this process too, on the newest alignment
// bundle under --base (required then; --alignment_config as the alignment service's --config,
// --alignment_watch_seconds to follow newer bundles): with --reasoner=local the retriever is the
// only network call of an answer, at the cost of the bundle's memory in every gateway pod.
#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "common/logging.h"
#include "common/server_runner.h"
#include "services/gateway/gateway_flags.h"
#include "services/gateway/gateway_server.h"

ABSL_FLAG(std::string, alignment, "",
          "alignment service address, or \"local\": align in this process (required)");
ABSL_FLAG(std::string, retriever, "", "retriever service address (required)");
ABSL_FLAG(std::string, reasoner, "",
          "reasoner service address, or \"local\": answer in this process (required)");
ABSL_FLAG(std::string, base, "",
          "artifact base directory: with --alignment=local its alignment bundles (required "
          "then); with --reasoner=local its calibration for --calibration=auto");
ABSL_FLAG(int, alignment_watch_seconds, 0,
          "with --alignment=local: look for a newer alignment bundle this often and swap to it "
          "(0 = never: the bundle read at start)");
ABSL_FLAG(std::string, kgstore, "",
          "kgstore address, for shortest-path evidence when the retriever fails (optional)");
ABSL_FLAG(std::string, upstream_ca, "", "PEM CA of the services' certificates (enables TLS)");
ABSL_FLAG(std::string, upstream_cert, "", "PEM client certificate for mTLS to the services");
ABSL_FLAG(std::string, upstream_key, "", "PEM client key for mTLS to the services");
ABSL_FLAG(std::string, upstream_server_name, "",
          "name checked against the services' certificates instead of their host names");

namespace {

absl::Status Run() {
  using ibgraphrag::gateway::GatewayServer;
  auto flags = ibgraphrag::gateway::GatewayOptionsFromFlags("gateway");
  if (!flags.ok()) return flags.status();
  GatewayServer::Options options = *std::move(flags);
  options.alignment_address = absl::GetFlag(FLAGS_alignment);
  options.retriever_address = absl::GetFlag(FLAGS_retriever);
  options.reasoner_address = absl::GetFlag(FLAGS_reasoner);
  const std::string base = absl::GetFlag(FLAGS_base);
  const bool local_alignment = options.alignment_address == "local";
  const bool local_reasoner = options.reasoner_address == "local";
  // Flags of a local service with a remote one would be ignored: refused instead.
  if (!local_reasoner && ibgraphrag::gateway::InProcessReasonerFlagsGiven()) {
    return absl::InvalidArgumentError(
        "--reasoner_config, --calibration: only with --reasoner=local (a reasoner service reads "
        "its own)");
  }
  if (!local_alignment && (ibgraphrag::gateway::InProcessAlignmentConfigGiven() ||
                           absl::GetFlag(FLAGS_alignment_watch_seconds) != 0)) {
    return absl::InvalidArgumentError(
        "--alignment_config, --alignment_watch_seconds: only with --alignment=local (an "
        "alignment service reads its own)");
  }
  if (!local_alignment && !local_reasoner && !base.empty()) {
    return absl::InvalidArgumentError(
        "--base: only with --alignment=local or --reasoner=local (the services read their own)");
  }
  if (local_alignment) {
    if (base.empty()) {
      return absl::InvalidArgumentError(
          "--base: required with --alignment=local (the artifact base holding alignment/<v>/)");
    }
    if (absl::GetFlag(FLAGS_alignment_watch_seconds) < 0) {
      return absl::InvalidArgumentError("--alignment_watch_seconds: must be >= 0");
    }
    auto local = ibgraphrag::gateway::InProcessAlignmentOptionsFromFlags(base);
    if (!local.ok()) return local.status();
    local->watch_interval = absl::Seconds(absl::GetFlag(FLAGS_alignment_watch_seconds));
    options.local_alignment = *std::move(local);
  }
  if (local_reasoner) {
    auto local = ibgraphrag::gateway::InProcessReasonerOptionsFromFlags(base);
    if (!local.ok()) return local.status();
    options.local_reasoner = *std::move(local);
  }
  options.kgstore_address = absl::GetFlag(FLAGS_kgstore);
  if (!absl::GetFlag(FLAGS_upstream_ca).empty()) {
    options.upstream_tls.enabled = true;
    options.upstream_tls.ca_cert_path = absl::GetFlag(FLAGS_upstream_ca);
    options.upstream_tls.cert_path = absl::GetFlag(FLAGS_upstream_cert);
    options.upstream_tls.key_path = absl::GetFlag(FLAGS_upstream_key);
    options.upstream_tls.server_name_override = absl::GetFlag(FLAGS_upstream_server_name);
  } else if (!absl::GetFlag(FLAGS_upstream_cert).empty()) {
    return absl::InvalidArgumentError("--upstream_cert: needs --upstream_ca");
  }

  if (auto s = ibgraphrag::common::ServerRunner::InstallTerminationSignalHandlers(); !s.ok()) {
    return s;
  }
  auto server = GatewayServer::BuildAndStart(options);
  if (!server.ok()) return server.status();
  ibgraphrag::common::LogInfo("gateway: ready", {{"port", (*server)->port()},
                                                 {"metrics_port", (*server)->metrics_port()},
                                                 {"http_port", (*server)->http_port()}});
  (*server)->WaitForTermination();
  ibgraphrag::common::LogInfo("gateway: stopped");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("The IBGraphRAG gateway: answers clinical questions over gRPC.");
  ibgraphrag::common::UseServingMutexSettings();
  absl::ParseCommandLine(argc, argv);
  absl::Status status = Run();
  if (!status.ok()) {
    ibgraphrag::common::LogError("gateway: fatal", {{"error", status.ToString()}});
    return 1;
  }
  return 0;
}
