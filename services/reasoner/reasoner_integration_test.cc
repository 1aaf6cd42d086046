// Integration test: starts the real `reasoner` binary on loopback with a text config whose LLM
// backend is the scripted fake OpenAI server (running in this test process), and talks to it
// over gRPC. Also checks that a bad config stops the binary with exit status 1 and the field
// named in its log.
#include <arpa/inet.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/reasoner.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::testing {
namespace {

namespace pb = ::ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::MakeTempDir;
using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

void SetDeadline(grpc::ClientContext* context) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
}

constexpr char kClaim[] = "Juvenile polyposis syndrome is not associated with gene SMAD4";

class ReasonerIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("reasoner-it");
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    fake_ = *std::move(fake);
  }
  void TearDown() override {
    fake_->Stop();
    if (!HasFailure()) std::filesystem::remove_all(dir_);  // keep the logs of a failure
  }

  // A ReasonerConfig (text format) whose default backend is the fake server. (Plain string
  // pieces, not a raw-string text proto: clang-format would re-indent one and split the URL.)
  std::string GoodConfig() const {
    return absl::StrCat(
        "server { termination_grace_seconds: 0 drain_deadline_seconds: 2 }\n"
        "backends {\n"
        "  name: \"fake\"\n"
        "  base_url: \"",
        fake_->base_url(),
        "\"\n"
        "  model: \"fake-model\"\n"
        "  timeout_seconds: 10\n"
        "  max_retries: 0\n"
        "}\n"
        "default_backend: \"fake\"\n"
        "prompts { fact_verification_version: \"fact.v1\" }\n");
  }

  std::string dir_;
  std::unique_ptr<FakeOpenAiServer> fake_;
};

TEST_F(ReasonerIntegrationTest, ServesHealthAndReasonsThroughTheConfiguredLlm) {
  const std::string config = dir_ + "/reasoner.textproto";
  WriteFile(config, GoodConfig());
  auto process = Subprocess::Start({BinDir() + "/reasoner", "--config=" + config,
                                    "--host=127.0.0.1", "--port=0", "--metrics_port=0"},
                                   dir_ + "/reasoner.log");
  ASSERT_OK(process);
  auto line = process->WaitForLogLine("\"msg\":\"reasoner: ready\"", absl::Seconds(30));
  ASSERT_OK(line);
  const nlohmann::json ready = nlohmann::json::parse(*line);
  const int port = ready["port"].get<int>();
  const int metrics_port = ready["metrics_port"].get<int>();
  ASSERT_GT(port, 0);
  ASSERT_GT(metrics_port, 0);

  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  for (const std::string service : {"", "ibgraphrag.v1.ReasonerService"}) {
    grpc::ClientContext context;
    SetDeadline(&context);
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_OK(health->Check(&context, request, &response)) << service;
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }

  fake_->Enqueue(FakeResponse::Completion(
      "ans: REFUTED\nwhy: (Juvenile polyposis syndrome, disease associated with gene, SMAD4)"));
  auto stub = pb::ReasonerService::NewStub(channel);
  pb::ReasonRequest request;
  request.set_task(pb::TASK_FACT_VERIFICATION);
  request.set_question(kClaim);
  pb::EvidenceTriple* t = request.add_evidence();
  t->mutable_head()->set_external_id("DOID:0050787");
  t->mutable_head()->set_name("juvenile polyposis syndrome");
  t->set_relation("disease associated with gene");
  t->mutable_tail()->set_external_id("Entrez:4089");
  t->mutable_tail()->set_name("SMAD4");
  t->set_score(1.0f);
  grpc::ClientContext context;
  SetDeadline(&context);
  context.AddMetadata("x-request-id", "reasoner-it-1");
  pb::ReasonResponse response;
  grpc::Status status = stub->Reason(&context, request, &response);
  ASSERT_OK(status);
  EXPECT_EQ(response.answer().label(), pb::FACT_LABEL_REFUTED);
  EXPECT_EQ(response.answer().backend(), "fake");
  EXPECT_TRUE(response.answer().used_llm());
  EXPECT_EQ(response.answer().prompt_version(), "fact.v1");
  EXPECT_TRUE(response.degraded().empty());
  ASSERT_EQ(fake_->request_count(), 1);
  EXPECT_THAT(fake_->requests()[0].body, HasSubstr("SMAD4"));

  const std::string metrics =
      ibgraphrag::common::test_util::HttpGet(metrics_port, "/metrics").value_or("");
  EXPECT_THAT(metrics,
              HasSubstr("ibgr_reasoner_answers_total{backend=\"fake\",degraded=\"false\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("ibgr_reasoner_llm_seconds_count{backend=\"fake\"} 1"));

  auto exit_status = process->Stop(SIGTERM, absl::Seconds(20));
  ASSERT_OK(exit_status);
  EXPECT_EQ(process->exit_code(), 0);
  const std::string log = process->ReadLog();
  EXPECT_THAT(log, HasSubstr("reasoner-it-1"));            // the access log carries the request id
  EXPECT_THAT(log, Not(HasSubstr("Juvenile polyposis")));  // question text is never logged
}

TEST_F(ReasonerIntegrationTest, BadConfigExitsWithStatusOneNamingTheField) {
  struct Case {
    std::string text;
    std::string field;
  };
  const Case cases[] = {
      {"backends { name: \"vllm\" base_url: \"ftp://127.0.0.1/v1\" model: \"m\" }",
       "backends[0].base_url"},
      {"backends { name: \"vllm\" base_url: \"http://127.0.0.1:1/v1\" model: \"m\" }\n"
       "default_backend: \"ollama\"",
       "default_backend"},
      {"backends { name: \"vllm\" base_url: \"http://127.0.0.1:1/v1\" models: \"m\" }", "models"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string config = absl::StrCat(dir_, "/bad", i, ".textproto");
    const std::string log_path = absl::StrCat(dir_, "/bad", i, ".log");
    ++i;
    WriteFile(config, c.text);
    auto rc = RunToCompletion({BinDir() + "/reasoner", "--config=" + config, "--host=127.0.0.1",
                               "--port=0", "--metrics_port=0"},
                              log_path, absl::Seconds(30));
    ASSERT_OK(rc);
    EXPECT_EQ(*rc, 1) << c.text;
    std::ifstream in(log_path);
    const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_THAT(log, HasSubstr("reasoner: fatal")) << c.text;
    EXPECT_THAT(log, HasSubstr(c.field)) << log;
    EXPECT_THAT(log, Not(HasSubstr("reasoner: ready"))) << log;
  }
}

}  // namespace
}  // namespace ibgraphrag::testing
