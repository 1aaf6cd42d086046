// Integration test: builds a bundle with the library, starts the real `alignment` binary on
// loopback and talks to it over gRPC and HTTP (/metrics); then stops it with SIGTERM.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/temp_dir.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/alignment.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "services/alignment/bundle.h"
#include "services/alignment/testing/test_fixtures.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::alignment {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;
using ::testing::HasSubstr;

struct Started {
  std::unique_ptr<Subprocess> process;
  nlohmann::json ready;
};

Started Start(const std::vector<std::string>& extra, const std::string& log) {
  std::vector<std::string> argv = {BinDir() + "/alignment", "--host=127.0.0.1", "--port=0",
                                   "--metrics_port=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Started s;
  auto p = Subprocess::Start(argv, log);
  EXPECT_OK(p);
  if (!p.ok()) return s;
  s.process = std::make_unique<Subprocess>(std::move(*p));
  auto line = s.process->WaitForLogLine("\"msg\":\"alignment: ready\"", absl::Seconds(60));
  EXPECT_OK(line) << s.process->ReadLog();
  if (line.ok()) s.ready = nlohmann::json::parse(*line);
  return s;
}

TEST(AlignmentIntegrationTest, ServesABundleBuiltInTheTest) {
  const std::string dir = common::test_util::MakeTempDir("align-integration");
  HashNgramEncoderOptions hash;
  BundleBuildOptions build;
  build.base_path = dir + "/art";
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), **HashNgramEncoder::Create(hash), build));
  Started s = Start({"--base=" + dir + "/art"}, dir + "/alignment.log");
  ASSERT_NE(s.process, nullptr);
  ASSERT_TRUE(s.ready.contains("port"));
  EXPECT_TRUE(s.ready["serving"].get<bool>());
  const int port = s.ready["port"].get<int>();
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  auto stub = pb::AlignmentService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  pb::AlignRequest request;
  request.set_text("Chest pain; rule out MI. Heart attack or pneumonia with fever?");
  request.mutable_options()->set_top_k(3);
  pb::AlignResponse response;
  const grpc::Status status = stub->Align(&ctx, request, &response);
  ASSERT_OK(status);
  EXPECT_GT(response.kept_size() + response.rejected_size(), 0);
  EXPECT_EQ(response.bundle_version(), "1");
  EXPECT_TRUE(response.mentions(0).uncertain());  // "rule out MI"

  const std::string metrics =
      ibgraphrag::common::test_util::HttpGet(s.ready["metrics_port"].get<int>(), "/metrics")
          .value_or("");
  EXPECT_THAT(metrics, HasSubstr("ibgr_alignment_lexicon_entries 3"));
  // Question text is patient data: the default log never holds it.
  EXPECT_THAT(s.process->ReadLog(), ::testing::Not(HasSubstr("pneumonia with fever")));
  auto exit = s.process->Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(exit);
  EXPECT_EQ(s.process->exit_code(), 0);
}

TEST(AlignmentIntegrationTest, EncoderMismatchStaysNotServing) {
  const std::string dir = common::test_util::MakeTempDir("align-integration-mismatch");
  HashNgramEncoderOptions hash;
  BundleBuildOptions build;
  build.base_path = dir + "/art";
  ASSERT_OK(BuildAlignmentBundle(testing::TinyLexicon(), **HashNgramEncoder::Create(hash), build));
  std::ofstream(dir + "/alignment.textproto")
      << "encoder { kind: ENCODER_KIND_HASH_NGRAM dim: 512 }\n";
  Started s = Start({"--base=" + dir + "/art", "--config=" + dir + "/alignment.textproto"},
                    dir + "/alignment.log");
  ASSERT_NE(s.process, nullptr);
  EXPECT_FALSE(s.ready["serving"].get<bool>());
  EXPECT_THAT(s.process->ReadLog(), HasSubstr("hash-ngram-v1-d512"));
  auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", s.ready["port"].get<int>()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::health::v1::HealthCheckRequest req;
  req.set_service("ibgraphrag.v1.AlignmentService");
  grpc::health::v1::HealthCheckResponse resp;
  ASSERT_OK(health->Check(&ctx, req, &resp));
  EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
}

}  // namespace
}  // namespace ibgraphrag::alignment
