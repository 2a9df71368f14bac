#include "agent/run_executor.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/interval_recorder.h"
#include "agent/load_runner.h"
#include "agent/plan_capture.h"
#include "agent/side_session_driver.h"
#include "base/random.h"
#include "base/usable_cores.h"
#include "plan/plan_limits.h"
#include "plan/stage_program.h"

namespace dbload {

namespace {

constexpr Nanos kInterval = kSecond;
// How often the loop looks at the runner, the interrupt flag and the control mailbox.
constexpr Nanos kPollSlice = 100 * kMillisecond;
constexpr Nanos kCountPollSlice = 5 * kMillisecond;
// Holding the sessions after the load (ExecutionHooks::on_load_over): how soon a CloseSessions
// is acted on.
constexpr Nanos kHoldPollSlice = 5 * kMillisecond;
// Waiting for StartLoad: how soon an interruption is seen.
constexpr int kInterruptPollMillis = 50;
// A plan bounded only by a query count still ends after this long.
constexpr Nanos kMaxRunLength = 24 * 3600 * kSecond;
constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

// Keeps the arrival streams apart from the workers' (MixSeed(run seed, slot)) and the loader's.
constexpr uint64_t kArrivalStreams = 0x6172726976616c73ULL;  // "arrivals"

}  // namespace

uint64_t ArrivalSeed(uint64_t run_seed, const RunShare& share, uint32_t stage) {
  return MixSeed(MixSeed(MixSeed(run_seed, kArrivalStreams), share.first_slot), stage);
}

PacerFactory MakePacerFactory(const v1::OpenLoad& open, double rate, const RunShare& share,
                              uint64_t run_seed, uint32_t stage) {
  if (open.arrival() == v1::OpenLoad::POISSON) {
    const uint64_t seed = ArrivalSeed(run_seed, share, stage);
    return [rate, seed](Nanos start) { return std::make_unique<PoissonPacer>(start, rate, seed); };
  }
  const double phase = share.phase;
  return [rate, phase](Nanos start) { return std::make_unique<UniformPacer>(start, rate, phase); };
}

void RunControl::SetRate(double per_second) {
  std::lock_guard lock(mu_);
  rate_ = per_second;
}

void RunControl::SetClients(uint32_t clients) {
  std::lock_guard lock(mu_);
  clients_ = clients;
}

void RunControl::AddSlots(uint32_t first, uint32_t count) {
  std::lock_guard lock(mu_);
  slots_.emplace_back(first, count);
}

void RunControl::Stop(std::string reason) {
  {
    std::lock_guard lock(mu_);
    stop_reason_ = std::move(reason);
  }
  start_cv_.notify_all();
}

bool RunControl::StopRequested() {
  std::lock_guard lock(mu_);
  return stop_reason_.has_value();
}

void RunControl::SetKneeStep(uint32_t step, double total_level) {
  std::lock_guard lock(mu_);
  if (knee_ && (knee_->done || knee_->step >= step)) return;
  knee_ = KneeRequest{.step = step, .level = total_level};
}

void RunControl::EndKnee() {
  std::lock_guard lock(mu_);
  if (!knee_) knee_ = KneeRequest{};
  knee_->done = true;
}

void RunControl::CloseSessions() {
  std::lock_guard lock(mu_);
  close_sessions_ = true;
}

void RunControl::StartLoad() {
  {
    std::lock_guard lock(mu_);
    start_load_ = true;
  }
  start_cv_.notify_all();
}

bool RunControl::WaitForStart(const std::atomic<bool>* interrupted) {
  std::unique_lock lock(mu_);
  for (;;) {
    if (stop_reason_) return false;
    if (start_load_) return true;
    if (interrupted != nullptr && interrupted->load()) return false;
    // A signal handler sets `interrupted` and cannot notify: looked at this often.
    start_cv_.wait_for(lock, std::chrono::milliseconds(kInterruptPollMillis));
  }
}

// Takes what was asked since the last look.
class RunControlReader {
 public:
  struct Requests {
    std::optional<double> rate;
    std::optional<uint32_t> clients;
    std::optional<std::string> stop_reason;
    std::optional<RunControl::KneeRequest> knee;  // kept until the execution takes it
    std::vector<std::pair<uint32_t, uint32_t>> slots;
  };
  static Requests Take(RunControl* control) {
    if (control == nullptr) return {};
    std::lock_guard lock(control->mu_);
    Requests requests{control->rate_, control->clients_, control->stop_reason_, control->knee_,
                      std::move(control->slots_)};
    control->rate_.reset();
    control->clients_.reset();
    control->slots_.clear();
    return requests;
  }
  static bool CloseSessionsAsked(RunControl* control) {
    if (control == nullptr) return true;
    std::lock_guard lock(control->mu_);
    return control->close_sessions_;
  }
  // The knee request was applied: a later one must be newer to count.
  static void TookKnee(RunControl* control, const RunControl::KneeRequest& taken) {
    std::lock_guard lock(control->mu_);
    if (control->knee_ && control->knee_->step == taken.step &&
        control->knee_->done == taken.done) {
      control->knee_.reset();
    }
  }
};

namespace {
// Connector/C++ needs its per-thread set-up on the thread that opens the session.
absl::Status SetUpScenario(db::Driver& driver, Scenario& scenario) {
  driver.ThreadStart();
  absl::Status status = scenario.Setup(driver);
  driver.ThreadEnd();
  return status;
}
}  // namespace

absl::StatusOr<ExecutionResult> ExecuteRun(const v1::Plan& plan, const RunShare& share,
                                           db::Driver& driver, Scenario& scenario,
                                           Clock& clock, const ExecutionHooks& hooks) {
  IntervalRecorder recorder(static_cast<int>(scenario.query_types().size()));
  // The sample reads' and EXPLAIN's sessions: their own work lands in the first interval and the
  // last, for the commit reconciliation.
  SideSessionDriver side_driver(driver, recorder);
  const absl::Time setup_start = absl::Now();
  if (absl::Status status = SetUpScenario(side_driver, scenario); !status.ok()) return status;
  const double setup_s = absl::ToDoubleSeconds(absl::Now() - setup_start);
  LoadRunner runner(
      driver, scenario, recorder, clock,
      {.seed = plan.seed(),
       .first_slot = share.first_slot,
       .total_slots = share.total_slots,
       .event_loops = static_cast<int>(EventLoopsFor(plan.target(), UsableCores())),
       .connect_per_transaction = plan.target().connect() == v1::CONNECT_MODE_PER_TRANSACTION,
       .connects_at_once = static_cast<int>(ConnectsAtOnce(plan.target())),
       .timer_slack = plan.target().timer_slack_ns(),
       .pipeline = plan.target().pipeline(),
       .hold_sessions = hooks.on_load_over != nullptr});
  ExecutionResult result;
  result.setup_s = setup_s;
  result.started_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());

