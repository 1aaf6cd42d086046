// Integration test of the distributed suite: the real kgstore, alignment, retriever, reasoner and
// gateway binaries on loopback (artifacts built in the test; the LLM is the scripted fake
// OpenAI server). Checks answers with evidence, authentication, rate limiting, bad input, and
// the failure modes: LLM down → extractive answer flagged, retriever killed → shortest-path
// evidence flagged, reasoner killed → the gateway's extractive answer flagged, alignment killed
// → UNAVAILABLE, deadline too short → DEADLINE_EXCEEDED.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/api_keys.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/small_suite_fixture.h"

namespace ibgraphrag::gateway {
namespace {

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::Sha256Hex;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "s3cret-clinic-key";
constexpr char kFloodKey[] = "flood-key";

class GatewayIntegrationTest : public ::ibgraphrag::testing::SmallSuiteOnLoopback {
 protected:
  static void SetUpTestSuite() {
    StartSuite("gateway-it", [](const std::string& dir) {
      keys_file_ = new std::string(dir + "/api_keys");
      common::test_util::WriteFileOrDie(*keys_file_,
                                        absl::StrCat("# test keys\nclinic:", Sha256Hex(kKey),
                                                     "\nflood:", Sha256Hex(kFloodKey), "\n"));
      return std::vector<std::string>{"--api_keys_file=" + *keys_file_, "--rate_limit_qps=20",
                                      "--rate_limit_burst=20"};
    });
  }

  static void TearDownTestSuite() {
    StopSuite();
    delete keys_file_;
    keys_file_ = nullptr;
  }

  static pb::AnswerRequest DiabetesQuestion() { return testing::SmallSuiteDiabetesQuestion(); }

  grpc::Status Ask(const pb::AnswerRequest& request, pb::AnswerResponse* response,
                   const std::string& key = kKey, int deadline_ms = 15000) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
    if (!key.empty()) ctx.AddMetadata("authorization", "Bearer " + key);
    return stub_->Answer(&ctx, request, response);
  }

  static bool HasDegraded(const pb::AnswerResponse& r, const std::string& component) {
    for (const auto& d : r.degraded()) {
      if (d.component() == component) return true;
    }
    return false;
  }

  static bool HasEvidence(const pb::AnswerResponse& r, const std::string& head,
                          const std::string& tail) {
    for (const auto& t : r.evidence()) {
      if (t.head().name() == head && t.tail().name() == tail) return true;
    }
    return false;
  }

  static std::string* keys_file_;
};

std::string* GatewayIntegrationTest::keys_file_ = nullptr;

TEST_F(GatewayIntegrationTest, AnswersWithEntitiesEvidenceTimingsAndVersions) {
  pb::AnswerResponse response;
  grpc::Status status = Ask(DiabetesQuestion(), &response);
  ASSERT_OK(status);
  bool diabetes = false;
  for (const auto& e : response.entities()) {
    diabetes |= e.entity().external_id() == "DOID:9352";
  }
  EXPECT_TRUE(diabetes) << response.DebugString();
  EXPECT_TRUE(HasEvidence(response, "Metformin", "type 2 diabetes mellitus"))
      << response.DebugString();
  EXPECT_GT(response.paths_size(), 0);
  EXPECT_EQ(response.answer().option_index(), 0) << response.answer().DebugString();
  EXPECT_EQ(response.answer().backend(), "extractive");
  EXPECT_FALSE(HasDegraded(response, "retriever"));
  EXPECT_FALSE(HasDegraded(response, "reasoner"));
  std::set<std::string> stages;
  for (const auto& t : response.timings()) stages.insert(t.stage());
  for (const char* stage : {"align", "retrieve", "reason", "total", "gateway_overhead"}) {
    EXPECT_TRUE(stages.count(stage)) << stage;
  }
  EXPECT_EQ(response.versions().kg_version(), "1");
  EXPECT_EQ(response.versions().alignment_bundle_version(), "1");
  EXPECT_EQ(response.versions().retriever_model_version(), "1");
  EXPECT_FALSE(response.versions().prompt_version().empty());
  EXPECT_EQ(response.request_id().size(), 32u);
}

TEST_F(GatewayIntegrationTest, LlmBackendAnswers) {
  pb::AnswerRequest request = DiabetesQuestion();
  request.mutable_pipeline()->set_reasoner_backend("llm");
  pb::AnswerResponse response;
  grpc::Status status = Ask(request, &response);
  ASSERT_OK(status);
  EXPECT_TRUE(response.answer().used_llm());
  EXPECT_EQ(response.answer().option_letter(), "A");
  EXPECT_FALSE(HasDegraded(response, "llm"));
}

TEST_F(GatewayIntegrationTest, StreamSendsStagesThenResult) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
  ctx.AddMetadata("x-api-key", kKey);
  pb::AnswerStreamRequest request;
  *request.mutable_request() = DiabetesQuestion();
  auto reader = stub_->AnswerStream(&ctx, request);
  std::vector<std::string> stages;
  pb::AnswerStreamResponse message;
  bool result_last = false;
  while (reader->Read(&message)) {
    result_last = message.has_result();
    if (message.has_stage()) stages.push_back(message.stage().stage());
  }
  grpc::Status status = reader->Finish();
  ASSERT_OK(status);
  EXPECT_EQ(stages, (std::vector<std::string>{"align", "retrieve", "reason"}));
  EXPECT_TRUE(result_last);
}

