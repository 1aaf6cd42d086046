// The Python client (clients/python) against the all-in-one `ibgraphrag` binary over TLS with an
// API key, on artifacts built in the test: starts the server, then runs the client's unittest
// module (tests/test_client.py, which also runs examples/ask.py) with Debian's /usr/bin/python3.
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::clients {
namespace {

using ::ibgraphrag::common::test_util::MakeTempDir;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;

// The interpreter whose packages install_deps.sh installs (python3-grpcio, python3-protobuf); a
// python3 earlier on PATH (pyenv, venv) may lack them.
constexpr char kPython[] = "/usr/bin/python3";

std::string SourceDir() {
  const char* dir = std::getenv("IBGR_SOURCE_DIR");
  return dir == nullptr ? std::string(".") : std::string(dir);
}

TEST(PythonClientTest, UnitTestsPassAgainstTheAllInOneServerOverTlsWithApiKey) {
  int rc = -1;
  auto probe = common::test_util::RunCommand(
      absl::StrCat(kPython, " -c 'import grpc, google.protobuf' 2>&1"), &rc);
  ASSERT_TRUE(probe.ok() && rc == 0)
      << kPython << " lacks grpc/protobuf (scripts/install_deps.sh): " << probe.value_or("");

  const std::string dir = MakeTempDir("python-client");
  gateway::testing::PublishSmallSuite(dir + "/art");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  std::filesystem::create_directories(dir + "/certs");
  auto certs = common::test_util::MakeTestCertificates(dir + "/certs");
  ASSERT_OK(certs);
  const std::string key = "python-key-123";
  common::test_util::WriteFileOrDie(dir + "/api_keys",
                                    absl::StrCat("notebook:", common::Sha256Hex(key), "\n"));
  common::test_util::WriteFileOrDie(
      dir + "/server.textproto",
      absl::StrCat("tls { cert_file: \"", certs->server_cert, "\" key_file: \"", certs->server_key,
                   "\" }\ntermination_grace_seconds: 0\n"));
  auto process =
      Subprocess::Start({BinDir() + "/ibgraphrag", "--base=" + dir + "/art", "--host=127.0.0.1",
                         "--port=0", "--metrics_port=-1", "--config=" + dir + "/server.textproto",
                         "--api_keys_file=" + dir + "/api_keys", "--device=cpu"},
                        dir + "/ibgraphrag.log");
  ASSERT_OK(process);
  auto line = process->WaitForLogLine("\"msg\":\"ibgraphrag: ready\"", absl::Seconds(90));
  ASSERT_OK(line);
  const int port = nlohmann::json::parse(*line)["port"].get<int>();

  auto out = common::test_util::RunCommand(
      absl::StrCat("cd ", SourceDir(), "/clients/python && IBGR_TEST_TARGET=127.0.0.1:", port,
                   " IBGR_TEST_CA=", certs->ca_cert, " IBGR_TEST_API_KEY=", key,
                   " PYTHONDONTWRITEBYTECODE=1 ", kPython,
                   " -B -m unittest -v tests.test_client 2>&1"),
      &rc);
  ASSERT_OK(out);
  EXPECT_EQ(rc, 0) << *out << "\n" << process->ReadLog();
  // Every case ran (unittest also says OK when it found none).
  EXPECT_THAT(*out, ::testing::HasSubstr("Ran 7 tests"));

  auto exit = process->Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(exit);
  EXPECT_EQ(*exit, 0) << process->ReadLog();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ibgraphrag::clients
