// Question text never reaches a log at default settings, across the distributed suite: the five
// real binaries on loopback (tests/test_util/distributed_suite.h, the fake LLM server as the
// reasoner's default backend) answer questions and options carrying a marker in every mode, over
// Answer and AnswerStream, including refused and invalid requests; then every log the processes
// wrote (each one's stdout and stderr, and any file in the scratch directory) is scanned.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/distributed_suite.h"
#include "tests/test_util/security_gateway_client.h"

namespace ibgraphrag::security {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::testing::AskStreamingWithKey;
using ::ibgraphrag::testing::DistributedSuite;
using ::ibgraphrag::testing::MarkedQuestion;

constexpr char kKey[] = "log-scan-key";
constexpr char kMarker[] = "QMARKERd41c07";

class QuestionLogSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = common::test_util::MakeTempDir("security-logs");
    gateway::testing::PublishSmallSuite(dir_ + "/art", /*with_documents=*/true);
    ASSERT_FALSE(HasFatalFailure());
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    fake_ = *std::move(fake);
    fake_->SetDefault(FakeResponse::Completion(
        "ans: A\nwhy: (Metformin, drug treats disease, type 2 diabetes mellitus)"));
    common::test_util::WriteFileOrDie(
        dir_ + "/reasoner.textproto",
        absl::StrCat("backends {\n  name: \"llm\"\n  base_url: \"", fake_->base_url(),
                     "\"\n  model: \"fake-model\"\n  timeout_seconds: 5\n  max_retries: 0\n}\n"
                     "default_backend: \"llm\"\n"));
    common::test_util::WriteFileOrDie(dir_ + "/api_keys",
                                      absl::StrCat("logs:", common::Sha256Hex(kKey), "\n"));
    DistributedSuite::Options options;
    options.dir = dir_;
    options.base = dir_ + "/art";
    options.reasoner_config = dir_ + "/reasoner.textproto";
    options.gateway_flags = {"--api_keys_file=" + dir_ + "/api_keys"};
    auto suite = DistributedSuite::Start(options);
    ASSERT_OK(suite);
    suite_ = *std::move(suite);
    stub_ = pb::GatewayService::NewStub(
        grpc::CreateChannel(suite_->target("gateway"), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (fake_ != nullptr) fake_->Stop();
  }

  grpc::Status Ask(const pb::AnswerRequest& request, const std::string& key) {
    pb::AnswerResponse response;
    return ibgraphrag::testing::AskWithKey(*stub_, request, key, &response);
  }

  std::string dir_;
  std::unique_ptr<FakeOpenAiServer> fake_;
  std::unique_ptr<DistributedSuite> suite_;
  std::unique_ptr<pb::GatewayService::Stub> stub_;
};

TEST_F(QuestionLogSecurityTest, NoLogOfAnyServiceHasTheQuestionOrOptions) {
  for (const std::string mode : {"", "kg_rank", "kg_rag", "give", "illama"}) {
    const grpc::Status status = Ask(MarkedQuestion(kMarker, mode), kKey);
    EXPECT_OK(status) << "mode '" << mode << "': ";
    EXPECT_OK(AskStreamingWithKey(*stub_, MarkedQuestion(kMarker, mode), kKey))
        << "mode '" << mode << "'";
  }
  pb::AnswerRequest invalid = MarkedQuestion(kMarker);
  invalid.mutable_pipeline()->set_top_k(5000);
  EXPECT_THAT(Ask(invalid, kKey), StatusIs(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(Ask(MarkedQuestion(kMarker), "wrong"), StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  // The LLM saw the question (so it travelled through every service)...
  bool llm_saw_marker = false;
  for (const auto& request : fake_->requests()) {
    llm_saw_marker |= absl::StrContains(request.body, kMarker);
  }
  EXPECT_TRUE(llm_saw_marker);
  // ...and no log has it: each process's output, then every other file the run left.
  // SIGTERM first (all at once: each drains for a few seconds): what the processes write while
  // draining counts too.
  const std::vector<std::string> services = {"gateway", "reasoner", "retriever", "alignment",
                                             "kgstore"};
  std::vector<std::thread> stops;
  for (const std::string& service : services) {
    stops.emplace_back([this, service] {
      EXPECT_OK(suite_->process(service).Stop(SIGTERM, absl::Seconds(30))) << service;
    });
  }
  for (std::thread& stop : stops) stop.join();
  for (const std::string& service : services) {
    const std::string log = suite_->process(service).ReadLog();
    EXPECT_THAT(log, ::testing::HasSubstr("ready")) << service;
    EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr(kMarker))) << service;
  }
  int scanned = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    if (!entry.is_regular_file()) continue;
    auto contents = common::ReadFileToString(entry.path().string());
    ASSERT_OK(contents);
    EXPECT_FALSE(absl::StrContains(*contents, kMarker)) << entry.path();
    ++scanned;
  }
  EXPECT_GE(scanned, 5);
}

}  // namespace
}  // namespace ibgraphrag::security
