#ifndef DBLOAD_AGENT_LOAD_RUNNER_H_
#define DBLOAD_AGENT_LOAD_RUNNER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "agent/interval_recorder.h"
#include "agent/pacer.h"
#include "base/clock.h"
#include "base/fiber_loop.h"
#include "db/driver.h"
#include "workload/workload.h"

namespace dbload {

// Runs a scenario's transactions on worker threads, one database session each, and records
// every completed transaction. Two ways to drive it:
//  - open loop: workers take intended start times from a shared Pacer; a transaction whose
//    time has come waits for a free worker, and that wait counts in its response time;
//  - closed loop: each client starts its next transaction when the previous one ended (plus
//    think time); clients can be added and removed while running.
// Every run is bounded: by a deadline, optionally by a transaction budget, and by Stop().
class LoadRunner {
 public:
  struct Options {
    uint64_t seed = 0;
    // This runner's workers get slots first_slot, first_slot+1 … of total_slots (key spaces
    // and random streams partitioned across workers and agents).
    uint32_t first_slot = 0;
    uint32_t total_slots = 0;  // 0: just this runner's workers
    Nanos reconnect_backoff_min = 100 * kMillisecond;
    Nanos reconnect_backoff_max = 5 * kSecond;
    // 0: a thread per worker, blocking in its session. Else this many FiberLoops run the
    // workers as fibers, spread evenly: for drivers whose sessions wait through a SocketWatch
    // and the clock (PostgreSQL, MySQL through Connector/C, noop), never for one that blocks
    // its thread (MySQL Connector/C++).
    int event_loops = 0;
    // Each transaction on a connection of its own (v1::Target.connect PER_TRANSACTION, pgbench's
    // -C): the worker opens it (its statements prepared) when the transaction starts and closes
    // it when the next one starts. The connect is recorded apart (RecordConnect) and counts in
    // the response time but not the service time; one that fails is the transaction's
    // connection error.
    bool connect_per_transaction = false;
    // Event loops: at most this many workers connecting at once (0: no limit), split evenly
    // over the loops; first connects and reconnects after a lost connection, not the connects
    // of connect_per_transaction (those are the load).
    int connects_at_once = 0;
    // Event loops: how late each loop may wake for its next timer (v1::Target.timer_slack).
    Nanos timer_slack = 0;
    // Each try of a transaction in one pipeline (v1::Target.pipeline, pgbench's \startpipeline
    // … \endpipeline around it; Session::StartPipeline): its statements sent in one go and
    // answered at its end.
    bool pipeline = false;
    // At the end, the sessions stay open once every worker has left the load, until
    // ReleaseSessions (or Wait): the agent's owner lets other agents' loads end first.
    bool hold_sessions = false;
  };

  LoadRunner(db::Driver& driver, const Scenario& scenario, IntervalRecorder& recorder,
             Clock& clock, Options options);
  ~LoadRunner();
  LoadRunner(const LoadRunner&) = delete;
  LoadRunner& operator=(const LoadRunner&) = delete;

  // Opens and prepares `sessions` sessions, one worker each, and returns once all are ready or
  // the first has failed (wrong password, missing table): then nothing runs. Connecting can
  // take a while, which is why it comes before the run's clock starts.
  absl::Status Connect(int sessions);
  // Starts the connected workers. Open loop: arrivals from a pacer starting now. Closed loop:
  // every worker is a client.
  void StartOpenLoop(PacerFactory pacer_factory, Nanos deadline);
  void StartClosedLoop(Nanos think_time, Nanos deadline);