  const bool open = plan.load().has_open();
  const bool staged = plan.stages_size() > 0;
  const StageProgram program(plan, share.rate_fraction, share.agent_index, share.agent_count);
  const bool knee_first = staged && program.IsKnee(0);
  double rate = !staged      ? share.rate.value_or(plan.load().open().rate())
                : knee_first ? program.KneeRate(plan.stages(0).knee().from())
                             : program.PacedRate(0, 0);
  uint32_t clients = !staged      ? share.clients.value_or(plan.load().closed().clients())
                     : knee_first ? program.KneeClients(plan.stages(0).knee().from())
                                  : program.Clients(0, 0);
  const Nanos warmup = plan.warmup_ns();
  const uint64_t budget = share.queries;  // plans without stages: the measured part's count
  if (!staged && budget > 0 && warmup == 0) runner.SetStartLimit(budget);
  // With stages, a stage that ends on its query count pauses the workers at its limit, so that
  // the next stage finds them; the last one lets them go (the run is over).
  auto stage_budget = [&](size_t index) -> std::optional<uint64_t> {
    if (plan.stages(static_cast<int>(index)).queries() == 0) return std::nullopt;
    return index < share.stage_queries.size() ? share.stage_queries[index] : 0;
  };
  if (staged) runner.SetPauseAtLimit(true);

  // An agent with a zero share (more agents than clients) still reports, but runs nothing.
  const bool any_rate = staged ? program.AnyRate() : rate > 0;
  const int sessions = static_cast<int>(open ? (any_rate ? plan.target().pool() : 0) : clients);
  if (absl::Status connected = runner.Connect(sessions); !connected.ok()) return connected;
  // EXPLAIN runs beside the load, never on a worker's session or this loop's thread; requests
  // only queue. The noop driver has no plans to tell.
  std::unique_ptr<PlanCapture> capture;
  if (share.explain && hooks.on_plans && !plan.explain().disabled() &&
      driver.dialect() != db::Dialect::kNoop) {
    capture = std::make_unique<PlanCapture>(
        side_driver, scenario,
        WorkerSlot{.run_seed = plan.seed(),
                   .index = share.first_slot,
                   .count = std::max(share.total_slots, share.first_slot + 1)},
        hooks.on_plans);
  }
  auto capture_plans = [&](PlanMoment moment) {
    if (capture != nullptr) capture->Capture(moment);
  };

