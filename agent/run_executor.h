#ifndef DBLOAD_AGENT_RUN_EXECUTOR_H_
#define DBLOAD_AGENT_RUN_EXECUTOR_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/pacer.h"
#include "agent/plan_capture.h"
#include "base/clock.h"
#include "db/driver.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"
#include "interval/interval_snapshot.h"
#include "workload/workload.h"

namespace dbload {

// This process's part of a run. A local run takes the whole plan; an agent takes the share the
// coordinator assigned.
struct RunShare {
  // Open loop: this share of the plan's rate; closed loop: this many clients. Unset: the plan's.
  std::optional<double> rate;
  std::optional<uint32_t> clients;
  // Transactions to complete after the warm-up (the share of stop.queries); 0: no count limit.
  uint64_t queries = 0;
  // Plans with stages: this process's share of each stage's query count (0 where the stage has
  // none, or where this process has no part of it; empty: no stage counts).
  std::vector<uint64_t> stage_queries;
  // Key spaces and random streams: this process's workers are slots first_slot … of total_slots.
  uint32_t first_slot = 0;
  uint32_t total_slots = 0;
  // Uniform arrivals start this fraction of a period late, so that agents do not fire together.
  double phase = 0;
  // Plans with stages: this process takes rate_fraction of each stage's rate (open loop), or
  // is number agent_index of agent_count in the spread of each stage's clients (closed loop).
  double rate_fraction = 1;
  uint32_t agent_index = 0;
  uint32_t agent_count = 1;
  // This process captures the database's plans (the run's first agent: one plan per query type
  // per stage in the run's report). Off by default.
  bool explain = false;
};

// The seed of this process's Poisson arrivals in stage `stage` (0-based; 0 also for a plan
// without stages): mixed from the run's seed, this process's place in the split (its first
// slot, which no other agent of the run shares, an agent that joins later included) and the
// stage. Agents seeded alike would fire at the same instants: bursts of N agents instead of one
// Poisson stream at N times the rate. Reproducible: the same run seed and split, the same streams.
uint64_t ArrivalSeed(uint64_t run_seed, const RunShare& share, uint32_t stage);

// This process's open-loop arrivals at `rate`: Poisson from ArrivalSeed, or uniform, started
// share.phase of a period late.
PacerFactory MakePacerFactory(const dbload::v1::OpenLoad& open, double rate, const RunShare& share,
                              uint64_t run_seed, uint32_t stage);

// Changes to a running execution, from another thread (an agent's link to its coordinator).
// The execution picks them up within a poll slice (100 ms).
class RunControl {
 public:
  void SetRate(double per_second);
  void SetClients(uint32_t clients);
  // Slots for clients added from now on (before the agent's own): see LoadRunner::AddSlots.
  void AddSlots(uint32_t first, uint32_t count);
  void Stop(std::string reason);
  // For work that is not a load (a prepare run's loading): whether Stop was called.
  bool StopRequested();
  // Knee-search stages: move to `step` (1-based) at `total_level` (all agents together), or end
  // the search. Applied once the execution is in the knee stage; the latest step wins.
  void SetKneeStep(uint32_t step, double total_level);
  void EndKnee();
  // Every agent's load is over (the coordinator's CloseSessions): the execution may close its
  // sessions (see ExecutionHooks::on_load_over).
  void CloseSessions();
  // Every agent's sessions are open (the coordinator's StartLoad): the execution may start its
  // load (see ExecutionHooks::on_sessions_ready).
  void StartLoad();
  // Returns once StartLoad or Stop was called (true: StartLoad, and no Stop), or once
  // `interrupted` (may be null) is true. The wait is for another thread's word, not for a time:
  // on a simulated clock time stands still meanwhile, as it does while sessions connect.
  bool WaitForStart(const std::atomic<bool>* interrupted);

  struct KneeRequest {
    uint32_t step = 0;
    double level = 0;
    bool done = false;
  };

