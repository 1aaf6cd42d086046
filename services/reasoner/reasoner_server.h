// ReasonerServer: the reasoner service on a ServerRunner, with its prompts loaded and LLM clients
// created, health, and the reasoner's own Prometheus metrics:
//   ibgr_reasoner_answers_total{backend,degraded}  counter; backend = the backend the request
//       asked for ("extractive" or an LLM backend name), degraded = "true" when the answer came
//       from the extractive fallback or from fewer self-consistency samples than asked
//   ibgr_reasoner_llm_seconds{backend}             histogram of time spent calling the LLM per
//       request (all samples, retries included, failed calls too), 10 ms .. 120 s
//   ibgr_reasoner_unparsed_answers_total{backend}  counter of LLM outputs that could not be parsed
// RPC counts, codes and latencies come from the common interceptor (ibgr_grpc_*).
#ifndef IBGRAPHRAG_SERVICES_REASONER_REASONER_SERVER_H_
#define IBGRAPHRAG_SERVICES_REASONER_REASONER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/server_runner.h"
#include "services/reasoner/reasoner.h"
#include "services/reasoner/reasoner_service_impl.h"

namespace ibgraphrag::reasoner {

// Default ports of the service (gRPC, Prometheus).
inline constexpr int kDefaultReasonerPort = 50055;
inline constexpr int kDefaultReasonerMetricsPort = 9095;
// gRPC service name, also the health-check entry.
inline constexpr char kReasonerServiceName[] = "ibgraphrag.v1.ReasonerService";

class ReasonerServer {
 public:
  struct Options {
    // Port, TLS, drain and logging settings; service_name defaults to "reasoner".
    common::ServerRunner::Options server;
    // Backends, prompts, failure policy, limits. When `reasoner.log` is null the core's log lines
    // go to the structured JSON log (debug level; failures at warning level).
    ReasonerOptions reasoner;
    // Backend for requests that leave `backend` empty: "" or "extractive" (the extractive
    // backend), or the name of one of reasoner.backends.
    std::string default_backend;
  };

  // Checks default_backend, starts the gRPC server (health NOT_SERVING), creates the Reasoner
  // (loads the prompt templates, creates one LLM client per backend), then reports SERVING.
  // A Reasoner that cannot be created is an error: the process exits rather than serving
  // half-configured.
  static absl::StatusOr<std::unique_ptr<ReasonerServer>> BuildAndStart(const Options& options);

  ~ReasonerServer();

  int port() const { return runner_->port(); }
  int metrics_port() const { return runner_->metrics_port(); }
  common::ServerRunner& runner() { return *runner_; }
  const Reasoner& reasoner() const { return *reasoner_; }
  // Channel to this server without sockets (all-in-one mode, tests).
  std::shared_ptr<grpc::Channel> InProcessChannel() { return runner_->InProcessChannel(); }
  // The service behind the RPCs, for direct calls in this process (ReasonDirect).
  const ReasonerServiceImpl& service() const { return service_; }

  // SIGTERM/SIGINT: NOT_SERVING, grace period, drain, return.
  void WaitForTermination();
  void Shutdown();

 private:
  struct Metrics;
  explicit ReasonerServer(const Options& options);
  absl::Status CreateMetrics();
  void Record(absl::string_view requested_backend, const ReasonResult& result) const;

  Options options_;
  std::unique_ptr<Metrics> metrics_;
  ReasonerServiceImpl service_;
  std::shared_ptr<const Reasoner> reasoner_;
  std::unique_ptr<common::ServerRunner> runner_;
};

}  // namespace ibgraphrag::reasoner

#endif  // IBGRAPHRAG_SERVICES_REASONER_REASONER_SERVER_H_
