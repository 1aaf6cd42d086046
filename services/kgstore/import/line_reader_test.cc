#include "services/kgstore/import/line_reader.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;

std::vector<std::string> ReadAll(const std::string& path, absl::Status* status = nullptr) {
  auto reader = LineReader::Open(path);
  EXPECT_OK(reader);
  std::vector<std::string> lines;
  if (!reader.ok()) return lines;
  absl::string_view line;
  while ((*reader)->Next(&line)) lines.emplace_back(line);
  if (status != nullptr) *status = (*reader)->status();
  return lines;
}

TEST(LineReaderTest, ReadsPlainLinesWithCrlfAndMissingFinalNewline) {
  const std::string path = testing_util::TempPath("plain.tsv");
  testing_util::WriteFile(path, "a\tb\r\n\nlast");
  EXPECT_THAT(ReadAll(path), ElementsAre("a\tb", "", "last"));
}

TEST(LineReaderTest, GzipRoundTripKeepsEveryLineAndNumbersThem) {
  // Enough lines, and one line longer than the internal buffer, to cross many refills.
  std::string content;
  std::vector<std::string> expected;
  for (int i = 0; i < 50'000; ++i) {
    expected.push_back(absl::StrCat("row ", i, "\tvalue ", i * 7));
    if (i == 1234) expected.back() += std::string(700'000, 'z');
    absl::StrAppend(&content, expected.back(), "\n");
  }
  const std::string path = testing_util::TempPath("lines.txt.gz");
  testing_util::WriteGzipFile(path, content);

  auto reader = LineReader::Open(path);
  ASSERT_OK(reader);
  EXPECT_TRUE((*reader)->is_gzip());
  absl::string_view line;
  size_t n = 0;
  while ((*reader)->Next(&line)) {
    ASSERT_LT(n, expected.size());
    ASSERT_EQ(line, expected[n]) << "line " << n + 1;
    ++n;
    ASSERT_EQ((*reader)->line_number(), static_cast<int64_t>(n));
  }
  EXPECT_OK((*reader)->status());
  EXPECT_EQ(n, expected.size());
  absl::StatusOr<std::string> digest = (*reader)->FinishSha256();
  ASSERT_OK(digest);
  // The manifest digest is of the bytes on disk, i.e. the compressed file.
  EXPECT_EQ(*digest, common::Sha256Hex(testing_util::ReadFile(path)));
}

TEST(LineReaderTest, DetectsGzipByContentNotByName) {
  const std::string path = testing_util::TempPath("misnamed.tsv");
  testing_util::WriteGzipFile(path, "x\ny\n");
  EXPECT_THAT(ReadAll(path), ElementsAre("x", "y"));
}

TEST(LineReaderTest, ReadsConcatenatedGzipMembers) {
  const std::string a = testing_util::TempPath("a.gz");
  const std::string b = testing_util::TempPath("b.gz");
  testing_util::WriteGzipFile(a, "first\n");
  testing_util::WriteGzipFile(b, "second\n");
  const std::string both = testing_util::TempPath("both.gz");
  testing_util::WriteFile(both, testing_util::ReadFile(a) + testing_util::ReadFile(b));
  EXPECT_THAT(ReadAll(both), ElementsAre("first", "second"));
}

TEST(LineReaderTest, TruncatedGzipIsDataLossNotACrash) {
  std::string content;
  for (int i = 0; i < 20'000; ++i) absl::StrAppend(&content, "line number ", i, "\n");
  const std::string full = testing_util::TempPath("full.gz");
  testing_util::WriteGzipFile(full, content);
  const std::string bytes = testing_util::ReadFile(full);
  const std::string cut = testing_util::TempPath("cut.gz");
  testing_util::WriteFile(cut, bytes.substr(0, bytes.size() / 2));
  absl::Status status;
  const std::vector<std::string> lines = ReadAll(cut, &status);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss, ::testing::HasSubstr(cut)));
  EXPECT_LT(lines.size(), 20'000u);
}

TEST(LineReaderTest, FinishSha256OfPlainFileCoversUnreadBytes) {
  const std::string path = testing_util::TempPath("partial.txt");
  const std::string content = "one\ntwo\nthree\n";
  testing_util::WriteFile(path, content);
  auto reader = LineReader::Open(path);
  ASSERT_OK(reader);
  absl::string_view line;
  ASSERT_TRUE((*reader)->Next(&line));
  absl::StatusOr<std::string> digest = (*reader)->FinishSha256();
  ASSERT_OK(digest);
  EXPECT_EQ(*digest, common::Sha256Hex(content));
  EXPECT_FALSE((*reader)->Next(&line));
}

TEST(LineReaderTest, MissingFileIsNotFoundNamingThePath) {
  auto reader = LineReader::Open("/nonexistent/ibgr/file.tsv");
  EXPECT_THAT(reader, StatusIs(absl::StatusCode::kNotFound,
                               ::testing::HasSubstr("/nonexistent/ibgr/file.tsv")));
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
