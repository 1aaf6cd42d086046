#include "common/pin_version_flag.h"

#include "absl/flags/flag.h"
#include "absl/status/status.h"

ABSL_FLAG(int64_t, pin_version, 0,
          "serve this artifact version (<base>/<kind>/<version>/) instead of the newest; "
          "0 = the newest");

namespace ibgraphrag::common {

absl::StatusOr<std::optional<int64_t>> PinnedVersionFromFlag() {
  const int64_t version = absl::GetFlag(FLAGS_pin_version);
  if (version < 0) return absl::InvalidArgumentError("--pin_version: must be >= 0 (0 = newest)");
  if (version == 0) return std::nullopt;
  return version;
}

}  // namespace ibgraphrag::common
