#include "common/blocking_reactor.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ibgraphrag::common {
namespace {

// The pool is process-wide, so this binary holds the only test that sets its bound.
TEST(BlockingCallPoolTest, RefusesCallsPastTheServerThreadBudgetAndRecovers) {
  BlockingCallPool& pool = BlockingCallPool::Default();
  ASSERT_EQ(pool.max_calls(), 0);  // no server has set a bound
  pool.AddServerThreadBudget(0);   // a server without a bound adds nothing
  EXPECT_EQ(pool.max_calls(), 0);
  pool.AddServerThreadBudget(1);
  pool.AddServerThreadBudget(1);  // servers in one process add up
  ASSERT_EQ(pool.max_calls(), 2);

  absl::Notification release;
  std::atomic<int> ran{0};
  const auto blocked_call = [&] {
    release.WaitForNotification();
    ++ran;
  };
  ASSERT_TRUE(pool.Run(blocked_call));
  ASSERT_TRUE(pool.Run(blocked_call));
  EXPECT_FALSE(pool.Run([&] { ran += 100; })) << "a third call must be refused, not queued";

  release.Notify();
  // The two calls finish and free their places; a new call is accepted and runs.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (ran.load() < 2 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_EQ(ran.load(), 2);
  bool accepted = false;
  while (!accepted && absl::Now() < deadline) {
    accepted = pool.Run([&] { ran += 10; });  // the freed count lags the work by a lock
    if (!accepted) absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_TRUE(accepted);
  while (ran.load() < 12 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(ran.load(), 12) << "the refused call never ran";
}

}  // namespace
}  // namespace ibgraphrag::common