TEST_F(GatewayIntegrationTest, RefusesMissingOrWrongKeys) {
  pb::AnswerResponse response;
  EXPECT_THAT(Ask(DiabetesQuestion(), &response, ""), StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_THAT(Ask(DiabetesQuestion(), &response, "not-the-key"),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
}

TEST_F(GatewayIntegrationTest, RotatesKeysWithoutRestart) {
  const std::string rotated = "rotated-key";
  common::test_util::WriteFileOrDie(
      *keys_file_, absl::StrCat("clinic:", Sha256Hex(kKey), "\nflood:", Sha256Hex(kFloodKey),
                                "\nnew:", Sha256Hex(rotated), "\n"));
  pb::AnswerResponse response;
  grpc::Status status;
  for (int i = 0; i < 40; ++i) {  // the gateway re-checks the file every 2 s
    status = Ask(DiabetesQuestion(), &response, rotated);
    if (status.ok()) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_OK(status);
}

TEST_F(GatewayIntegrationTest, BadInputNamesTheField) {
  pb::AnswerResponse response;
  pb::AnswerRequest request = DiabetesQuestion();
  request.set_question(std::string(16 * 1024 + 1, 'a'));
  grpc::Status status = Ask(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("question")));
  request = DiabetesQuestion();
  request.mutable_pipeline()->set_top_k(5000);
  status = Ask(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("pipeline.top_k")));
  // Invalid UTF-8 never reaches protobuf's parser (which would make it INTERNAL): the gateway
  // names the field, after checking the key.
  request = DiabetesQuestion();
  request.set_question(std::string("metformin \xC3 diabetes", 20));
  status = Ask(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(status.error_message(), "question: not valid UTF-8");
  EXPECT_THAT(Ask(request, &response, "wrong-key"), StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  request = DiabetesQuestion();
  request.set_options(1, std::string("Poly\xFFuria", 10));
  status = Ask(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_EQ(status.error_message(), "options[1]: not valid UTF-8");
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ctx.AddMetadata("x-api-key", kKey);
    pb::AnswerStreamRequest stream_request;
    *stream_request.mutable_request() = DiabetesQuestion();
    stream_request.mutable_request()->set_question(std::string("bad \xC3", 5));
    auto reader = stub_->AnswerStream(&ctx, stream_request);
    pb::AnswerStreamResponse message;
    while (reader->Read(&message)) {
    }
    status = reader->Finish();
    EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT));
    EXPECT_EQ(status.error_message(), "request.question: not valid UTF-8");
  }
  request = DiabetesQuestion();
  request.mutable_pipeline()->set_reasoner_backend("no-such-backend");
  status = Ask(request, &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::INVALID_ARGUMENT, HasSubstr("no-such-backend")));
}

TEST_F(GatewayIntegrationTest, RateLimitsPerCaller) {
  pb::AnswerRequest empty;  // refused after the rate limit check, so requests are cheap
  int exhausted = 0;
  for (int i = 0; i < 60; ++i) {
    pb::AnswerResponse response;
    if (Ask(empty, &response, kFloodKey).error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
    }
  }
  EXPECT_GT(exhausted, 0);
  // Another caller is not affected.
  pb::AnswerResponse response;
  EXPECT_OK(Ask(DiabetesQuestion(), &response));
}

TEST_F(GatewayIntegrationTest, DeadlineTooShortIsDeadlineExceeded) {
  pb::AnswerResponse response;
  grpc::Status status = Ask(DiabetesQuestion(), &response, kKey, /*deadline_ms=*/1);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::DEADLINE_EXCEEDED));
}

// Runs last (gtest keeps declaration order): it kills services one by one.
TEST_F(GatewayIntegrationTest, ZDegradesWhenServicesFail) {
  // LLM down: the reasoner answers extractively and says so.
  fake_->SetDefault(FakeResponse::Error(503, "overloaded"));
  pb::AnswerRequest llm = DiabetesQuestion();
  llm.mutable_pipeline()->set_reasoner_backend("llm");
  pb::AnswerResponse response;
  grpc::Status status = Ask(llm, &response);
  ASSERT_OK(status);
  EXPECT_TRUE(HasDegraded(response, "llm")) << response.DebugString();
  EXPECT_FALSE(response.answer().used_llm());

  // Retriever killed: shortest-path evidence from kgstore, flagged.
  ASSERT_OK(suite_->Kill("retriever"));
  response.Clear();
  status = Ask(DiabetesQuestion(), &response);
  ASSERT_OK(status);
  EXPECT_TRUE(HasDegraded(response, "retriever")) << response.DebugString();
  EXPECT_TRUE(HasEvidence(response, "Metformin", "type 2 diabetes mellitus"));
  EXPECT_EQ(response.answer().option_index(), 0);

  // Reasoner killed: the gateway answers extractively, flagged.
  ASSERT_OK(suite_->Kill("reasoner"));
  response.Clear();
  status = Ask(DiabetesQuestion(), &response);
  ASSERT_OK(status);
  EXPECT_TRUE(HasDegraded(response, "reasoner")) << response.DebugString();
  EXPECT_EQ(response.answer().backend(), "extractive");
  EXPECT_EQ(response.answer().option_index(), 0);

  // Alignment killed: no entities, no grounded answer.
  ASSERT_OK(suite_->Kill("alignment"));
  response.Clear();
  status = Ask(DiabetesQuestion(), &response);
  EXPECT_THAT(status, StatusIs(grpc::StatusCode::UNAVAILABLE, HasSubstr("alignment")));

  // The gateway itself stays up and healthy, and drains on SIGTERM.
  auto exit = suite_->process("gateway").Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(exit);
  EXPECT_EQ(*exit, 0);
  const std::string log = suite_->process("gateway").ReadLog();
  EXPECT_THAT(log, HasSubstr("\"msg\":\"gateway: audit\""));
  EXPECT_THAT(log, Not(HasSubstr("type 2 diabetes")));  // question text never logged
}

}  // namespace
}  // namespace ibgraphrag::gateway
