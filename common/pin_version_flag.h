// --pin_version: the one flag with which kgstore, alignment and retriever pin the artifact
// version they serve (TF Serving's "specific" version policy). 0, the default, serves the newest
// version under --base (and follows newer ones when the server watches). Linked only into those
// service executables (library ibgr_pin_version_flag), so other binaries do not grow the flag.
#ifndef IBGRAPHRAG_COMMON_PIN_VERSION_FLAG_H_
#define IBGRAPHRAG_COMMON_PIN_VERSION_FLAG_H_

#include <cstdint>
#include <optional>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"

ABSL_DECLARE_FLAG(int64_t, pin_version);

namespace ibgraphrag::common {

// --pin_version as the servers' Options take it: nullopt for "the newest", else the version.
// INVALID_ARGUMENT naming the flag when it is negative.
absl::StatusOr<std::optional<int64_t>> PinnedVersionFromFlag();

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_PIN_VERSION_FLAG_H_
