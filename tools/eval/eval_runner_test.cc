#include "tools/eval/eval_runner.h"

#include <mutex>

#include "common/test_util/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace ibgraphrag::eval {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

QaItem Item(const std::string& question) {
  QaItem item;
  item.question = question;
  item.options = {"aspirin", "metformin"};
  item.task = v1::TASK_MULTIPLE_CHOICE;
  item.gold_index = 1;
  item.gold_text = "metformin";
  return item;
}

TEST(BuildRequestTest, SendsQuestionOptionsTaskAndOnlyTheSetSwitches) {
  PipelineConfig pipeline;
  pipeline.top_k = 10;
  pipeline.ibrp = false;
  pipeline.backend = "extractive";
  const v1::AnswerRequest request = BuildRequest(Item("Which drug?"), pipeline);
  EXPECT_EQ(request.question(), "Which drug?");
  EXPECT_THAT(request.options(), ElementsAre("aspirin", "metformin"));
  EXPECT_EQ(request.task(), v1::TASK_MULTIPLE_CHOICE);
  ASSERT_TRUE(request.pipeline().has_top_k());
  EXPECT_EQ(request.pipeline().top_k(), 10u);
  ASSERT_TRUE(request.pipeline().has_ibrp_enabled());
  EXPECT_FALSE(request.pipeline().ibrp_enabled());
  EXPECT_FALSE(request.pipeline().has_msca_enabled());  // left to the gateway
  EXPECT_FALSE(request.pipeline().has_lambda());
  EXPECT_EQ(request.pipeline().reasoner_backend(), "extractive");
}

TEST(AblationGridTest, MscaOutermostThenIbrpThenTopK) {
  PipelineConfig base;
  base.backend = "extractive";
  const std::vector<PipelineConfig> grid =
      AblationGrid(base, {true, false}, {true, false}, {10, 100});
  ASSERT_EQ(grid.size(), 8u);
  std::vector<std::string> labels;
  for (const PipelineConfig& config : grid) labels.push_back(config.Label());
  EXPECT_THAT(labels, ElementsAre("msca=on ibrp=on top_k=10 backend=extractive",
                                  "msca=on ibrp=on top_k=100 backend=extractive",
                                  "msca=on ibrp=off top_k=10 backend=extractive",
                                  "msca=on ibrp=off top_k=100 backend=extractive",
                                  "msca=off ibrp=on top_k=10 backend=extractive",
                                  "msca=off ibrp=on top_k=100 backend=extractive",
                                  "msca=off ibrp=off top_k=10 backend=extractive",
                                  "msca=off ibrp=off top_k=100 backend=extractive"));
  EXPECT_EQ(PipelineConfig().Label(), "msca=default ibrp=default top_k=default");
}

// ibgr eval --grid_mode: each run's mode leads its label and is sent as pipeline.mode.
TEST(PipelineConfigTest, LabelsAndSendsTheMode) {
  PipelineConfig config;
  config.mode = "kg_rank";
  config.top_k = 10;
  EXPECT_EQ(config.Label(), "mode=kg_rank msca=default ibrp=default top_k=10");
  v1::PipelineOptions options;
  config.ApplyTo(&options);
  EXPECT_EQ(options.mode(), "kg_rank");
  EXPECT_EQ(options.top_k(), 10u);
  v1::PipelineOptions unset;
  PipelineConfig().ApplyTo(&unset);
  EXPECT_EQ(unset.mode(), "");  // the gateway's default mode
}

TEST(FormatProgressTest, ShowsCountsRateAndEta) {
  RunProgress progress;
  progress.done = 50;
  progress.total = 200;
  progress.errors = 3;
  progress.elapsed = absl::Seconds(10);
  EXPECT_EQ(FormatProgress(progress, 8), "[==>     ]  50/200  25.0%    5.0 q/s ETA 30s errors 3");
  progress.done = 200;
  progress.elapsed = absl::Seconds(125);
  EXPECT_THAT(FormatProgress(progress, 4), HasSubstr("[====] 200/200 100.0%"));
  EXPECT_THAT(FormatProgress(progress, 4), HasSubstr("ETA 0s"));
  RunProgress start;
  start.total = 10;
  EXPECT_THAT(FormatProgress(start, 4), HasSubstr("ETA --"));
}

