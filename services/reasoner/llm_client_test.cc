// The reasoner's side of its LLM backends. The client's generic behaviour (requests, streaming,
// retries, timeouts, keys, concurrency, connection reuse) is tested in
// common/openai_client_test.cc.
#include "services/reasoner/llm_client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::reasoner {
namespace {

using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;

// A config Create accepts (nothing listens at the URL; these tests make no call).
LlmBackendConfig ValidConfig() {
  LlmBackendConfig config;
  config.name = "fake";
  config.base_url = "http://127.0.0.1:9/v1";
  config.model = "fake-model";
  return config;
}

TEST(LlmClientTest, CreatesAClientThatAnswersAndLogsEachAttempt) {
  auto server = FakeOpenAiServer::Start();
  ASSERT_OK(server);
  (*server)->Enqueue(FakeResponse::Completion("ans: B"));
  LlmBackendConfig config = ValidConfig();
  config.base_url = (*server)->base_url();
  absl::Mutex mu;
  std::vector<std::string> lines;
  auto client = CreateLlmClient(config, [&](absl::string_view line) {
    absl::MutexLock lock(&mu);
    lines.emplace_back(line);
  });
  ASSERT_OK(client);
  ChatRequest request;
  request.messages = {{"user", "Question?"}};
  auto response = (*client)->Complete(request, absl::Now() + absl::Seconds(10));
  ASSERT_OK(response);
  EXPECT_EQ(response->content, "ans: B");
  absl::MutexLock lock(&mu);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("llm backend=fake attempt=1/3 result=OK"));
}

TEST(LlmClientTest, RejectsBadConfigFields) {
  LlmBackendConfig config = ValidConfig();
  config.base_url = "127.0.0.1:8000/v1";
  EXPECT_THAT(CreateLlmClient(config).status().message(), HasSubstr("base_url"));
  config = ValidConfig();
  config.name = "extractive";
  EXPECT_THAT(CreateLlmClient(config), StatusIs(absl::StatusCode::kInvalidArgument));
  config = ValidConfig();
  config.max_concurrency = 0;
  EXPECT_THAT(CreateLlmClient(config).status().message(), HasSubstr("max_concurrency"));
}

TEST(LlmClientTest, ReservedNamesAreRefusedWithAReason) {
  for (const char* name : {"", "extractive"}) {
    LlmBackendConfig config = ValidConfig();
    config.name = name;
    auto client = CreateLlmClient(config);
    EXPECT_THAT(client, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")))
        << name;
  }
}

}  // namespace
}  // namespace ibgraphrag::reasoner
