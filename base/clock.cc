#include "base/clock.h"

#include <sys/prctl.h>

#include <ctime>

#include "base/fiber_loop.h"

namespace dbload {

namespace {
constexpr Nanos kSpinBelow = 20 * kMicrosecond;

timespec ToTimespec(Nanos t) {
  return timespec{static_cast<time_t>(t / kSecond), static_cast<long>(t % kSecond)};
}
}  // namespace

Nanos SteadyClock::Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

void SteadyClock::SleepUntil(Nanos deadline) {
  if (SleptOnFiber(deadline)) return;
  // The kernel's default timer slack (50 µs) would be added to every wake-up and show up as
  // schedule lag: ask for the smallest, once per thread.
  thread_local bool slack_reduced = false;
  if (!slack_reduced) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    slack_reduced = true;
  }
  Nanos now = Now();
  if (deadline - now > kSpinBelow) {
    const timespec until = ToTimespec(deadline - kSpinBelow);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) != 0) {
    }
  }
  while (Now() < deadline) {
  }
}

Nanos SimulatedClock::Now() {
  std::lock_guard lock(mu_);
  return now_;
}

void SimulatedClock::SleepUntil(Nanos deadline) {
  if (SleptOnFiber(deadline)) return;  // its loop's thread, the one attached, slept for it
  static const std::atomic<bool> kNever{false};
  SleepUntilOrInterrupted(deadline, kNever);
}

void SimulatedClock::SleepUntilOrInterrupted(Nanos deadline, const std::atomic<bool>& interrupted) {
  std::unique_lock lock(mu_);
  if (deadline <= now_ || interrupted.load()) return;
  if (attached_ == 0) {
    now_ = deadline;
    return;
  }
  auto it = deadlines_.emplace(deadline, 0);
  ++sleeping_;
  MaybeAdvanceLocked();
  wake_.wait(lock, [&] { return now_ >= deadline || interrupted.load(); });
  deadlines_.erase(it);
  --sleeping_;
}

void SimulatedClock::Interrupt() {
  std::lock_guard lock(mu_);
  wake_.notify_all();
}

void SimulatedClock::AttachThread() {
  std::lock_guard lock(mu_);
  ++attached_;
}

void SimulatedClock::DetachThread() {
  std::lock_guard lock(mu_);
  --attached_;
  MaybeAdvanceLocked();
}

void SimulatedClock::Advance(Nanos delta) {
  std::lock_guard lock(mu_);
  now_ += delta;
  wake_.notify_all();
}

void SimulatedClock::MaybeAdvanceLocked() {
  // Only when every attached thread waits on this clock is nothing else going to happen before
  // the earliest deadline: then jump there.
  // With nothing attached, a sleeper that is not attached itself may still be waiting (it went
  // to sleep while others were attached): time must move for it too.
  if (sleeping_ < attached_ || deadlines_.empty()) return;
  const Nanos earliest = deadlines_.begin()->first;
  if (earliest > now_) now_ = earliest;
  wake_.notify_all();
}

}  // namespace dbload
