// The one conversion between absl::Status (used everywhere inside the suite) and grpc::Status
// (used only at the RPC boundary). Handlers end with `return ToGrpcStatus(status);`; clients turn
// what a stub returned back into absl::Status with FromGrpcStatus.
#ifndef IBGRAPHRAG_COMMON_GRPC_STATUS_H_
#define IBGRAPHRAG_COMMON_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace ibgraphrag::common {

// Codes map 1:1 (absl and gRPC share the canonical code numbers); the message is kept. Codes
// outside the canonical range become UNKNOWN. absl payloads are not transported.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Inverse of ToGrpcStatus. grpc error_details are not carried over.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_GRPC_STATUS_H_