  // Every agent of the run starts when the last is ready (RunControl::StartLoad); a run stopped
  // or interrupted meanwhile ends without load.
  if (hooks.on_sessions_ready) {
    hooks.on_sessions_ready();
    if (hooks.control != nullptr && !hooks.control->WaitForStart(hooks.interrupted)) {
      runner.Stop();
      runner.Wait();
      const std::optional<std::string> stop_reason =
          RunControlReader::Take(hooks.control).stop_reason;
      result.end_reason_kind = stop_reason ? v1::END_REASON_STOPPED : v1::END_REASON_INTERRUPTED;
      result.end_reason = stop_reason ? absl::StrCat("stopped: ", *stop_reason) : "interrupted";
      return result;
    }
  }
  // The run's clock starts once every session is ready, so connecting costs no measured time.
  // This thread waits on the clock alongside the workers; on a simulated clock time moves only
  // when all of them wait.
  if (hooks.on_load_start) hooks.on_load_start();
  clock.AttachThread();
  const Nanos start = clock.Now();
  const Nanos warmup_end = start + warmup;
  Nanos measured_length = plan.stop().duration_ns() > 0 ? plan.stop().duration_ns() : kMaxRunLength;
  if (staged && program.TotalLength() > 0) {
    measured_length = std::min(measured_length, program.TotalLength());
  }
  Nanos deadline = warmup_end + measured_length;
  const Nanos stop_cap = plan.stop().duration_ns() > 0 ? warmup_end + plan.stop().duration_ns()
                                                       : kNever;
  if (open && sessions > 0) {
    runner.StartOpenLoop(MakePacerFactory(plan.load().open(), rate, share, plan.seed(), 0),
                         deadline);
  } else if (!open) {
    runner.StartClosedLoop(plan.load().closed().think_time_ns(), deadline);
  }

