// `ibgr ask "question"`: one question through the gateway's Answer (or AnswerStream) RPC, shown
// as a readable report or JSON; and the gateway flags `ibgr eval` shares.
#ifndef IBGRAPHRAG_TOOLS_IBGR_ASK_COMMANDS_H_
#define IBGRAPHRAG_TOOLS_IBGR_ASK_COMMANDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "tools/eval/eval_runner.h"

namespace ibgraphrag::cli {

int Ask(const std::vector<std::string>& args);  // ibgr ask "question"

// The pipeline switches given on the command line (--top_k, --msca, --ibrp, --lambda, --tau,
// --hops, --backend); switches not given are left to the gateway. INVALID_ARGUMENT naming the
// flag for a value outside its range.
absl::StatusOr<eval::PipelineConfig> PipelineFromFlags();

// --api_key, else $IBGR_API_KEY, else "" (no authentication metadata).
std::string ApiKeyFromFlags();

// A stub for --gateway (TLS with --tls_ca/--tls_cert/--tls_key).
absl::StatusOr<std::unique_ptr<v1::GatewayService::Stub>> GatewayStubFromFlags();

// --deadline_ms as a duration; INVALID_ARGUMENT when it is not positive.
absl::StatusOr<absl::Duration> DeadlineFromFlags();

// The command line with the --api_key value replaced by "***".
std::string RedactedCommandLineForReports();

}  // namespace ibgraphrag::cli

#endif  // IBGRAPHRAG_TOOLS_IBGR_ASK_COMMANDS_H_
