// Alignment's request checks as a gRPC caller reaches them: the fuzz bytes as a binary
// ibgraphrag.v1.AlignRequest, its options merged over the service defaults (MergeAlignOptions),
// then ValidateText and ValidateMscaOptions (services/alignment/aligner.h).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "common/utf8.h"
#include "ibgraphrag/v1/alignment.pb.h"
#include "services/alignment/aligner.h"
#include "services/alignment/alignment_service_impl.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;

void CheckRefusal(const absl::Status& status) {
  Check(status.code() == absl::StatusCode::kInvalidArgument && !status.message().empty(),
        "a refused AlignRequest is not INVALID_ARGUMENT with a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace alignment = ibgraphrag::alignment;
  ibgraphrag::v1::AlignRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  const absl::Status text = alignment::ValidateText(request.text());
  if (!text.ok()) {
    CheckRefusal(text);
  } else {
    Check(!request.text().empty() && request.text().size() <= 16 * 1024 &&
              ibgraphrag::common::IsValidUtf8(request.text()),
          "a text that is empty, > 16 KiB or not UTF-8 was accepted");
  }
  const alignment::MscaOptions options =
      alignment::MergeAlignOptions(request.options(), alignment::MscaOptions{});
  const absl::Status valid = alignment::ValidateMscaOptions(options);
  if (!valid.ok()) {
    CheckRefusal(valid);
    return 0;
  }
  // What the aligner relies on: finite weights in [0, 1] and a bounded candidate count.
  Check(options.lambda >= 0 && options.lambda <= 1 && options.tau >= 0 && options.tau <= 1,
        "lambda/tau outside [0, 1] (or NaN) was accepted");
  Check(options.top_k >= 1 && options.top_k <= 1000, "top_k outside 1..1000 was accepted");
  return 0;
}
