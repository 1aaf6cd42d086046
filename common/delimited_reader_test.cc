#include "common/delimited_reader.h"

#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// (Formerly tools/eval's CsvTest.)
TEST(ParseDelimitedTextTest, QuotedFieldsKeepCommasQuotesNewlinesAndRecordLines) {
  auto records =
      ParseDelimitedText("a,\"b, \"\"c\"\"\",d\r\n\"multi\nline\",x,\n\nlast\n", "f.csv");
  ASSERT_OK(records);
  ASSERT_EQ(records->size(), 3u);
  EXPECT_THAT((*records)[0].fields, ElementsAre("a", "b, \"c\"", "d"));
  EXPECT_EQ((*records)[0].line, 1);
  EXPECT_THAT((*records)[1].fields, ElementsAre("multi\nline", "x", ""));
  EXPECT_EQ((*records)[1].line, 2);
  EXPECT_THAT((*records)[2].fields, ElementsAre("last"));
  EXPECT_EQ((*records)[2].line, 5);
}

// (Formerly alignment eval's ParseCsvTest.)
TEST(ParseDelimitedTextTest, LastRecordWithTrailingNewlineAndEmptyLastField) {
  auto records = ParseDelimitedText("a,\"b, \"\"c\"\"\",d\r\n\"multi\nline\",x,\n", "f.csv");
  ASSERT_OK(records);
  ASSERT_EQ(records->size(), 2u);
  EXPECT_THAT((*records)[0].fields, ElementsAre("a", "b, \"c\"", "d"));
  EXPECT_THAT((*records)[1].fields, ElementsAre("multi\nline", "x", ""));
}

TEST(ParseDelimitedTextTest, UnclosedQuoteNamesItsLine) {
  auto records = ParseDelimitedText("a,b\nc,\"open\n...", "f.csv");
  ASSERT_THAT(records, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("f.csv:2: quoted field is never closed")));
}

TEST(ParseDelimitedTextTest, TextAfterClosingQuoteNamesItsLine) {
  auto records = ParseDelimitedText("h1,h2\nok,\"x\"y\n", "g.csv");
  ASSERT_THAT(records, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("g.csv:2: text after a closing quote")));
}

TEST(ParseDelimitedTextTest, TabDelimiterAndNoFinalNewline) {
  auto records = ParseDelimitedText("id\tname\n1\t\"a\tb\"\r\n2\t", "t.tsv", '\t');
  ASSERT_OK(records);
  ASSERT_EQ(records->size(), 3u);
  EXPECT_THAT((*records)[1].fields, ElementsAre("1", "a\tb"));
  EXPECT_THAT((*records)[2].fields, ElementsAre("2", ""));
  EXPECT_EQ((*records)[2].line, 3);
}

TEST(ParseDelimitedTextTest, EmptyTextHasNoRecords) {
  auto records = ParseDelimitedText("", "e.csv");
  ASSERT_OK(records);
  EXPECT_TRUE(records->empty());
}

// (Formerly kgstore import's ParseCsvLineTest.)
TEST(SplitQuotedLineTest, HandlesQuotesEscapedQuotesAndEmptyFields) {
  std::vector<std::string> fields;
  ASSERT_TRUE(SplitQuotedLine(R"(plain,"with, comma","say ""hi""",,"")", ',', &fields));
  EXPECT_THAT(fields, ElementsAre("plain", "with, comma", "say \"hi\"", "", ""));
  ASSERT_TRUE(SplitQuotedLine("a,b,", ',', &fields));
  EXPECT_THAT(fields, ElementsAre("a", "b", ""));
}

TEST(SplitQuotedLineTest, RejectsUnclosedQuoteAndTextAfterQuote) {
  std::vector<std::string> fields;
  EXPECT_FALSE(SplitQuotedLine(R"(a,"unclosed)", ',', &fields));
  EXPECT_FALSE(SplitQuotedLine(R"(a,"x"y,b)", ',', &fields));
}

// (Formerly kgstore import's SplitTsvTest.)
TEST(SplitUnquotedLineTest, KeepsEmptyFields) {
  std::vector<absl::string_view> fields;
  SplitUnquotedLine("a\t\tc\t", '\t', &fields);
  EXPECT_THAT(fields, ElementsAre("a", "", "c", ""));
}

TEST(FindColumnTest, IgnoresSurroundingWhitespace) {
  const std::vector<std::string> header = {"id", " question ", "answer"};
  EXPECT_EQ(FindColumn(header, "question"), 1);
  EXPECT_EQ(FindColumn(header, "answer"), 2);
  EXPECT_EQ(FindColumn(header, "missing"), -1);
}

}  // namespace
}  // namespace ibgraphrag::common
