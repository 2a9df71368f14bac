#ifndef DBLOAD_BASE_CLOCK_H_
#define DBLOAD_BASE_CLOCK_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

namespace dbload {

// Nanoseconds on a monotonic timeline whose origin is the clock's own.
using Nanos = int64_t;
inline constexpr Nanos kMicrosecond = 1'000;
inline constexpr Nanos kMillisecond = 1'000'000;
inline constexpr Nanos kSecond = 1'000'000'000;

// Everything that waits or timestamps takes a Clock, so that pacing, ramps and timeouts can be
// tested on simulated time, deterministically and fast.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos Now() = 0;
  // Returns once Now() >= deadline (immediately if it already is).
  virtual void SleepUntil(Nanos deadline) = 0;
  // Threads whose waiting goes through this clock announce themselves, so that a simulated clock
  // knows when every one of them is asleep and time may jump. No-ops on real clocks.
  virtual void AttachThread() {}
  virtual void DetachThread() {}
};

// CLOCK_MONOTONIC. Sleeps with an absolute deadline and then spins the last few microseconds,
// because timer wake-ups are late by tens of microseconds and that lateness would be charged
// to schedule lag.
class SteadyClock final : public Clock {
 public:
  Nanos Now() override;
  void SleepUntil(Nanos deadline) override;
};

// Discrete-event time. Threads attach; when every attached thread is in SleepUntil, time jumps
// to the earliest deadline and the sleepers due then wake. With no attached threads a caller of
// SleepUntil simply moves time forward. Time never goes backwards.
class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(Nanos start = 0) : now_(start) {}
  Nanos Now() override;
  void SleepUntil(Nanos deadline) override;
  void AttachThread() override;
  void DetachThread() override;
  // Moves time forward by hand (tests of single-threaded logic).
  void Advance(Nanos delta);
  // For an event loop's thread (base/fiber_loop.h): SleepUntil that also returns, early, once
  // `interrupted` is true and Interrupt() was called after it became so.
  void SleepUntilOrInterrupted(Nanos deadline, const std::atomic<bool>& interrupted);
  void Interrupt();

 private:
  void MaybeAdvanceLocked();

  std::mutex mu_;
  std::condition_variable wake_;
  Nanos now_;
  int attached_ = 0;
  int sleeping_ = 0;
  std::multimap<Nanos, int> deadlines_;  // deadline -> sleeper count placeholder
};

// RAII attachment of the current thread to a clock.
class ClockThread {
 public:
  explicit ClockThread(Clock& clock) : clock_(clock) { clock_.AttachThread(); }
  ~ClockThread() { clock_.DetachThread(); }
  ClockThread(const ClockThread&) = delete;
  ClockThread& operator=(const ClockThread&) = delete;

 private:
  Clock& clock_;
};

}  // namespace dbload

#endif  // DBLOAD_BASE_CLOCK_H_
