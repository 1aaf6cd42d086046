// How an INVALID_ARGUMENT message shows the caller's bad value: C-escaped (no control bytes or
// quotes from the request reach logs and clients raw) and cut at 64 bytes (a megabyte of junk
// is not echoed back). Header-only, so any library that validates input can use it.
#ifndef IBGRAPHRAG_COMMON_ERROR_ECHO_H_
#define IBGRAPHRAG_COMMON_ERROR_ECHO_H_

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

inline constexpr size_t kMaxEchoedBytes = 64;

// The first kMaxEchoedBytes of `value`, C-escaped, for an error message.
inline std::string EchoForError(absl::string_view value) {
  return absl::CHexEscape(value.substr(0, kMaxEchoedBytes));
}

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_ERROR_ECHO_H_
