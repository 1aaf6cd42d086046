// The all-in-one `ibgraphrag` binary with an LLM configured for the reasoner (the scripted fake
// OpenAI server on loopback): alignment's MSCA LLM selection step uses the same backend, so an
// Answer asks the LLM to choose among a mention's top-K candidates (the paper's order, before
// MSCA's filter), and its choice comes back as an entity with chosen_by_llm.
// --alignment_llm_backend=none turns the step off; an unknown backend name stops the process with a
// message naming the flag.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::MakeTempDir;
using ::ibgraphrag::common::test_util::RecordedRequest;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;
using ::testing::HasSubstr;
using ::testing::Not;

// The selection step's requests carry "query_entity:" in the user message; the reasoner's do not.
bool IsSelectionRequest(const RecordedRequest& request) {
  const auto body = nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.contains("messages")) return false;
  for (const auto& m : body["messages"]) {
    if (m["content"].is_string() &&
        absl::StrContains(m["content"].get<std::string>(), "query_entity:")) {
      return true;
    }
  }
  return false;
}

int SelectionRequests(const FakeOpenAiServer& server) {
  int n = 0;
  for (const RecordedRequest& r : server.requests()) n += IsSelectionRequest(r);
  return n;
}

class AllInOneLlmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("all-in-one-llm");
    base_ = dir_ + "/art";
    testing::PublishSmallSuite(base_);
    ASSERT_FALSE(HasFatalFailure());
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    fake_ = *std::move(fake);
    // Selection prompts get index 0 (the mention's best rejected candidate); the reasoner's
    // prompts get an answer in its format.
    fake_->SetHandler([](const RecordedRequest& request) {
      return IsSelectionRequest(request)
                 ? FakeResponse::Completion(
                       R"({"selected_entity": {"name": "x", "id": 0, "reason": "r"}})")
                 : FakeResponse::Completion(
                       "ans: A\nwhy: (Metformin, drug treats disease, type 2 diabetes mellitus)");
    });
    common::test_util::WriteFileOrDie(
        dir_ + "/reasoner.textproto",
        absl::StrCat("backends {\n  name: \"llm\"\n  base_url: \"", fake_->base_url(),
                     "\"\n  model: \"fake-model\"\n  timeout_seconds: 5\n  max_retries: 0\n}\n"
                     "default_backend: \"llm\"\n"));
  }

  absl::StatusOr<Subprocess> Start(const std::vector<std::string>& extra, int* port) {
    std::vector<std::string> argv = {BinDir() + "/ibgraphrag",
                                     "--base=" + base_,
                                     "--host=127.0.0.1",
                                     "--port=0",
                                     "--metrics_port=-1",
                                     "--device=cpu",
                                     "--reasoner_config=" + dir_ + "/reasoner.textproto"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    // A log per start: the ready line of an earlier process must not answer for this one.
    auto process = Subprocess::Start(argv, absl::StrCat(dir_, "/ibgraphrag.", starts_++, ".log"));
    if (!process.ok()) return process.status();
    auto ready = process->WaitForReadyPort("ibgraphrag", absl::Seconds(90));
    if (!ready.ok()) return ready.status();
    *port = *ready;
    return process;
  }

  static grpc::Status Ask(int port, pb::AnswerResponse* response) {
    auto stub = pb::GatewayService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
    pb::AnswerRequest request;
    request.set_question("Which drug treats type 2 diabetes mellitus?");
    request.add_options("Metformin");
    request.add_options("Polyuria");
    request.set_task(pb::TASK_MULTIPLE_CHOICE);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    return stub->Answer(&ctx, request, response);
  }

  std::string dir_;
  std::string base_;
  int starts_ = 0;
  std::unique_ptr<FakeOpenAiServer> fake_;
};

TEST_F(AllInOneLlmTest, AlignmentUsesTheReasonersBackendForLlmSelection) {
  int port = 0;
  auto process = Start({}, &port);
  ASSERT_OK(process);
  pb::AnswerResponse response;
  const grpc::Status status = Ask(port, &response);
  ASSERT_OK(status) << process->ReadLog();

  EXPECT_GE(SelectionRequests(*fake_), 1);
  int chosen = 0;
  for (const pb::AlignedEntity& e : response.entities()) chosen += e.chosen_by_llm();
  EXPECT_GE(chosen, 1) << response.DebugString();
  for (const pb::Degradation& d : response.degraded()) {
    EXPECT_NE(d.component(), "alignment_llm") << d.reason();
  }
  auto exit = process->Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(exit);
  EXPECT_EQ(*exit, 0) << process->ReadLog();
  // Question text and model output stay out of the log.
  EXPECT_THAT(process->ReadLog(), ::testing::Not(HasSubstr("Which drug treats")));
  // The model was trained without the LLM step, which now runs: the start says so.
  EXPECT_THAT(process->ReadLog(), HasSubstr("\"trained_alignment_llm\":\"none\""));
}

TEST_F(AllInOneLlmTest, NoneTurnsTheStepOffAndAnUnknownBackendIsRefused) {
  int port = 0;
  auto process = Start({"--alignment_llm_backend=none"}, &port);
  ASSERT_OK(process);
  pb::AnswerResponse response;
  const grpc::Status status = Ask(port, &response);
  ASSERT_OK(status);
  EXPECT_EQ(SelectionRequests(*fake_), 0);
  EXPECT_GE(fake_->request_count(), 1);  // the reasoner still uses the LLM
  for (const pb::AlignedEntity& e : response.entities()) EXPECT_FALSE(e.chosen_by_llm());
  for (const pb::Degradation& d : response.degraded()) {
    EXPECT_NE(d.component(), "alignment_llm") << d.reason();
  }
  ASSERT_OK(process->Stop(SIGTERM, absl::Seconds(30)));
  // Trained and served alike (no LLM step): no train/serve warning.
  EXPECT_THAT(process->ReadLog(), Not(HasSubstr("trained_alignment_llm")));

  auto refused = Start({"--alignment_llm_backend=nosuch"}, &port);
  ASSERT_THAT(refused, Not(IsOk()));
  EXPECT_THAT(refused.status().message(), HasSubstr("--alignment_llm_backend"));
}

}  // namespace
}  // namespace ibgraphrag::gateway
