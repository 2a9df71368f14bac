// core_soaker — spins on its CPU at the idle scheduling class (SCHED_IDLE), so that it runs only
// when nothing else wants that CPU, and prints "ITERATIONS SECONDS CPU_SECONDS" (wall time spun,
// and its own CPU time) when it stops: after SECONDS when given, else at SIGTERM or SIGINT.
//
//   core_soaker [SECONDS]
//
// bench/compare_clients.sh (CORE_COST=1) runs it pinned beside a client: the share of its
// iterations the client takes away is what the client costs its core, the kernel's work for it
// included. A client's own CPU time (/usr/bin/time) leaves out what the kernel does for it in
// interrupts and on the way out of idle (waking it, its timers); on this VM that was a third of
// the thread-per-connection engine's cost (bench/RESULTS.md section 31).
#include <sched.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

volatile std::sig_atomic_t g_stop = 0;

void Stop(int) { g_stop = 1; }

double Seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  double limit = -1;
  if (argc == 2) {
    char* end = nullptr;
    limit = std::strtod(argv[1], &end);
    if (*end != '\0' || !(limit > 0)) {
      std::fprintf(stderr, "core_soaker: SECONDS must be a positive number, got '%s'\n", argv[1]);
      return 2;
    }
  } else if (argc > 2) {
    std::fprintf(stderr, "usage: core_soaker [SECONDS]\n");
    return 2;
  }
  const sched_param idle{};
  if (sched_setscheduler(0, SCHED_IDLE, &idle) != 0) {
    std::perror("core_soaker: SCHED_IDLE");
    return 1;
  }
  std::signal(SIGTERM, Stop);
  std::signal(SIGINT, Stop);
  const double start = Seconds();
  double now = start;
  unsigned long long iterations = 0;
  while (g_stop == 0 && (limit < 0 || now - start < limit)) {
    // A fixed amount of work per iteration; the clock is read every 64 (a vDSO read, ~20 ns,
    // against ~15 µs of spinning).
    for (int i = 0; i < 1000; ++i) asm volatile("" ::: "memory");  // not optimized away
    if ((++iterations & 63) == 0) now = Seconds();
  }
  const double spun = Seconds() - start;
  rusage own{};
  getrusage(RUSAGE_SELF, &own);
  const auto seconds_of = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  std::printf("%llu %.6f %.6f\n", iterations, spun,
              seconds_of(own.ru_utime) + seconds_of(own.ru_stime));
  return 0;
}
