#include "base/fiber_loop.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

TEST(FiberLoopTest, SleepersWakeAtTheirTimesInOrderOnSimulatedTime) {
  SimulatedClock clock(0);
  std::mutex mu;
  std::vector<std::pair<int, Nanos>> woke;  // fiber, when
  {
    FiberLoop loop(clock);
    {
      ClockThread spawning(clock);  // time stands still until every fiber is there
      // Fibers 0…99 sleep until 100 - i ms, then until twice that.
      for (int i = 0; i < 100; ++i) {
        loop.Spawn([&, i] {
          EXPECT_TRUE(OnFiber());
          for (int round = 1; round <= 2; ++round) {
            clock.SleepUntil(round * (100 - i) * kMillisecond);
            std::lock_guard lock(mu);
            woke.emplace_back(i, clock.Now());
          }
        });
      }
    }
  }  // Finish: every fiber has returned
  ASSERT_EQ(woke.size(), 200u);
  for (const auto& [fiber, when] : woke) {
    // Each fiber's first wake-up at 100 - i ms, its second at twice that.
    EXPECT_TRUE(when == (100 - fiber) * kMillisecond || when == 2 * (100 - fiber) * kMillisecond)
        << "fiber " << fiber << " woke at " << when;
  }
  for (size_t i = 1; i < woke.size(); ++i) EXPECT_LE(woke[i - 1].second, woke[i].second);
  EXPECT_FALSE(OnFiber());
}

TEST(FiberLoopTest, AFiberWaitingOnASocketLetsTheOthersRun) {
  SteadyClock clock;
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  std::atomic<int> ticks = 0;
  std::atomic<bool> read_done = false;
  std::string got;
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      SocketWatch watch(sockets[0]);
      watch.WaitReadable();
      char buffer[16] = {};
      const ssize_t n = read(sockets[0], buffer, sizeof(buffer));
      got.assign(buffer, n > 0 ? static_cast<size_t>(n) : 0);
      read_done = true;
    });
    // The same loop's other fiber keeps running while the first waits.
    loop.Spawn([&] {
      while (!read_done) {
        ++ticks;
        clock.SleepUntil(clock.Now() + kMillisecond);
      }
    });
    while (ticks < 20) clock.SleepUntil(clock.Now() + kMillisecond);
    EXPECT_FALSE(read_done);
    ASSERT_EQ(write(sockets[1], "ready", 5), 5);
  }
  EXPECT_EQ(got, "ready");
  EXPECT_GE(ticks.load(), 20);
  close(sockets[0]);
  close(sockets[1]);
}

// libpq closes a broken connection's socket before its session lets go of the watch; the
// number may come back as another connection's socket, whose watch must keep its events.
TEST(FiberLoopTest, AWatchOfAClosedDescriptorLeavesItsNumbersNextWatchAlone) {
  SteadyClock clock;
  int first[2];
  int second[2];
  bool set_up = false;  // the loop's thread only
  std::string got;
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, first), 0);
      auto stale = std::make_unique<SocketWatch>(first[0]);
      close(first[0]);  // without the watch's knowledge
      ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, second), 0);
      ASSERT_EQ(second[0], first[0]) << "the test needs the number to come back";
      SocketWatch current(second[0]);
      stale.reset();  // must not unregister `current`
      set_up = true;
      char buffer[16] = {};
      ssize_t n = -1;
      while ((n = recv(second[0], buffer, sizeof(buffer), MSG_DONTWAIT)) < 0 && errno == EAGAIN) {
        current.WaitReadable();
      }
      got.assign(buffer, n > 0 ? static_cast<size_t>(n) : 0);
    });
    // Runs only once the first fiber has parked on its empty socket (a loop runs one fiber at
    // a time): then only a live registration can wake that wait.
    loop.Spawn([&] {
      if (set_up) {
        EXPECT_EQ(write(second[1], "late", 4), 4);
      }
    });
  }
  EXPECT_EQ(got, "late");
  for (int fd : {first[1], second[0], second[1]}) close(fd);
}