  void SetRate(double per_second);
  // Adds clients (connecting them) or retires the newest ones after their current transaction.
  absl::Status SetClients(int clients);
  // Slots [first, first + count) for the next workers to start, before any more of this
  // runner's own (clients moved here from a lost agent; see LoadChange.extra_first_slot).
  void AddSlots(uint32_t first, uint32_t count);
  // At most `transactions` transactions start over the whole run (counting those already
  // started). Every started transaction records exactly one outcome, so a caller that knows
  // how many completed so far can make the rest come out exact.
  void SetStartLimit(uint64_t transactions);
  // With `pause`, workers that reach the start limit wait (looking every 5 ms) until it is
  // raised, instead of leaving: a stage that ends on a query count hands the same sessions to
  // the next stage. Without (the default), they leave and the run is over.
  void SetPauseAtLimit(bool pause);
  // Open loop: a new arrival schedule from `at` (after a pause the old one is behind: its
  // arrivals fell into no stage and are not owed).
  void RestartArrivals(const PacerFactory& pacer_factory, Nanos at);
  // Transactions that have recorded their outcome so far (each started one does, once).
  uint64_t Completed() const { return completed_.load(std::memory_order_relaxed); }
  void SetDeadline(Nanos deadline);
  void Stop();
  // Lets the sessions close once every worker has left the load (Options::hold_sessions).
  void ReleaseSessions();
  // Joins the workers, once their sessions are closed (ReleaseSessions first). Afterwards
  // not_started() is final.
  void Wait();
  // True once every worker has left its load (deadline, budget, Stop or a fatal error), its last
  // transaction ended and recorded; the sessions may still be closing (Wait).
  bool Finished() const { return live_workers_.load() == 0; }

  // When the last worker left (its last transaction ended); valid once Finished().
  Nanos FinishedAt() const { return finished_at_.load(); }
  int InFlight() const;
  int Clients() const;
  // Open loop: arrivals due before the run ended that no worker was free to start.
  uint64_t not_started() const { return not_started_; }
  // The first fatal error (syntax, permission, missing table …); it stops the run.
  std::optional<db::DbError> fatal_error() const;

 private:
  struct Worker;
  struct Ticket {
    bool ok = false;
    bool paused = false;  // not ok only because the start limit is reached, and workers pause
    Nanos intended = 0;
  };

  absl::Status StartWorkers(int count);
  void OpenGate();
  // Wakes every worker waiting at the gate (`open`: and opens it; else they see the stop).
  void ReleaseGate(bool open);
  // The worker (connected) waits until the gate opens or the run stops; true if it opened.
  bool WaitAtGate(std::unique_lock<std::mutex>& gate_lock);
  // Once every worker is in (connected or failed), the gate holds simulated time until it opens
  // (see WaitAtGate). Under gate_mu_.
  void HoldTimeOnceAllAreIn();
  // A worker out of its load loop; unless `wait_for_the_rest`, returns at once, else when no
  // worker is in its load loop any more and the sessions are not held (its session is closed
  // after, see load_runner.cc).
  void LeaveLoad(bool wait_for_the_rest);
  // Under gate_mu_: wakes `threads` waiting on gate_cv_ (detached from a simulated clock: each
  // is attached again, so time stands still until it runs) and `fibers` parked letting time
  // move (woken holding it); the threads' own wait ends on its condition, after notify_all.
  void WakeWaitersLocked(int& threads, std::vector<Fiber*>& fibers);
  // Under gate_mu_: wakes the workers waiting in LeaveLoad if their wait is over.
  void MaybeLetSessionsClose();
  // Connects and prepares the scenario's statements, taking a turn (Options::connects_at_once);
  // the error says whether the target or the workload's SQL failed.
  absl::Status OpenSession(Worker& worker, std::unique_ptr<db::Session>& session);
  void WorkerMain(Worker& worker);
  void RunOpenLoop(Worker& worker, db::Session& session, ScenarioWorker& scenario_worker);
  void RunClosedLoop(Worker& worker, db::Session& session, ScenarioWorker& scenario_worker);
  // Runs and records one transaction that starts at `now` (a clock reading taken when it was
  // due); sets `now` to when it ended (or, after a reconnect, to when that was done). False
  // when the worker must stop. `had_free_connection`: see IntervalRecorder::RecordScheduleLag.
  bool RunTransaction(Worker& worker, db::Session& session, ScenarioWorker& scenario_worker,
                      Nanos intended, bool had_free_connection, Nanos& now);
  // One try of a transaction (`again`: a retry), in a pipeline of its own with Options::pipeline.
  db::ExecOutcome TryTransaction(ScenarioWorker& scenario_worker, int query_type,
                                 db::Session& session, bool again);
  // `now`: a recent clock reading (the caller's last), for the deadline check.
  Ticket TakeTicket(Nanos now);
  bool TakeBudget();
  // Sleeps (a thread in slices, a fiber until Stop() interrupts it) so that Stop() is noticed;
  // false if stopped first. `now` is set to the
  // last clock reading (>= deadline when it returns true).
  bool SleepUntilOrStopped(Nanos deadline, Nanos& now);
  // The worker starts waiting (for an arrival's time, think time, a pause); sets `now`.
  void GoIdle(Worker& worker, Nanos& now);
  bool Reconnect(Worker& worker, db::Session& session);
  void CountNotStarted();

