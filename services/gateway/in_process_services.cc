#include "services/gateway/in_process_services.h"

#include <utility>

namespace ibgraphrag::gateway {

common::ServerRunner::Options InProcessServerOptions(
    const common::ServerRunner::Options& base, const std::string& name,
    std::shared_ptr<common::MetricsRegistry> registry) {
  common::ServerRunner::Options options;
  options.service_name = name;
  options.port = common::ServerRunner::kInProcessOnly;
  options.metrics_port = -1;
  options.metrics_registry = std::move(registry);
  options.drain_deadline = base.drain_deadline;
  options.termination_grace_period = absl::ZeroDuration();
  options.log_payloads = base.log_payloads;
  options.max_receive_message_bytes = base.max_receive_message_bytes;
  options.max_send_message_bytes = base.max_send_message_bytes;
  return options;
}

}  // namespace ibgraphrag::gateway
