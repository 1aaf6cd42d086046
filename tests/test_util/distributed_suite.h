// The distributed suite (kgstore, alignment, retriever, reasoner, gateway) as real processes on
// loopback, for fault tests: each service can be killed and restarted on the port it had, so the
// gateway's and retriever's channels reconnect to it without being reconfigured.
#ifndef IBGRAPHRAG_TESTS_TEST_UTIL_DISTRIBUTED_SUITE_H_
#define IBGRAPHRAG_TESTS_TEST_UTIL_DISTRIBUTED_SUITE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {

class DistributedSuite {
 public:
  struct Options {
    // Scratch directory for logs.
    std::string dir;
    // Artifact base with kg/, alignment/ and retriever/ versions already published.
    std::string base;
    // Reasoner config file (text proto).
    std::string reasoner_config;
    // Extra gateway flags (API keys, rate limits, ...).
    std::vector<std::string> gateway_flags;
    // The retriever reads its own read-only KG replica (the newest snapshot under `base`) instead
    // of asking kgstore for subgraphs over gRPC (the gateway still uses kgstore for its
    // degraded path).
    bool retriever_kg_replica = false;
    // The gateway answers in its own process (`--reasoner=local` with this reasoner_config and
    // the calibration under `base`): no reasoner process is started.
    bool gateway_reasons_locally = false;
    // The gateway aligns in its own process (`--alignment=local` on the bundles under `base`): no
    // alignment process is started.
    bool gateway_aligns_locally = false;
    // How long each service may take to log "ready".
    absl::Duration ready_timeout = absl::Seconds(60);
  };

  // Starts kgstore (read-only), alignment (unless the gateway aligns locally), retriever,
  // reasoner (unless the gateway reasons locally), then the gateway wired to them.
  static absl::StatusOr<std::unique_ptr<DistributedSuite>> Start(const Options& options);

  // The internal services, in start order (the gateway is not among them).
  static const std::vector<std::string>& InternalServices();

  int port(const std::string& service) const;
  // "127.0.0.1:<port>" of `service`.
  std::string target(const std::string& service) const;
  Subprocess& process(const std::string& service);

  // SIGKILLs `service` and reaps it.
  absl::Status Kill(const std::string& service);
  // Starts `service` again on its old port; returns when it has logged "ready" (health SERVING).
  absl::Status Restart(const std::string& service);

 private:
  struct Running {
    std::vector<std::string> flags;  // service-specific flags, reused on restart
    int port = 0;
    std::unique_ptr<Subprocess> process;
  };

  explicit DistributedSuite(Options options) : options_(std::move(options)) {}
  // Starts `service` with `flags` on `port` (0: OS-picked) and waits for its ready line.
  absl::Status Launch(const std::string& service, std::vector<std::string> flags, int port);

  Options options_;
  std::map<std::string, Running> services_;
};

}  // namespace ibgraphrag::testing

#endif  // IBGRAPHRAG_TESTS_TEST_UTIL_DISTRIBUTED_SUITE_H_
