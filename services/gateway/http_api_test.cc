// The HTTP/JSON API (common/http_gateway.h) of the real binaries on loopback, artifacts built in
// the test: the all-in-one `ibgraphrag` with API keys (answer round trip, server-sent events,
// errors as JSON with the matching HTTP status, health and readiness) and `alignment` alone
// (POST /v1/align).
#include <httplib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "services/gateway/testing/all_in_one_http.h"
#include "services/gateway/testing/small_suite.h"
#include "tests/test_util/subprocess.h"

namespace ibgraphrag::gateway {
namespace {

using ::ibgraphrag::common::test_util::MakeTempDir;
using ::ibgraphrag::testing::BinDir;
using ::ibgraphrag::testing::Subprocess;
using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kKey[] = "http-test-key-1";
constexpr char kQuestion[] = R"({"question": "Which drug treats type 2 diabetes mellitus?",
                                 "options": ["Metformin", "Polyuria"]})";

// The binary's ready line (after --http_port=0 the OS picked the port).
json StartAndWaitReady(Subprocess* process, const std::string& ready_msg) {
  auto line =
      process->WaitForLogLine(absl::StrCat("\"msg\":\"", ready_msg, "\""), absl::Seconds(90));
  EXPECT_OK(line);
  return line.ok() ? json::parse(*line) : json();
}

class HttpApiTest : public gateway::testing::AllInOneHttpTest {
 protected:
  static void SetUpTestSuite() {
    StartSuite("http-api", {"--api_keys_file=$DIR/api_keys"},
               {{"api_keys", absl::StrCat("web-app:", common::Sha256Hex(kKey), "\n")}});
  }
  // The question never reaches the log, whichever way it came in.
  static void TearDownTestSuite() { StopSuite("Which drug treats"); }

  static httplib::Headers WithKey(httplib::Headers headers = {}) {
    headers.emplace("Authorization", absl::StrCat("Bearer ", kKey));
    return headers;
  }
};

// The code and message of a JSON error body, with the HTTP status they came with.
void ExpectError(const httplib::Result& res, int http_status, const std::string& code,
                 const std::string& message_part) {
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, http_status) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  const json body = json::parse(res->body);
  EXPECT_EQ(body["code"], code) << res->body;
  EXPECT_THAT(body["message"].get<std::string>(), HasSubstr(message_part));
}

