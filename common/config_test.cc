#include "common/config.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ibgraphrag::config::v1::ServerConfig;
using ::testing::HasSubstr;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_util::MakeTempDir(); }

  std::string WriteConfig(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    test_util::WriteFileOrDie(path, text);
    return path;
  }

  std::string dir_;
};

TEST_F(ConfigTest, LoadsEveryFieldFromATextProtoFile) {
  const std::string cert = WriteConfig("tls.crt", "cert");
  const std::string key = WriteConfig("tls.key", "key");
  const std::string ca = WriteConfig("ca.crt", "ca");
  const std::string path =
      WriteConfig("server.textproto",
                  absl::StrCat("# Comments are allowed.\n"
                               "service_name: \"kgstore\"\n"
                               "listen_host: \"127.0.0.1\"\n"
                               "port: 50052\n"
                               "metrics_port: 9092\n"
                               "tls {\n"
                               "  cert_file: \"",
                               cert, "\"\n  key_file: \"", key, "\"\n  client_ca_file: \"", ca,
                               "\"\n"
                               "  require_client_cert: true\n"
                               "}\n"
                               "drain_deadline_seconds: 7.5\n"
                               "termination_grace_seconds: 2\n"
                               "max_receive_message_bytes: 1048576\n"
                               "max_send_message_bytes: 2097152\n"
                               "max_threads: 64\n"
                               "max_connection_age_seconds: 300\n"
                               "log_level: LOG_LEVEL_WARNING\n"
                               "log_payloads: false\n"));
  auto config = LoadTextProtoConfig<ServerConfig>(path);
  ASSERT_OK(config);
  EXPECT_EQ(config->service_name(), "kgstore");
  EXPECT_EQ(config->port(), 50052);
  EXPECT_EQ(config->metrics_port(), 9092);
  EXPECT_TRUE(config->tls().require_client_cert());

  ServerRunner::Options defaults;
  defaults.service_name = "default-name";
  auto options = OptionsFromConfig(*config, defaults);
  ASSERT_OK(options);
  EXPECT_EQ(options->service_name, "kgstore");
  EXPECT_EQ(options->listen_host, "127.0.0.1");
  EXPECT_EQ(options->port, 50052);
  EXPECT_EQ(options->metrics_port, 9092);
  EXPECT_EQ(options->tls.cert_path, cert);
  EXPECT_EQ(options->tls.key_path, key);
  EXPECT_EQ(options->tls.client_ca_path, ca);
  EXPECT_TRUE(options->tls.require_client_cert);
  EXPECT_EQ(options->drain_deadline, absl::Milliseconds(7500));
  EXPECT_EQ(options->termination_grace_period, absl::Seconds(2));
  EXPECT_EQ(options->max_receive_message_bytes, 1048576);
  EXPECT_EQ(options->max_send_message_bytes, 2097152);
  EXPECT_EQ(options->max_threads, 64);
  EXPECT_EQ(options->max_connection_age, absl::Seconds(300));
  EXPECT_FALSE(options->log_payloads);
}

TEST_F(ConfigTest, UnsetFieldsKeepTheProgramDefaults) {
  ServerRunner::Options defaults;
  defaults.service_name = "retriever";
  defaults.port = 50053;
  defaults.metrics_port = 9093;
  defaults.drain_deadline = absl::Seconds(20);
  auto options = OptionsFromConfig(ServerConfig(), defaults);
  ASSERT_OK(options);
  EXPECT_EQ(options->service_name, "retriever");
  EXPECT_EQ(options->listen_host, "0.0.0.0");
  EXPECT_EQ(options->port, 50053);
  EXPECT_EQ(options->metrics_port, 9093);
  EXPECT_EQ(options->drain_deadline, absl::Seconds(20));
  EXPECT_TRUE(options->tls.cert_path.empty());

  // Explicit zeros are not "unset": port 0 means "pick a free port".
  ServerConfig zero_ports;
  zero_ports.set_port(0);
  zero_ports.set_metrics_port(-1);
  options = OptionsFromConfig(zero_ports, defaults);
  ASSERT_OK(options);
  EXPECT_EQ(options->port, 0);
  EXPECT_EQ(options->metrics_port, -1);
}

