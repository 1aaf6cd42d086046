#include "tests/fuzz/fuzz_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"

namespace ibgraphrag::fuzz {

void Check(bool condition, absl::string_view what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz invariant violated: %.*s\n", static_cast<int>(what.size()),
               what.data());
  std::abort();
}

void CheckOk(const absl::Status& status, absl::string_view what) {
  Check(status.ok(), absl::StrCat(what, ": ", status.ToString()));
}

void CheckCleanError(const absl::Status& status, absl::string_view what) {
  Check(!status.ok(), absl::StrCat(what, ": expected an error"));
  Check(status.code() != absl::StatusCode::kInternal &&
            status.code() != absl::StatusCode::kUnknown && !status.message().empty(),
        absl::StrCat(what, ": not a clean error: ", status.ToString()));
}

namespace {

std::string ScratchDir() {
  if (const char* dir = std::getenv("TEST_TMPDIR"); dir != nullptr && *dir != '\0') return dir;
  if (access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return "/tmp";
}

}  // namespace

const std::string& WriteScratchFile(const uint8_t* data, size_t size, absl::string_view suffix) {
  // One path per suffix for the whole process: creating a file per input would flood the dir.
  static auto* paths = new std::map<std::string, std::string>();
  std::string& path = (*paths)[std::string(suffix)];
  if (path.empty()) {
    path = absl::StrCat(ScratchDir(), "/ibgr_fuzz_", getpid(), "_", suffix);
  }
  WriteFileOrAbort(path, absl::string_view(reinterpret_cast<const char*>(data), size));
  return path;
}

void WriteFileOrAbort(const std::string& path, absl::string_view bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  Check(file != nullptr, absl::StrCat("cannot open scratch file ", path));
  const bool written =
      bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  Check(std::fclose(file) == 0 && written, absl::StrCat("cannot write scratch file ", path));
}

}  // namespace ibgraphrag::fuzz
