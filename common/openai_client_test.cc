#include "common/openai_client.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::HangingLoopbackListener;
using ::ibgraphrag::common::test_util::LogCapture;
using ::ibgraphrag::common::test_util::RecordedRequest;
using ::ibgraphrag::common::test_util::StatusIs;
using ::ibgraphrag::common::test_util::UnusedLoopbackPort;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

ChatRequest SimpleRequest() {
  ChatRequest request;
  request.messages = {{"system", "You answer."}, {"user", "Question?"}};
  request.temperature = 0.0;
  request.seed = 7;
  request.max_tokens = 64;
  request.stop = {"\n\n"};
  return request;
}

class OpenAiClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = FakeOpenAiServer::Start();
    ASSERT_OK(server);
    server_ = *std::move(server);
    config_.name = "fake";
    config_.base_url = server_->base_url();
    config_.model = "fake-model";
    config_.timeout = absl::Seconds(10);
    config_.initial_backoff = absl::Milliseconds(10);
    config_.max_backoff = absl::Milliseconds(40);
  }

  std::unique_ptr<OpenAiClient> MakeClient() {
    auto client = OpenAiClient::Create(config_, logs_.Fn());
    EXPECT_OK(client);
    return client.ok() ? *std::move(client) : nullptr;
  }

  static absl::Time Deadline(absl::Duration in = absl::Seconds(10)) { return absl::Now() + in; }

  std::unique_ptr<FakeOpenAiServer> server_;
  OpenAiClientOptions config_;
  LogCapture logs_;
};

TEST_F(OpenAiClientTest, PostsAnOpenAiChatCompletionRequest) {
  server_->Enqueue(FakeResponse::Completion("ans: B"));
  auto client = MakeClient();
  ASSERT_OK(client->Complete(SimpleRequest(), Deadline()));
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_THAT(requests[0].Header("content-type"), HasSubstr("application/json"));
  const nlohmann::json body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body["model"], "fake-model");
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][1]["content"], "Question?");
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(body["max_tokens"], 64);
  EXPECT_EQ(body["stop"][0], "\n\n");
  EXPECT_FALSE(body.contains("stream"));
}

TEST_F(OpenAiClientTest, UsesTheBackendMaxTokensWhenTheRequestLeavesItZero) {
  config_.max_tokens = 99;
  auto client = MakeClient();
  ChatRequest request = SimpleRequest();
  request.max_tokens = 0;
  ASSERT_OK(client->Complete(request, Deadline()));
  EXPECT_EQ(nlohmann::json::parse(server_->requests()[0].body)["max_tokens"], 99);
}

TEST_F(OpenAiClientTest, ReturnsTheAssistantMessage) {
  server_->Enqueue(FakeResponse::Completion("ans: B) Aspirin\nwhy: evidence"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  ASSERT_OK(response);
  EXPECT_EQ(response->content, "ans: B) Aspirin\nwhy: evidence");
  EXPECT_EQ(response->finish_reason, "stop");
  EXPECT_EQ(response->model, "fake-model");
  EXPECT_EQ(response->attempts, 1);
  EXPECT_EQ(response->prompt_tokens, 100);
  EXPECT_EQ(response->completion_tokens, 5);
}

TEST_F(OpenAiClientTest, StreamsTokensInOrderThenReturnsTheWholeMessage) {
  FakeResponse stream = FakeResponse::Stream({"ans", ":", " B", ")", " Aspirin"});
  stream.event_interval = absl::Milliseconds(5);
  server_->Enqueue(stream);
  auto client = MakeClient();
  std::vector<std::string> tokens;
  auto response = client->Complete(SimpleRequest(), Deadline(),
                                   [&tokens](absl::string_view t) { tokens.emplace_back(t); });
  ASSERT_OK(response);
  EXPECT_THAT(tokens, ElementsAre("ans", ":", " B", ")", " Aspirin"));
  EXPECT_EQ(response->content, "ans: B) Aspirin");
  EXPECT_EQ(response->finish_reason, "stop");
  const nlohmann::json body = nlohmann::json::parse(server_->requests()[0].body);
  EXPECT_EQ(body["stream"], true);
  EXPECT_THAT(server_->requests()[0].Header("accept"), HasSubstr("text/event-stream"));
}

TEST_F(OpenAiClientTest, StreamingAcceptsAServerThatAnswersWithPlainJson) {
  server_->Enqueue(FakeResponse::Completion("ans: C"));
  auto client = MakeClient();
  std::vector<std::string> tokens;
  auto response = client->Complete(SimpleRequest(), Deadline(),
                                   [&tokens](absl::string_view t) { tokens.emplace_back(t); });
  ASSERT_OK(response);
  EXPECT_THAT(tokens, ElementsAre("ans: C"));
}

TEST_F(OpenAiClientTest, MalformedStreamEventIsInternal) {
  FakeResponse stream = FakeResponse::Stream({"ans"});
  stream.sse_events.insert(stream.sse_events.begin() + 2, "{this is not json");
  server_->Enqueue(stream);
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline(), [](absl::string_view) {});
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kInternal, HasSubstr("malformed stream event")));
}

