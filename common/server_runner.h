// The gRPC server runtime every IBGraphRAG service binary uses (TF Serving's Server::Options +
// BuildAndStart pattern). A service main.cc fills Options, registers its service implementation,
// loads its data, flips health to SERVING and waits for SIGTERM:
//
//   ServerRunner::Options options;
//   options.service_name = "kgstore";
//   options.port = 50052;
//   options.metrics_port = 9092;
//   KgStoreServiceImpl service(...);
//   IBGR_ASSIGN_OR_RETURN(auto runner,
//                         ServerRunner::BuildAndStart(options, {&service},
//                         {"ibgraphrag.v1.KgStore"}));
//   IBGR_RETURN_IF_ERROR(service.Load(...));  // health is NOT_SERVING meanwhile
//   runner->SetServing(true);
//   runner->WaitForTermination();  // SIGTERM: NOT_SERVING, grace period, drain, return
//
// Every server gets: grpc.health.v1 (default service, NOT_SERVING until SetServing(true)),
// server reflection, the RPC observability interceptor (request ids, Prometheus RPC metrics,
// JSON access log; see server_interceptor.h), Prometheus /metrics on its own port, optional
// TLS/mTLS. Services must be sync or callback services (not the async API).
#ifndef IBGRAPHRAG_COMMON_SERVER_RUNNER_H_
#define IBGRAPHRAG_COMMON_SERVER_RUNNER_H_

#include <grpcpp/channel.h>
#include <grpcpp/server.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics.h"

namespace ibgraphrag::common {

class ServerRunner {
 public:
  // Options::port value for a server without a listening port (in-process channels only).
  static constexpr int kInProcessOnly = -1;

  // Server-side TLS. Both paths empty = plaintext.
  struct TlsOptions {
    // PEM file with the server certificate chain; requires key_path.
    std::string cert_path;
    // PEM file with the server private key; requires cert_path.
    std::string key_path;
    // PEM CA bundle for client certificates. Set: a presented client certificate is verified.
    // Required when require_client_cert is true.
    std::string client_ca_path;
    // mTLS: refuse clients without a certificate signed by client_ca_path.
    bool require_client_cert = false;
  };

  struct Options {
    // Name of the service ("kgstore"): "server" field of log lines, and the health entry
    // registered besides the gRPC service names given to BuildAndStart. Required.
    std::string service_name;
    // Address the gRPC and metrics ports bind to. "0.0.0.0" = all IPv4 interfaces; "::" or
    // "[::]" = all IPv6 (and IPv4 on dual-stack hosts); tests use "127.0.0.1".
    std::string listen_host = "0.0.0.0";
    // gRPC port; 0 = the OS picks a free one (read it back with port()); kInProcessOnly = no
    // listening port at all, reachable only through InProcessChannel() (the internal services
    // of the all-in-one binary).
    int port = 0;
    // Prometheus /metrics HTTP port: -1 = no endpoint (metrics are still recorded), 0 = the OS
    // picks a free one (read it back with metrics_port()).
    int metrics_port = -1;
    // Record into this registry instead of creating one (several runners in one process that
    // share one /metrics endpoint, owned by whoever created the registry). metrics_port must
    // then be -1.
    std::shared_ptr<MetricsRegistry> metrics_registry;
    // TLS / mTLS of the gRPC port. The metrics port is plaintext (scraped inside the cluster;
    // protect it with a NetworkPolicy).
    TlsOptions tls;
    // Largest request message accepted, in bytes. Large enough for KG ingest batches and
    // 100k-triple subgraphs.
    int max_receive_message_bytes = 64 << 20;
    // Largest response message sent, in bytes.
    int max_send_message_bytes = 64 << 20;
    // Shutdown(): how long in-flight RPCs may keep running before they are cancelled.
    absl::Duration drain_deadline = absl::Seconds(10);
    // WaitForTermination(): after SIGTERM, how long health reports NOT_SERVING while RPCs are
    // still accepted, so load balancers and kube-proxy stop sending traffic before the drain.
    // A second signal cuts it short. Keep grace + drain below terminationGracePeriodSeconds.
    absl::Duration termination_grace_period = absl::Seconds(5);
    // Completion queues of the sync server; 0 = gRPC's default (one per core).
    int num_completion_queues = 0;
    // Idle threads the sync server keeps polling each completion queue. gRPC's default (2) makes
    // a thread exit after almost every RPC under concurrency and a new one start for the next:
    // that churn cost more CPU than the answer flow itself. Threads above this exit when idle.
    int max_pollers = 16;
    // Upper bound on threads handling RPCs (gRPC resource quota); past it new RPCs fail with
    // RESOURCE_EXHAUSTED instead of piling up. 0 = no bound.
    int max_threads = 0;
    // Connections older than this get a GOAWAY, so clients using round_robin over a headless
    // Service re-resolve and spread over newly added replicas. Infinite = never.
    absl::Duration max_connection_age = absl::InfiniteDuration();
    // Debug only: turns on the global payload-logging switch (logging.h LogPayload). Payloads
    // contain patient data; never set in production.
    bool log_payloads = false;
  };