// A timed wait (a connection being opened) ends at its time when nothing comes, and at the
// event when it comes first; the timer of a wait the event ended is stale, and must not cut a
// later sleep short.
TEST(FiberLoopTest, ATimedSocketWaitEndsAtItsTimeOrAtItsEventWhicheverComesFirst) {
  SteadyClock clock;
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  bool timed_out_waiting = false, read_when_written = false, writable = false;
  bool slept_whole = false;
  Nanos timed_out_after = 0, woken_after = 0, slept_for = 0;
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      SocketWatch watch(sockets[0]);
      const Nanos start = clock.Now();
      timed_out_waiting = !watch.Wait(SocketEvent::kReadable, 20 * kMillisecond);
      timed_out_after = clock.Now() - start;
      // The other fiber writes at 40 ms; this wait's timer would end it at 80 ms.
      read_when_written = watch.Wait(SocketEvent::kReadable, 80 * kMillisecond - timed_out_after);
      woken_after = clock.Now() - start;
      writable = watch.Wait(SocketEvent::kWritable, 0);
      const Nanos sleep_start = clock.Now();
      slept_whole = FiberSleepUntil(sleep_start + 100 * kMillisecond);
      slept_for = clock.Now() - sleep_start;
    });
    loop.Spawn([&] {
      FiberSleepUntil(clock.Now() + 40 * kMillisecond);
      EXPECT_EQ(write(sockets[1], "x", 1), 1);
    });
  }
  EXPECT_TRUE(timed_out_waiting);
  EXPECT_GE(timed_out_after, 20 * kMillisecond);
  EXPECT_TRUE(read_when_written);
  EXPECT_LT(woken_after, 80 * kMillisecond) << "woken by the write, not the timer";
  EXPECT_TRUE(writable) << "an open socket with an empty send buffer is writable";
  EXPECT_TRUE(slept_whole) << "a stale timer woke the sleep";
  EXPECT_GE(slept_for, 100 * kMillisecond);
  for (int fd : sockets) close(fd);
}

// On the real clock the loop's next wake-up is a timer armed once and kept across the waits that
// sockets or other threads end: a sleep must still end on time after such a wake-up, and a sleep
// that starts later but ends sooner than the armed wake-up must move it.
TEST(FiberLoopTest, ASleepEndsOnTimeAfterOtherWakeUpsAndAnEarlierOneMovesTheWakeUp) {
  SteadyClock clock;
  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  const Nanos start = clock.Now();
  Nanos sleeper_woke = 0, early_woke = 0, read_at = 0, spawned_at = 0, written_at = 0;
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      SocketWatch watch(sockets[0]);
      watch.WaitReadable();  // no timer of its own
      read_at = clock.Now() - start;
    });
    loop.Spawn([&] {
      FiberSleepUntil(start + 150 * kMillisecond);
      sleeper_woke = clock.Now() - start;
    });
    // The loop now waits with its wake-up armed for 150 ms. A sleep of 20 ms from 10 ms on:
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    spawned_at = clock.Now() - start;
    loop.Spawn([&] {
      FiberSleepUntil(clock.Now() + 20 * kMillisecond);
      early_woke = clock.Now() - start;
    });
    // And a socket's wake-up at 130 ms, after which nothing but the timer wakes the loop.
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    written_at = clock.Now() - start;
    EXPECT_EQ(write(sockets[1], "x", 1), 1);
  }
  // The checks below hold whenever this thread's sleeps placed the spawn and the write before
  // the armed wake-up; they are measured, not assumed.
  ASSERT_LT(spawned_at + 80 * kMillisecond, 150 * kMillisecond) << "the spawn came too late";
  ASSERT_LT(written_at, 150 * kMillisecond) << "the write came after the sleeper's time";
  EXPECT_GE(early_woke, spawned_at + 20 * kMillisecond);
  EXPECT_LT(early_woke, spawned_at + 80 * kMillisecond)
      << "the later, shorter sleep moved the wake-up";
  EXPECT_GE(read_at, written_at);
  EXPECT_GE(sleeper_woke, 150 * kMillisecond);
  EXPECT_LT(sleeper_woke, 300 * kMillisecond) << "the socket's wake-up left the timer armed";
  for (int fd : sockets) close(fd);
}

