// The JSON body of an embeddings answer (common/openai_wire.h ParseEmbeddingsBody): bytes a
// remote embedding server chose. The first byte is the number of inputs the caller sent.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/openai_wire.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ibgraphrag::fuzz::Check;
  if (size == 0) return 0;
  const size_t input_count = data[0] % 8;
  const absl::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  absl::StatusOr<ibgraphrag::common::EmbeddingsResponse> parsed =
      ibgraphrag::common::ParseEmbeddingsBody("fuzz", body, input_count);
  if (!parsed.ok()) {
    Check(parsed.status().code() == absl::StatusCode::kDataLoss,
          "a malformed embeddings body is not DATA_LOSS (the documented code)");
    return 0;
  }
  // Every input got exactly one non-empty vector: nothing silently missing or doubled.
  Check(parsed->vectors.size() == input_count, "embeddings count differs from the inputs");
  for (const std::vector<float>& vector : parsed->vectors) {
    Check(!vector.empty(), "an accepted embedding is empty");
  }
  return 0;
}