TEST_F(OpenAiClientTest, StreamCutBeforeDoneIsUnavailable) {
  FakeResponse stream = FakeResponse::Stream({"ans", ": B"});
  stream.sse_events.resize(3);  // role chunk + two tokens; no finish chunk, no [DONE]
  server_->Enqueue(stream);
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline(), [](absl::string_view) {});
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("[DONE]")));
  EXPECT_EQ(server_->request_count(), 1);  // tokens were delivered: no retry
}

TEST_F(OpenAiClientTest, SlowResponsePastTheDeadlineIsDeadlineExceededWithoutHanging) {
  FakeResponse slow = FakeResponse::Completion("ans: A");
  slow.delay = absl::Seconds(8);
  server_->SetDefault(slow);
  auto client = MakeClient();
  const absl::Time start = absl::Now();
  auto response = client->Complete(SimpleRequest(), Deadline(absl::Milliseconds(300)));
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_THAT(response,
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("request deadline")));
  EXPECT_LT(elapsed, absl::Seconds(8));  // the deadline, not the server, ended the call
  EXPECT_EQ(server_->request_count(), 1);
}

TEST_F(OpenAiClientTest, PerCallTimeoutEndsACallBeforeALaterDeadline) {
  config_.timeout = absl::Milliseconds(200);
  FakeResponse slow = FakeResponse::Completion("ans: A");
  slow.delay = absl::Seconds(8);
  server_->SetDefault(slow);
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline(absl::Seconds(30)));
  EXPECT_THAT(response,
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("backend timeout")));
}

