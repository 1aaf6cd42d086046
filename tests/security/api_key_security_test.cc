// Security checks of the gateway's callers against the real all-in-one `ibgraphrag` binary on
// loopback (small suite artifacts, the fake LLM server as the reasoner's default backend): no,
// wrong, revoked and rotated API keys over gRPC and HTTP; a key revoked while clients hammer the
// gateway with it is never served once the reload is logged; the rate limit is per caller; and a
// marker put into questions and options (every mode, streaming, HTTP, refused requests) never
// reaches the process's log.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/file_util.h"
#include "common/test_util/fake_openai_server.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ibgraphrag/v1/gateway.grpc.pb.h"
#include "services/gateway/testing/all_in_one_http.h"
#include "tests/test_util/security_gateway_client.h"

namespace ibgraphrag::security {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;

namespace pb = ibgraphrag::v1;
using ::ibgraphrag::common::Sha256Hex;
using ::ibgraphrag::common::test_util::FakeOpenAiServer;
using ::ibgraphrag::common::test_util::FakeResponse;

constexpr char kClinicKey[] = "sec-clinic-key";
constexpr char kRotatedClinicKey[] = "sec-clinic-key-rotated";
constexpr char kRevokedKey[] = "sec-revoked-key";
constexpr char kFloodKey[] = "sec-flood-key";
// Put into every question and option; must never appear in a log line.
constexpr char kMarker[] = "QMARKER7f3a91";
constexpr char kReloadLine[] = "\"msg\":\"gateway: API keys loaded\"";

std::string KeyLine(const std::string& id, const std::string& key) {
  return absl::StrCat(id, ":", Sha256Hex(key), "\n");
}

class ApiKeySecurityTest : public gateway::testing::AllInOneHttpTest {
 protected:
  static void SetUpTestSuite() {
    auto fake = FakeOpenAiServer::Start();
    ASSERT_OK(fake);
    fake_ = fake->release();
    fake_->SetDefault(FakeResponse::Completion(
        "ans: A\nwhy: (Metformin, drug treats disease, type 2 diabetes mellitus)"));
    const std::string reasoner_config =
        absl::StrCat("backends {\n  name: \"llm\"\n  base_url: \"", fake_->base_url(),
                     "\"\n  model: \"fake-model\"\n  timeout_seconds: 5\n  max_retries: 0\n}\n"
                     "default_backend: \"llm\"\n");
    // 50 requests/s per caller: the load test's four clients exceed it, the checks of the
    // other callers stay far below.
    StartSuite("security-keys",
               {"--api_keys_file=$DIR/api_keys", "--rate_limit_qps=50", "--rate_limit_burst=50",
                "--reasoner_config=$DIR/reasoner.textproto"},
               {{"api_keys", InitialKeys()}, {"reasoner.textproto", reasoner_config}},
               /*with_documents=*/true);
    if (::testing::Test::HasFatalFailure()) return;
    auto port = suite_->WaitForReadyPort("ibgraphrag", absl::Seconds(1));
    ASSERT_OK(port);
    grpc_port_ = *port;
  }

  static void TearDownTestSuite() {
    if (suite_ != nullptr) {
      // Every request of the suite was audited, so the scan below covers real request paths.
      EXPECT_GT(CountLines(suite_->ReadLog(), "\"msg\":\"gateway: audit\""), 20);
    }
    StopSuite(kMarker);
    if (fake_ != nullptr) fake_->Stop();
    delete fake_;
    fake_ = nullptr;
  }

  void SetUp() override { ASSERT_NE(grpc_port_, 0); }

  static std::string InitialKeys() {
    return absl::StrCat("# security test keys\n", KeyLine("clinic", kClinicKey),
                        KeyLine("revokee", kRevokedKey), KeyLine("flood", kFloodKey));
  }

  static int CountLines(const std::string& log, absl::string_view needle) {
    int n = 0;
    for (absl::string_view line : absl::StrSplit(log, '\n')) n += absl::StrContains(line, needle);
    return n;
  }

  // Replaces the key file atomically (as a Secret update does) and waits until the gateway
  // logged the reload; `key` keeps calling meanwhile because the file is re-checked on calls.
  // Returns the time the reload line was seen (after the reload itself).
  static absl::Time ReplaceKeysAndWaitForReload(const std::string& contents,
                                                const std::string& key) {
    const int before = CountLines(suite_->ReadLog(), kReloadLine);
    EXPECT_OK(common::WriteStringToFileAtomic(*dir_ + "/api_keys", contents));
    const absl::Time give_up = absl::Now() + absl::Seconds(15);
    while (absl::Now() < give_up) {
      if (CountLines(suite_->ReadLog(), kReloadLine) > before) return absl::Now();
      pb::AnswerResponse response;
      Ask(pb::AnswerRequest(), key, &response);
      absl::SleepFor(absl::Milliseconds(100));
    }
    ADD_FAILURE() << "no reload logged within 15 s: " << suite_->ReadLog();
    return absl::Now();
  }