  Nanos interval_start = start;
  bool in_warmup = warmup > 0;
  uint64_t completions = 0;  // drained so far, warm-up included
  // The measured part starts when the warm-up's last interval is drained: a sample belongs to
  // the interval it was drained in, so this is where the report's counts begin.
  Nanos measured_from = start;
  size_t stage = 0;
  Nanos stage_start = warmup_end;
  bool counted_stage = false;  // in a stage that ends on its query count
  uint64_t stage_limit = 0;    // then: the runner's start limit that completes it
  uint32_t knee_step = 0;      // in a knee-search stage: its current step
  bool knee_ended_run = false;  // the last stage was a knee search and it is over
  // The interval's target is its mean wanted rate (arrivals wanted / length): a rate that
  // changed during the interval would otherwise be compared with arrivals paced at the old one.
  double wanted_arrivals = 0;  // in the current interval, up to rate_since
  uint32_t peak_clients = clients;  // closed loop: the most asked for in the current interval
  Nanos rate_since = start;
  auto account_rate = [&](Nanos now) {
    wanted_arrivals += rate * static_cast<double>(now - rate_since) / kSecond;
    rate_since = now;
  };
  auto close_interval = [&](Nanos now) {
    account_rate(now);
    const double length_s = static_cast<double>(now - interval_start) / kSecond;
    const double mean_rate = length_s > 0 ? wanted_arrivals / length_s : rate;
    wanted_arrivals = 0;
    const uint32_t interval_peak = std::max(peak_clients, clients);
    peak_clients = clients;  // the next interval starts with what runs now
    const IntervalSnapshot snapshot = recorder.Drain(now);
    completions += snapshot.Completed();
    if (hooks.on_interval) {
      hooks.on_interval({.snapshot = snapshot,
                         .elapsed_s = static_cast<double>(now - start) / kSecond,
                         .length_s = length_s,
                         .warmup = in_warmup,
                         .in_flight = static_cast<uint32_t>(runner.InFlight()),
                         .connections = static_cast<uint32_t>(runner.Clients()),
                         .stage = staged ? static_cast<uint32_t>(stage + 1) : 0,
                         .target_rate = open && sessions > 0 ? mean_rate : 0,
                         .clients = open ? 0 : interval_peak,
                         .knee_step = knee_step});
    }
    interval_start = now;
  };
  // Sets this agent's part of a total level, as a rate or clients.
  auto set_level = [&](double wanted_rate, uint32_t wanted_clients) {
    if (open) {
      if (wanted_rate == rate) return;
      account_rate(clock.Now());
      if (sessions > 0) runner.SetRate(wanted_rate);
      rate = wanted_rate;
    } else if (wanted_clients != clients) {
      // A client that cannot connect is not retried here: the interval's clients show it.
      (void)runner.SetClients(static_cast<int>(wanted_clients));
      clients = wanted_clients;
      // A change as the interval begins (a stage boundary) leaves nothing of the old level in it.
      peak_clients = clock.Now() == interval_start ? clients : std::max(peak_clients, clients);
    }
  };
  auto set_knee_level = [&](double total) {
    set_level(program.KneeRate(total), program.KneeClients(total));
  };
  // A stage's level `now`: rates follow ramps in slices, clients change exactly on their steps.
  auto apply_level = [&](Nanos now) {
    if (!staged || in_warmup || program.IsKnee(stage)) return;
    const Nanos elapsed = now - stage_start;
    set_level(open ? program.PacedRate(stage, elapsed) : rate,
              open ? clients : program.Clients(stage, elapsed));
  };
  auto enter_stage = [&](size_t index, Nanos at) {
    stage = index;
    stage_start = at;
    knee_step = 0;
    if (program.IsKnee(stage)) {
      knee_step = 1;
      set_knee_level(program.stage(stage).knee().from());
    }
    // A stage entered off its schedule (after a knee search, or a late warm-up end) moves the
    // last one; the deadline is always the last stage's end, capped by stop.duration.
    if (stage + 1 == program.size() && program.Length(stage) > 0 &&
        at + program.Length(stage) != deadline) {
      deadline = std::min(stop_cap, at + program.Length(stage));
      runner.SetDeadline(deadline);
    }
    capture_plans({.stage = static_cast<uint32_t>(index + 1)});
    const bool after_count = counted_stage;
    const std::optional<uint64_t> count = stage_budget(stage);
    counted_stage = count.has_value();
    // As at the end of a warm-up: what is in flight completes in this stage.
    stage_limit = counted_stage ? completions + *count : UINT64_MAX;
    runner.SetPauseAtLimit(stage + 1 < program.size());
    runner.SetStartLimit(stage_limit);
    apply_level(at);
    if (after_count && open && sessions > 0) {
      // The workers paused at the last stage's count: this stage's arrivals start now.
      runner.RestartArrivals(MakePacerFactory(plan.load().open(), rate, share, plan.seed(),
                                              static_cast<uint32_t>(stage)),
                             at);
    }
  };
  // A counted stage is over once every transaction it started has completed.
  auto stage_count_done = [&] { return counted_stage && runner.Completed() >= stage_limit; };
  // The end in time of a stage that another follows (the last one ends with the run's deadline;
  // one that ends on its query count only, when the count is done).
  auto stage_end = [&] {
    if (!staged || in_warmup || stage + 1 == program.size() || program.Length(stage) == 0) {
      return kNever;
    }
    return stage_start + program.Length(stage);
  };
  // Workers leave at the deadline, at the query limit, on Stop or on a fatal error, and closed-
  // loop clients when a stage retires them: only the first four end the run.
  auto load_over = [&] {
    const bool last = staged && stage + 1 == program.size();
    if (knee_ended_run || (last && stage_count_done())) return true;
    const bool workers_expected = open || !staged ? sessions > 0 : clients > 0;
    return workers_expected ? runner.Finished() : clock.Now() >= deadline;
  };
  if (!in_warmup && staged) enter_stage(0, start);
  if (!in_warmup && !staged) capture_plans({.stage = 0});

