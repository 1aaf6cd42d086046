#include "tests/test_util/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::testing {

std::string BinDir() {
  const char* env = std::getenv("IBGR_BIN_DIR");
  return env != nullptr ? env : "build/bin";
}

std::string DataDir() {
  const char* env = std::getenv("IBGR_DATA_DIR");
  return env != nullptr ? env : "../shared/data";
}

absl::StatusOr<Subprocess> Subprocess::Start(const std::vector<std::string>& argv,
                                             const std::string& log_path) {
  if (argv.empty()) return absl::InvalidArgumentError("argv: empty");
  // The log may hold an earlier run's lines (a restart reuses it); remember where ours start so
  // waiting for "ready" cannot match the previous process's line.
  struct stat st {};
  const size_t log_offset = stat(log_path.c_str(), &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return Subprocess(pid, log_path, log_offset);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(other.pid_),
      log_path_(std::move(other.log_path_)),
      log_offset_(other.log_offset_),
      exit_code_(other.exit_code_) {
  other.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) (void)Stop(SIGKILL, absl::Seconds(5));
    pid_ = other.pid_;
    log_path_ = std::move(other.log_path_);
    log_offset_ = other.log_offset_;
    exit_code_ = other.exit_code_;
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) (void)Stop(SIGKILL, absl::Seconds(5));
}

std::string Subprocess::ReadLog() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Subprocess::ReadOwnLog() const {
  std::string log = ReadLog();
  return log.size() > log_offset_ ? log.substr(log_offset_) : std::string();
}

bool Subprocess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
    return false;
  }
  return true;
}

absl::StatusOr<std::string> Subprocess::WaitForLogLine(const std::string& needle,
                                                       absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    const std::string log = ReadOwnLog();
    for (absl::string_view line : absl::StrSplit(log, '\n')) {
      if (line.find(needle) != absl::string_view::npos) return std::string(line);
    }
    if (!Running()) {
      return absl::FailedPreconditionError(
          absl::StrCat("process exited before logging '", needle, "'; log:\n",
                       log.substr(log.size() > 4000 ? log.size() - 4000 : 0)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("no log line with '", needle, "'"));
}

absl::StatusOr<int> Subprocess::WaitForReadyPort(const std::string& service,
                                                 absl::Duration timeout) {
  absl::StatusOr<std::string> line =
      WaitForLogLine(absl::StrCat("\"msg\":\"", service, ": ready\""), timeout);
  if (!line.ok()) return line.status();
  nlohmann::json j = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("port")) {
    return absl::InternalError(absl::StrCat("ready line without port: ", *line));
  }
  return j["port"].get<int>();
}

absl::StatusOr<int> Subprocess::Stop(int signal, absl::Duration timeout) {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  kill(pid_, signal);
  const absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (true) {
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (absl::Now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return absl::DeadlineExceededError("process did not exit in time; killed");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return status;
}

absl::StatusOr<int> RunToCompletion(const std::vector<std::string>& argv,
                                    const std::string& log_path, absl::Duration timeout) {
  absl::StatusOr<Subprocess> p = Subprocess::Start(argv, log_path);
  if (!p.ok()) return p.status();
  const absl::Time deadline = absl::Now() + timeout;
  while (p->Running()) {
    if (absl::Now() > deadline) {
      (void)p->Stop(SIGKILL, absl::Seconds(5));
      return absl::DeadlineExceededError(absl::StrCat(argv[0], " did not finish in time"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return p->exit_code();
}

}  // namespace ibgraphrag::testing