TEST_F(HttpApiTest, AnswerRoundTripsAsJsonWithEvidenceAndRequestId) {
  auto res = Client().Post("/v1/answer", WithKey({{"X-Request-Id", "http-rid-1"}}), kQuestion,
                           "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body << suite_->ReadLog();
  const json body = json::parse(res->body);
  EXPECT_FALSE(body["answer"]["text"].get<std::string>().empty()) << res->body;
  bool treats = false;
  for (const json& t : body["evidence"]) {
    treats |= t["head"]["name"] == "Metformin" && t["tail"]["name"] == "type 2 diabetes mellitus";
  }
  EXPECT_TRUE(treats) << res->body;
  // The caller's request id went through the gRPC interceptor and came back both ways.
  EXPECT_EQ(body["request_id"], "http-rid-1");
  EXPECT_EQ(res->get_header_value("X-Request-Id"), "http-rid-1");
  EXPECT_FALSE(body["timings"].empty());
}

TEST_F(HttpApiTest, StreamSendsStageEventsThenTheResultAsServerSentEvents) {
  std::vector<json> events;
  auto res = Client().Post("/v1/answer:stream", WithKey(), kQuestion, "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  EXPECT_EQ(res->get_header_value("X-Request-Id").size(), 32u);
  for (absl::string_view event : absl::StrSplit(res->body, "\n\n", absl::SkipEmpty())) {
    ASSERT_TRUE(absl::StartsWith(event, "data: ")) << event;
    events.push_back(json::parse(event.substr(6)));
  }
  ASSERT_GE(events.size(), 4u) << res->body;
  std::vector<std::string> stages;
  for (const json& e : events) {
    if (e.contains("stage")) stages.push_back(e["stage"]["stage"]);
  }
  EXPECT_THAT(stages, ::testing::IsSupersetOf({"align", "retrieve", "reason"}));
  ASSERT_TRUE(events.back().contains("result")) << events.back().dump();
  EXPECT_FALSE(events.back()["result"]["answer"]["text"].get<std::string>().empty());
}

TEST_F(HttpApiTest, MalformedOrMisspeltJsonIs400NamingTheProblem) {
  ExpectError(Client().Post("/v1/answer", WithKey(), "{\"question\": ", "application/json"), 400,
              "INVALID_ARGUMENT", "request body: not a JSON ibgraphrag.v1.AnswerRequest");
  ExpectError(Client().Post("/v1/answer", WithKey(), R"({"qestion": "x"})", "application/json"),
              400, "INVALID_ARGUMENT", "qestion");
  // Past JSON, the gateway's own validation answers, as over gRPC.
  ExpectError(Client().Post("/v1/answer", WithKey(), R"({"question": ""})", "application/json"),
              400, "INVALID_ARGUMENT", "question");
  ExpectError(Client().Post("/v1/answer:stream", WithKey(), "[1]", "application/json"), 400,
              "INVALID_ARGUMENT", "request body");
}

TEST_F(HttpApiTest, MissingOrWrongApiKeyIs401) {
  ExpectError(Client().Post("/v1/answer", kQuestion, "application/json"), 401, "UNAUTHENTICATED",
              "");
  ExpectError(Client().Post("/v1/answer", {{"X-Api-Key", "wrong"}}, kQuestion, "application/json"),
              401, "UNAUTHENTICATED", "");
  // A refused stream is refused before any event, with its own status.
  ExpectError(Client().Post("/v1/answer:stream", kQuestion, "application/json"), 401,
              "UNAUTHENTICATED", "");
  // X-Api-Key is the other accepted header.
  auto res = Client().Post("/v1/answer", {{"X-Api-Key", kKey}}, kQuestion, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

TEST_F(HttpApiTest, DeadlineAndForwardedHeadersAreChecked) {
  ExpectError(
      Client().Post("/v1/answer", WithKey({{"Grpc-Timeout", "1n"}}), kQuestion, "application/json"),
      504, "DEADLINE_EXCEEDED", "");
  ExpectError(Client().Post("/v1/answer", WithKey({{"Grpc-Timeout", "soon"}}), kQuestion,
                            "application/json"),
              400, "INVALID_ARGUMENT", "Grpc-Timeout");
  // Forwarded headers must be valid gRPC metadata; the error names the header.
  ExpectError(Client().Post("/v1/answer", WithKey({{"X-Request-Id", "caf\xc3\xa9"}}), kQuestion,
                            "application/json"),
              400, "INVALID_ARGUMENT", "x-request-id header");
}

TEST_F(HttpApiTest, HealthReadinessUnknownPathsAndOversizedBodies) {
  auto res = Client().Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = Client().Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["status"], "SERVING");
  ExpectError(Client().Post("/v1/nothing", WithKey(), "{}", "application/json"), 404, "NOT_FOUND",
              "/v1/nothing");
  ExpectError(Client().Post("/v1/answer", WithKey(), std::string(2 << 20, ' '), "application/json"),
              413, "RESOURCE_EXHAUSTED", "request body");
}

TEST(AlignmentHttpTest, AlignAloneOverHttp) {
  const std::string dir = MakeTempDir("http-align");
  gateway::testing::PublishSmallSuite(dir + "/art");
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  auto process =
      Subprocess::Start({BinDir() + "/alignment", "--base=" + dir + "/art", "--host=127.0.0.1",
                         "--port=0", "--metrics_port=-1", "--http_port=0"},
                        dir + "/alignment.log");
  ASSERT_OK(process);
  const json ready = StartAndWaitReady(&*process, "alignment: ready");
  ASSERT_TRUE(ready.contains("http_port")) << ready.dump();
  httplib::Client client("127.0.0.1", ready["http_port"].get<int>());
  client.set_read_timeout(30, 0);

  // Nested options (a proto3 `optional` field) parse too: tau 0.45, not the default 0.5, keeps
  // both named entities of this small hash-encoder bundle, and is echoed.
  auto res = client.Post("/v1/align",
                         R"({"text": "Does metformin treat type 2 diabetes mellitus?",
                             "options": {"tau": 0.45}})",
                         "application/json");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body << process->ReadLog();
  const json body = json::parse(res->body);
  std::vector<std::string> kept;
  for (const json& e : body["kept"]) kept.push_back(e["entity"]["name"]);
  EXPECT_THAT(kept, ::testing::IsSupersetOf({"Metformin", "type 2 diabetes mellitus"}))
      << res->body;
  EXPECT_FLOAT_EQ(body["tau"].get<float>(), 0.45f);
  ExpectError(client.Post("/v1/align", R"({"text": ""})", "application/json"), 400,
              "INVALID_ARGUMENT", "text");
  // Only alignment's annotated method is routed here.
  ExpectError(client.Post("/v1/answer", kQuestion, "application/json"), 404, "NOT_FOUND", "");
  res = client.Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;

  auto exit = process->Stop(SIGTERM, absl::Seconds(30));
  ASSERT_OK(exit);
  EXPECT_EQ(*exit, 0) << process->ReadLog();
  if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ibgraphrag::gateway
