// The one scratch-folder helper of the suite's tests (RocksDB testharness.h style). Folders go
// under $TEST_TMPDIR, which ctest points at build/Testing/tmp and empties before each run
// (cmake/IbgrTesting.cmake), so a crashed test leaves nothing in /tmp.
#ifndef IBGRAPHRAG_COMMON_TEST_UTIL_TEMP_DIR_H_
#define IBGRAPHRAG_COMMON_TEST_UTIL_TEMP_DIR_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ibgraphrag::common::test_util {

// A new, empty folder named ibgr-<name>-<unique suffix> under $TEST_TMPDIR (or /tmp when the
// test runs outside ctest). Fails the current test when it cannot be made.
std::string MakeTempDir(absl::string_view name = "test");

// A MakeTempDir folder removed, with everything in it, when the object goes away.
class ScratchDir {
 public:
  explicit ScratchDir(absl::string_view name = "scratch");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ibgraphrag::common::test_util

#endif  // IBGRAPHRAG_COMMON_TEST_UTIL_TEMP_DIR_H_