TEST(RunItemsTest, RejectsBadOptionsNamingTheFlag) {
  auto channel = grpc::CreateChannel("unix:///nonexistent/ibgr-eval-test.sock",
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::GatewayService::NewStub(channel);
  RunOptions options;
  options.concurrency = 0;
  auto result = RunItems(stub.get(), {Item("q")}, options);
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--concurrency")));
  options.concurrency = kMaxConcurrency + 1;
  EXPECT_THAT(RunItems(stub.get(), {Item("q")}, options), Not(IsOk()));
  options.concurrency = 1;
  options.deadline = absl::ZeroDuration();
  result = RunItems(stub.get(), {Item("q")}, options);
  ASSERT_THAT(result, Not(IsOk()));
  EXPECT_THAT(result.status().message(), HasSubstr("--deadline_ms"));
  EXPECT_THAT(RunItems(nullptr, {Item("q")}, RunOptions()), Not(IsOk()));
}

// A real gRPC channel to an address where nothing listens: every call fails UNAVAILABLE, and the
// run reports each failure in item order with progress for every item.
TEST(RunItemsTest, UnreachableGatewayGivesOneErrorOutcomePerItem) {
  auto channel = grpc::CreateChannel("unix:///nonexistent/ibgr-eval-test.sock",
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::GatewayService::NewStub(channel);
  std::vector<QaItem> items;
  for (int i = 0; i < 20; ++i) items.push_back(Item("q" + std::to_string(i)));
  RunOptions options;
  options.concurrency = 4;
  options.deadline = absl::Seconds(10);
  options.api_key = "test-key";
  options.fail_fast_after = 0;
  std::vector<size_t> done;
  options.on_progress = [&](const RunProgress& progress) {
    EXPECT_EQ(progress.total, 20u);
    done.push_back(progress.done);
  };
  auto outcomes = RunItems(stub.get(), items, options);
  ASSERT_OK(outcomes);
  ASSERT_EQ(outcomes->size(), 20u);
  for (const ItemOutcome& outcome : *outcomes) {
    EXPECT_EQ(outcome.code, absl::StatusCode::kUnavailable);
    EXPECT_FALSE(outcome.correct);
  }
  ASSERT_EQ(done.size(), 20u);
  for (size_t i = 0; i < done.size(); ++i) EXPECT_EQ(done[i], i + 1);
  const RunSummary summary = Summarize("set", "", *outcomes, 1.0);
  EXPECT_EQ(summary.errors, 20);
  EXPECT_EQ(summary.errors_by_code.at("UNAVAILABLE"), 20);
  EXPECT_EQ(summary.accuracy, 0);
}

TEST(RunItemsTest, StopsSendingWhenTheFirstCallsAllFail) {
  auto channel = grpc::CreateChannel("unix:///nonexistent/ibgr-eval-test.sock",
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::GatewayService::NewStub(channel);
  std::vector<QaItem> items(200, Item("q"));
  RunOptions options;
  options.concurrency = 2;
  options.deadline = absl::Seconds(10);
  options.fail_fast_after = 5;
  auto outcomes = RunItems(stub.get(), items, options);
  ASSERT_OK(outcomes);
  ASSERT_EQ(outcomes->size(), 200u);
  int unavailable = 0;
  int cancelled = 0;
  for (const ItemOutcome& outcome : *outcomes) {
    unavailable += outcome.code == absl::StatusCode::kUnavailable;
    cancelled += outcome.code == absl::StatusCode::kCancelled;
  }
  // At most one call per worker is in flight when the fifth failure stops the run.
  EXPECT_GE(unavailable, 5);
  EXPECT_LE(unavailable, 5 + options.concurrency);
  EXPECT_EQ(unavailable + cancelled, 200);
  EXPECT_THAT(outcomes->back().error, HasSubstr("not sent: the first 5 calls all failed"));
}

}  // namespace
}  // namespace ibgraphrag::eval
