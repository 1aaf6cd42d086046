// The `grpc-timeout` header of the HTTP gateway (common/http_gateway.h ParseGrpcTimeout): a
// value any HTTP caller sends.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/http_gateway.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ibgraphrag::fuzz::Check;
  const absl::string_view value(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<absl::Duration> timeout = ibgraphrag::common::ParseGrpcTimeout(value);
  if (!timeout.ok()) {
    Check(timeout.status().code() == absl::StatusCode::kInvalidArgument,
          "a bad grpc-timeout is not INVALID_ARGUMENT");
    return 0;
  }
  // 1..8 digits and a unit: never negative, never infinite, at most 99999999 hours.
  Check(size >= 2 && size <= 9, "a grpc-timeout outside 2..9 characters was accepted");
  Check(std::all_of(value.begin(), value.end() - 1, [](char c) { return c >= '0' && c <= '9'; }),
        "a grpc-timeout with a non-digit before its unit was accepted");
  Check(*timeout >= absl::ZeroDuration() && *timeout <= absl::Hours(99999999),
        "a grpc-timeout out of range");
  return 0;
}
