// TLS and mTLS on the gRPC port, with certificates made by the openssl CLI for each test run.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/client.h"
#include "common/file_util.h"
#include "common/server_runner.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "common/tls_certificate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using grpc::health::v1::HealthCheckResponse;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

class ServerTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!test_util::HaveProgram("openssl")) return;  // SetUp fails every case.
    auto certs = test_util::MakeTestCertificates(test_util::MakeTempDir());
    if (!certs.ok()) {
      cert_error_ = new std::string(certs.status().ToString());
      return;
    }
    certs_ = new test_util::TestCertificates(*certs);
  }

  void SetUp() override {
    ASSERT_TRUE(test_util::ProgramInstalled("openssl", "openssl"));
    ASSERT_EQ(cert_error_, nullptr) << *cert_error_;
    ASSERT_NE(certs_, nullptr);
  }

  void TearDown() override {
    if (runner_ != nullptr) runner_->Shutdown();
  }

  void StartServer(bool require_client_cert) {
    ServerRunner::Options options;
    options.service_name = "ibgr-tls-test";
    options.listen_host = "127.0.0.1";
    options.tls.cert_path = certs_->server_cert;
    options.tls.key_path = certs_->server_key;
    if (require_client_cert) {
      options.tls.client_ca_path = certs_->ca_cert;
      options.tls.require_client_cert = true;
    }
    auto runner = ServerRunner::BuildAndStart(options, {&service_}, {});
    ASSERT_OK(runner);
    runner_ = std::move(*runner);
    runner_->SetServing(true);
  }

  // A TLS channel that trusts the test CA, optionally presenting a client certificate.
  std::shared_ptr<grpc::Channel> TlsChannel(const std::string& cert, const std::string& key) {
    ChannelOptions options;
    options.target = absl::StrCat("127.0.0.1:", runner_->port());
    options.tls.enabled = true;
    options.tls.ca_cert_path = certs_->ca_cert;
    options.tls.cert_path = cert;
    options.tls.key_path = key;
    options.retry_unavailable = false;
    auto channel = MakeChannel(options);
    EXPECT_OK(channel);
    return channel.ok() ? *channel : nullptr;
  }

  std::shared_ptr<grpc::Channel> PlaintextChannel() {
    return grpc::CreateChannel(absl::StrCat("127.0.0.1:", runner_->port()),
                               grpc::InsecureChannelCredentials());
  }

  static test_util::TestCertificates* certs_;
  static std::string* cert_error_;
  test_util::EchoTestServiceImpl service_;
  std::unique_ptr<ServerRunner> runner_;
};

test_util::TestCertificates* ServerTlsTest::certs_ = nullptr;
std::string* ServerTlsTest::cert_error_ = nullptr;

TEST_F(ServerTlsTest, TlsClientConnectsAndVerifiesTheServerCertificateByIp) {
  StartServer(/*require_client_cert=*/false);
  auto status = test_util::CheckHealth(TlsChannel("", ""), "");
  ASSERT_OK(status);
  EXPECT_EQ(*status, HealthCheckResponse::SERVING);
}

