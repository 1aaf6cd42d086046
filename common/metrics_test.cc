#include "common/metrics.h"

#include <string>

#include "common/test_util/status_matchers.h"
#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::ibgraphrag::common::test_util::IsOk;
using ::ibgraphrag::common::test_util::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

MetricsRegistry::Options LoopbackOptions(int port) {
  MetricsRegistry::Options options;
  options.listen_host = "127.0.0.1";
  options.port = port;
  return options;
}

// Runs `promtool check metrics` on `body`; returns its output, or nullopt-like empty + skip.
void ExpectPromtoolAccepts(const std::string& body) {
  const std::string dir = test_util::MakeTempDir();
  const std::string path = dir + "/metrics.txt";
  test_util::WriteFileOrDie(path, body);
  int exit_code = -1;
  auto output = test_util::RunCommand("promtool check metrics < " + path, &exit_code);
  ASSERT_OK(output);
  EXPECT_EQ(exit_code, 0) << "promtool rejected the exposition:\n" << *output << "\n" << body;
}

TEST(MetricsRegistryTest, ServesMetricsOverHttpInAFormatPromtoolAccepts) {
  ASSERT_TRUE(test_util::ProgramInstalled("promtool", "prometheus"));
  auto metrics = MetricsRegistry::Create(LoopbackOptions(0));
  ASSERT_OK(metrics);
  ASSERT_GT((*metrics)->port(), 0);

  auto triples = (*metrics)->GetGauge("ibgr_kgstore_triples", "Triples in the loaded snapshot.",
                                      {{"kg_version", "v3"}});
  ASSERT_OK(triples);
  (*triples)->Set(2250197);
  auto loads = (*metrics)->GetCounter("ibgr_kgstore_snapshot_loads_total", "Snapshot loads.");
  ASSERT_OK(loads);
  (*loads)->Increment();
  auto latency = (*metrics)->GetHistogram(
      "ibgr_retriever_stage_duration_seconds", "Retriever stage latency in seconds.",
      {{"stage", "score"}}, MetricsRegistry::LatencyBucketsSeconds());
  ASSERT_OK(latency);
  (*latency)->Observe(0.003);

  auto body = test_util::HttpGet((*metrics)->port(), "/metrics");
  ASSERT_OK(body);
  EXPECT_THAT(*body, HasSubstr("ibgr_kgstore_triples{kg_version=\"v3\"} 2250197"));
  EXPECT_THAT(*body, HasSubstr("ibgr_kgstore_snapshot_loads_total 1"));
  EXPECT_THAT(
      *body,
      HasSubstr("ibgr_retriever_stage_duration_seconds_bucket{stage=\"score\",le=\"0.005\"} 1"));
  ExpectPromtoolAccepts(*body);
}

TEST(MetricsRegistryTest, SameNameAndLabelsReturnTheSameSeries) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(-1));
  ASSERT_OK(metrics);
  auto first = (*metrics)->GetCounter("ibgr_test_events_total", "Events.", {{"kind", "a"}});
  auto second = (*metrics)->GetCounter("ibgr_test_events_total", "Events.", {{"kind", "a"}});
  auto other = (*metrics)->GetCounter("ibgr_test_events_total", "Events.", {{"kind", "b"}});
  ASSERT_OK(first);
  ASSERT_OK(second);
  ASSERT_OK(other);
  EXPECT_EQ(*first, *second);
  EXPECT_NE(*first, *other);
}

TEST(MetricsRegistryTest, BadNamesAndTypeClashesAreInvalidArgument) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(-1));
  ASSERT_OK(metrics);
  auto bad_name = (*metrics)->GetGauge("ibgr-bad-name", "Dashes are not allowed.");
  EXPECT_THAT(bad_name, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ibgr-bad-name")));

  ASSERT_OK((*metrics)->GetGauge("ibgr_test_value", "A gauge."));
  auto clash = (*metrics)->GetCounter("ibgr_test_value", "Now a counter.");
  EXPECT_THAT(clash, StatusIs(absl::StatusCode::kInvalidArgument));

  auto bad_label = (*metrics)->GetGauge("ibgr_test_labelled", "Bad label.", {{"bad-label", "x"}});
  EXPECT_THAT(bad_label, StatusIs(absl::StatusCode::kInvalidArgument));

  auto unsorted = (*metrics)->GetHistogram("ibgr_test_seconds", "Unsorted.", {}, {1.0, 0.5});
  EXPECT_THAT(unsorted, StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MetricsRegistryTest, DisabledEndpointStillRecordsAndSerializes) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(-1));
  ASSERT_OK(metrics);
  EXPECT_EQ((*metrics)->port(), -1);
  auto gauge = (*metrics)->GetGauge("ibgr_test_ready", "Ready.");
  ASSERT_OK(gauge);
  (*gauge)->Set(1);
  EXPECT_THAT((*metrics)->Serialize(), HasSubstr("ibgr_test_ready 1"));
}

TEST(MetricsRegistryTest, PortInUseIsUnavailableAndBadPortIsInvalid) {
  auto first = MetricsRegistry::Create(LoopbackOptions(0));
  ASSERT_OK(first);
  auto second = MetricsRegistry::Create(LoopbackOptions((*first)->port()));
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(MetricsRegistry::Create(LoopbackOptions(70000)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MetricsRegistryTest, StopEndpointClosesThePortButKeepsRecording) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(0));
  ASSERT_OK(metrics);
  const int port = (*metrics)->port();
  ASSERT_OK(test_util::HttpGet(port, "/metrics"));
  (*metrics)->StopEndpoint();
  EXPECT_THAT(test_util::HttpGet(port, "/metrics"), Not(IsOk()));
  auto counter = (*metrics)->GetCounter("ibgr_test_after_stop_total", "After stop.");
  ASSERT_OK(counter);
  (*counter)->Increment();
  EXPECT_THAT((*metrics)->Serialize(), HasSubstr("ibgr_test_after_stop_total 1"));
}

TEST(MetricsRegistryTest, LatencyBucketsSpanATenthOfAMillisecondToTenSeconds) {
  const std::vector<double> buckets = MetricsRegistry::LatencyBucketsSeconds();
  ASSERT_FALSE(buckets.empty());
  EXPECT_DOUBLE_EQ(buckets.front(), 0.0001);
  EXPECT_DOUBLE_EQ(buckets.back(), 10.0);
  EXPECT_TRUE(std::is_sorted(buckets.begin(), buckets.end()));
}

}  // namespace
}  // namespace ibgraphrag::common
