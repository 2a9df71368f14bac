#include "base/clock.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dbload {
namespace {

TEST(SimulatedClockTest, SleepWithoutAttachedThreadsMovesTimeForward) {
  SimulatedClock clock(100);
  clock.SleepUntil(50);  // in the past: no effect
  EXPECT_EQ(clock.Now(), 100);
  clock.SleepUntil(5 * kSecond);
  EXPECT_EQ(clock.Now(), 5 * kSecond);
  clock.Advance(kMillisecond);
  EXPECT_EQ(clock.Now(), 5 * kSecond + kMillisecond);
}

TEST(SimulatedClockTest, TimeJumpsOnlyWhenEveryAttachedThreadSleeps) {
  SimulatedClock clock;
  std::vector<std::pair<int, Nanos>> wakeups;
  std::mutex mu;
  std::vector<std::thread> threads;
  // Attach all three before any starts, so that none can race ahead alone.
  for (int t = 0; t < 3; ++t) clock.AttachThread();
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      for (int step = 1; step <= 3; ++step) {
        clock.SleepUntil(step * (t + 1) * kSecond);
        std::lock_guard lock(mu);
        wakeups.emplace_back(t, clock.Now());
      }
      clock.DetachThread();
    });
  }
  for (auto& thread : threads) thread.join();
  // Every thread woke exactly at its deadline, never later: time jumped deadline to deadline.
  ASSERT_EQ(wakeups.size(), 9u);
  std::vector<Nanos> per_thread_last(3, 0);
  for (auto [t, now] : wakeups) {
    EXPECT_EQ(now % ((t + 1) * kSecond), 0) << "thread " << t << " woke at " << now;
    EXPECT_GT(now, per_thread_last[t]);
    per_thread_last[t] = now;
  }
  EXPECT_EQ(clock.Now(), 9 * kSecond);
}

TEST(SteadyClockTest, SleepUntilDoesNotReturnEarly) {
  SteadyClock clock;
  const Nanos start = clock.Now();
  clock.SleepUntil(start + 2 * kMillisecond);
  EXPECT_GE(clock.Now(), start + 2 * kMillisecond);
}

}  // namespace
}  // namespace dbload