TEST_F(OpenAiClientTest, RetriesAfter429AndSucceeds) {
  FakeResponse busy = FakeResponse::Error(429, "rate limited");
  busy.headers = {{"Retry-After", "0"}};
  server_->Enqueue(busy);
  server_->Enqueue(FakeResponse::Completion("ans: D"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  ASSERT_OK(response);
  EXPECT_EQ(response->content, "ans: D");
  EXPECT_EQ(response->attempts, 2);
  EXPECT_EQ(server_->request_count(), 2);
}

TEST_F(OpenAiClientTest, PersistentServerErrorIsUnavailableAfterBoundedAttempts) {
  config_.max_retries = 2;
  server_->SetDefault(FakeResponse::Error(500, "model crashed"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kUnavailable,
                                 ::testing::AllOf(HasSubstr("HTTP 500"), HasSubstr("3 attempts"))));
  EXPECT_EQ(server_->request_count(), 3);
}

TEST_F(OpenAiClientTest, Persistent429IsResourceExhausted) {
  config_.max_retries = 1;
  server_->SetDefault(FakeResponse::Error(429, "slow down"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(server_->request_count(), 2);
}

TEST_F(OpenAiClientTest, DoesNotRetryABadRequest) {
  config_.max_retries = 3;
  server_->SetDefault(FakeResponse::Error(400, "maximum context length is 4096 tokens"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  EXPECT_THAT(response,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("maximum context length")));
  EXPECT_EQ(server_->request_count(), 1);
}

TEST_F(OpenAiClientTest, MapsAuthErrorsToAuthCodes) {
  server_->Enqueue(FakeResponse::Error(401, "bad key"));
  server_->Enqueue(FakeResponse::Error(403, "no access"));
  server_->Enqueue(FakeResponse::Error(404, "no such model"));
  auto client = MakeClient();
  EXPECT_THAT(client->Complete(SimpleRequest(), Deadline()),
              StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_THAT(client->Complete(SimpleRequest(), Deadline()),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(client->Complete(SimpleRequest(), Deadline()), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(server_->request_count(), 3);
}

TEST_F(OpenAiClientTest, MalformedJsonIsInternalWithAClearMessage) {
  server_->Enqueue(FakeResponse::Raw(200, "{\"choices\": [ {\"message\": "));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kInternal,
                                 HasSubstr("backend 'fake' returned malformed JSON")));
  EXPECT_EQ(server_->request_count(), 1);
}

TEST_F(OpenAiClientTest, JsonWithoutChoicesIsInternal) {
  server_->Enqueue(FakeResponse::Raw(200, "{\"object\": \"list\"}"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kInternal, HasSubstr("choices[0]")));
}

TEST_F(OpenAiClientTest, ConnectionRefusedIsUnavailable) {
  auto port = UnusedLoopbackPort();
  ASSERT_OK(port);
  config_.base_url = absl::StrCat("http://127.0.0.1:", *port, "/v1");
  config_.max_retries = 1;
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("2 attempts")));
}

TEST_F(OpenAiClientTest, ConnectionClosedWithoutAnswerIsRetried) {
  FakeResponse hang_up;
  hang_up.close_without_answer = true;
  server_->Enqueue(hang_up);
  server_->Enqueue(FakeResponse::Completion("ans: A"));
  auto client = MakeClient();
  auto response = client->Complete(SimpleRequest(), Deadline());
  ASSERT_OK(response);
  EXPECT_EQ(response->attempts, 2);
}

TEST_F(OpenAiClientTest, RetryAfterPastTheDeadlineIsNotWaitedFor) {
  FakeResponse busy = FakeResponse::Error(503, "overloaded");
  busy.headers = {{"Retry-After", "30"}};
  server_->SetDefault(busy);
  auto client = MakeClient();
  const absl::Time start = absl::Now();
  auto response = client->Complete(SimpleRequest(), Deadline(absl::Seconds(2)));
  EXPECT_THAT(response,
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("deadline comes first")));
  EXPECT_EQ(server_->request_count(), 1);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

TEST_F(OpenAiClientTest, SendsTheApiKeyAsBearerAndNeverLogsIt) {
  const std::string key = "sk-test-0123456789-secret";
  ASSERT_EQ(setenv("IBGR_OPENAI_CLIENT_TEST_KEY", key.c_str(), 1), 0);
  config_.api_key_env = "IBGR_OPENAI_CLIENT_TEST_KEY";
  server_->Enqueue(FakeResponse::Error(500, "flaky"));
  server_->Enqueue(FakeResponse::Completion("ans: A"));
  server_->Enqueue(FakeResponse::Error(401, "invalid key"));
  auto client = MakeClient();
  ASSERT_OK(client->Complete(SimpleRequest(), Deadline()));
  const absl::Status failure = client->Complete(SimpleRequest(), Deadline()).status();
  unsetenv("IBGR_OPENAI_CLIENT_TEST_KEY");

  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& request : requests) {
    EXPECT_EQ(request.Header("authorization"), "Bearer " + key);
    EXPECT_THAT(request.body, Not(HasSubstr(key)));
  }
  const std::vector<std::string> lines = logs_.lines();
  EXPECT_GE(lines.size(), 3u);  // one line per attempt
  for (const std::string& line : lines) EXPECT_THAT(line, Not(HasSubstr(key)));
  EXPECT_THAT(std::string(failure.message()), Not(HasSubstr(key)));
}

TEST_F(OpenAiClientTest, ReadsTheApiKeyFileOnEveryCallSoRotationTakesEffect) {
  const std::filesystem::path file =
      std::filesystem::path(::testing::TempDir()) / "openai_client_test_key";
  std::ofstream(file) << "first-key\n";
  config_.api_key_file = file.string();
  auto client = MakeClient();
  ASSERT_OK(client->Complete(SimpleRequest(), Deadline()));
  std::ofstream(file, std::ios::trunc) << "  second-key  \n";
  ASSERT_OK(client->Complete(SimpleRequest(), Deadline()));
  std::filesystem::remove(file);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].Header("authorization"), "Bearer first-key");
  EXPECT_EQ(requests[1].Header("authorization"), "Bearer second-key");
}

TEST_F(OpenAiClientTest, SendsNoAuthorizationWithoutAKey) {
  auto client = MakeClient();
  ASSERT_OK(client->Complete(SimpleRequest(), Deadline()));
  EXPECT_EQ(server_->requests()[0].Header("authorization"), "");
}

TEST_F(OpenAiClientTest, MissingKeySourcesFailCreate) {
  config_.api_key_env = "IBGR_OPENAI_CLIENT_TEST_KEY_THAT_IS_NOT_SET";
  auto from_env = OpenAiClient::Create(config_);
  EXPECT_THAT(from_env, StatusIs(absl::StatusCode::kFailedPrecondition,
                                 HasSubstr("IBGR_OPENAI_CLIENT_TEST_KEY_THAT_IS_NOT_SET")));
  config_.api_key_env.clear();
  config_.api_key_file = "/nonexistent/secret/key";
  EXPECT_THAT(OpenAiClient::Create(config_), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(OpenAiClientTest, RejectsBadConfigFields) {
  OpenAiClientOptions config = config_;
  config.base_url = "127.0.0.1:8000/v1";
  EXPECT_THAT(OpenAiClient::Create(config).status().message(), HasSubstr("base_url"));
  config = config_;
  config.name = "";
  EXPECT_THAT(OpenAiClient::Create(config), StatusIs(absl::StatusCode::kInvalidArgument));
  config = config_;
  config.max_concurrency = 0;
  EXPECT_THAT(OpenAiClient::Create(config).status().message(), HasSubstr("max_concurrency"));
  config = config_;
  config.max_retries = 11;
  EXPECT_THAT(OpenAiClient::Create(config).status().message(), HasSubstr("max_retries"));
}

TEST_F(OpenAiClientTest, RespectsTheConcurrencyLimit) {
  config_.max_concurrency = 2;
  FakeResponse slow = FakeResponse::Completion("ans: A");
  slow.delay = absl::Milliseconds(150);
  server_->SetDefault(slow);
  auto client = MakeClient();
  std::vector<absl::Status> results(6);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&client, &results, i] {
      results[i] = client->Complete(SimpleRequest(), Deadline()).status();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : results) EXPECT_OK(status);
  EXPECT_EQ(server_->request_count(), 6);
  EXPECT_LE(server_->max_concurrent(), 2);
  EXPECT_GE(server_->max_concurrent(), 1);
  EXPECT_EQ(client->in_flight(), 0);
}

TEST_F(OpenAiClientTest, WaitingForASlotGivesUpAtTheDeadline) {
  config_.max_concurrency = 1;
  config_.max_retries = 0;
  FakeResponse slow = FakeResponse::Completion("ans: A");
  slow.delay = absl::Seconds(8);
  server_->SetDefault(slow);
  auto client = MakeClient();
  std::thread holder([&client] { (void)client->Complete(SimpleRequest(), Deadline()); });
  while (server_->request_count() == 0) absl::SleepFor(absl::Milliseconds(5));
  auto response = client->Complete(SimpleRequest(), Deadline(absl::Milliseconds(100)));
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("no free slot")));
  EXPECT_EQ(server_->request_count(), 1);
  server_->Stop();  // ends the held call
  holder.join();
}

