// Costs of the clock on the open-loop path (base/clock.h, SteadyClock):
//  - Now(): one clock_gettime(CLOCK_MONOTONIC) through the vDSO; the load runner reads it
//    several times per transaction;
//  - SleepUntil(): clock_nanosleep to 20 us before the deadline, then spinning on Now(). The
//    counters say how late it wakes (lateness_ns) and how much CPU one sleep costs (cpu_ns per
//    sleep), against a plain clock_nanosleep to the deadline (no spin) for comparison.
// Run pinned, on a quiet machine: taskset -c 0 build-bench/bench/clock_bench
#include <benchmark/benchmark.h>
#include <time.h>

#include <cstdint>

#include "base/clock.h"

namespace dbload {
namespace {

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void BM_SteadyClock_Now(benchmark::State& state) {
  SteadyClock clock;
  for (auto _ : state) benchmark::DoNotOptimize(clock.Now());
}
BENCHMARK(BM_SteadyClock_Now);

// One sleep of range(0) microseconds, as a worker ahead of its schedule does.
void BM_SteadyClock_SleepUntil(benchmark::State& state) {
  SteadyClock clock;
  const Nanos gap = state.range(0) * kMicrosecond;
  int64_t late = 0;
  int64_t cpu = 0;
  for (auto _ : state) {
    const int64_t cpu0 = ThreadCpuNs();
    const Nanos deadline = clock.Now() + gap;
    clock.SleepUntil(deadline);
    late += clock.Now() - deadline;
    cpu += ThreadCpuNs() - cpu0;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["lateness_ns"] = static_cast<double>(late) / n;
  state.counters["cpu_ns"] = static_cast<double>(cpu) / n;
}
BENCHMARK(BM_SteadyClock_SleepUntil)->Arg(10)->Arg(50)->Arg(100)->Arg(1000)->UseRealTime();

// The same sleep without the final spin: clock_nanosleep to the deadline itself (timer slack
// lowered to 1 ns, as SteadyClock does on first use in a thread).
void BM_ClockNanosleep_NoSpin(benchmark::State& state) {
  SteadyClock clock;
  clock.SleepUntil(clock.Now());  // sets this thread's timer slack like SteadyClock does
  const Nanos gap = state.range(0) * kMicrosecond;
  int64_t late = 0;
  int64_t cpu = 0;
  for (auto _ : state) {
    const int64_t cpu0 = ThreadCpuNs();
    const Nanos deadline = clock.Now() + gap;
    const timespec until{static_cast<time_t>(deadline / kSecond), static_cast<long>(deadline % kSecond)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) != 0) {
    }
    late += clock.Now() - deadline;
    cpu += ThreadCpuNs() - cpu0;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["lateness_ns"] = static_cast<double>(late) / n;
  state.counters["cpu_ns"] = static_cast<double>(cpu) / n;
}
BENCHMARK(BM_ClockNanosleep_NoSpin)->Arg(10)->Arg(50)->Arg(100)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace dbload

BENCHMARK_MAIN();
