// The gateway's API-key file (services/gateway/api_keys.h ParseApiKeys): a mounted secret an
// operator edits by hand.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/gateway/api_keys.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ibgraphrag::fuzz::Check;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<ibgraphrag::gateway::ApiKeyEntry>> keys =
      ibgraphrag::gateway::ParseApiKeys(text);
  if (!keys.ok()) {
    Check(keys.status().code() == absl::StatusCode::kInvalidArgument &&
              keys.status().message().find("line") != absl::string_view::npos,
          "a malformed key file is not INVALID_ARGUMENT naming the line");
    return 0;
  }
  std::set<std::string> ids;
  for (const auto& entry : *keys) {
    Check(!entry.key_id.empty(), "a key with an empty id was accepted");
    Check(ids.insert(entry.key_id).second, "a duplicate key id was accepted");
  }
  return 0;
}
