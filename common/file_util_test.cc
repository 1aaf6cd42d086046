#include "common/file_util.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> FileNamesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void WritePlainFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

TEST(ReadFileToStringTest, ReadsEveryByte) {
  test_util::ScratchDir dir("file-util");
  std::string contents("a\0b\r\nlast", 9);
  contents += std::string(200'000, 'x');  // more than one read chunk
  WritePlainFile(dir.path() + "/f.bin", contents);
  absl::StatusOr<std::string> read = ReadFileToString(dir.path() + "/f.bin");
  ASSERT_OK(read);
  EXPECT_EQ(*read, contents);
}

TEST(ReadFileToStringTest, MissingFileIsNotFoundNamingThePath) {
  test_util::ScratchDir dir("file-util");
  const std::string path = dir.path() + "/absent.txt";
  absl::StatusOr<std::string> read = ReadFileToString(path);
  EXPECT_THAT(read, StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
}

TEST(ReadFileToStringTest, FolderIsAnErrorNamingThePath) {
  test_util::ScratchDir dir("file-util");
  absl::StatusOr<std::string> read = ReadFileToString(dir.path());
  EXPECT_THAT(read, Not(IsOk()));
  EXPECT_THAT(read.status().message(), HasSubstr(dir.path()));
}

TEST(ReadFileNamedByFieldTest, ErrorIsInvalidArgumentNamingFieldAndPath) {
  absl::StatusOr<std::string> read = ReadFileNamedByField("tls.cert_path", "/no/such/cert.pem");
  EXPECT_THAT(read, StatusIs(absl::StatusCode::kInvalidArgument,
                             ::testing::AllOf(HasSubstr("tls.cert_path: "),
                                              HasSubstr("/no/such/cert.pem"))));
}

TEST(WriteStringToFileAtomicTest, CreatesThenReplacesAndLeavesNoTempFiles) {
  test_util::ScratchDir dir("file-util");
  const std::string path = dir.path() + "/manifest.json";
  ASSERT_OK(WriteStringToFileAtomic(path, "first version, longer than the second"));
  EXPECT_EQ(ReadFileToString(path).value(), "first version, longer than the second");
  ASSERT_OK(WriteStringToFileAtomic(path, "second"));
  EXPECT_EQ(ReadFileToString(path).value(), "second");
  EXPECT_THAT(FileNamesIn(dir.path()), ElementsAre("manifest.json"));
}

TEST(WriteStringToFileAtomicTest, FailureLeavesTheOldFileAndNoTempFiles) {
  test_util::ScratchDir dir("file-util");
  const std::string path = dir.path() + "/target";
  // A folder in the way makes the rename fail after the temp file was written.
  std::filesystem::create_directories(path + "/occupied");
  EXPECT_THAT(WriteStringToFileAtomic(path, "data"), Not(IsOk()));
  EXPECT_THAT(FileNamesIn(dir.path()), ElementsAre("target"));
  EXPECT_THAT(WriteStringToFileAtomic(dir.path() + "/no/such/folder/file", "data"), Not(IsOk()));
}

TEST(FsyncDirectoryTest, OkForAFolderErrorForAMissingOne) {
  test_util::ScratchDir dir("file-util");
  EXPECT_OK(FsyncDirectory(dir.path()));
  EXPECT_THAT(FsyncDirectory(dir.path() + "/missing"), StatusIs(absl::StatusCode::kNotFound));
}

// The vectors come from FIPS 180-4 / NIST's examples (they were the tests of the hand-written
// SHA-256 this file replaced).
TEST(Sha256Test, MatchesFipsTestVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  // printf '%s' test | sha256sum
  EXPECT_EQ(Sha256Hex("test"), "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
  EXPECT_EQ(DigestToHex(Sha256("abc")), Sha256Hex("abc"));
}

TEST(Sha256Test, StreamingInOddChunksEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(static_cast<char>((i * 131) & 0xff));
  Sha256Hasher sha;
  size_t offset = 0;
  for (size_t chunk = 1; offset < data.size(); chunk = chunk * 3 % 127 + 1) {
    const size_t n = std::min(chunk, data.size() - offset);
    sha.Update(data.data() + offset, n);
    offset += n;
  }
  EXPECT_EQ(sha.HexDigest(), Sha256Hex(data));
}

TEST(Sha256Test, PaddingBoundariesAroundOneBlock) {
  for (size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u}) {
    const std::string data(n, 'x');
    Sha256Hasher sha;
    for (char c : data) sha.Update(&c, 1);
    EXPECT_EQ(sha.HexDigest(), Sha256Hex(data)) << n;
  }
}

TEST(Sha256Test, DigestDoesNotEndTheRunningHash) {
  Sha256Hasher sha;
  sha.Update("ab");
  EXPECT_EQ(sha.HexDigest(), Sha256Hex("ab"));
  Sha256Hasher copy = sha;
  sha.Update("c");
  EXPECT_EQ(sha.HexDigest(), Sha256Hex("abc"));
  EXPECT_EQ(copy.HexDigest(), Sha256Hex("ab"));
}

TEST(Sha256Test, FileDigestEqualsDigestOfItsBytes) {
  test_util::ScratchDir dir("file-util");
  const std::string path = dir.path() + "/file.bin";
  const std::string content = "line one\nline two\n" + std::string(100'000, 'z');
  WritePlainFile(path, content);
  absl::StatusOr<std::string> digest = Sha256HexOfFile(path);
  ASSERT_OK(digest);
  EXPECT_EQ(*digest, Sha256Hex(content));
  EXPECT_THAT(Sha256HexOfFile(path + ".missing"), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace ibgraphrag::common
