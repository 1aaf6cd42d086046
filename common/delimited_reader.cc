#include "common/delimited_reader.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace ibgraphrag::common {
namespace {

// How the field ReadField just read ended.
enum class FieldEnd {
  kDelimiter,       // more fields of this record follow
  kRecordEnd,       // a line end closed the record; more text follows
  kTextEnd,         // the text ended
  kUnclosedQuote,   // a quoted field runs to the end of the text
  kTextAfterQuote,  // a closing quote is followed by something other than a delimiter or line end
};

// Whether text[i] starts a line end ("\n", or "\r\n", or a final "\r").
bool IsLineEndAt(absl::string_view text, size_t i) {
  return text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] == '\n'));
}

// Steps over the line end or delimiter at *pos (if any) and says which it was.
FieldEnd ConsumeFieldEnd(absl::string_view text, char delimiter, size_t* pos, int* newlines) {
  const size_t i = *pos;
  if (i == text.size()) return FieldEnd::kTextEnd;
  if (text[i] == delimiter) {
    *pos = i + 1;
    return FieldEnd::kDelimiter;
  }
  if (!IsLineEndAt(text, i)) return FieldEnd::kTextAfterQuote;
  *pos = i + (text[i] == '\r' ? 2 : 1);
  if (*pos > text.size()) {  // a final lone "\r"
    *pos = text.size();
    return FieldEnd::kTextEnd;
  }
  ++*newlines;
  return *pos == text.size() ? FieldEnd::kTextEnd : FieldEnd::kRecordEnd;
}

FieldEnd ReadQuotedField(absl::string_view text, char delimiter, size_t* pos, std::string* field,
                         int* newlines) {
  size_t i = *pos + 1;  // after the opening quote
  while (true) {
    const size_t quote = text.find('"', i);
    if (quote == absl::string_view::npos) return FieldEnd::kUnclosedQuote;
    const absl::string_view piece = text.substr(i, quote - i);
    *newlines += static_cast<int>(std::count(piece.begin(), piece.end(), '\n'));
    field->append(piece.data(), piece.size());
    if (quote + 1 < text.size() && text[quote + 1] == '"') {
      field->push_back('"');
      i = quote + 2;
      continue;
    }
    *pos = quote + 1;
    return ConsumeFieldEnd(text, delimiter, pos, newlines);
  }
}

// Reads the field that starts at *pos into *field and moves *pos past what ended it.
FieldEnd ReadField(absl::string_view text, char delimiter, size_t* pos, std::string* field,
                   int* newlines) {
  field->clear();
  if (*pos < text.size() && text[*pos] == '"') {
    return ReadQuotedField(text, delimiter, pos, field, newlines);
  }
  size_t stop = *pos;
  while (stop < text.size() && text[stop] != delimiter && !IsLineEndAt(text, stop)) ++stop;
  field->assign(text.data() + *pos, stop - *pos);
  *pos = stop;
  return ConsumeFieldEnd(text, delimiter, pos, newlines);
}

bool IsBlank(const DelimitedRecord& record) {
  return record.fields.size() == 1 && record.fields[0].empty();
}

}  // namespace

absl::StatusOr<std::vector<DelimitedRecord>> ParseDelimitedText(absl::string_view text,
                                                                absl::string_view source,
                                                                char delimiter) {
  std::vector<DelimitedRecord> records;
  int line = 1;
  size_t pos = 0;
  while (pos < text.size()) {
    DelimitedRecord record;
    record.line = line;
    FieldEnd end = FieldEnd::kDelimiter;
    while (end == FieldEnd::kDelimiter) {
      const int field_line = line;
      std::string field;
      end = ReadField(text, delimiter, &pos, &field, &line);
      if (end == FieldEnd::kUnclosedQuote) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ":", field_line, ": quoted field is never closed"));
      }
      if (end == FieldEnd::kTextAfterQuote) {
        return absl::InvalidArgumentError(absl::StrCat(
            source, ":", line, ": text after a closing quote (quote the whole field)"));
      }
      record.fields.push_back(std::move(field));
    }
    if (!IsBlank(record)) records.push_back(std::move(record));
  }
  return records;
}

bool SplitQuotedLine(absl::string_view line, char delimiter, std::vector<std::string>* fields) {
  size_t count = 0;
  size_t pos = 0;
  int newlines = 0;
  FieldEnd end = FieldEnd::kDelimiter;
  while (end == FieldEnd::kDelimiter) {
    if (count == fields->size()) fields->emplace_back();
    end = ReadField(line, delimiter, &pos, &(*fields)[count++], &newlines);
  }
  fields->resize(count);
  return end == FieldEnd::kTextEnd || end == FieldEnd::kRecordEnd;
}

void SplitUnquotedLine(absl::string_view line, char delimiter,
                       std::vector<absl::string_view>* fields) {
  fields->clear();
  size_t start = 0;
  while (true) {
    const size_t at = line.find(delimiter, start);
    if (at == absl::string_view::npos) {
      fields->push_back(line.substr(start));
      return;
    }
    fields->push_back(line.substr(start, at - start));
    start = at + 1;
  }
}

int FindColumn(const std::vector<std::string>& header, absl::string_view name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (absl::StripAsciiWhitespace(header[i]) == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace ibgraphrag::common
