// std::string_view -> absl::string_view bridge for the kgstore sources.
//
// Debian's Abseil is built with ABSL_OPTION_USE_STD_STRING_VIEW=0, so absl::StrCat, SimpleAtoi
// and heterogeneous hash-map lookups take absl::string_view, which std::string_view does not
// convert to implicitly. Our APIs use std::string_view; call sites convert with AsAbsl().
#ifndef IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_STRINGS_H_
#define IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_STRINGS_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace ibgraphrag::kgstore {

inline absl::string_view AsAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace ibgraphrag::kgstore

#endif  // IBGRAPHRAG_SERVICES_KGSTORE_KG_STORE_STRINGS_H_
