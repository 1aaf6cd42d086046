// The one way a service answers INVALID_ARGUMENT naming the field for a request whose proto3
// `string` field holds invalid UTF-8. gRPC C++ parses requests before any handler runs, and
// protobuf refuses a proto3 string that is not UTF-8, so such a request would fail as INTERNAL
// "failed to parse" without saying which field. Services that must name it register those
// methods as raw callback methods (the generated WithRawCallbackMethod_<Rpc>, see
// common/blocking_reactor.h) and parse the bytes with ParseRequestBytes. Public gRPC/protobuf
// APIs only.
#ifndef IBGRAPHRAG_COMMON_PROTO_UTF8_H_
#define IBGRAPHRAG_COMMON_PROTO_UTF8_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/utf8.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "grpcpp/support/byte_buffer.h"

namespace ibgraphrag::common {

// The path of the first `string` field in `wire` (a serialized `descriptor` message) whose bytes
// are not valid UTF-8, e.g. "question", "options[2]", "request.pipeline.reasoner_backend"; ""
// when there is none or when `wire` is not a well-formed message (its parse error is then the
// caller's to report).
std::string FindInvalidUtf8Field(absl::string_view wire,
                                 const google::protobuf::Descriptor* descriptor);

// The bytes of a message received by a byte-level handler, as one string. INTERNAL when gRPC
// cannot hand them over.
absl::StatusOr<std::string> ByteBufferToString(const grpc::ByteBuffer& buffer);

// Parses a request received as bytes into `request`. INVALID_ARGUMENT "<field>: not valid
// UTF-8" naming the field as FindInvalidUtf8Field does; INVALID_ARGUMENT "request: not a valid
// serialized message" for other malformed bytes; INTERNAL when gRPC cannot hand the bytes over.
absl::Status ParseRequestBytes(const grpc::ByteBuffer& bytes, google::protobuf::Message* request);

// `message` serialized into `out`, the response of a byte-level handler.
void SerializeToByteBuffer(const google::protobuf::Message& message, grpc::ByteBuffer* out);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_PROTO_UTF8_H_
