// Test helpers for integration tests that run the real binaries: start a process with its
// stderr captured to a file, wait for its "ready" log line, kill it (gracefully or with SIGKILL).
#ifndef IBGRAPHRAG_TESTS_TEST_UTIL_SUBPROCESS_H_
#define IBGRAPHRAG_TESTS_TEST_UTIL_SUBPROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace ibgraphrag::testing {

// Directory of the built binaries ($IBGR_BIN_DIR, set by ctest).
std::string BinDir();
// The real data directory ($IBGR_DATA_DIR, set by ctest).
std::string DataDir();

class Subprocess {
 public:
  // Starts `argv` (argv[0] is a path) with stdout+stderr appended to `log_path`.
  static absl::StatusOr<Subprocess> Start(const std::vector<std::string>& argv,
                                          const std::string& log_path);
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  ~Subprocess();  // SIGKILLs a process still running

  pid_t pid() const { return pid_; }
  const std::string& log_path() const { return log_path_; }
  // Waits until a line this process logged contains `needle` and returns that line (lines an
  // earlier process appended to the same log are skipped); DEADLINE_EXCEEDED after `timeout`,
  // FAILED_PRECONDITION (with the log tail) when the process exits first.
  absl::StatusOr<std::string> WaitForLogLine(const std::string& needle, absl::Duration timeout);
  // Waits for the JSON log line with "msg":"<service>: ready" and returns its "port" field.
  absl::StatusOr<int> WaitForReadyPort(const std::string& service, absl::Duration timeout);
  // Sends `signal` and waits for exit; returns the exit status as from waitpid.
  absl::StatusOr<int> Stop(int signal, absl::Duration timeout);
  // The whole log so far (including earlier processes' runs appended to the same file).
  std::string ReadLog() const;
  // Only what this process has logged so far.
  std::string ReadOwnLog() const;
  bool Running();
  // Exit code once the process has been reaped (128 + signal when killed); -1 before.
  int exit_code() const { return exit_code_; }

 private:
  Subprocess(pid_t pid, std::string log_path, size_t log_offset)
      : pid_(pid), log_path_(std::move(log_path)), log_offset_(log_offset) {}
  pid_t pid_ = -1;
  std::string log_path_;
  // Size of the log when this process started: its own output begins there.
  size_t log_offset_ = 0;
  int exit_code_ = -1;
};

// Runs a command to completion (stdout+stderr to `log_path`); returns its exit code.
absl::StatusOr<int> RunToCompletion(const std::vector<std::string>& argv,
                                    const std::string& log_path, absl::Duration timeout);

}  // namespace ibgraphrag::testing

#endif  // IBGRAPHRAG_TESTS_TEST_UTIL_SUBPROCESS_H_
