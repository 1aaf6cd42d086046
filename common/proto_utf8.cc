#include "common/proto_utf8.h"

#include <grpc/slice.h>

#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/unknown_field_set.h"

namespace ibgraphrag::common {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// Nesting deeper than protobuf's own default recursion limit is not a request we serve.
constexpr int kMaxDepth = 32;

// Walks one message, decoded without protobuf's UTF-8 check as a set of (number, wire value)
// fields; returns the offending path or "". `ok` turns false on malformed input.
std::string Walk(absl::string_view wire, const google::protobuf::Descriptor* descriptor,
                 const std::string& prefix, int depth, bool* ok) {
  if (depth > kMaxDepth) return "";
  UnknownFieldSet fields;
  if (!fields.ParseFromArray(wire.data(), static_cast<int>(wire.size()))) {
    *ok = false;
    return "";
  }
  std::map<int, int> seen;  // occurrences per field number, for repeated-field indices
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& value = fields.field(i);
    const FieldDescriptor* field = descriptor->FindFieldByNumber(value.number());
    if (field == nullptr || value.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    std::string path = absl::StrCat(prefix, field->name());
    if (field->is_repeated()) absl::StrAppend(&path, "[", seen[value.number()]++, "]");
    const std::string& bytes = value.length_delimited();
    if (field->type() == FieldDescriptor::TYPE_STRING && !IsValidUtf8(bytes)) return path;
    if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      std::string inner = Walk(bytes, field->message_type(), path + ".", depth + 1, ok);
      if (!inner.empty() || !*ok) return inner;
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::string> ByteBufferToString(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return absl::InternalError("unreadable request message");
  std::string out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

std::string FindInvalidUtf8Field(absl::string_view wire,
                                 const google::protobuf::Descriptor* descriptor) {
  bool ok = true;
  std::string path = Walk(wire, descriptor, "", 0, &ok);
  return ok ? path : "";
}

absl::Status ParseRequestBytes(const grpc::ByteBuffer& bytes, google::protobuf::Message* request) {
  absl::StatusOr<std::string> wire = ByteBufferToString(bytes);
  if (!wire.ok()) return wire.status();
  if (request->ParseFromString(*wire)) return absl::OkStatus();
  const std::string field = FindInvalidUtf8Field(*wire, request->GetDescriptor());
  return absl::InvalidArgumentError(field.empty() ? "request: not a valid serialized message"
                                                  : absl::StrCat(field, ": not valid UTF-8"));
}

void SerializeToByteBuffer(const google::protobuf::Message& message, grpc::ByteBuffer* out) {
  // Straight into a slice of the message's size (what gRPC does for a typed handler's
  // response), not through a string that is then copied into one.
  grpc_slice bytes = grpc_slice_malloc(message.ByteSizeLong());
  message.SerializeWithCachedSizesToArray(GRPC_SLICE_START_PTR(bytes));
  grpc::Slice slice(bytes, grpc::Slice::STEAL_REF);
  grpc::ByteBuffer buffer(&slice, 1);
  out->Swap(&buffer);
}

}  // namespace ibgraphrag::common