TEST_F(ConfigTest, SyntaxErrorNamesFileLineAndColumn) {
  const std::string path = WriteConfig("bad.textproto", "port: 50052\nmetrics_port: \"abc\"\n");
  auto config = LoadTextProtoConfig<ServerConfig>(path);
  ASSERT_THAT(config,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr(path + ":2:"), HasSubstr("metrics_port"))));
}

TEST_F(ConfigTest, UnknownFieldIsNamedWithItsLine) {
  const std::string path =
      WriteConfig("typo.textproto", "service_name: \"kgstore\"\n\n  prot: 50052\n");
  auto config = LoadTextProtoConfig<ServerConfig>(path);
  ASSERT_THAT(config, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::AllOf(HasSubstr(path + ":3:"), HasSubstr("\"prot\""))));
}

TEST_F(ConfigTest, MissingFileIsNotFound) {
  auto config = LoadTextProtoConfig<ServerConfig>(dir_ + "/nope.textproto");
  EXPECT_THAT(config, StatusIs(absl::StatusCode::kNotFound, HasSubstr("nope.textproto")));
}

TEST_F(ConfigTest, EnvironmentOverridesPortsAndSecrets) {
  ServerConfig config;
  config.set_port(1);
  setenv("IBGR_CFGTEST_PORT", "50060", 1);
  setenv("IBGR_CFGTEST_METRICS_PORT", "-1", 1);
  setenv("IBGR_CFGTEST_LISTEN_HOST", "::", 1);
  setenv("IBGR_CFGTEST_TLS_CERT", "/var/run/secrets/tls.crt", 1);
  setenv("IBGR_CFGTEST_TLS_KEY", "/var/run/secrets/tls.key", 1);
  setenv("IBGR_CFGTEST_TLS_CLIENT_CA", "/var/run/secrets/ca.crt", 1);
  setenv("IBGR_CFGTEST_TLS_REQUIRE_CLIENT_CERT", "true", 1);
  setenv("IBGR_CFGTEST_LOG_LEVEL", "debug", 1);
  setenv("IBGR_CFGTEST_LOG_PAYLOADS", "", 1);  // Empty = leave alone.
  const absl::Status status = ApplyEnvOverrides(&config, "IBGR_CFGTEST_");
  ASSERT_OK(status);
  EXPECT_EQ(config.port(), 50060);
  EXPECT_EQ(config.metrics_port(), -1);
  EXPECT_EQ(config.listen_host(), "::");
  EXPECT_EQ(config.tls().cert_file(), "/var/run/secrets/tls.crt");
  EXPECT_EQ(config.tls().key_file(), "/var/run/secrets/tls.key");
  EXPECT_EQ(config.tls().client_ca_file(), "/var/run/secrets/ca.crt");
  EXPECT_TRUE(config.tls().require_client_cert());
  EXPECT_EQ(config.log_level(), ibgraphrag::config::v1::LOG_LEVEL_DEBUG);
  EXPECT_FALSE(config.log_payloads());
  for (const char* name :
       {"IBGR_CFGTEST_PORT", "IBGR_CFGTEST_METRICS_PORT", "IBGR_CFGTEST_LISTEN_HOST",
        "IBGR_CFGTEST_TLS_CERT", "IBGR_CFGTEST_TLS_KEY", "IBGR_CFGTEST_TLS_CLIENT_CA",
        "IBGR_CFGTEST_TLS_REQUIRE_CLIENT_CERT", "IBGR_CFGTEST_LOG_LEVEL",
        "IBGR_CFGTEST_LOG_PAYLOADS"}) {
    unsetenv(name);
  }
}

TEST_F(ConfigTest, UnparsableEnvironmentValueNamesTheVariable) {
  ServerConfig config;
  setenv("IBGR_CFGBAD_PORT", "50o52", 1);
  absl::Status status = ApplyEnvOverrides(&config, "IBGR_CFGBAD_");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("IBGR_CFGBAD_PORT")));
  unsetenv("IBGR_CFGBAD_PORT");

  setenv("IBGR_CFGBAD_TLS_REQUIRE_CLIENT_CERT", "maybe", 1);
  status = ApplyEnvOverrides(&config, "IBGR_CFGBAD_");
  EXPECT_THAT(std::string(status.message()), HasSubstr("IBGR_CFGBAD_TLS_REQUIRE_CLIENT_CERT"));
  unsetenv("IBGR_CFGBAD_TLS_REQUIRE_CLIENT_CERT");
}

