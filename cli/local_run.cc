#include "cli/local_run.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/interval_recorder.h"
#include "agent/load_runner.h"
#include "common/report.h"

namespace dbload {


namespace {

constexpr Nanos kInterval = kSecond;
// How often the control loop looks at the runner and the interrupt flag between intervals.
constexpr Nanos kPollSlice = 100 * kMillisecond;
constexpr Nanos kMinPrintedInterval = 200 * kMillisecond;
// A plan bounded only by a query count still ends after this long.
constexpr Nanos kMaxRunLength = 24 * 3600 * kSecond;

PacerFactory MakePacerFactory(const v1::OpenLoad& open, uint64_t seed) {
  const double rate = open.rate();
  if (open.arrival() == v1::OpenLoad::POISSON) {
    return [rate, seed](Nanos start) { return std::make_unique<PoissonPacer>(start, rate, seed); };
  }
  return [rate](Nanos start) { return std::make_unique<UniformPacer>(start, rate); };
}

}  // namespace

absl::StatusOr<v1::RunReport> RunPlanLocally(const v1::Plan& plan, db::Driver& driver,
                                             const Scenario& scenario, Clock& clock,
                                             const LocalRunHooks& hooks) {
  IntervalRecorder recorder(static_cast<int>(scenario.query_types().size()));
  LoadRunner runner(driver, scenario, recorder, clock, {.seed = plan.seed()});
  RunReportBuilder builder(plan, scenario.query_types());
  const std::string started_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());

  const bool open = plan.load().has_open();
  const Nanos warmup = plan.warmup_ns();
  const uint64_t budget = plan.stop().queries();
  if (budget > 0 && warmup == 0) runner.SetStartLimit(budget);
  uint64_t warmup_completions = 0;

  const int sessions = static_cast<int>(open ? plan.target().pool() : plan.load().closed().clients());
  if (absl::Status connected = runner.Connect(sessions); !connected.ok()) return connected;

  // The run's clock starts once every session is ready, so connecting costs no measured time.
  // This thread waits on the clock alongside the workers; on a simulated clock time moves only
  // when all of them wait.
  clock.AttachThread();
  const Nanos start = clock.Now();
  const Nanos warmup_end = start + warmup;
  const Nanos measured_length = plan.stop().duration_ns() > 0 ? plan.stop().duration_ns() : kMaxRunLength;
  const Nanos deadline = warmup_end + measured_length;
  if (open) {
    runner.StartOpenLoop(MakePacerFactory(plan.load().open(), plan.seed()), deadline);
  } else {
    runner.StartClosedLoop(plan.load().closed().think_time_ns(), deadline);
  }

  const double target_rate = open ? plan.load().open().rate() : 0;
  std::string end_reason;
  Nanos interval_start = start;
  bool in_warmup = warmup > 0;
  // The measured part starts when the warm-up's last interval is drained: a sample belongs to
  // the interval it was drained in, so this is where the report's counts begin.
  Nanos measured_from = start;
  auto close_interval = [&](Nanos now) {
    const IntervalSnapshot snapshot = recorder.Drain();
    if (in_warmup) warmup_completions += snapshot.Executed() + snapshot.Errors();
    const v1::IntervalSample sample =
        builder.AddInterval(static_cast<double>(now - start) / kSecond,
                            static_cast<double>(now - interval_start) / kSecond, target_rate,
                            in_warmup, snapshot);
    // The fragment after the last full second stays in the report's time series, but a rate
    // over a few milliseconds means nothing to someone watching.
    if (hooks.on_interval && now - interval_start >= kMinPrintedInterval) hooks.on_interval(sample);
    interval_start = now;
  };

  while (end_reason.empty()) {
    Nanos next_tick = interval_start + kInterval;
    if (in_warmup) next_tick = std::min(next_tick, warmup_end);
    for (Nanos now = clock.Now(); now < next_tick; now = clock.Now()) {
      if (runner.Finished()) break;
      if (hooks.interrupted != nullptr && hooks.interrupted->load()) break;
      clock.SleepUntil(std::min(next_tick, now + kPollSlice));
    }
    if (hooks.interrupted != nullptr && hooks.interrupted->load()) {
      end_reason = "interrupted";
    } else if (runner.Finished()) {
      if (const auto fatal = runner.fatal_error()) {
        end_reason = absl::StrCat("fatal error ", fatal->code, ": ", fatal->message);
      } else if (budget > 0 && clock.Now() < deadline) {
        end_reason = "queries";
      } else {
        end_reason = "duration";
      }
    } else {
      const Nanos now = clock.Now();
      close_interval(now);
      if (in_warmup && now >= warmup_end) {
        in_warmup = false;
        measured_from = now;
        // Transactions in flight now will complete in the measured part; limiting the starts
        // to warm-up completions + budget makes exactly `budget` complete there.
        if (budget > 0) runner.SetStartLimit(warmup_completions + budget);
      }
    }
  }
  runner.Stop();
  clock.DetachThread();  // joining is not waiting on the clock
  runner.Wait();
  // A run bounded by time lasts until its deadline even if the last arrival came earlier.
  Nanos ended = std::max(runner.FinishedAt(), interval_start);
  if (end_reason == "duration") ended = std::max(ended, deadline);
  close_interval(ended);
  const double measured_s = in_warmup ? 0 : static_cast<double>(ended - measured_from) / kSecond;
  return builder.Finish(measured_s, 0, runner.not_started(), end_reason, started_at);
}

}  // namespace dbload
