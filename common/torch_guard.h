// The LibTorch boundary: LibTorch reports errors with exceptions, the suite with absl::Status.
// Header-only (it needs c10, so only targets that link LibTorch include it).
#ifndef IBGRAPHRAG_COMMON_TORCH_GUARD_H_
#define IBGRAPHRAG_COMMON_TORCH_GUARD_H_

#include <c10/util/Exception.h>

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ibgraphrag::common {

// Runs `fn` (returning absl::Status), turning LibTorch and other std exceptions into INTERNAL
// naming `what`.
template <typename Fn>
absl::Status TorchGuard(const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const c10::Error& e) {
    return absl::InternalError(
        absl::StrCat(what, ": LibTorch error: ", e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(what, ": ", e.what()));
  }
}

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_TORCH_GUARD_H_