// Each case: a config mutation and the field name the error must mention.
struct InvalidCase {
  std::string name;
  std::function<void(ServerConfig*, const std::string& existing_file)> mutate;
  std::string field;
};

TEST_F(ConfigTest, ValidationNamesTheOffendingField) {
  const std::string existing = WriteConfig("exists.pem", "pem");
  const std::vector<InvalidCase> cases = {
      {"port too large", [](ServerConfig* c, const std::string&) { c->set_port(65536); }, "port"},
      {"negative port", [](ServerConfig* c, const std::string&) { c->set_port(-1); }, "port"},
      {"metrics port", [](ServerConfig* c, const std::string&) { c->set_metrics_port(-2); },
       "metrics_port"},
      {"cert without key",
       [](ServerConfig* c, const std::string& f) { c->mutable_tls()->set_cert_file(f); },
       "tls.key_file"},
      {"key without cert",
       [](ServerConfig* c, const std::string& f) { c->mutable_tls()->set_key_file(f); },
       "tls.cert_file"},
      {"mtls without ca",
       [](ServerConfig* c, const std::string& f) {
         c->mutable_tls()->set_cert_file(f);
         c->mutable_tls()->set_key_file(f);
         c->mutable_tls()->set_require_client_cert(true);
       },
       "tls.client_ca_file"},
      {"ca without server tls",
       [](ServerConfig* c, const std::string& f) { c->mutable_tls()->set_client_ca_file(f); },
       "tls.cert_file"},
      {"missing cert file",
       [](ServerConfig* c, const std::string& f) {
         c->mutable_tls()->set_cert_file("/nonexistent/tls.crt");
         c->mutable_tls()->set_key_file(f);
       },
       "tls.cert_file"},
      {"missing key file",
       [](ServerConfig* c, const std::string& f) {
         c->mutable_tls()->set_cert_file(f);
         c->mutable_tls()->set_key_file("/nonexistent/tls.key");
       },
       "tls.key_file"},
      {"missing ca file",
       [](ServerConfig* c, const std::string& f) {
         c->mutable_tls()->set_cert_file(f);
         c->mutable_tls()->set_key_file(f);
         c->mutable_tls()->set_client_ca_file("/nonexistent/ca.crt");
       },
       "tls.client_ca_file"},
      {"negative drain",
       [](ServerConfig* c, const std::string&) { c->set_drain_deadline_seconds(-1); },
       "drain_deadline_seconds"},
      {"huge grace",
       [](ServerConfig* c, const std::string&) { c->set_termination_grace_seconds(1e9); },
       "termination_grace_seconds"},
      {"zero receive size",
       [](ServerConfig* c, const std::string&) { c->set_max_receive_message_bytes(0); },
       "max_receive_message_bytes"},
      {"negative threads", [](ServerConfig* c, const std::string&) { c->set_max_threads(-4); },
       "max_threads"},
      {"negative connection age",
       [](ServerConfig* c, const std::string&) { c->set_max_connection_age_seconds(-1); },
       "max_connection_age_seconds"},
      {"unknown log level",
       [](ServerConfig* c, const std::string&) {
         c->set_log_level(static_cast<ibgraphrag::config::v1::LogLevel>(42));
       },
       "log_level"},
  };
  for (const InvalidCase& test_case : cases) {
    ServerConfig config;
    test_case.mutate(&config, existing);
    const absl::Status status = ValidateServerConfig(config);
    EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(test_case.field)))
        << test_case.name;
    EXPECT_THAT(OptionsFromConfig(config), StatusIs(absl::StatusCode::kInvalidArgument))
        << test_case.name;
  }
}

TEST_F(ConfigTest, ApplyLoggingConfigSetsTheGlobalLevelAndPayloadSwitch) {
  ServerConfig config;
  config.set_log_level(ibgraphrag::config::v1::LOG_LEVEL_ERROR);
  ASSERT_OK(ApplyLoggingConfig(config));
  EXPECT_EQ(MinLogLevel(), LogLevel::kError);
  EXPECT_FALSE(LogPayloadsEnabled());
  config.set_log_payloads(true);
  ASSERT_OK(ApplyLoggingConfig(config));
  EXPECT_TRUE(LogPayloadsEnabled());
  SetMinLogLevel(LogLevel::kInfo);
  SetLogPayloads(false);
}

}  // namespace
}  // namespace ibgraphrag::common
