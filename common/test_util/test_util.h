// Helpers for common/ tests: shell commands, temp dirs, a plain-socket HTTP GET, openssl test
// certificates, a health-check client and the EchoTestService implementation.
#ifndef IBGRAPHRAG_COMMON_TEST_UTIL_TEST_UTIL_H_
#define IBGRAPHRAG_COMMON_TEST_UTIL_TEST_UTIL_H_

#include <grpcpp/channel.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/test_util/temp_dir.h"  // MakeTempDir, ScratchDir
#include "common/testdata/echo_test.grpc.pb.h"
#include "grpc/health/v1/health.pb.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common::test_util {

// Runs `command` through /bin/sh with stderr merged into stdout; returns the output and sets
// *exit_code. INTERNAL when the shell cannot be started.
absl::StatusOr<std::string> RunCommand(const std::string& command, int* exit_code);

// Whether `program` is on PATH.
bool HaveProgram(const std::string& program);

// `program` on PATH, as an assertion whose failure names the Debian `package` to install. A test
// that needs a tool fails when the tool is missing, never skips: a skipped check vanishes
// silently in CI (scripts/install_deps.sh installs every tool the tests use).
//   ASSERT_TRUE(ProgramInstalled("promtool", "prometheus"));
::testing::AssertionResult ProgramInstalled(const std::string& program, const std::string& package);

// Writes `contents` to `path`; fails the current test on error.
void WriteFileOrDie(const std::string& path, const std::string& contents);

// GET http://127.0.0.1:<port><path> over a plain socket (HTTP/1.0). Returns the body of a 200
// response; UNAVAILABLE when the connection fails, INTERNAL for any other status.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

// PEM files made with the openssl CLI: a CA, a server certificate for localhost/127.0.0.1, a
// client certificate from the same CA, and a client certificate from an unrelated CA.
struct TestCertificates {
  std::string ca_cert;
  std::string server_cert;
  std::string server_key;
  std::string client_cert;
  std::string client_key;
  std::string rogue_client_cert;
  std::string rogue_client_key;
};
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir);

// grpc.health.v1.Health/Check for `service` over `channel` (10 s deadline).
absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> CheckHealth(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& service);

// Server reflection (grpc.reflection.v1alpha) without its headers, which Debian does not ship:
// the message types come from the descriptors libgrpc++_reflection registers.
// The names from ListServices.
absl::StatusOr<std::vector<std::string>> ReflectionListServices(
    const std::shared_ptr<grpc::Channel>& channel);
// The names of the files FileContainingSymbol returns for `symbol` (the defining file first).
absl::StatusOr<std::vector<std::string>> ReflectionFilesContainingSymbol(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& symbol);

// EchoTestService for tests. Thread-safe.
class EchoTestServiceImpl final : public ibgraphrag::common::testdata::EchoTestService::Service {
 public:
  grpc::Status Echo(grpc::ServerContext* context,
                    const ibgraphrag::common::testdata::EchoRequest* request,
                    ibgraphrag::common::testdata::EchoResponse* response) override;
  grpc::Status Forward(grpc::ServerContext* context,
                       const ibgraphrag::common::testdata::EchoRequest* request,
                       ibgraphrag::common::testdata::EchoResponse* response) override;

  // Where Forward sends calls.
  void SetDownstream(std::shared_ptr<grpc::Channel> channel);

  // Calls seen for `key`.
  int Attempts(const std::string& key);
  // Total Echo calls.
  int TotalCalls();

  // Waits until `count` held calls have started; false on timeout.
  bool WaitForHeldCalls(int count, absl::Duration timeout);
  // Lets every held call (current and future) return OK.
  void ReleaseHeldCalls();
  // Waits until a held call has observed its cancellation; false on timeout.
  bool WaitForObservedCancellation(absl::Duration timeout);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, int> attempts_;
  int total_calls_ = 0;
  int held_calls_started_ = 0;
  int cancellations_observed_ = 0;
  bool released_ = false;
  std::unique_ptr<ibgraphrag::common::testdata::EchoTestService::Stub> downstream_;
};

}  // namespace ibgraphrag::common::test_util

#endif  // IBGRAPHRAG_COMMON_TEST_UTIL_TEST_UTIL_H_
