#include "common/logging.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Captures log lines for the duration of a test and restores global logger state.
class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetLogSink([this](absl::string_view line) {
      absl::MutexLock lock(&mu_);
      lines_.emplace_back(line);
    });
  }
  void TearDown() override {
    SetLogSink(nullptr);
    SetMinLogLevel(LogLevel::kInfo);
    SetLogPayloads(false);
  }
  std::vector<std::string> Lines() {
    absl::MutexLock lock(&mu_);
    return lines_;
  }

  absl::Mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(LoggingTest, WritesOneJsonObjectWithTimestampLevelMessageAndFieldsInOrder) {
  LogInfo("snapshot loaded", {{"path", "/data/kg/v3"},
                              {"triples", 123456},
                              {"ratio", 0.5},
                              {"fresh", true},
                              {"bytes", uint64_t{1} << 40}});
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  const nlohmann::ordered_json line = nlohmann::ordered_json::parse(lines[0]);
  std::vector<std::string> keys;
  for (const auto& item : line.items()) keys.push_back(item.key());
  EXPECT_THAT(keys,
              ElementsAre("ts", "level", "msg", "path", "triples", "ratio", "fresh", "bytes"));
  EXPECT_EQ(line["level"], "info");
  EXPECT_EQ(line["msg"], "snapshot loaded");
  EXPECT_EQ(line["path"], "/data/kg/v3");
  EXPECT_EQ(line["triples"], 123456);
  EXPECT_EQ(line["ratio"], 0.5);
  EXPECT_EQ(line["fresh"], true);
  EXPECT_EQ(line["bytes"], uint64_t{1} << 40);
  // RFC 3339 UTC with milliseconds, e.g. 2026-01-02T03:04:05.678Z.
  EXPECT_THAT(line["ts"].get<std::string>(),
              ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\."
                                      "[0-9]{3}Z"));
}

TEST_F(LoggingTest, ReservedFieldNamesCannotOverwriteTheEnvelope) {
  LogWarning("real message", {{"msg", "spoofed"}, {"level", "debug"}});
  const nlohmann::json line = nlohmann::json::parse(Lines().at(0));
  EXPECT_EQ(line["msg"], "real message");
  EXPECT_EQ(line["level"], "warning");
}

TEST_F(LoggingTest, InvalidUtf8AndControlCharactersStillGiveValidJson) {
  LogInfo("odd peer", {{"peer", std::string("ipv4:\xff\xfe\n\"1.2.3.4\"")}});
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find('\n'), std::string::npos);
  EXPECT_NO_THROW((void)nlohmann::json::parse(lines[0]));
}

TEST_F(LoggingTest, LinesBelowTheMinimumLevelAreDropped) {
  SetMinLogLevel(LogLevel::kWarning);
  LogDebug("d");
  LogInfo("i");
  LogWarning("w");
  LogError("e");
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("\"msg\":\"w\""));
  EXPECT_THAT(lines[1], HasSubstr("\"level\":\"error\""));
  EXPECT_FALSE(LogLevelEnabled(LogLevel::kInfo));
}

TEST_F(LoggingTest, PayloadsAreNotLoggedUnlessTheDebugSwitchIsOn) {
  grpc::health::v1::HealthCheckRequest payload;
  payload.set_service("PATIENT: 54-year-old with crushing chest pain");
  ASSERT_FALSE(LogPayloadsEnabled());
  LogPayload("request", "rid-1", payload);
  LogPayload("prompt", "rid-1", "PATIENT: 54-year-old with crushing chest pain");
  EXPECT_TRUE(Lines().empty());

  SetLogPayloads(true);
  LogPayload("request", "rid-1", payload);
  LogPayload("prompt", "rid-1", "PATIENT: 54-year-old with crushing chest pain");
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 2u);
  const nlohmann::json first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["request_id"], "rid-1");
  EXPECT_THAT(first["payload"].get<std::string>(), HasSubstr("crushing chest pain"));
}

TEST_F(LoggingTest, EnabledPayloadLoggingIgnoresTheLevelFilter) {
  SetMinLogLevel(LogLevel::kError);
  SetLogPayloads(true);
  LogPayload("prompt", "rid-2", "text");
  EXPECT_EQ(Lines().size(), 1u);
}

TEST_F(LoggingTest, ConcurrentWritersProduceWholeLines) {
  constexpr int kThreads = 8;
  constexpr int kLinesPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLinesPerThread; ++i) {
        LogInfo("tick", {{"thread", t}, {"i", i}, {"pad", std::string(100, 'x')}});
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kLinesPerThread));
  for (const std::string& line : lines) {
    ASSERT_NO_THROW((void)nlohmann::json::parse(line)) << line;
  }
}

TEST(LogLevelTest, ParsesNamesCaseInsensitivelyAndRejectsOthers) {
  EXPECT_EQ(*ParseLogLevel("DEBUG"), LogLevel::kDebug);
  EXPECT_EQ(*ParseLogLevel("info"), LogLevel::kInfo);
  EXPECT_EQ(*ParseLogLevel("warn"), LogLevel::kWarning);
  EXPECT_EQ(*ParseLogLevel("Warning"), LogLevel::kWarning);
  EXPECT_EQ(*ParseLogLevel("error"), LogLevel::kError);
  const auto bad = ParseLogLevel("verbose");
  ASSERT_THAT(bad, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("verbose")));
}

TEST(LogFormatTest, FormatLogLineDoesNotWrite) {
  const std::string line = FormatLogLine(LogLevel::kError, "boom", {{"code", "INTERNAL"}});
  const nlohmann::json parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["level"], "error");
  EXPECT_EQ(parsed["code"], "INTERNAL");
  EXPECT_THAT(line, Not(HasSubstr("\n")));
}

}  // namespace
}  // namespace ibgraphrag::common
