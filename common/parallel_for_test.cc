#include "common/parallel_for.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

TEST(ParallelForTest, CallsEveryIndexExactlyOnce) {
  for (int threads : {0, 1, 3, 16}) {
    std::vector<std::atomic<int>> calls(1000);
    ParallelFor(calls.size(), threads, [&](size_t i) { calls[i].fetch_add(1); });
    for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << i << " " << threads;
  }
}

TEST(ParallelForTest, EmptyRangeCallsNothing) {
  bool called = false;
  ParallelFor(0, 4, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelForTest, UsesAtMostTheGivenThreadsIncludingTheCaller) {
  std::mutex mu;
  std::set<std::thread::id> seen;
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  ParallelFor(64, 3, [&](size_t) {
    const int now = running.fetch_add(1) + 1;
    int old = peak.load();
    while (now > old && !peak.compare_exchange_weak(old, now)) {
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    running.fetch_sub(1);
  });
  EXPECT_LE(peak.load(), 3);
  EXPECT_LE(seen.size(), 3u);
  EXPECT_EQ(seen.count(std::this_thread::get_id()), 1u);
}

TEST(ParallelForTest, OneThreadRunsInOrderOnTheCaller) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<size_t> order;
  ParallelFor(5, 1, [&](size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

}  // namespace
}  // namespace ibgraphrag::common