  std::string& end_reason = result.end_reason;
  while (end_reason.empty()) {
    Nanos next_tick = std::min(interval_start + kInterval, stage_end());
    if (in_warmup) next_tick = std::min(next_tick, warmup_end);
    RunControlReader::Requests requests;
    for (Nanos now = clock.Now(); now < next_tick; now = clock.Now()) {
      requests = RunControlReader::Take(hooks.control);
      if (requests.rate) {
        account_rate(now);
        rate = *requests.rate;
        runner.SetRate(rate);
      }
      for (const auto& [first, count] : requests.slots) runner.AddSlots(first, count);
      if (requests.clients) {
        (void)runner.SetClients(static_cast<int>(*requests.clients));
        clients = *requests.clients;
        peak_clients = std::max(peak_clients, clients);
      }
      apply_level(now);
      const bool knee_news = knee_step > 0 && requests.knee &&
                             (requests.knee->done || requests.knee->step > knee_step);
      if (requests.stop_reason || load_over() || knee_news || stage_count_done()) break;
      if (hooks.interrupted != nullptr && hooks.interrupted->load()) break;
      // A counted stage that another follows can end at any moment: look often, so that the
      // next stage's load follows closely.
      const bool hand_over = counted_stage && stage + 1 < program.size();
      Nanos wake = std::min(next_tick, now + (hand_over ? kCountPollSlice : kPollSlice));
      if (staged && !in_warmup) {
        const Nanos change = program.NextChange(stage, now - stage_start);
        if (change != kNever) wake = std::min(wake, stage_start + change);
      }
      clock.SleepUntil(wake);
    }
    v1::EndReasonKind& end_kind = result.end_reason_kind;
    if (hooks.interrupted != nullptr && hooks.interrupted->load()) {
      end_kind = v1::END_REASON_INTERRUPTED;
      end_reason = "interrupted";
    } else if (requests.stop_reason) {
      end_kind = v1::END_REASON_STOPPED;
      end_reason = absl::StrCat("stopped: ", *requests.stop_reason);
    } else if (load_over()) {
      if (const auto fatal = runner.fatal_error()) {
        end_kind = v1::END_REASON_FATAL_ERROR;
        end_reason = absl::StrCat("fatal error ", fatal->code, ": ", fatal->message);
      } else if (knee_ended_run) {
        end_kind = v1::END_REASON_KNEE;
        end_reason = "knee";
      } else if ((staged ? stage_count_done() : budget > 0) && clock.Now() < deadline) {
        end_kind = v1::END_REASON_QUERIES;
        end_reason = "queries";
      } else {
        end_kind = v1::END_REASON_DURATION;
        end_reason = "duration";
      }
    } else {
      const Nanos now = clock.Now();
      const Nanos ending_stage = stage_end();
      const bool knee_news = knee_step > 0 && requests.knee &&
                             (requests.knee->done || requests.knee->step > knee_step);
      // A step change the moment an interval closed needs no empty interval of its own.
      if (!(knee_news && now == interval_start)) close_interval(now);
      if (in_warmup && now >= warmup_end) {
        in_warmup = false;
        measured_from = now;
        // Transactions in flight now will complete in the measured part; limiting the starts
        // to warm-up completions + budget makes exactly `budget` complete there.
        if (!staged && budget > 0) runner.SetStartLimit(completions + budget);
        if (staged) enter_stage(0, now);
        if (!staged) capture_plans({.stage = 0});
      } else if (now >= ending_stage && stage + 1 < program.size()) {
        // From the scheduled end, not `now`, so that a late wake-up does not stretch the run.
        enter_stage(stage + 1, ending_stage);
      } else if (stage_count_done() && stage + 1 < program.size()) {
        enter_stage(stage + 1, now);
      } else if (knee_news) {
        // The coordinator judged the step: the interval just closed was its last.
        const RunControl::KneeRequest knee = *requests.knee;
        RunControlReader::TookKnee(hooks.control, knee);
        if (!knee.done) {
          knee_step = knee.step;
          set_knee_level(knee.level);
        } else if (stage + 1 < program.size()) {
          enter_stage(stage + 1, now);
        } else {
          knee_ended_run = true;
        }
      }
    }
  }
  runner.Stop();
  const v1::EndReasonKind ended_as = result.end_reason_kind;
  const bool as_planned = ended_as == v1::END_REASON_DURATION ||
                          ended_as == v1::END_REASON_QUERIES || ended_as == v1::END_REASON_KNEE;
  if (as_planned && hooks.on_load_over && runner.Finished()) {
    hooks.on_load_over();
    const Nanos until = clock.Now() + kSessionHoldLimit;
    for (Nanos now = clock.Now(); now < until; now = clock.Now()) {
      if (RunControlReader::CloseSessionsAsked(hooks.control)) break;
      if (hooks.control != nullptr && hooks.control->StopRequested()) break;
      if (hooks.interrupted != nullptr && hooks.interrupted->load()) break;
      clock.SleepUntil(std::min(until, now + kHoldPollSlice));
    }
  }
  clock.DetachThread();  // joining is not waiting on the clock
  runner.Wait();
  // Once more after the load, to be compared with the plans it ran with (statistics the load
  // itself changed can change a plan). Only after a run that ended as planned: one stopped or
  // failed may have lost its database, and a capture would wait on it.
  if (as_planned) capture_plans({.after_load = true});
  capture.reset();  // the plans asked for reach on_plans before the caller's final report
  // A run bounded by time lasts until its deadline even if the last arrival came earlier.
  Nanos ended = std::max(runner.FinishedAt(), interval_start);
  if (result.end_reason_kind == v1::END_REASON_DURATION) ended = std::max(ended, deadline);
  close_interval(ended);
  result.measured_s = in_warmup ? 0 : static_cast<double>(ended - measured_from) / kSecond;
  result.not_started = runner.not_started();
  return result;
}

}  // namespace dbload
