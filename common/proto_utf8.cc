#include "common/proto_utf8.h"

#include <cstdint>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace ibgraphrag::common {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;

// Walks one message; returns the offending path or "". `ok` turns false on malformed input.
std::string Walk(absl::string_view wire, const google::protobuf::Descriptor* descriptor,
                 const std::string& prefix, int depth, bool* ok) {
  if (depth > 32) return "";
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(wire.data()),
                                            static_cast<int>(wire.size()));
  std::map<int, int> seen;  // occurrences per field number, for repeated-field indices
  while (const uint32_t tag = in.ReadTag()) {
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    const FieldDescriptor* field = descriptor->FindFieldByNumber(number);
    if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED ||
        field == nullptr) {
      if (!WireFormatLite::SkipField(&in, tag)) {
        *ok = false;
        return "";
      }
      continue;
    }
    uint32_t length = 0;
    std::string bytes;
    if (!in.ReadVarint32(&length) || !in.ReadString(&bytes, static_cast<int>(length))) {
      *ok = false;
      return "";
    }
    std::string path = absl::StrCat(prefix, field->name());
    if (field->is_repeated()) absl::StrAppend(&path, "[", seen[number]++, "]");
    if (field->type() == FieldDescriptor::TYPE_STRING && !IsValidUtf8(bytes)) return path;
    if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
      std::string inner = Walk(bytes, field->message_type(), path + ".", depth + 1, ok);
      if (!inner.empty() || !*ok) return inner;
    }
  }
  if (!in.ConsumedEntireMessage()) *ok = false;
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

}  // namespace ibgraphrag::common
