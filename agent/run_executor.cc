#include "agent/run_executor.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/interval_recorder.h"
#include "agent/load_runner.h"

namespace dbload {

namespace {

constexpr Nanos kInterval = kSecond;
// How often the loop looks at the runner, the interrupt flag and the control mailbox.
constexpr Nanos kPollSlice = 100 * kMillisecond;
// A plan bounded only by a query count still ends after this long.
constexpr Nanos kMaxRunLength = 24 * 3600 * kSecond;

PacerFactory MakePacerFactory(const v1::OpenLoad& open, double rate, double phase, uint64_t seed) {
  if (open.arrival() == v1::OpenLoad::POISSON) {
    return [rate, seed](Nanos start) { return std::make_unique<PoissonPacer>(start, rate, seed); };
  }
  return [rate, phase](Nanos start) { return std::make_unique<UniformPacer>(start, rate, phase); };
}

}  // namespace

void RunControl::SetRate(double per_second) {
  std::lock_guard lock(mu_);
  rate_ = per_second;
}

void RunControl::SetClients(uint32_t clients) {
  std::lock_guard lock(mu_);
  clients_ = clients;
}

void RunControl::Stop(std::string reason) {
  std::lock_guard lock(mu_);
  stop_reason_ = std::move(reason);
}

// Takes what was asked since the last look.
class RunControlReader {
 public:
  struct Requests {
    std::optional<double> rate;
    std::optional<uint32_t> clients;
    std::optional<std::string> stop_reason;
  };
  static Requests Take(RunControl* control) {
    if (control == nullptr) return {};
    std::lock_guard lock(control->mu_);
    Requests requests{control->rate_, control->clients_, control->stop_reason_};
    control->rate_.reset();
    control->clients_.reset();
    return requests;
  }
};

absl::StatusOr<ExecutionResult> ExecuteRun(const v1::Plan& plan, const RunShare& share,
                                           db::Driver& driver, const Scenario& scenario,
                                           Clock& clock, const ExecutionHooks& hooks) {
  IntervalRecorder recorder(static_cast<int>(scenario.query_types().size()));
  LoadRunner runner(driver, scenario, recorder, clock,
                    {.seed = plan.seed(), .first_slot = share.first_slot, .total_slots = share.total_slots});
  ExecutionResult result;
  result.started_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());

  const bool open = plan.load().has_open();
  const double rate = share.rate.value_or(plan.load().open().rate());
  const uint32_t clients = share.clients.value_or(plan.load().closed().clients());
  const Nanos warmup = plan.warmup_ns();
  const uint64_t budget = share.queries;
  if (budget > 0 && warmup == 0) runner.SetStartLimit(budget);

  // An agent with a zero share (more agents than clients) still reports, but runs nothing.
  const int sessions = static_cast<int>(open ? (rate > 0 ? plan.target().pool() : 0) : clients);
  if (absl::Status connected = runner.Connect(sessions); !connected.ok()) return connected;

  // The run's clock starts once every session is ready, so connecting costs no measured time.
  // This thread waits on the clock alongside the workers; on a simulated clock time moves only
  // when all of them wait.
  clock.AttachThread();
  const Nanos start = clock.Now();
  const Nanos warmup_end = start + warmup;
  const Nanos measured_length =
      plan.stop().duration_ns() > 0 ? plan.stop().duration_ns() : kMaxRunLength;
  const Nanos deadline = warmup_end + measured_length;
  if (open && sessions > 0) {
    runner.StartOpenLoop(MakePacerFactory(plan.load().open(), rate, share.phase, plan.seed()),
                         deadline);
  } else if (!open) {
    runner.StartClosedLoop(plan.load().closed().think_time_ns(), deadline);
  }

  Nanos interval_start = start;
  bool in_warmup = warmup > 0;
  uint64_t warmup_completions = 0;
  // The measured part starts when the warm-up's last interval is drained: a sample belongs to
  // the interval it was drained in, so this is where the report's counts begin.
  Nanos measured_from = start;
  auto close_interval = [&](Nanos now) {
    const IntervalSnapshot snapshot = recorder.Drain();
    if (in_warmup) warmup_completions += snapshot.Executed() + snapshot.Errors();
    if (hooks.on_interval) {
      hooks.on_interval({.snapshot = snapshot,
                         .elapsed_s = static_cast<double>(now - start) / kSecond,
                         .length_s = static_cast<double>(now - interval_start) / kSecond,
                         .warmup = in_warmup,
                         .in_flight = static_cast<uint32_t>(runner.InFlight()),
                         .connections = static_cast<uint32_t>(runner.Clients())});
    }
    interval_start = now;
  };
  auto idle = [&] { return sessions == 0 && clock.Now() >= deadline; };

  std::string& end_reason = result.end_reason;
  while (end_reason.empty()) {
    Nanos next_tick = interval_start + kInterval;
    if (in_warmup) next_tick = std::min(next_tick, warmup_end);
    RunControlReader::Requests requests;
    for (Nanos now = clock.Now(); now < next_tick; now = clock.Now()) {
      requests = RunControlReader::Take(hooks.control);
      if (requests.rate) runner.SetRate(*requests.rate);
      if (requests.clients) (void)runner.SetClients(static_cast<int>(*requests.clients));
      if (requests.stop_reason || (sessions > 0 && runner.Finished()) || idle()) break;
      if (hooks.interrupted != nullptr && hooks.interrupted->load()) break;
      clock.SleepUntil(std::min(next_tick, now + kPollSlice));
    }
    if (hooks.interrupted != nullptr && hooks.interrupted->load()) {
      end_reason = "interrupted";
    } else if (requests.stop_reason) {
      end_reason = absl::StrCat("stopped: ", *requests.stop_reason);
    } else if ((sessions > 0 && runner.Finished()) || idle()) {
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
  result.measured_s = in_warmup ? 0 : static_cast<double>(ended - measured_from) / kSecond;
  result.not_started = runner.not_started();
  return result;
}

}  // namespace dbload