 private:
  friend class RunControlReader;
  std::mutex mu_;
  std::optional<double> rate_;
  std::optional<uint32_t> clients_;
  std::vector<std::pair<uint32_t, uint32_t>> slots_;  // first, count; until taken
  std::optional<std::string> stop_reason_;
  std::optional<KneeRequest> knee_;
  bool close_sessions_ = false;
  bool start_load_ = false;
  std::condition_variable start_cv_;  // StartLoad and Stop
};

struct IntervalOutput {
  const IntervalSnapshot& snapshot;
  double elapsed_s = 0;  // since the start of the run
  double length_s = 0;
  bool warmup = false;
  uint32_t in_flight = 0;
  uint32_t connections = 0;
  uint32_t stage = 0;     // 1-based with stages, else 0; an interval never spans two
  double target_rate = 0;  // open loop, at the interval's end
  uint32_t clients = 0;    // closed loop: the most clients asked for during the interval
  uint32_t knee_step = 0;  // in a knee-search stage: its step (1-based), else 0
};

struct ExecutionHooks {
  // Called once per interval (every second, and at the end of the warm-up and of the run).
  std::function<void(const IntervalOutput&)> on_interval;
  // Set from a signal handler: the run stops, and ends as "interrupted".
  const std::atomic<bool>* interrupted = nullptr;
  RunControl* control = nullptr;
  // With RunShare::explain: the plans of every query type (PlanCapture), once at the start of
  // the measured part (stage 0) or of each stage (1-based), and once after a load that ended
  // as planned. Called on the capture's own thread; every call has returned when ExecuteRun
  // does.
  std::function<void(PlanMoment moment, std::vector<dbload::v1::QueryPlan> plans)> on_plans;
  // Called once every session is connected, before the load's clock starts (on ExecuteRun's
  // thread); with it the execution then waits for RunControl::StartLoad (or a stop, or an
  // interruption, which end the run with no load), so that the agents of one run start their
  // loads together.
  std::function<void()> on_sessions_ready;
  // Called as the load's clock starts (on ExecuteRun's thread): what the agent spends from here
  // on, its CPU included, is the load's, not the set-up's (reading samples, connecting, waiting
  // for the other agents).
  std::function<void()> on_load_start;
  // Called once the load is over (every transaction ended and is in an interval), before the
  // sessions close; with it the execution then keeps them open until RunControl::CloseSessions
  // or kSessionHoldLimit, so that other agents' last transactions do not wait for the server to
  // end this agent's backends. Not called when the run was stopped or interrupted.
  std::function<void()> on_load_over;
};

// How long an execution with ExecutionHooks::on_load_over keeps its sessions open at most,
// waiting for RunControl::CloseSessions: an agent whose last transaction does not end (its
// database frozen) holds the others no longer than this.
inline constexpr Nanos kSessionHoldLimit = 10 * kSecond;

struct ExecutionResult {
  double measured_s = 0;     // from the end of the warm-up to the end of the run
  uint64_t not_started = 0;  // open loop: arrivals missed at the end
  // "duration", "queries", "interrupted", "stopped: …", "fatal error CODE: …": the words of
  // end_reason_kind.
  std::string end_reason;
  dbload::v1::EndReasonKind end_reason_kind = dbload::v1::END_REASON_UNSPECIFIED;
  std::string started_at;  // RFC 3339, UTC
  // Reading the scenario's samples before the timed part (the "additional queries" that the
  // published reports subtract from the total).
  double setup_s = 0;
};

// Runs a validated plan's load in this process: lets the scenario read what it samples from the
// database (Scenario::Setup, on a session of its own), connects every session (failures are
// returned before any load), then warm-up, the measured part until the stop rule, and one
// interval per second. Every load it starts is bounded by the plan's stop rule.
//
// With stages, the warm-up runs at the first stage's starting level, then each stage follows its
// level (a rate ramp in kRateRampSlice steps, clients exactly at each step) for its length; an
// interval is cut at every stage boundary, so that each belongs to one stage.
absl::StatusOr<ExecutionResult> ExecuteRun(const dbload::v1::Plan& plan, const RunShare& share,
                                           db::Driver& driver, Scenario& scenario,
                                           Clock& clock, const ExecutionHooks& hooks);

}  // namespace dbload

#endif  // DBLOAD_AGENT_RUN_EXECUTOR_H_
