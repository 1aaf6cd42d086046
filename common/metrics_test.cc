#include "common/metrics.h"

#include <string>

#include "common/test_util/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

using ::testing::HasSubstr;

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
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ(exit_code, 0) << "promtool rejected the exposition:\n" << *output << "\n" << body;
}

TEST(MetricsRegistryTest, ServesMetricsOverHttpInAFormatPromtoolAccepts) {
  if (!test_util::HaveProgram("promtool")) GTEST_SKIP() << "promtool is not installed";
  auto metrics = MetricsRegistry::Create(LoopbackOptions(0));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_GT((*metrics)->port(), 0);

  auto triples = (*metrics)->GetGauge("ibgr_kgstore_triples", "Triples in the loaded snapshot.",
                                      {{"kg_version", "v3"}});
  ASSERT_TRUE(triples.ok()) << triples.status();
  (*triples)->Set(2250197);
  auto loads = (*metrics)->GetCounter("ibgr_kgstore_snapshot_loads_total", "Snapshot loads.");
  ASSERT_TRUE(loads.ok()) << loads.status();
  (*loads)->Increment();
  auto latency = (*metrics)->GetHistogram(
      "ibgr_retriever_stage_duration_seconds", "Retriever stage latency in seconds.",
      {{"stage", "score"}}, MetricsRegistry::LatencyBucketsSeconds());
  ASSERT_TRUE(latency.ok()) << latency.status();
  (*latency)->Observe(0.003);

  auto body = test_util::HttpGet((*metrics)->port(), "/metrics");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("ibgr_kgstore_triples{kg_version=\"v3\"} 2250197"));
  EXPECT_THAT(*body, HasSubstr("ibgr_kgstore_snapshot_loads_total 1"));
  EXPECT_THAT(
      *body,
      HasSubstr("ibgr_retriever_stage_duration_seconds_bucket{stage=\"score\",le=\"0.005\"} 1"));
  ExpectPromtoolAccepts(*body);
}

TEST(MetricsRegistryTest, SameNameAndLabelsReturnTheSameSeries) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(-1));
  ASSERT_TRUE(metrics.ok());
  auto first = (*metrics)->GetCounter("ibgr_test_events_total", "Events.", {{"kind", "a"}});
  auto second = (*metrics)->GetCounter("ibgr_test_events_total", "Events.", {{"kind", "a"}});
  auto other = (*metrics)->GetCounter("ibgr_test_events_total", "Events.", {{"kind", "b"}});
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_NE(*first, *other);
}

TEST(MetricsRegistryTest, BadNamesAndTypeClashesAreInvalidArgument) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(-1));
  ASSERT_TRUE(metrics.ok());
  auto bad_name = (*metrics)->GetGauge("ibgr-bad-name", "Dashes are not allowed.");
  EXPECT_EQ(bad_name.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_name.status().message()), HasSubstr("ibgr-bad-name"));

  ASSERT_TRUE((*metrics)->GetGauge("ibgr_test_value", "A gauge.").ok());
  auto clash = (*metrics)->GetCounter("ibgr_test_value", "Now a counter.");
  EXPECT_EQ(clash.status().code(), absl::StatusCode::kInvalidArgument);

  auto bad_label = (*metrics)->GetGauge("ibgr_test_labelled", "Bad label.", {{"bad-label", "x"}});
  EXPECT_EQ(bad_label.status().code(), absl::StatusCode::kInvalidArgument);

  auto unsorted = (*metrics)->GetHistogram("ibgr_test_seconds", "Unsorted.", {}, {1.0, 0.5});
  EXPECT_EQ(unsorted.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MetricsRegistryTest, DisabledEndpointStillRecordsAndSerializes) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(-1));
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ((*metrics)->port(), -1);
  auto gauge = (*metrics)->GetGauge("ibgr_test_ready", "Ready.");
  ASSERT_TRUE(gauge.ok());
  (*gauge)->Set(1);
  EXPECT_THAT((*metrics)->Serialize(), HasSubstr("ibgr_test_ready 1"));
}

TEST(MetricsRegistryTest, PortInUseIsUnavailableAndBadPortIsInvalid) {
  auto first = MetricsRegistry::Create(LoopbackOptions(0));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = MetricsRegistry::Create(LoopbackOptions((*first)->port()));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(MetricsRegistry::Create(LoopbackOptions(70000)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(MetricsRegistryTest, StopEndpointClosesThePortButKeepsRecording) {
  auto metrics = MetricsRegistry::Create(LoopbackOptions(0));
  ASSERT_TRUE(metrics.ok());
  const int port = (*metrics)->port();
  ASSERT_TRUE(test_util::HttpGet(port, "/metrics").ok());
  (*metrics)->StopEndpoint();
  EXPECT_FALSE(test_util::HttpGet(port, "/metrics").ok());
  auto counter = (*metrics)->GetCounter("ibgr_test_after_stop_total", "After stop.");
  ASSERT_TRUE(counter.ok());
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
