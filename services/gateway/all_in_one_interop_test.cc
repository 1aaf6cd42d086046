// The all-in-one `ibgraphrag` binary on artifacts built in the test, called the way a clinical
// application written in another language would: Node's @grpc/grpc-js (tools/grpc-js-client)
// calls Answer over TLS with an API key. Also checks that the one /metrics endpoint carries every
// service's series, and that a wrong key is refused.
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/gateway/api_keys.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::gateway {
namespace {

using ::ibgraphrag::common::Sha256Hex;
using ::ibgraphrag::common::test_util::MakeTempDir;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;
using ::testing::HasSubstr;

std::string SourceDir() {
  const char* dir = std::getenv("IBGR_SOURCE_DIR");
  return dir == nullptr ? std::string(".") : std::string(dir);
}

TEST(AllInOneInteropTest, GrpcJsClientAnswersOverTlsWithApiKey) {
  const std::string client_dir = SourceDir() + "/tools/grpc-js-client";
  ASSERT_TRUE(common::test_util::ProgramInstalled("node", "nodejs"));
  ASSERT_TRUE(std::filesystem::exists(client_dir + "/node_modules/@grpc/grpc-js"))
      << "run `npm ci` in " << client_dir << " (scripts/test.sh does)";

  const std::string dir = MakeTempDir("all-in-one-interop");
  const std::string base = dir + "/art";
  testing::PublishSmallSuite(base);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  std::filesystem::create_directories(dir + "/certs");
  auto certs = common::test_util::MakeTestCertificates(dir + "/certs");
  ASSERT_OK(certs);
  const std::string key = "interop-key-123";
  common::test_util::WriteFileOrDie(dir + "/api_keys",
                                    absl::StrCat("node-app:", Sha256Hex(key), "\n"));
  common::test_util::WriteFileOrDie(
      dir + "/server.textproto",
      absl::StrCat("tls { cert_file: \"", certs->server_cert, "\" key_file: \"", certs->server_key,
                   "\" }\ntermination_grace_seconds: 0\n"));

  auto process =
      Subprocess::Start({BinDir() + "/ibgraphrag", "--base=" + base, "--host=127.0.0.1", "--port=0",
                         "--metrics_port=0", "--config=" + dir + "/server.textproto",
                         "--api_keys_file=" + dir + "/api_keys", "--device=cpu"},
                        dir + "/ibgraphrag.log");
  ASSERT_OK(process);
  auto line = process->WaitForLogLine("\"msg\":\"ibgraphrag: ready\"", absl::Seconds(90));
  ASSERT_OK(line);
  const auto ready = nlohmann::json::parse(*line);
  const int port = ready["port"].get<int>();
  const int metrics_port = ready["metrics_port"].get<int>();
  EXPECT_TRUE(ready["retriever_model"].get<bool>());

  auto node = [&](const std::string& api_key, int* exit_code) {
    return common::test_util::RunCommand(
        absl::StrCat("node ", client_dir, "/answer.js --target=127.0.0.1:", port,
                     " --ca=", certs->ca_cert, " --server_name=localhost --api_key=", api_key,
                     " '--question=Which drug treats type 2 diabetes mellitus?'",
                     " --option=Metformin --option=Polyuria --deadline_ms=20000"),
        exit_code);
  };
  int exit_code = -1;
  auto out = node(key, &exit_code);
  ASSERT_OK(out);
  ASSERT_EQ(exit_code, 0) << *out << "\n" << process->ReadLog();
  const auto response = nlohmann::json::parse(*out);
  ASSERT_TRUE(response.contains("answer")) << *out;
  EXPECT_FALSE(response["answer"]["text"].get<std::string>().empty());
  ASSERT_TRUE(response.contains("entities")) << *out;
  ASSERT_TRUE(response.contains("evidence")) << *out;
  bool treats = false;
  for (const auto& t : response["evidence"]) {
    treats |= t["head"]["name"] == "Metformin" && t["tail"]["name"] == "type 2 diabetes mellitus";
  }
  EXPECT_TRUE(treats) << *out;
  EXPECT_EQ(response["request_id"].get<std::string>().size(), 32u);

  out = node("wrong-key", &exit_code);
  ASSERT_OK(out);
  EXPECT_EQ(exit_code, 2) << *out;
  EXPECT_THAT(*out, HasSubstr("\"code_name\":\"UNAUTHENTICATED\""));

  // The suite's own CLI against the same server: `ibgr ask` and `ibgr eval` over TLS with a key.
  out = common::test_util::RunCommand(
      absl::StrCat(BinDir(), "/ibgr ask --gateway=127.0.0.1:", port, " --tls_ca=", certs->ca_cert,
                   " --tls_server_name=localhost --api_key=", key,
                   " --json 'Which drug treats type 2 diabetes mellitus?'"),
      &exit_code);
  ASSERT_OK(out);
  ASSERT_EQ(exit_code, 0) << *out;
  EXPECT_THAT(*out, HasSubstr("\"evidence\""));
  common::test_util::WriteFileOrDie(
      dir + "/tf.csv",
      ",text,label\n0,metformin treats type 2 diabetes mellitus,True\n"
      "1,pioglitazone binds PPARG,True\n2,obesity resembles type 2 "
      "diabetes mellitus,True\n");
  out = common::test_util::RunCommand(
      absl::StrCat(BinDir(), "/ibgr eval --gateway=127.0.0.1:", port, " --tls_ca=", certs->ca_cert,
                   " --tls_server_name=localhost --api_key=", key, " --dataset=", dir,
                   "/tf.csv --format=truefalse --concurrency=2 --out_json=", dir, "/eval.json"),
      &exit_code);
  ASSERT_OK(out);
  ASSERT_EQ(exit_code, 0) << *out;
  std::ifstream eval_in(dir + "/eval.json");
  const auto report = nlohmann::json::parse(eval_in);
  ASSERT_EQ(report["runs"].size(), 1u) << report.dump();
  EXPECT_EQ(report["runs"][0]["total"].get<int>(), 3);
  EXPECT_EQ(report["runs"][0]["errors"].get<int>(), 0);
  EXPECT_EQ(report["runs"][0]["answered"].get<int>(), 3);

  // One /metrics endpoint for all five services.
  auto metrics = common::test_util::HttpGet(metrics_port, "/metrics");
  ASSERT_OK(metrics);
  EXPECT_THAT(*metrics, HasSubstr("ibgr_gateway_answers_total"));
  EXPECT_THAT(*metrics, HasSubstr("ibgr_gateway_auth_failures_total 1"));
  EXPECT_THAT(*metrics, HasSubstr("ibgr_kgstore_triples"));
  EXPECT_THAT(*metrics, HasSubstr("ibgr_alignment_lexicon_entries"));
  // The gateway calls the retriever and the reasoner directly (--inprocess_calls=direct), so their
  // own counters, not gRPC series, show the answers went through them.
  EXPECT_THAT(*metrics, ::testing::ContainsRegex(
                            "ibgr_retriever_ibrp_requests_total\\{variant=\"[a-z]+\"\\} [1-9]"));
  EXPECT_THAT(*metrics, ::testing::ContainsRegex("ibgr_reasoner_answers_total\\{[^}]*\\} [1-9]"));
  EXPECT_THAT(*metrics, HasSubstr("service=\"ibgraphrag.v1.GatewayService\""));
  ASSERT_TRUE(common::test_util::ProgramInstalled("promtool", "prometheus"));
  common::test_util::WriteFileOrDie(dir + "/metrics.txt", *metrics);
  int rc = -1;
  auto check =
      common::test_util::RunCommand("promtool check metrics < " + dir + "/metrics.txt", &rc);
  ASSERT_OK(check);
  EXPECT_EQ(rc, 0) << *check;

  auto exit = process->Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(exit);
  EXPECT_EQ(*exit, 0) << process->ReadLog();
  EXPECT_THAT(process->ReadLog(), ::testing::Not(HasSubstr("Which drug treats")));
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ibgraphrag::gateway