  db::Driver& driver_;
  const Scenario& scenario_;
  IntervalRecorder& recorder_;
  Clock& clock_;
  const Options options_;
  const std::vector<db::StatementSpec> statements_;
  // The scenario's, for the driver's dialect: a transaction ending with one of these was rolled
  // back by the worker; it is recorded as ignored and the client goes on.
  const db::IgnoredErrors ignored_errors_;
  // Per query type: when a failed transaction is tried again (the scenario's retry policies).
  const std::vector<RetryPolicy> retry_policies_;

  bool open_loop_ = false;
  Nanos think_time_ = 0;
  std::atomic<Nanos> deadline_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> started_{0};
  std::atomic<uint64_t> start_limit_{UINT64_MAX};
  std::atomic<bool> pause_at_limit_{false};
  std::atomic<uint64_t> completed_{0};
  std::atomic<int> live_workers_{0};  // started and not yet out of their load (Finished)
  std::atomic<Nanos> finished_at_{0};

  // Open loop: the shared arrival schedule.
  std::mutex pacer_mu_;
  std::unique_ptr<Pacer> pacer_;
  std::optional<Nanos> peeked_arrival_;
  Nanos ended_at_ = INT64_MAX;  // when workers stopped taking arrivals
  uint64_t not_started_ = 0;

  // Start-up gate: workers connect, report, then wait until everyone is ready.
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  int workers_started_ = 0;  // connected_ + failed_ once they are all in
  // On a simulated clock (see WaitAtGate): threads at the gate, detached from the clock; whether
  // the gate holds time; ReleaseGate calls, which end the threads' waits.
  int threads_at_gate_ = 0;
  bool gate_holds_time_ = false;
  uint64_t gate_releases_ = 0;
  int connected_ = 0;
  int failed_ = 0;
  absl::Status first_connect_error_;
  bool gate_open_ = false;
  std::vector<Fiber*> gate_fibers_;  // workers on fibers waiting for the gate (or a stop)
  // Workers past the gate and not yet out of their load loop, and how many times that number
  // fell to zero; those waiting for it to (LeaveLoad): threads (detached from a simulated
  // clock) and fibers.
  int loading_ = 0;
  uint64_t load_ends_ = 0;
  bool sessions_held_ = false;  // Options::hold_sessions until ReleaseSessions
  int threads_closing_ = 0;
  std::vector<Fiber*> closing_fibers_;

  mutable std::mutex workers_mu_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<FiberLoop>> loops_;  // Options::event_loops of them, or none
  // Per loop, when Options::connects_at_once limits them: the workers connecting now.
  std::vector<std::unique_ptr<FiberSemaphore>> connecting_;
  uint32_t own_slots_used_ = 0;       // of first_slot, first_slot + 1 …
  std::deque<uint32_t> extra_slots_;  // AddSlots, taken first

  mutable std::mutex fatal_mu_;
  std::optional<db::DbError> fatal_error_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_LOAD_RUNNER_H_
