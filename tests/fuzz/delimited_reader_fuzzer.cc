// The one CSV/TSV reader (common/delimited_reader.h): ParseDelimitedText on whole files,
// SplitQuotedLine / SplitUnquotedLine on single lines. The first byte picks the delimiter.
// Fields that split must come back the same after quoting and splitting again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "common/delimited_reader.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using ibgraphrag::fuzz::Check;

// RFC 4180 quoting of every field, the inverse SplitQuotedLine must undo.
std::string QuoteAll(const std::vector<std::string>& fields, char delimiter) {
  std::vector<std::string> quoted;
  quoted.reserve(fields.size());
  for (const std::string& field : fields) {
    quoted.push_back(absl::StrCat("\"", absl::StrReplaceAll(field, {{"\"", "\"\""}}), "\""));
  }
  return absl::StrJoin(quoted, std::string(1, delimiter));
}

void CheckWholeText(absl::string_view text, char delimiter) {
  auto records = ibgraphrag::common::ParseDelimitedText(text, "fuzz.csv", delimiter);
  if (!records.ok()) {
    Check(records.status().code() == absl::StatusCode::kInvalidArgument &&
              records.status().message().find("fuzz.csv:") != absl::string_view::npos,
          "a CSV error is not INVALID_ARGUMENT naming fuzz.csv:<line>");
    return;
  }
  int previous_line = 0;
  for (const auto& record : *records) {
    Check(record.line > previous_line, "record lines do not increase");
    Check(!record.fields.empty(), "a record without fields");
    previous_line = record.line;
  }
}

void CheckOneLine(absl::string_view line, char delimiter) {
  std::vector<absl::string_view> unquoted;
  ibgraphrag::common::SplitUnquotedLine(line, delimiter, &unquoted);
  Check(absl::StrJoin(unquoted, std::string(1, delimiter)) == line,
        "SplitUnquotedLine fields do not join back to the line");
  std::vector<std::string> fields;
  if (!ibgraphrag::common::SplitQuotedLine(line, delimiter, &fields)) return;
  Check(!fields.empty(), "SplitQuotedLine accepted a line without fields");
  if (absl::StrContains(line, '\n') || absl::StrContains(line, '\r')) return;
  std::vector<std::string> again;
  Check(ibgraphrag::common::SplitQuotedLine(QuoteAll(fields, delimiter), delimiter, &again) &&
            again == fields,
        "quoted fields do not split back to themselves");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr char kDelimiters[] = {',', '\t', '|', ';'};
  const char delimiter = kDelimiters[data[0] % 4];
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  CheckWholeText(text, delimiter);
  const size_t newline = text.find('\n');
  CheckOneLine(text.substr(0, newline), delimiter);
  return 0;
}
