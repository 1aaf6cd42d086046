// Manifests and CLI output as JSON through the protobuf JSON mapping (STYLE.md §15): one place
// that sets the printing and parsing options, so every artifact manifest looks the same.
#ifndef IBGRAPHRAG_COMMON_PROTO_JSON_H_
#define IBGRAPHRAG_COMMON_PROTO_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace ibgraphrag::common {

// Pretty JSON (2-space indent, proto field names, default values printed) ending in "\n".
std::string ProtoToJson(const google::protobuf::Message& message);

// Parses JSON into `message`. Unknown fields are ignored (a newer build may add fields; format
// versions guard incompatible changes). DATA_LOSS naming `what` and the parser's reason for
// anything else that is not a JSON object of this message.
absl::Status JsonToProto(absl::string_view json, absl::string_view what,
                         google::protobuf::Message* message);

// The HTTP/JSON API's encoding (common/http_gateway.h): canonical proto3 JSON with proto field
// names on one line (no whitespace, no trailing newline, so a message fits one server-sent
// event); unlike ProtoToJson, fields at their default value (0, false, "", empty lists) are
// left out.
absl::StatusOr<std::string> ProtoToJsonLine(const google::protobuf::Message& message);

// Parses an API request body into `message`. Unlike manifests, unknown fields are refused: a
// misspelt option must not be silently ignored. INVALID_ARGUMENT naming `what`, the message type
// and the parser's reason (which names the offending field).
absl::Status JsonRequestToProto(absl::string_view json, absl::string_view what,
                                google::protobuf::Message* message);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_PROTO_JSON_H_
