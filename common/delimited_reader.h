// The suite's one reader for comma- and tab-separated text: RFC 4180 quoting ("a, b" is one field,
// "" inside quotes is a quote, a quoted field may span lines), a configurable delimiter, header
// lookup by column name and errors of the form "<file>:<line>: <reason>". Importers that stream
// multi-GB files split line by line (SplitQuotedLine, SplitUnquotedLine on the lines a
// LineReader yields); loaders of small files parse the whole text (ParseDelimitedText).
#ifndef IBGRAPHRAG_COMMON_DELIMITED_READER_H_
#define IBGRAPHRAG_COMMON_DELIMITED_READER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ibgraphrag::common {

// One record and the 1-based line it starts on.
struct DelimitedRecord {
  int line = 0;
  std::vector<std::string> fields;
};

// Every record of `text` (CRLF or LF line ends; blank lines are not records). INVALID_ARGUMENT
// "<source>:<line>: <reason>" for a quote that is never closed (the line it opened on) or text
// between a closing quote and the next delimiter.
absl::StatusOr<std::vector<DelimitedRecord>> ParseDelimitedText(absl::string_view text,
                                                                absl::string_view source,
                                                                char delimiter = ',');

// Splits one line, without its line end, into unquoted fields, reusing the strings of `fields`.
// Returns false when a quoted field is not closed on this line or a closing quote is followed by
// something other than the delimiter.
bool SplitQuotedLine(absl::string_view line, char delimiter, std::vector<std::string>* fields);

// Splits one line at every `delimiter` with no quoting (TSV as PostgreSQL COPY or Hetionet write
// it); the fields are views into `line` and empty fields are kept.
void SplitUnquotedLine(absl::string_view line, char delimiter,
                       std::vector<absl::string_view>* fields);

// The index of the column called `name` (surrounding whitespace ignored) in a header record, or
// -1 when there is none.
int FindColumn(const std::vector<std::string>& header, absl::string_view name);

}  // namespace ibgraphrag::common

#endif  // IBGRAPHRAG_COMMON_DELIMITED_READER_H_
