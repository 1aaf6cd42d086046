#include "common/test_util/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common::test_util {

std::string MakeTempDir(absl::string_view name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::string root = base != nullptr && *base != '\0' ? base : "/tmp";
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  std::string pattern = absl::StrCat(root, "/ibgr-", name, "-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
  }
  return pattern;
}

ScratchDir::ScratchDir(absl::string_view name) : path_(MakeTempDir(name)) {}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ibgraphrag::common::test_util