TEST_F(OpenAiClientTest, ReusesTheConnectionAcrossCalls) {
  server_->SetKeepAlive(true);
  auto client = MakeClient();
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(client->Complete(SimpleRequest(), Deadline()));
  }
  ASSERT_THAT(client->Embed({"a"}, Deadline()), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(server_->request_count(), 4);
  EXPECT_EQ(server_->connection_count(), 1);
}

// ---- Embeddings ----

// A fake /v1/embeddings: vector i of a request is (len(input i), i + 1), listed in reverse.
FakeResponse EmbeddingsAnswer(const RecordedRequest& request) {
  const nlohmann::json body = nlohmann::json::parse(request.body);
  nlohmann::json data = nlohmann::json::array();
  const nlohmann::json& input = body["input"];
  for (int i = static_cast<int>(input.size()) - 1; i >= 0; --i) {
    data.push_back({{"object", "embedding"},
                    {"index", i},
                    {"embedding", {input[i].get<std::string>().size(), i + 1}}});
  }
  return FakeResponse::Raw(
      request.path == "/v1/embeddings" ? 200 : 404,
      nlohmann::json({{"object", "list"}, {"data", data}, {"model", body["model"]}}).dump());
}

TEST_F(OpenAiClientTest, EmbedPostsInputsAndOrdersVectorsByIndex) {
  server_->SetHandler(EmbeddingsAnswer);
  auto client = MakeClient();
  auto response = client->Embed({"abc", "", "x"}, Deadline());
  ASSERT_OK(response);
  ASSERT_EQ(response->vectors.size(), 3u);
  EXPECT_THAT(response->vectors[0], ElementsAre(3.0f, 1.0f));
  EXPECT_THAT(response->vectors[1], ElementsAre(1.0f, 2.0f));  // "" was sent as " "
  EXPECT_THAT(response->vectors[2], ElementsAre(1.0f, 3.0f));
  EXPECT_EQ(response->model, "fake-model");
  EXPECT_EQ(response->attempts, 1);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/embeddings");
  const nlohmann::json body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body["model"], "fake-model");
  EXPECT_EQ(body["input"][1], " ");
}

