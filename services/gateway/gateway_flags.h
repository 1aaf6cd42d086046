// The flags the `gateway` and `ibgraphrag` binaries share (public port config, caller keys, rate
// limit, default deadline; the configs of the alignment and reasoner they run in process and the
// reasoner's calibration), defined once.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_FLAGS_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "services/alignment/alignment_server.h"
#include "services/gateway/gateway_server.h"
#include "services/reasoner/reasoner_server.h"

namespace ibgraphrag::gateway {

// Gateway options from --config (ServerConfig of the public port), IBGR_* / IBGR_GATEWAY_*
// environment variables, --host/--port/--metrics_port, --api_keys_file, --rate_limit_qps,
// --rate_limit_burst, --default_deadline_ms and --http_port. The public port defaults to
// 50051/9091, the HTTP/JSON port to off (-1); `service_name` names it in logs and metrics.
// Upstream addresses are left empty.
absl::StatusOr<GatewayServer::Options> GatewayOptionsFromFlags(const std::string& service_name);

// The reasoner this process runs (the all-in-one's; `gateway --reasoner=local`'s) from
// --reasoner_config and --calibration, the calibration read against `base`
// (reasoner::LoadReasonerOptionsFromFlags).
absl::StatusOr<reasoner::ReasonerServer::Options> InProcessReasonerOptionsFromFlags(
    const std::string& base);
// True when --reasoner_config or --calibration was set away from its default.
bool InProcessReasonerFlagsGiven();

// The alignment this process runs (the all-in-one's; `gateway --alignment=local`'s) over the
// bundles under `base`: the alignment service's defaults, or --alignment_config's settings when
// given (an AlignmentConfig, as the alignment service reads with --config: encoder, MSCA
// defaults, llm block (none when absent), LLM-step bounds, FAISS settings, bundle_version; its
// server block and base_path are not read). Errors name the flag.
absl::StatusOr<alignment::AlignmentServer::Options> InProcessAlignmentOptionsFromFlags(
    const std::string& base);
// True when --alignment_config was given.
bool InProcessAlignmentConfigGiven();

}  // namespace ibgraphrag::gateway

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_GATEWAY_FLAGS_H_
