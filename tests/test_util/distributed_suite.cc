#include "tests/test_util/distributed_suite.h"

#include <signal.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::testing {

const std::vector<std::string>& DistributedSuite::InternalServices() {
  static const auto* const kServices =
      new std::vector<std::string>{"kgstore", "alignment", "retriever", "reasoner"};
  return *kServices;
}

absl::StatusOr<std::unique_ptr<DistributedSuite>> DistributedSuite::Start(const Options& options) {
  std::unique_ptr<DistributedSuite> suite(new DistributedSuite(options));
  const std::string& base = options.base;
  absl::Status status = suite->Launch("kgstore", {"--base=" + base, "--read_only"}, 0);
  if (status.ok() && !options.gateway_aligns_locally) {
    status = suite->Launch("alignment", {"--base=" + base}, 0);
  }
  if (status.ok()) {
    std::vector<std::string> retriever = {"--base=" + base, "--device=cpu"};
    if (!options.retriever_kg_replica) retriever.push_back("--kgstore=" + suite->target("kgstore"));
    status = suite->Launch("retriever", std::move(retriever), 0);
  }
  // --base: the newest fitted calibration, as the all-in-one server reads it.
  if (status.ok() && !options.gateway_reasons_locally) {
    status =
        suite->Launch("reasoner", {"--config=" + options.reasoner_config, "--base=" + base}, 0);
  }
  if (!status.ok()) return status;
  std::vector<std::string> gateway = {"--retriever=" + suite->target("retriever"),
                                      "--kgstore=" + suite->target("kgstore")};
  if (options.gateway_aligns_locally || options.gateway_reasons_locally) {
    gateway.push_back("--base=" + base);
  }
  gateway.push_back(options.gateway_aligns_locally ? "--alignment=local"
                                                   : "--alignment=" + suite->target("alignment"));
  if (options.gateway_reasons_locally) {
    gateway.insert(gateway.end(),
                   {"--reasoner=local", "--reasoner_config=" + options.reasoner_config});
  } else {
    gateway.push_back("--reasoner=" + suite->target("reasoner"));
  }
  gateway.insert(gateway.end(), options.gateway_flags.begin(), options.gateway_flags.end());
  status = suite->Launch("gateway", std::move(gateway), 0);
  if (!status.ok()) return status;
  return suite;
}

absl::Status DistributedSuite::Launch(const std::string& service, std::vector<std::string> flags,
                                      int port) {
  std::vector<std::string> argv = {BinDir() + "/" + service, "--host=127.0.0.1",
                                   absl::StrCat("--port=", port), "--metrics_port=-1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  // One log per service, appended across restarts, so a test can read what each run logged;
  // the ready wait only reads the lines the new process wrote.
  absl::StatusOr<Subprocess> process =
      Subprocess::Start(argv, absl::StrCat(options_.dir, "/", service, ".log"));
  if (!process.ok()) return process.status();
  Running& running = services_[service];
  running.flags = std::move(flags);
  running.process = std::make_unique<Subprocess>(std::move(*process));
  absl::StatusOr<int> ready = running.process->WaitForReadyPort(service, options_.ready_timeout);
  if (!ready.ok()) {
    return absl::Status(ready.status().code(),
                        absl::StrCat(service, ": ", ready.status().message()));
  }
  running.port = *ready;
  return absl::OkStatus();
}

int DistributedSuite::port(const std::string& service) const {
  auto it = services_.find(service);
  return it == services_.end() ? 0 : it->second.port;
}

std::string DistributedSuite::target(const std::string& service) const {
  return absl::StrCat("127.0.0.1:", port(service));
}

Subprocess& DistributedSuite::process(const std::string& service) {
  return *services_.at(service).process;
}

absl::Status DistributedSuite::Kill(const std::string& service) {
  auto it = services_.find(service);
  if (it == services_.end() || it->second.process == nullptr) {
    return absl::NotFoundError(absl::StrCat("service \"", service, "\" was not started"));
  }
  return it->second.process->Stop(SIGKILL, absl::Seconds(10)).status();
}

absl::Status DistributedSuite::Restart(const std::string& service) {
  auto it = services_.find(service);
  if (it == services_.end()) {
    return absl::NotFoundError(absl::StrCat("service \"", service, "\" was not started"));
  }
  // Reap the old process first (a no-op when Kill already did), then reuse its port: the
  // clients' channels keep pointing there.
  it->second.process.reset();
  return Launch(service, it->second.flags, it->second.port);
}

}  // namespace ibgraphrag::testing