  static pb::AnswerRequest MarkedQuestion(const std::string& mode = "") {
    return ibgraphrag::testing::MarkedQuestion(kMarker, mode);
  }

  static std::unique_ptr<pb::GatewayService::Stub> Stub() {
    return pb::GatewayService::NewStub(grpc::CreateChannel(absl::StrCat("127.0.0.1:", grpc_port_),
                                                           grpc::InsecureChannelCredentials()));
  }

  static grpc::Status Ask(const pb::AnswerRequest& request, const std::string& key,
                          pb::AnswerResponse* response) {
    return ibgraphrag::testing::AskWithKey(*Stub(), request, key, response);
  }

  static int HttpStatus(const std::string& key) {
    httplib::Headers headers;
    if (!key.empty()) headers.emplace("X-Api-Key", key);
    const std::string body =
        absl::StrCat(R"({"question": "Which drug treats type 2 diabetes mellitus? )", kMarker,
                     R"(", "options": ["Metformin", "Polyuria )", kMarker, R"("]})");
    auto res = Client().Post("/v1/answer", headers, body, "application/json");
    return res ? res->status : -1;
  }

  static inline FakeOpenAiServer* fake_ = nullptr;
  static inline int grpc_port_ = 0;
};

TEST_F(ApiKeySecurityTest, MissingOrWrongKeyIsRefusedOverGrpcAndHttp) {
  pb::AnswerResponse response;
  EXPECT_THAT(Ask(MarkedQuestion(), "", &response), StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_THAT(Ask(MarkedQuestion(), "wrong", &response),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  // A key id or a hash from the file is not a key.
  EXPECT_THAT(Ask(MarkedQuestion(), "clinic", &response),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_THAT(Ask(MarkedQuestion(), Sha256Hex(kClinicKey), &response),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_EQ(HttpStatus(""), 401);
  EXPECT_EQ(HttpStatus("wrong"), 401);
  // Over HTTP too: the key id and the stored hash are refused like any wrong key.
  EXPECT_EQ(HttpStatus("clinic"), 401);
  EXPECT_EQ(HttpStatus(Sha256Hex(kClinicKey)), 401);
  EXPECT_EQ(HttpStatus(kClinicKey), 200);
}

// Clients keep calling with a key while it is removed from the file: once the gateway logged the
// reload, no request sent with that key is answered.
TEST_F(ApiKeySecurityTest, RevokedKeyIsNeverServedAfterTheReloadUnderLoad) {
  struct Outcome {
    absl::Time sent;
    grpc::StatusCode code;
  };
  absl::Mutex mu;
  std::vector<Outcome> outcomes;
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      while (!stop.load()) {
        const absl::Time sent = absl::Now();
        pb::AnswerResponse response;
        const grpc::Status status = Ask(MarkedQuestion(), kRevokedKey, &response);
        absl::MutexLock lock(&mu);
        outcomes.push_back({sent, status.error_code()});
      }
    });
  }
  absl::SleepFor(absl::Seconds(1));
  const absl::Time reloaded = ReplaceKeysAndWaitForReload(
      absl::StrCat(KeyLine("clinic", kClinicKey), KeyLine("flood", kFloodKey)), kRevokedKey);
  absl::SleepFor(absl::Seconds(2));
  stop = true;
  for (std::thread& t : clients) t.join();

  int ok_before = 0, ok_after = 0, refused_after = 0, other_after = 0;
  for (const Outcome& o : outcomes) {
    const bool after = o.sent >= reloaded;
    if (o.code == grpc::StatusCode::OK) (after ? ok_after : ok_before)++;
    if (!after) continue;
    if (o.code == grpc::StatusCode::UNAUTHENTICATED) {
      ++refused_after;
    } else if (o.code != grpc::StatusCode::OK) {
      ++other_after;
    }
  }
  RecordProperty("requests", static_cast<int>(outcomes.size()));
  RecordProperty("ok_before_reload", ok_before);
  RecordProperty("refused_after_reload", refused_after);
  EXPECT_GT(ok_before, 0) << "the key was never served before its revocation";
  EXPECT_EQ(ok_after, 0) << "requests served with a revoked key after the reload";
  EXPECT_GT(refused_after, 10);
  EXPECT_EQ(other_after, 0);
  pb::AnswerResponse response;
  EXPECT_OK(Ask(MarkedQuestion(), kClinicKey, &response)) << "other callers keep working";
  EXPECT_EQ(HttpStatus(kRevokedKey), 401);
  // Put the key back for the other tests.
  ReplaceKeysAndWaitForReload(InitialKeys(), kClinicKey);
}

// The same key id gets a new key: the new one is accepted, the old one refused, without restart.
TEST_F(ApiKeySecurityTest, RotatedKeyReplacesTheOldOne) {
  ReplaceKeysAndWaitForReload(
      absl::StrCat(KeyLine("clinic", kRotatedClinicKey), KeyLine("revokee", kRevokedKey),
                   KeyLine("flood", kFloodKey)),
      kClinicKey);
  pb::AnswerResponse response;
  EXPECT_OK(Ask(MarkedQuestion(), kRotatedClinicKey, &response));
  EXPECT_THAT(Ask(MarkedQuestion(), kClinicKey, &response),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_EQ(HttpStatus(kRotatedClinicKey), 200);
  EXPECT_EQ(HttpStatus(kClinicKey), 401);
  // A broken new file keeps the keys in force.
  ASSERT_OK(common::WriteStringToFileAtomic(*dir_ + "/api_keys", "not a key line\n"));
  absl::SleepFor(absl::Milliseconds(2500));  // past the 2 s re-check interval
  EXPECT_OK(Ask(MarkedQuestion(), kRotatedClinicKey, &response));
  EXPECT_THAT(suite_->ReadLog(), ::testing::HasSubstr("previous keys stay in force"));
  ReplaceKeysAndWaitForReload(InitialKeys(), kRotatedClinicKey);
  EXPECT_OK(Ask(MarkedQuestion(), kClinicKey, &response));
}

// One caller far over its rate is refused while another caller's requests, interleaved, all pass.
// The flood is bounded by time, not by a call count: it may accept at most burst + qps * elapsed
// (however slow the machine), and keeps calling until the limiter has refused it a few times.
TEST_F(ApiKeySecurityTest, RateLimitRefusesOnlyTheCallerOverItsRate) {
  constexpr double kQps = 50, kBurst = 50;  // the suite's --rate_limit_qps / --rate_limit_burst
  constexpr int kOtherCalls = 10, kMaxFloodCalls = 5000;
  pb::AnswerRequest cheap;  // refused by validation after the rate check: floods cheaply
  int flood_exhausted = 0, flood_calls = 0, other_ok = 0, other_calls = 0;
  const absl::Time start = absl::Now();
  while (flood_calls < kMaxFloodCalls && (other_calls < kOtherCalls || flood_exhausted < 20)) {
    pb::AnswerResponse response;
    flood_exhausted +=
        Ask(cheap, kFloodKey, &response).error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
    if (++flood_calls % 20 == 0 && other_calls < kOtherCalls) {
      const grpc::Status status = Ask(MarkedQuestion(), kClinicKey, &response);
      EXPECT_OK(status);
      other_ok += status.ok();
      ++other_calls;
    }
  }
  const double elapsed_s = absl::ToDoubleSeconds(absl::Now() - start);
  const int flood_accepted = flood_calls - flood_exhausted;
  EXPECT_GE(flood_exhausted, 20) << flood_calls << " calls in " << elapsed_s << " s";
  // +2: a token refilled between reading the clock and the limiter's own clock.
  EXPECT_LE(flood_accepted, kBurst + kQps * elapsed_s + 2)
      << flood_calls << " calls in " << elapsed_s << " s";
  EXPECT_EQ(other_ok, kOtherCalls);
}

// Every path a question takes (each mode, streaming, HTTP, refused and invalid requests) runs
// with the marker in question and options; TearDownTestSuite checks the log never has it.
TEST_F(ApiKeySecurityTest, QuestionMarkerPassesEveryModeAndEndpoint) {
  for (const std::string mode : {"", "ibgraphrag", "kg_rank", "kg_rag", "give", "illama"}) {
    pb::AnswerResponse response;
    const grpc::Status status = Ask(MarkedQuestion(mode), kClinicKey, &response);
    EXPECT_OK(status) << mode;
  }
  EXPECT_OK(ibgraphrag::testing::AskStreamingWithKey(*Stub(), MarkedQuestion(), kClinicKey));
  EXPECT_EQ(HttpStatus(kClinicKey), 200);
  auto res =
      Client().Post("/v1/answer:stream", {{"X-Api-Key", kClinicKey}},
                    absl::StrCat(R"({"question": "Which drug treats asthma? )", kMarker, R"("})"),
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  // Refused and invalid requests carrying the marker.
  pb::AnswerResponse response;
  pb::AnswerRequest invalid = MarkedQuestion();
  invalid.mutable_pipeline()->set_top_k(5000);
  EXPECT_THAT(Ask(invalid, kClinicKey, &response), StatusIs(grpc::StatusCode::INVALID_ARGUMENT));
  invalid = MarkedQuestion("no_such_mode");
  EXPECT_THAT(Ask(invalid, kClinicKey, &response), StatusIs(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(Ask(MarkedQuestion(), "wrong", &response),
              StatusIs(grpc::StatusCode::UNAUTHENTICATED));
  EXPECT_THAT(suite_->ReadLog(), ::testing::Not(::testing::HasSubstr(kMarker)));
}

}  // namespace
}  // namespace ibgraphrag::security
