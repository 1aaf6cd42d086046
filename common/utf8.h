// UTF-8 well-formedness, header-only so that core libraries without gRPC (alignment_core) and the
// gRPC layer (common/proto_utf8) share one definition.
#ifndef IBGRAPHRAG_COMMON_UTF8_H_
#define IBGRAPHRAG_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

// True when `text` is well-formed UTF-8: no stray continuation bytes, no truncated sequences, no
// overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
inline bool IsValidUtf8(absl::string_view text) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

// At most `limit` bytes of `text`, cut back to a UTF-8 character boundary so a cap never leaves
// half a character (notes, prompts, log excerpts).
inline absl::string_view Utf8Prefix(absl::string_view text, size_t limit) {
  if (text.size() <= limit) return text;
  size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_UTF8_H_