TEST_F(OpenAiClientTest, EmbedRetriesA503ThenSucceeds) {
  FakeResponse busy = FakeResponse::Error(503, "overloaded");
  server_->Enqueue(busy);
  server_->Enqueue(busy);
  server_->SetHandler(EmbeddingsAnswer);
  auto client = MakeClient();
  auto response = client->Embed({"abc"}, Deadline());
  ASSERT_OK(response);
  EXPECT_THAT(response->vectors[0], ElementsAre(3.0f, 1.0f));
  EXPECT_EQ(response->attempts, 3);
  EXPECT_EQ(server_->request_count(), 3);
}

TEST_F(OpenAiClientTest, EmbedGivesUpOnAPersistent503AsUnavailable) {
  config_.max_retries = 1;
  server_->SetDefault(FakeResponse::Error(503, "overloaded"));
  auto client = MakeClient();
  auto response = client->Embed({"abc"}, Deadline());
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("2 attempts")));
  EXPECT_EQ(server_->request_count(), 2);
}

TEST_F(OpenAiClientTest, MalformedEmbeddingsAreDataLossAndNotRetried) {
  server_->Enqueue(FakeResponse::Raw(200, "not json"));
  server_->Enqueue(FakeResponse::Raw(200, R"({"data":[{"index":0,"embedding":[1,2]}]})"));
  server_->Enqueue(FakeResponse::Raw(200, R"({"data":[{"index":5,"embedding":[1]}]})"));
  server_->Enqueue(FakeResponse::Raw(200, R"({"data":[{"index":0,"embedding":["a"]}]})"));
  auto client = MakeClient();
  EXPECT_THAT(client->Embed({"a"}, Deadline()), StatusIs(absl::StatusCode::kDataLoss));
  auto count = client->Embed({"a", "b"}, Deadline());
  EXPECT_THAT(count, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("1 embeddings for 2 inputs")));
  EXPECT_THAT(client->Embed({"a"}, Deadline()), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(client->Embed({"a"}, Deadline()), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(server_->request_count(), 4);
}

TEST_F(OpenAiClientTest, EmbedToAClosedPortIsUnavailableWithinTheConnectTimeout) {
  auto port = UnusedLoopbackPort();
  ASSERT_OK(port);
  config_.base_url = absl::StrCat("http://127.0.0.1:", *port, "/v1");
  config_.connect_timeout = absl::Seconds(1);
  config_.max_retries = 0;
  auto client = MakeClient();
  const absl::Time start = absl::Now();
  auto response = client->Embed({"a"}, absl::InfiniteFuture());
  EXPECT_LT(absl::Now() - start, config_.connect_timeout);
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("unreachable")));
}

TEST_F(OpenAiClientTest, ConnectThatHangsEndsAtTheConnectTimeoutAsUnavailable) {
  auto listener = HangingLoopbackListener::Create();
  ASSERT_OK(listener);
  config_.base_url = absl::StrCat("http://127.0.0.1:", (*listener)->port(), "/v1");
  config_.connect_timeout = absl::Milliseconds(300);
  config_.timeout = absl::Seconds(10);
  config_.max_retries = 0;
  auto client = MakeClient();
  const absl::Time start = absl::Now();
  auto response = client->Embed({"a"}, Deadline());
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_THAT(response, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_GE(elapsed, absl::Milliseconds(250));
  EXPECT_LT(elapsed, absl::Seconds(3));
}

}  // namespace
}  // namespace ibgraphrag::common
