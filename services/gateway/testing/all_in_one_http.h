// The all-in-one `ibgraphrag` binary on loopback with an HTTP port, for the tests of its HTTP
// front end (http_api_test, evidence_viewer_test): start it over an artifact base (see
// small_suite.h) and stop it checking that it exited cleanly and never logged the question;
// AllInOneHttpTest does both for a whole test suite.
#ifndef IBGRAPHRAG_SERVICES_GATEWAY_TESTING_ALL_IN_ONE_HTTP_H_
#define IBGRAPHRAG_SERVICES_GATEWAY_TESTING_ALL_IN_ONE_HTTP_H_

#include <httplib.h>

#include <csignal>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::gateway::testing {

struct AllInOneHttp {
  std::unique_ptr<ibgraphrag::testing::Subprocess> process;
  // The HTTP port the OS picked (--http_port=0), from the ready log line.
  int http_port = 0;
};

// Starts bin/ibgraphrag over `base` on 127.0.0.1 (gRPC port picked, no metrics port,
// --http_port=0, CPU) with `extra_flags`, logging to `log_path`, and waits for its ready line.
inline absl::StatusOr<AllInOneHttp> StartAllInOneWithHttp(
    const std::string& base, const std::vector<std::string>& extra_flags,
    const std::string& log_path) {
  std::vector<std::string> argv = {ibgraphrag::testing::BinDir() + "/ibgraphrag",
                                   "--base=" + base,
                                   "--host=127.0.0.1",
                                   "--port=0",
                                   "--metrics_port=-1",
                                   "--http_port=0",
                                   "--device=cpu"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  auto process = ibgraphrag::testing::Subprocess::Start(argv, log_path);
  if (!process.ok()) return process.status();
  AllInOneHttp suite;
  suite.process = std::make_unique<ibgraphrag::testing::Subprocess>(*std::move(process));
  auto line = suite.process->WaitForLogLine("\"msg\":\"ibgraphrag: ready\"", absl::Seconds(90));
  if (!line.ok()) return line.status();
  const nlohmann::json ready = nlohmann::json::parse(*line, nullptr, /*allow_exceptions=*/false);
  suite.http_port = ready.is_object() ? ready.value("http_port", 0) : 0;
  if (suite.http_port <= 0) {
    return absl::InternalError(absl::StrCat("no http_port in the ready line: ", *line));
  }
  return suite;
}

// SIGTERM, then: exit code 0, and `never_logged` (question text) nowhere in the log.
inline void StopAndCheckLog(ibgraphrag::testing::Subprocess& process,
                            const std::string& never_logged) {
  auto exit = process.Stop(SIGTERM, absl::Seconds(30));
  EXPECT_TRUE(exit.ok() && *exit == 0) << process.ReadLog();
  EXPECT_THAT(process.ReadLog(), ::testing::Not(::testing::HasSubstr(never_logged)));
}

// A fixture base: one all-in-one process for the whole test suite, over the small suite's
// artifacts (small_suite.h) in a temp dir of its own.
class AllInOneHttpTest : public ::testing::Test {
 protected:
  // Makes the temp dir `dir_` (named after `name`), publishes the small suite under <dir_>/art,
  // writes `files` (name, contents) into dir_, and starts the server with `extra_flags`, in
  // which "$DIR" stands for dir_; `with_documents` publishes the illama mode's documents too.
  static void StartSuite(const std::string& name, const std::vector<std::string>& extra_flags,
                         const std::vector<std::pair<std::string, std::string>>& files = {},
                         bool with_documents = false) {
    dir_ = new std::string(common::test_util::MakeTempDir(name));
    PublishSmallSuite(*dir_ + "/art", with_documents);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    for (const auto& [file, contents] : files) {
      common::test_util::WriteFileOrDie(*dir_ + "/" + file, contents);
    }
    std::vector<std::string> flags;
    for (const std::string& flag : extra_flags) {
      flags.push_back(absl::StrReplaceAll(flag, {{"$DIR", *dir_}}));
    }
    auto suite = StartAllInOneWithHttp(*dir_ + "/art", flags, *dir_ + "/ibgraphrag.log");
    ASSERT_TRUE(suite.ok()) << suite.status();
    suite_ = std::move(suite->process).release();
    http_port_ = suite->http_port;
  }

  // Stops the server (StopAndCheckLog with `never_logged`) and frees the suite's state.
  static void StopSuite(const std::string& never_logged) {
    if (suite_ != nullptr) StopAndCheckLog(*suite_, never_logged);
    delete suite_;
    suite_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static httplib::Client Client() {
    httplib::Client client("127.0.0.1", http_port_);
    client.set_read_timeout(60, 0);
    return client;
  }

  static inline std::string* dir_ = nullptr;
  static inline ibgraphrag::testing::Subprocess* suite_ = nullptr;
  static inline int http_port_ = 0;
};

}  // namespace ibgraphrag::gateway::testing

#endif  // IBGRAPHRAG_SERVICES_GATEWAY_TESTING_ALL_IN_ONE_HTTP_H_
