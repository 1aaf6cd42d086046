// AllInOne: the whole suite in one process (the embedded default a new user starts with one
// command). kgstore, alignment, retriever and reasoner run as in-process gRPC servers without a
// listening port; the gateway is the only port, and reaches them through in-process channels,
// so every hop still crosses a real protobuf boundary with the same interceptors (request ids,
// metrics, access log) as the distributed deployment. One /metrics endpoint carries every
// service's series. The retriever reads the KG kgstore has open (no second copy).
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_ALL_IN_ONE_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_ALL_IN_ONE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/openai_client.h"
#include "common/server_runner.h"
#include "services/alignment/alignment_server.h"
#include "services/gateway/gateway_server.h"
#include "services/kgstore/kgstore_server.h"
#include "services/reasoner/reasoner_server.h"
#include "services/retriever/retriever_server.h"

namespace ibgraphrag::gateway {

struct AllInOneOptions {
  // The gateway: its `server` is the public port (address, TLS, drain, logging; metrics_port is
  // the one /metrics endpoint of the process), plus keys, rate limit and pipeline defaults.
  // Addresses and upstreams are ignored: the channels are in-process.
  GatewayServer::Options gateway;
  // Artifact base: kg/<v>/, alignment/<v>/, retriever/<v>/ (`ibgr artifacts build`).
  std::string base_path = "artifacts";
  // Reasoner backends and prompts (its `server` field is ignored).
  reasoner::ReasonerServer::Options reasoner;
  // Alignment encoder and MSCA defaults (its server/base fields are ignored).
  alignment::AlignmentServer::Options alignment;
  // The LLM of alignment's MSCA selection step, shared with the reasoner (AlignmentLlmBackend):
  // "" = the reasoner's default backend when it is an LLM, else its first backend, else none;
  // "none" = no LLM step; else the name of one of reasoner.reasoner.backends. Ignored when
  // alignment.llm is already set.
  std::string alignment_llm_backend;
  // Retriever scoring device and threads.
  std::string device = "auto";
  int torch_threads = 1;
  // Retriever scorer variant for requests naming none (--scorer); unset = the model's default.
  std::optional<retriever::ScorerVariant> retriever_scorer;
  // Retriever ontology expansion of topic entities along is_a (--ontology_expansion): allowed
  // when true (the served model's manifest then decides: train/serve parity); false forces it
  // off, a train/serve mismatch logged at start (for measuring the effect).
  bool ontology_expansion = true;
  // How the gateway reaches the other services in this process (--inprocess_calls): true
  // ("direct", the default) calls their handlers on its own thread with the messages as they
  // are (gateway::DirectCalls); false ("grpc") goes through in-process gRPC channels, which
  // serialise and parse every message and count each call in the services' ibgr_grpc_* metrics
  // and access logs. Answers are the same either way (all_in_one_test).
  bool direct_calls = true;
};

// Which of the reasoner's backends alignment's LLM selection step uses (see
// AllInOneOptions::alignment_llm_backend); nullopt = none. NOT_FOUND naming the flag when
// `choice` names no configured backend.
absl::StatusOr<std::optional<common::OpenAiClientOptions>> AlignmentLlmBackend(
    const reasoner::ReasonerServer::Options& reasoner, const std::string& choice);

class AllInOne {
 public:
  // Opens the KG, loads the alignment bundle (required: without it there is no grounded
  // answer) and the retriever model (optional: without one, answers carry shortest-path
  // evidence flagged degraded), creates the reasoner, then starts the gateway port.
  static absl::StatusOr<std::unique_ptr<AllInOne>> Start(const AllInOneOptions& options);
  ~AllInOne();

  int port() const { return gateway_->port(); }
  int metrics_port() const { return gateway_->metrics_port(); }
  // Why the retriever serves no model (empty when it does).
  std::string retriever_model_error() const { return retriever_->model_error(); }
  GatewayServer& gateway() { return *gateway_; }

  // SIGTERM/SIGINT: the gateway drains first, then the internal services stop.
  void WaitForTermination();
  void Shutdown();

 private:
  AllInOne() = default;

  std::unique_ptr<kgstore::KgStoreServer> kgstore_;
  std::unique_ptr<alignment::AlignmentServer> alignment_;
  std::unique_ptr<reasoner::ReasonerServer> reasoner_;
  std::unique_ptr<retriever::RetrieverServer> retriever_;
  std::unique_ptr<GatewayServer> gateway_;
};

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_ALL_IN_ONE_H_