  // Validates `options`, builds and starts the server with `services` (not owned; they must
  // outlive the runner) and starts the metrics endpoint. Health is NOT_SERVING for "" (the
  // whole server), options.service_name and each of `health_service_names` (use the full gRPC
  // service names, e.g. "ibgraphrag.v1.KgStore") until SetServing(true).
  // INVALID_ARGUMENT naming the option for bad options or unreadable TLS files, UNAVAILABLE when
  // a port cannot be bound.
  static absl::StatusOr<std::unique_ptr<ServerRunner>> BuildAndStart(
      const Options& options, std::vector<grpc::Service*> services,
      std::vector<std::string> health_service_names);

  // Shuts down (as Shutdown()) if still running.
  ~ServerRunner();
  ServerRunner(const ServerRunner&) = delete;
  ServerRunner& operator=(const ServerRunner&) = delete;

  // The bound gRPC port (kInProcessOnly when there is none).
  int port() const { return port_; }
  // The bound metrics port, or -1 when the endpoint is disabled.
  int metrics_port() const { return metrics_->port(); }
  const Options& options() const { return options_; }

  // Where services add their own metrics; valid for the runner's lifetime.
  MetricsRegistry& metrics() { return *metrics_; }
  const std::shared_ptr<MetricsRegistry>& shared_metrics() const { return metrics_; }

  // Health of "" and every registered name: SERVING only once the service's data is loaded.
  // Ignored after Shutdown() began.
  void SetServing(bool serving);

  // Health NOT_SERVING, then stop accepting RPCs and wait up to drain_deadline for in-flight
  // ones (after which they are cancelled), then stop the metrics endpoint. Idempotent and
  // thread-safe; returns when the server has stopped. Must not be called from an RPC handler
  // (it waits for handlers to return).
  void Shutdown();

  // Blocks until the server has been shut down (by Shutdown() from another thread).
  void Wait();

  // Blocks until SIGTERM or SIGINT (or Shutdown() from another thread), then drains gracefully:
  // health NOT_SERVING, wait termination_grace_period (a second signal skips the rest of it),
  // Shutdown(). Returns when the server has stopped; the default signal dispositions are then
  // restored, so a further signal terminates the process as usual. Call it from one runner
  // only: the signal is delivered to a single waiter.
  void WaitForTermination();

  // Installs the SIGTERM/SIGINT handlers WaitForTermination() uses, without blocking. A signal
  // that arrives after this and before WaitForTermination() is not lost. WaitForTermination()
  // calls it itself; call it earlier to avoid the default action (process death) in the window
  // between BuildAndStart and WaitForTermination. Idempotent. The handler only writes the
  // signal number to a pipe.
  static absl::Status InstallTerminationSignalHandlers();

  // A channel to this server that skips the network (all-in-one mode). RPCs on it still pass
  // the interceptor and health logic; TLS does not apply.
  std::shared_ptr<grpc::Channel> InProcessChannel();

 private:
  explicit ServerRunner(const Options& options);

  // Sets every registered health entry to `serving`.
  void SetHealth(bool serving);

  const Options options_;
  std::vector<std::string> health_names_;
  // Declared before server_ so it outlives it: the interceptors record into it until the
  // server is destroyed.
  std::shared_ptr<MetricsRegistry> metrics_;
  bool owns_metrics_endpoint_ = true;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  std::mutex mu_;
  std::condition_variable shut_down_cv_;
  // Set when draining begins (signal or Shutdown); SetServing is ignored from then on.
  bool health_frozen_ = false;  // Guarded by mu_.
  bool shutting_down_ = false;  // Guarded by mu_.
  bool shut_down_ = false;      // Guarded by mu_.
  // Wakes WaitForTermination() when Shutdown() is called from elsewhere: [read end, write end].
  int wake_fds_[2] = {-1, -1};
};

// Called first thing in main() by the serving binaries. Debian builds Abseil without NDEBUG, so
// every absl::Mutex lock and unlock feeds Abseil's debug deadlock detector (a process-wide
// lock-order graph behind its own lock) unless it is switched off: 2.3 % of the all-in-one's CPU
// under load in its own code, and the all-in-one answers ~7 % more at 16 clients without it
// (docs/benchmarks.md, "Issue 30: CPU per answer"). IBGR_MUTEX_DEADLOCK_DETECTION=1 keeps the
// detector (it then aborts on a lock-order cycle): scripts/test.sh sets it, so the tests that
// start the real binaries still catch one. Tests and tools that do not call this keep it too.
void UseServingMutexSettings();

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_SERVER_RUNNER_H_