// The wake-up's timerfd is edge-triggered and never read: every expiry must still wake the loop
// when nothing else does, the next one armed after the last one fired.
TEST(FiberLoopTest, SleepsInARowEachWakeTheLoopWithNothingElseToWakeIt) {
  SteadyClock clock;
  constexpr int kSleeps = 50;
  const Nanos start = clock.Now();
  Nanos last_woke = 0;
  int woke = 0;
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      for (int i = 1; i <= kSleeps; ++i) {
        FiberSleepUntil(start + i * kMillisecond);
        EXPECT_GE(clock.Now() - start, i * kMillisecond);
        ++woke;
      }
      last_woke = clock.Now() - start;
    });
  }
  EXPECT_EQ(woke, kSleeps);
  EXPECT_GE(last_woke, kSleeps * kMillisecond);
  EXPECT_LT(last_woke, kSleeps * kMillisecond + kSecond);
}

// With a slack (target.timer_slack) the loop wakes for a timer that much late, unless a
// socket's wake-up comes first: the timers due by then fire with it, as pgbench starts its due
// transactions when an answer wakes it.
TEST(FiberLoopTest, WithASlackATimerWaitsForTheSlackOrTheNextSocketWakeUp) {
  SteadyClock clock;
  const Nanos start = clock.Now();
  Nanos alone_woke = 0;
  {
    FiberLoop loop(clock, FiberLoop::kDefaultStackBytes, 200 * kMillisecond);
    loop.Spawn([&] {
      FiberSleepUntil(start + 20 * kMillisecond);
      alone_woke = clock.Now() - start;
    });
  }
  EXPECT_GE(alone_woke, 220 * kMillisecond);

  int sockets[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  const Nanos second = clock.Now();
  Nanos sleeper_woke = 0, written_at = 0;
  {
    FiberLoop loop(clock, FiberLoop::kDefaultStackBytes, kSecond);
    loop.Spawn([&] {
      SocketWatch watch(sockets[0]);
      watch.WaitReadable();
    });
    loop.Spawn([&] {
      FiberSleepUntil(second + 20 * kMillisecond);
      sleeper_woke = clock.Now() - second;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    written_at = clock.Now() - second;
    EXPECT_EQ(write(sockets[1], "x", 1), 1);
  }
  ASSERT_LT(written_at, kSecond) << "the write came after the slack";
  EXPECT_GE(sleeper_woke, written_at);
  EXPECT_LT(sleeper_woke, kSecond + 20 * kMillisecond)
      << "the socket's wake-up did not start the timer then due";
  for (int fd : sockets) close(fd);
}

// A timed wait that its socket ended leaves its timer in the loop's heap after its fiber has
// finished: the timer coming due, or a stop firing every timer, must not touch the fiber's
// freed state (ASan saw it; at 1,000 connections it crashed the loop's stack switch).
TEST(FiberLoopTest, AStaleTimerOutlivesItsFinishedFiberHarmlessly) {
  SteadyClock clock;
  int first[2], second[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, first), 0);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, second), 0);
  ASSERT_EQ(write(first[1], "x", 1), 1);
  ASSERT_EQ(write(second[1], "x", 1), 1);
  bool first_woken = false, second_woken = false, slept = false;
  {
    FiberLoop loop(clock);
    // Both wait with a timer, and their sockets end the waits at once.
    loop.Spawn([&] {
      SocketWatch watch(first[0]);
      first_woken = watch.Wait(SocketEvent::kReadable, 20 * kMillisecond);
    });
    loop.Spawn([&] {
      SocketWatch watch(second[0]);
      second_woken = watch.Wait(SocketEvent::kReadable, 60 * kSecond);
    });
    // The first's stale timer comes due during this sleep; the second's is fired by the stop.
    loop.Spawn([&] { slept = FiberSleepUntil(clock.Now() + 50 * kMillisecond); });
    clock.SleepUntil(clock.Now() + 80 * kMillisecond);
    loop.InterruptSleeps();
  }
  EXPECT_TRUE(first_woken);
  EXPECT_TRUE(second_woken);
  EXPECT_TRUE(slept);
  for (int fd : {first[0], first[1], second[0], second[1]}) close(fd);
}

