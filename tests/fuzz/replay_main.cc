// The main of a fuzz target when libFuzzer is not linked (any compiler, ctest's
// fuzz_regression_test): feeds every file named on the command line, and every file under every
// directory named, to LLVMFuzzerTestOneInput once. A crash or failed invariant aborts the
// process (a test failure); a missing path is an error too, so a renamed corpus cannot pass
// silently.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool RunFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

// Runs every regular file under `root` (or `root` itself); -1 when it is missing or unreadable.
int RunPath(const std::filesystem::path& root) {
  std::error_code error;
  if (std::filesystem::is_regular_file(root, error)) return RunFile(root) ? 1 : -1;
  if (!std::filesystem::is_directory(root, error)) {
    std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", root.c_str());
    return -1;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, error)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (error) {
    std::fprintf(stderr, "replay: cannot list %s: %s\n", root.c_str(), error.message().c_str());
    return -1;
  }
  std::sort(files.begin(), files.end());  // a stable order makes failures reproducible
  for (const auto& file : files) {
    if (!RunFile(file)) return -1;
  }
  return static_cast<int>(files.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  int total = 0;
  for (int i = 1; i < argc; ++i) {
    const int count = RunPath(argv[i]);
    if (count < 0) return 1;
    total += count;
  }
  std::fprintf(stderr, "replay: %d inputs ran without a crash\n", total);
  return 0;
}
