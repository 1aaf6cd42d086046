#include "services/kgstore/import/sha256.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/kgstore/import/import_test_util.h"

namespace ibgraphrag::kgstore::import_ {
namespace {

TEST(Sha256Test, MatchesFipsTestVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, StreamingInOddChunksEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(static_cast<char>((i * 131) & 0xff));
  Sha256 sha;
  size_t offset = 0;
  for (size_t chunk = 1; offset < data.size(); chunk = chunk * 3 % 127 + 1) {
    const size_t n = std::min(chunk, data.size() - offset);
    sha.Update(data.data() + offset, n);
    offset += n;
  }
  EXPECT_EQ(sha.HexDigest(), Sha256Hex(data));
}

TEST(Sha256Test, PaddingBoundariesAroundOneBlock) {
  // 55, 56 and 64 bytes straddle the length field; compare against streaming byte by byte.
  for (size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u}) {
    const std::string data(n, 'x');
    Sha256 sha;
    for (char c : data) sha.Update(&c, 1);
    EXPECT_EQ(sha.HexDigest(), Sha256Hex(data)) << n;
  }
  EXPECT_EQ(Sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256Test, CpuExtensionPathAgreesWithPortablePath) {
  // On CPUs without SHA extensions both objects run the portable code and this is a tautology;
  // on x86 with SHA-NI (most current servers) it checks the intrinsics path.
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 100'000; ++i) {
    x = x * 1664525u + 1013904223u;
    data.push_back(static_cast<char>(x >> 24));
  }
  for (size_t n : {0u, 1u, 63u, 64u, 65u, 640u, 4097u, 100'000u}) {
    Sha256 fast(/*use_cpu_extensions=*/true), portable(/*use_cpu_extensions=*/false);
    fast.Update(data.data(), n);
    portable.Update(data.data(), n);
    EXPECT_EQ(fast.HexDigest(), portable.HexDigest()) << n;
  }
}

TEST(Sha256Test, FileDigestEqualsDigestOfItsBytes) {
  const std::string path = testing_util::TempPath("file.bin");
  const std::string content = "line one\nline two\n";
  testing_util::WriteFile(path, content);
  absl::StatusOr<std::string> digest = Sha256File(path);
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(*digest, Sha256Hex(content));
  EXPECT_EQ(Sha256File(path + ".missing").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace ibgraphrag::kgstore::import_
