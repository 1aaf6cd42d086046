// TLS and mTLS of the real binaries on loopback, with certificates made by the openssl CLI for
// each run (common/server_tls_test.cc covers ServerRunner in-process; this covers what it lacks):
// the all-in-one gateway's public port over TLS with an API key (plaintext and clients trusting
// another CA refused), and an internal service (kgstore) requiring client certificates (no
// certificate, a certificate from another CA and an expired one refused), and a server given an
// expired certificate refusing to start. Fails, never skips, when openssl is missing.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/client.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::security {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

namespace pb = ibgraphrag::v1;
using grpc::health::v1::HealthCheckResponse;
using ::ibgraphrag::common::test_util::CheckHealth;
using ::ibgraphrag::common::test_util::RunCommand;
using ::ibgraphrag::common::test_util::TestCertificates;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;

constexpr char kKey[] = "tls-test-key";

// Signs `name`.csr with the test CA (dir/ca.pem, dir/ca.key) into `name`.pem, valid only during
// 2020-01-01: `openssl x509 -req` cannot backdate, `openssl ca` can.
absl::Status SignExpired(const std::string& dir, const std::string& name, const std::string& cn,
                         const std::string& extensions) {
  const std::string config =
      absl::StrCat("[ca]\ndefault_ca = test_ca\n[test_ca]\ndatabase = ", dir,
                   "/index.txt\nnew_certs_dir = ", dir, "\nserial = ", dir,
                   "/serial\ndefault_md = sha256\npolicy = any\n[any]\ncommonName = supplied\n"
                   "[ext]\n",
                   extensions, "\n");
  IBGR_RETURN_IF_ERROR(common::WriteStringToFileAtomic(dir + "/expired_ca.cnf", config));
  const std::string command = absl::StrCat(
      "cd ", dir, " && touch index.txt && (test -f serial || echo 1000 > serial) && ",
      "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ", name,
      ".key -out ", name, ".csr -subj /CN=", cn, " && openssl ca -batch -notext -config ",
      "expired_ca.cnf -extensions ext -cert ca.pem -keyfile ca.key -in ", name, ".csr -out ", name,
      ".pem -startdate 20200101000000Z -enddate 20200102000000Z");
  int exit_code = 0;
  auto output = RunCommand(command, &exit_code);
  if (!output.ok()) return output.status();
  if (exit_code != 0) return absl::InternalError(absl::StrCat("`", command, "`: ", *output));
  return absl::OkStatus();
}

struct Server {
  std::unique_ptr<Subprocess> process;
  int port = 0;
};

class TlsSecurityTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // CI must not pass without these checks: a missing tool is a failure.
    ASSERT_TRUE(common::test_util::ProgramInstalled("openssl", "openssl"));
    dir_ = new std::string(common::test_util::MakeTempDir("security-tls"));
    auto certs = common::test_util::MakeTestCertificates(*dir_);
    ASSERT_OK(certs);
    certs_ = new TestCertificates(*certs);
    ASSERT_OK(SignExpired(*dir_, "expired_server", "localhost",
                          "subjectAltName=DNS:localhost,IP:127.0.0.1"));
    ASSERT_OK(SignExpired(*dir_, "expired_client", "ibgr-expired", "extendedKeyUsage=clientAuth"));
    gateway::testing::PublishSmallSuite(*dir_ + "/art");
    ASSERT_FALSE(HasFatalFailure());
    common::test_util::WriteFileOrDie(*dir_ + "/api_keys",
                                      absl::StrCat("tls:", common::Sha256Hex(kKey), "\n"));

    kgstore_ = Start("kgstore", "kgstore", certs_->server_cert, certs_->server_key, true,
                     {"--base=" + *dir_ + "/art", "--read_only"});
    gateway_ = Start(
        "ibgraphrag", "ibgraphrag", certs_->server_cert, certs_->server_key, false,
        {"--base=" + *dir_ + "/art", "--device=cpu", "--api_keys_file=" + *dir_ + "/api_keys"});
  }

  static void TearDownTestSuite() {
    for (Server** s : {&gateway_, &kgstore_}) {
      delete *s;
      *s = nullptr;
    }
  }

  void SetUp() override {
    ASSERT_NE(certs_, nullptr);
    for (Server* s : {gateway_, kgstore_}) {
      ASSERT_TRUE(s != nullptr && s->port != 0);
    }
  }

  // Starts bin/`binary` with a ServerConfig serving TLS from `cert`/`key`; with
  // `require_client_cert` clients must present a certificate from the test CA.
  static Server* Start(const std::string& binary, const std::string& name, const std::string& cert,
                       const std::string& key, bool require_client_cert,
                       const std::vector<std::string>& flags) {
    auto process = Launch(binary, name, cert, key, require_client_cert, flags);
    EXPECT_OK(process);
    if (!process.ok()) return nullptr;
    auto* server = new Server;
    server->process = std::make_unique<Subprocess>(*std::move(process));
    auto port = server->process->WaitForReadyPort(binary, absl::Seconds(90));
    EXPECT_OK(port) << name << server->process->ReadLog();
    if (port.ok()) server->port = *port;
    return server;
  }

  // Starts the process of Start without waiting for it to be ready.
  static absl::StatusOr<Subprocess> Launch(const std::string& binary, const std::string& name,
                                           const std::string& cert, const std::string& key,
                                           bool require_client_cert,
                                           const std::vector<std::string>& flags) {
    std::string config =
        absl::StrCat("tls {\n  cert_file: \"", cert, "\"\n  key_file: \"", key, "\"\n");
    if (require_client_cert) {
      absl::StrAppend(&config, "  client_ca_file: \"", certs_->ca_cert,
                      "\"\n  require_client_cert: true\n");
    }
    absl::StrAppend(&config, "}\n");
    const std::string config_path = *dir_ + "/" + name + ".textproto";
    common::test_util::WriteFileOrDie(config_path, config);
    std::vector<std::string> argv = {BinDir() + "/" + binary, "--host=127.0.0.1", "--port=0",
                                     "--metrics_port=-1", "--config=" + config_path};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return Subprocess::Start(argv, *dir_ + "/" + name + ".log");
  }

  // A TLS channel to `server` trusting `ca`, presenting `cert`/`key` when given.
  static std::shared_ptr<grpc::Channel> Channel(const Server& server, const std::string& ca,
                                                const std::string& cert = "",
                                                const std::string& key = "") {
    common::ChannelOptions options;
    options.target = absl::StrCat("127.0.0.1:", server.port);
    options.tls.enabled = true;
    options.tls.ca_cert_path = ca;
    options.tls.cert_path = cert;
    options.tls.key_path = key;
    options.retry_unavailable = false;
    auto channel = common::MakeChannel(options);
    EXPECT_OK(channel);
    return channel.ok() ? *channel : nullptr;
  }

  static std::shared_ptr<grpc::Channel> Plaintext(const Server& server) {
    return grpc::CreateChannel(absl::StrCat("127.0.0.1:", server.port),
                               grpc::InsecureChannelCredentials());
  }

  static grpc::Status Ask(const std::shared_ptr<grpc::Channel>& channel, const std::string& key) {
    auto stub = pb::GatewayService::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (!key.empty()) ctx.AddMetadata("x-api-key", key);
    pb::AnswerRequest request;
    request.set_question("Which drug treats type 2 diabetes mellitus?");
    request.add_options("Metformin");
    request.add_options("Polyuria");
    request.set_task(pb::TASK_MULTIPLE_CHOICE);
    pb::AnswerResponse response;
    return stub->Answer(&ctx, request, &response);
  }

  static absl::StatusCode HealthCode(const std::shared_ptr<grpc::Channel>& channel) {
    return CheckHealth(channel, "").status().code();
  }

  static std::string Path(const std::string& file) { return *dir_ + "/" + file; }

  // Occurrences of `text` in the server's log (gRPC logs each refused handshake with OpenSSL's
  // reason: "peer did not return a certificate", "wrong version number", ...).
  static int LogCount(const Server& server, const std::string& text) {
    const std::string log = server.process->ReadLog();
    int count = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++count;
    return count;
  }

  // Whether the server's log gains an occurrence of `reason` (beyond `before`) within 10 s: the
  // server refused a handshake for that reason, which a server that is down cannot log.
  static bool LogsRefusal(const Server& server, const std::string& reason, int before) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (LogCount(server, reason) <= before) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return true;
  }

  static inline std::string* dir_ = nullptr;
  static inline TestCertificates* certs_ = nullptr;
  static inline Server* gateway_ = nullptr;
  static inline Server* kgstore_ = nullptr;
};

TEST_F(TlsSecurityTest, GatewayAnswersOverTlsAndStillRequiresTheKey) {
  const grpc::Status status = Ask(Channel(*gateway_, certs_->ca_cert), kKey);
  EXPECT_OK(status) << gateway_->process->ReadLog();
  EXPECT_THAT(Ask(Channel(*gateway_, certs_->ca_cert), ""),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
}

// Each refusal below is checked for its reason, not only for UNAVAILABLE (which a server that is
// down gives too): the client saw the connection end in the handshake ("Socket closed", or its
// own "certificate verify failed"), never "Connection refused", and the server logged why.
constexpr char kServerDown[] = "Connection refused";
// The connection ended after it was accepted: closed or reset by the server in the handshake.
::testing::Matcher<const std::string&> EndedInHandshake() {
  return ::testing::AllOf(::testing::AnyOf(HasSubstr("Socket closed"),
                                           HasSubstr("Connection reset"), HasSubstr("andshake")),
                          Not(HasSubstr(kServerDown)));
}

TEST_F(TlsSecurityTest, GatewayRefusesPlaintextClients) {
  const int before = LogCount(*gateway_, "wrong version number");
  const grpc::Status status = Ask(Plaintext(*gateway_), kKey);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), EndedInHandshake());
  EXPECT_TRUE(LogsRefusal(*gateway_, "wrong version number", before))
      << gateway_->process->ReadLog();
}

