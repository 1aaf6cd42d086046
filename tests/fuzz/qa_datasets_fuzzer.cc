// The QA set loaders (common/qa/qa_datasets.h Parse*), one per format; the first byte picks
// the format. Loaded items must be usable by `ibgr eval` without further checks: a question,
// a gold option inside the options for multiple choice, a gold verdict for claims (true/false,
// PubHealth).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/qa/qa_datasets.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;
namespace eval = ibgraphrag::eval;

absl::StatusOr<std::vector<eval::QaItem>> Parse(int format, absl::string_view content) {
  const std::string path = "fuzz-qa";
  switch (format) {
    case 0:
      return eval::ParseMedQa(content, path);
    case 1:
      return eval::ParseMedMcqa(content, path);
    case 2:
      return eval::ParsePubMedQa(content, path);
    case 3:
      return eval::ParseMmlu(content, path);
    case 4:
      return eval::ParseBiomixMcq(content, path);
    case 5:
      return eval::ParseTrueFalse(content, path);
    default:
      return eval::ParsePubHealth(content, path);
  }
}

void CheckItem(const eval::QaItem& item) {
  namespace v1 = ibgraphrag::v1;
  Check(item.line >= 1, "an item without its line");
  if (item.task == v1::TASK_MULTIPLE_CHOICE) {
    Check(item.gold_index >= 0 && item.gold_index < static_cast<int>(item.options.size()),
          "a gold index outside the options");
    Check(item.gold_text == item.options[item.gold_index], "gold_text is not the gold option");
  }
  if (item.task == v1::TASK_FACT_VERIFICATION) {
    // PubHealth's mixture and unproven claims are UNKNOWN (not enough evidence either way).
    Check(item.gold_label == v1::FACT_LABEL_SUPPORTED ||
              item.gold_label == v1::FACT_LABEL_REFUTED ||
              item.gold_label == v1::FACT_LABEL_UNKNOWN,
          "a claim without a gold verdict");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view content(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto items = Parse(data[0] % 7, content);
  if (!items.ok()) {
    ibgraphrag::fuzz::CheckCleanError(items.status(), "a malformed QA file");
    return 0;
  }
  for (const eval::QaItem& item : *items) CheckItem(item);
  return 0;
}