TEST_F(ServerTlsTest, PlaintextClientIsRefusedByATlsServer) {
  StartServer(/*require_client_cert=*/false);
  EXPECT_THAT(test_util::CheckHealth(PlaintextChannel(), ""),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ServerTlsTest, ClientThatDoesNotTrustTheServerCaIsRefused) {
  StartServer(/*require_client_cert=*/false);
  ChannelOptions options;
  options.target = absl::StrCat("127.0.0.1:", runner_->port());
  options.tls.enabled = true;
  options.tls.ca_cert_path = certs_->rogue_client_cert;  // Not the CA that signed the server.
  options.retry_unavailable = false;
  auto channel = MakeChannel(options);
  ASSERT_OK(channel);
  EXPECT_THAT(test_util::CheckHealth(*channel, ""), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ServerTlsTest, MtlsServerAcceptsAClientCertificateFromItsCa) {
  StartServer(/*require_client_cert=*/true);
  auto status = test_util::CheckHealth(TlsChannel(certs_->client_cert, certs_->client_key), "");
  ASSERT_OK(status);
  EXPECT_EQ(*status, HealthCheckResponse::SERVING);
}

TEST_F(ServerTlsTest, MtlsServerRefusesAClientWithoutCertificate) {
  StartServer(/*require_client_cert=*/true);
  EXPECT_THAT(test_util::CheckHealth(TlsChannel("", ""), ""),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ServerTlsTest, MtlsServerRefusesAClientCertificateFromAnotherCa) {
  StartServer(/*require_client_cert=*/true);
  EXPECT_THAT(
      test_util::CheckHealth(TlsChannel(certs_->rogue_client_cert, certs_->rogue_client_key), "")
          .status(),
      StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ServerTlsTest, UnreadableKeyIsInvalidArgumentNamingTheField) {
  ServerRunner::Options options;
  options.service_name = "ibgr-tls-test";
  options.listen_host = "127.0.0.1";
  options.tls.cert_path = certs_->server_cert;
  options.tls.key_path = certs_->server_key + ".missing";
  auto runner = ServerRunner::BuildAndStart(options, {&service_}, {});
  EXPECT_THAT(runner, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tls.key_path")));
}

TEST_F(ServerTlsTest, ServedCertificateExpiryIsExportedAsAMetric) {
  StartServer(/*require_client_cert=*/false);
  auto pem = ReadFileToString(certs_->server_cert);
  ASSERT_OK(pem);
  auto validity = ReadCertificateValidity(*pem, "server_cert");
  ASSERT_OK(validity);
  EXPECT_THAT(
      runner_->metrics().Serialize(),
      HasSubstr(absl::StrCat("ibgr_tls_certificate_not_after_seconds{server=\"ibgr-tls-test\"} ",
                             absl::ToUnixSeconds(validity->not_after))));
}

TEST_F(ServerTlsTest, CertificateOutsideItsValidityRefusesTheStartNamingFileAndDate) {
  auto pem = ReadFileToString(certs_->server_cert);
  ASSERT_OK(pem);
  auto validity = ReadCertificateValidity(*pem, "tls.cert_path x.pem");
  ASSERT_OK(validity);
  EXPECT_LT(validity->not_before, absl::Now());
  EXPECT_GT(validity->not_after, absl::Now());
  EXPECT_OK(CheckCertificateDates(*validity, absl::Now(), "tls.cert_path x.pem"));
  EXPECT_THAT(CheckCertificateDates(*validity, validity->not_after + absl::Seconds(1),
                                    "tls.cert_path x.pem"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat("tls.cert_path x.pem: the certificate expired at ",
                                              FormatCertificateTime(validity->not_after)))));
  // A clock a little behind the issuer's is tolerated; more is refused.
  EXPECT_OK(CheckCertificateDates(*validity, validity->not_before - absl::Minutes(4), "f"));
  EXPECT_THAT(CheckCertificateDates(*validity, validity->not_before - absl::Minutes(6), "f"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not valid before")));
  EXPECT_THAT(ReadCertificateValidity("-----BEGIN CERTIFICATE-----\nAAAA\n", "tls.cert_path y"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tls.cert_path y")));
}

TEST_F(ServerTlsTest, ACertificateFileWithoutACertificateIsInvalidArgument) {
  const std::string path = test_util::MakeTempDir() + "/not_a_cert.pem";
  ASSERT_OK(WriteStringToFileAtomic(path, "hello\n"));
  ServerRunner::Options options;
  options.service_name = "ibgr-tls-test";
  options.listen_host = "127.0.0.1";
  options.tls.cert_path = path;
  options.tls.key_path = certs_->server_key;
  auto runner = ServerRunner::BuildAndStart(options, {&service_}, {});
  EXPECT_THAT(runner, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("no PEM certificate could be parsed")));
}

}  // namespace
}  // namespace ibgraphrag::common