TEST_F(TlsSecurityTest, ClientTrustingAnotherCaRefusesTheGateway) {
  const grpc::Status status = Ask(Channel(*gateway_, Path("rogue_ca.pem")), kKey);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  // The client refused the server's certificate itself.
  EXPECT_THAT(status.error_message(), HasSubstr("Ssl handshake failed"));
  EXPECT_THAT(status.error_message(), HasSubstr("certificate verify failed"));
}

TEST_F(TlsSecurityTest, InternalServiceAnswersAClientCertificateFromItsCa) {
  auto status =
      CheckHealth(Channel(*kgstore_, certs_->ca_cert, certs_->client_cert, certs_->client_key), "");
  ASSERT_OK(status);
  EXPECT_EQ(*status, HealthCheckResponse::SERVING);
}

TEST_F(TlsSecurityTest, InternalServiceRefusesClientsWithoutCertificateOrPlaintext) {
  int before = LogCount(*kgstore_, "peer did not return a certificate");
  absl::Status status = CheckHealth(Channel(*kgstore_, certs_->ca_cert), "").status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, EndedInHandshake()));
  EXPECT_TRUE(LogsRefusal(*kgstore_, "peer did not return a certificate", before))
      << kgstore_->process->ReadLog();
  before = LogCount(*kgstore_, "wrong version number");
  status = CheckHealth(Plaintext(*kgstore_), "").status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, EndedInHandshake()));
  EXPECT_TRUE(LogsRefusal(*kgstore_, "wrong version number", before))
      << kgstore_->process->ReadLog();
}

TEST_F(TlsSecurityTest, InternalServiceRefusesAClientCertificateFromAnotherCa) {
  const int before = LogCount(*kgstore_, "certificate verify failed");
  const absl::Status status =
      CheckHealth(
          Channel(*kgstore_, certs_->ca_cert, certs_->rogue_client_cert, certs_->rogue_client_key),
          "")
          .status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, EndedInHandshake()));
  EXPECT_TRUE(LogsRefusal(*kgstore_, "certificate verify failed", before))
      << kgstore_->process->ReadLog();
}

// OpenSSL 3 reports an expired client certificate as "certificate verify failed" too (its
// reason code, not the verify result, reaches gRPC's log): the check is that the handshake, not
// an outage, refused it.
TEST_F(TlsSecurityTest, InternalServiceRefusesAnExpiredClientCertificate) {
  const int before = LogCount(*kgstore_, "certificate verify failed");
  const absl::Status status =
      CheckHealth(Channel(*kgstore_, certs_->ca_cert, Path("expired_client.pem"),
                          Path("expired_client.key")),
                  "")
          .status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, EndedInHandshake()));
  EXPECT_TRUE(LogsRefusal(*kgstore_, "certificate verify failed", before))
      << kgstore_->process->ReadLog();
}

// What an outage looks like to the same checks, so they cannot pass for a server that is down.
TEST_F(TlsSecurityTest, AServerThatIsDownIsNotARefusal) {
  const absl::Status status = CheckHealth(Plaintext(Server{nullptr, 1}), "").status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kUnavailable, HasSubstr(kServerDown)));
  EXPECT_THAT(std::string(status.message()), Not(EndedInHandshake()));
}

// Every client would refuse the handshake of a server with an expired certificate, and all they
// could report is UNAVAILABLE: the server refuses to start instead, naming the file and date.
TEST_F(TlsSecurityTest, ServerRefusesToStartWithAnExpiredCertificate) {
  auto process =
      Launch("kgstore", "kgstore-expired", Path("expired_server.pem"), Path("expired_server.key"),
             true, {"--base=" + *dir_ + "/art", "--read_only"});
  ASSERT_OK(process);
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (process->Running() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  ASSERT_FALSE(process->Running()) << process->ReadOwnLog();
  EXPECT_NE(process->exit_code(), 0);
  const std::string log = process->ReadOwnLog();
  EXPECT_THAT(log, HasSubstr("expired_server.pem: the certificate expired at 20"));
  EXPECT_THAT(log, Not(HasSubstr(": ready")));
}

}  // namespace
}  // namespace ibgraphrag::security