TEST(FiberLoopTest, AParkedFiberRunsOnceWokenFromAnotherThread) {
  SteadyClock clock;
  std::mutex mu;
  Fiber* parked = nullptr;
  bool go = false;
  std::atomic<bool> ran_after = false;
  FiberLoop loop(clock);
  loop.Spawn([&] {
    std::unique_lock lock(mu);
    while (!go) {
      parked = CurrentFiber();
      lock.unlock();
      ParkCurrentFiber();
      lock.lock();
    }
    ran_after = true;
  });
  for (;;) {
    std::lock_guard lock(mu);
    if (parked != nullptr) break;
  }
  clock.SleepUntil(clock.Now() + 5 * kMillisecond);
  EXPECT_FALSE(ran_after);
  Fiber* to_wake = nullptr;
  {
    std::lock_guard lock(mu);
    go = true;
    std::swap(to_wake, parked);
  }
  WakeFiber(to_wake);
  loop.Finish();
  EXPECT_TRUE(ran_after);
}

// Ten fibers each holding one of 3 units for 10 ms of simulated time: they go through in
// rounds of 3, in the order they came, and the waiters hold no time (or the holders' sleeps
// would never end).
TEST(FiberLoopTest, ASemaphoreLetsItsUnitsThroughInTurnOnSimulatedTime) {
  SimulatedClock clock;
  const Nanos start = clock.Now();
  FiberSemaphore units(3);
  std::vector<std::pair<int, Nanos>> entered;
  int holding = 0, most_holding = 0;
  {
    FiberLoop loop(clock);
    // Time stands still until all ten exist (the first would otherwise sleep its 10 ms before
    // the last is spawned).
    std::optional<ClockThread> spawning(std::in_place, clock);
    for (int i = 0; i < 10; ++i) {
      loop.Spawn([&, i] {
        units.Acquire();
        entered.emplace_back(i, clock.Now() - start);
        most_holding = std::max(most_holding, ++holding);
        clock.SleepUntil(clock.Now() + 10 * kMillisecond);
        --holding;
        units.Release();
      });
    }
    spawning.reset();
    loop.Finish();
  }
  EXPECT_EQ(most_holding, 3);
  ASSERT_EQ(entered.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(entered[static_cast<size_t>(i)].first, i);
    EXPECT_EQ(entered[static_cast<size_t>(i)].second, (i / 3) * 10 * kMillisecond) << i;
  }
  EXPECT_EQ(clock.Now() - start, 40 * kMillisecond);
}

TEST(FiberLoopTest, InterruptedSleepsReturnEarlyAndSaySo) {
  SteadyClock clock;
  std::atomic<int> reached = -1;
  std::atomic<bool> sleeping = false;
  const Nanos start = clock.Now();
  FiberLoop loop(clock);
  loop.Spawn([&] {
    sleeping = true;
    reached = FiberSleepUntil(clock.Now() + 60 * kSecond) ? 1 : 0;
  });
  while (!sleeping) clock.SleepUntil(clock.Now() + kMillisecond);
  clock.SleepUntil(clock.Now() + 2 * kMillisecond);
  loop.InterruptSleeps();
  loop.Finish();
  EXPECT_EQ(reached.load(), 0);
  EXPECT_LT(clock.Now() - start, 10 * kSecond);
}

}  // namespace
}  // namespace dbload
