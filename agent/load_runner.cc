#include "agent/load_runner.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/thread_name.h"

namespace dbload {

namespace {
// How often a sleeping worker looks up to notice Stop().
constexpr Nanos kStopCheckSlice = 50 * kMillisecond;
// How often a worker paused at the start limit looks whether it was raised: the next stage's
// load starts at most this late.
constexpr Nanos kPauseCheckSlice = 5 * kMillisecond;
// Counting arrivals that were never started walks the pacer; a bound keeps that finite even
// for absurd backlogs (it is reached only if more than this many were missed).
constexpr uint64_t kMaxNotStartedWalk = 100'000'000;
}  // namespace

struct LoadRunner::Worker {
  WorkerSlot slot;
  std::thread thread;
  std::atomic<bool> busy{false};
  std::atomic<bool> retired{false};  // closed loop: leave after the current transaction
  std::atomic<bool> exited{false};
  // Where this worker's time goes (the recorder's, valid for the run).
  ConnectionClock* time = nullptr;
  // Of its session's own work, what the recorder has been told (worker only).
  IntervalRecorder::SessionWorkSeen session_work;
  // Its loop's turns to connect (Options::connects_at_once), or null: no limit.
  FiberSemaphore* connecting = nullptr;
};

namespace {
// A turn to connect for as long as it lives (none when `turns` is null).
class ConnectTurn {
 public:
  explicit ConnectTurn(FiberSemaphore* turns) : turns_(turns) {
    if (turns_ != nullptr) turns_->Acquire();
  }
  ~ConnectTurn() {
    if (turns_ != nullptr) turns_->Release();
  }
  ConnectTurn(const ConnectTurn&) = delete;
  ConnectTurn& operator=(const ConnectTurn&) = delete;

 private:
  FiberSemaphore* const turns_;
};
}  // namespace

LoadRunner::LoadRunner(db::Driver& driver, const Scenario& scenario, IntervalRecorder& recorder,
                       Clock& clock, Options options)
    : driver_(driver),
      scenario_(scenario),
      recorder_(recorder),
      clock_(clock),
      options_(options),
      statements_(scenario.Statements(driver.dialect())),
      ignored_errors_(scenario.ErrorsToIgnore(driver.dialect())),
      retry_policies_(scenario.RetryPolicies()),
      sessions_held_(options.hold_sessions) {}

LoadRunner::~LoadRunner() {
  Stop();
  Wait();
}

absl::Status LoadRunner::Connect(int sessions) {
  if (absl::Status status = StartWorkers(sessions); !status.ok()) {
    Stop();
    return status;
  }
  return absl::OkStatus();
}

void LoadRunner::StartOpenLoop(PacerFactory pacer_factory, Nanos deadline) {
  open_loop_ = true;
  deadline_ = deadline;
  {
    std::lock_guard lock(pacer_mu_);
    pacer_ = pacer_factory(clock_.Now());
  }
  OpenGate();
}

void LoadRunner::StartClosedLoop(Nanos think_time, Nanos deadline) {
  open_loop_ = false;
  think_time_ = think_time;
  deadline_ = deadline;
  OpenGate();
}

void LoadRunner::OpenGate() { ReleaseGate(/*open=*/true); }

void LoadRunner::ReleaseGate(bool open) {
  {
    std::lock_guard lock(gate_mu_);
    if (open) gate_open_ = true;
    ++gate_releases_;
    // On a simulated clock every waiter holds time from here until it runs, and then the gate's
    // own hold ends (see WaitAtGate).
    WakeWaitersLocked(threads_at_gate_, gate_fibers_);
    if (gate_holds_time_) {
      gate_holds_time_ = false;
      clock_.DetachThread();
    }
  }
  gate_cv_.notify_all();
}

void LoadRunner::WakeWaitersLocked(int& threads, std::vector<Fiber*>& fibers) {
  for (; threads > 0; --threads) clock_.AttachThread();
  for (Fiber* fiber : fibers) WakeFiberHoldingTime(fiber);
  fibers.clear();
}

// On a simulated clock a worker waits at the gate letting time move: others may still be
// connecting, and their connects may take time (waiting their turn: Options::connects_at_once).
// Once every worker is in, the gate itself holds time until it opens (HoldTimeOnceAllAreIn),
// and ReleaseGate holds it for each waiter until it runs, as for threads woken from a
// condition: the run's clock starts where the last connect ended.
bool LoadRunner::WaitAtGate(std::unique_lock<std::mutex>& gate_lock) {
  if (!OnFiber()) {
    if (!gate_open_ && !stopping_.load()) {
      const uint64_t releases = gate_releases_;
      clock_.DetachThread();
      ++threads_at_gate_;
      gate_cv_.wait(gate_lock, [&] { return gate_releases_ != releases; });
    }
    return gate_open_ && !stopping_;
  }
  while (!gate_open_ && !stopping_.load()) {
    // ReleaseGate takes the list, and wakes each fiber on it once.
    gate_fibers_.push_back(CurrentFiber());
    gate_lock.unlock();
    ParkCurrentFiber(WhileParked::kLetTimeMove);
    gate_lock.lock();
  }
  return gate_open_ && !stopping_;
}

// A server that ends a backend per closed connection does it while the last transactions of the
// run still wait for their answers: 1,000 connections closed at once held PostgreSQL's core for
// 0.7 s and put that in the service time of the transactions still in flight (bench/RESULTS.md
// 32a). So at the run's end a worker keeps its session until no worker runs a transaction any
// more (and, with Options::hold_sessions, until ReleaseSessions: other agents' loads). One
// retired by a smaller closed loop leaves at once: the run goes on without it.
void LoadRunner::LeaveLoad(bool wait_for_the_rest) {
  std::unique_lock lock(gate_mu_);
  --loading_;
  const uint64_t ends = load_ends_;
  MaybeLetSessionsClose();
  if (!wait_for_the_rest || load_ends_ != ends) return;
  // Transactions still running take time (simulated time included): the waiter lets it move.
  if (!OnFiber()) {
    clock_.DetachThread();
    ++threads_closing_;
    gate_cv_.wait(lock, [&] { return load_ends_ != ends; });
    return;
  }
  closing_fibers_.push_back(CurrentFiber());
  lock.unlock();
  ParkCurrentFiber(WhileParked::kLetTimeMove);  // woken once (MaybeLetSessionsClose)
}

void LoadRunner::MaybeLetSessionsClose() {
  if (loading_ > 0 || sessions_held_) return;
  ++load_ends_;
  WakeWaitersLocked(threads_closing_, closing_fibers_);
  gate_cv_.notify_all();
}

void LoadRunner::ReleaseSessions() {
  std::lock_guard lock(gate_mu_);
  sessions_held_ = false;
  MaybeLetSessionsClose();
}

void LoadRunner::HoldTimeOnceAllAreIn() {
  if (connected_ + failed_ < workers_started_ || gate_open_ || stopping_.load() ||
      gate_holds_time_) {
    return;
  }
  clock_.AttachThread();
  gate_holds_time_ = true;
}

absl::Status LoadRunner::StartWorkers(int count) {
  int expected = 0;
  int failed_before = 0;
  {
    std::lock_guard gate_lock(gate_mu_);
    failed_before = failed_;
    workers_started_ += count;
    expected = workers_started_;
  }
  {
    // On a simulated clock, time stands still until every new worker exists: it moves on once
    // every attached thread sleeps, and the first workers may sleep in their connects before
    // the last are spawned.
    ClockThread spawning(clock_);
    std::lock_guard lock(workers_mu_);
    const uint32_t slots = options_.total_slots > 0
                               ? options_.total_slots
                               : static_cast<uint32_t>(workers_.size() + count);
    for (int i = 0; i < count; ++i) {
      auto worker = std::make_unique<Worker>();
      uint32_t slot = 0;
      if (!extra_slots_.empty()) {
        slot = extra_slots_.front();
        extra_slots_.pop_front();
      } else {
        slot = options_.first_slot + own_slots_used_++;
      }
      worker->slot = {options_.seed, slot, std::max(slots, slot + 1)};
      ++live_workers_;
      if (options_.event_loops > 0) {
        // Worker i on loop i mod event_loops; a loop starts with its first worker.
        const size_t loop = workers_.size() % static_cast<size_t>(options_.event_loops);
        if (loop == loops_.size()) {
          loops_.push_back(std::make_unique<FiberLoop>(clock_, FiberLoop::kDefaultStackBytes,
                                                       options_.timer_slack));
          if (options_.connects_at_once > 0) {
            const int loops = options_.event_loops;
            connecting_.push_back(std::make_unique<FiberSemaphore>(
                std::max(1, (options_.connects_at_once + loops - 1) / loops)));
          }
        }
        if (!connecting_.empty()) worker->connecting = connecting_[loop].get();
        loops_[loop]->Spawn([this, w = worker.get()] { WorkerMain(*w); });
      } else {
        // Attached here, before the thread exists, so a simulated clock cannot move on without
        // it. (A loop's thread is attached by the loop.)
        clock_.AttachThread();
        worker->thread = std::thread([this, w = worker.get()] {
          NameThisThread("dbload-worker");
          WorkerMain(*w);
        });
      }
      workers_.push_back(std::move(worker));
    }
  }
  std::unique_lock lock(gate_mu_);
  gate_cv_.wait(lock, [&] { return connected_ + failed_ >= expected; });
  if (failed_ > failed_before) return first_connect_error_;
  return absl::OkStatus();
}

absl::Status LoadRunner::OpenSession(Worker& worker, std::unique_ptr<db::Session>& session) {
  ConnectTurn turn(worker.connecting);
  absl::StatusOr<std::unique_ptr<db::Session>> connected = driver_.Connect();
  if (!connected.ok()) {
    return absl::Status(connected.status().code(),
                        absl::StrCat("target: ", connected.status().message()));
  }
  session = *std::move(connected);
  absl::Status status;
  for (size_t id = 0; id < statements_.size() && status.ok(); ++id) {
    status = session->Prepare(static_cast<int>(id), statements_[id]);
    if (!status.ok()) {
      // The connection worked: what failed is the workload's SQL. A missing table is most often
      // a prepare not run; other errors (syntax) get no such hint.
      const bool missing_table = absl::StrContains(status.message(), "[42P01]") ||
                                 absl::StrContains(status.message(), "[1146]");
      status = absl::Status(
          status.code(),
          absl::StrCat("workload: ", status.message(),
                       missing_table ? " (has `dbload prepare` been run for this plan?)" : ""));
    }
  }
  recorder_.RecordSessionWork(*session, worker.session_work);
  return status;
}

void LoadRunner::WorkerMain(Worker& worker) {
  driver_.ThreadStart();
  std::unique_ptr<db::Session> session;
  const absl::Status status = OpenSession(worker, session);
  bool proceed = false;
  {
    std::unique_lock lock(gate_mu_);
    if (status.ok()) {
      ++connected_;
    } else {
      ++failed_;
      first_connect_error_ = status;
    }
    HoldTimeOnceAllAreIn();
    gate_cv_.notify_all();
    if (status.ok()) proceed = WaitAtGate(lock);
    if (proceed) ++loading_;
  }
  if (proceed) {
    std::unique_ptr<ScenarioWorker> scenario_worker = scenario_.NewWorker(worker.slot);
    worker.time = &recorder_.AddConnection(clock_.Now());
    if (open_loop_) {
      RunOpenLoop(worker, *session, *scenario_worker);
    } else {
      RunClosedLoop(worker, *session, *scenario_worker);
    }
  }
  // Stamped, and the worker counted out of the load, before the session is closed: the run's
  // measured duration should not include connection teardown (10,000 sessions take seconds).
  const Nanos now = clock_.Now();
  if (worker.time != nullptr) worker.time->Enter(ConnectionState::kGone, now);
  for (Nanos seen = finished_at_.load(); seen < now && !finished_at_.compare_exchange_weak(seen, now);) {
  }
  if (session != nullptr) recorder_.RecordSessionWork(*session, worker.session_work);
  --live_workers_;
  if (proceed) LeaveLoad(/*wait_for_the_rest=*/!worker.retired.load());
  session.reset();
  driver_.ThreadEnd();
  worker.exited = true;
  if (options_.event_loops == 0) clock_.DetachThread();  // see StartWorkers
}

// Both loops read the clock twice per transaction (a read costs ~17 ns here, and at millions of
// transactions per second it dominated the engine's profile): once when the transaction is due
// (SleepUntilOrStopped's last read becomes its start time) and once when it ends (which is
// also the "now" for the next ticket or the next closed-loop start).
void LoadRunner::RunOpenLoop(Worker& worker, db::Session& session,
                             ScenarioWorker& scenario_worker) {
  Nanos now = clock_.Now();
  for (;;) {
    const Ticket ticket = TakeTicket(now);
    if (ticket.paused) {
      GoIdle(worker, now);
      if (!SleepUntilOrStopped(now + kPauseCheckSlice, now)) return;
      continue;
    }
    // Tickets go out in order of their intended starts, each to a worker as it becomes free:
    // one already due when taken found every connection busy at its time and queued.
    const bool had_free_connection = ticket.intended >= now;
    if (!ticket.ok) return;
    if (ticket.intended > now) GoIdle(worker, now);
    if (!SleepUntilOrStopped(ticket.intended, now)) return;
    if (!RunTransaction(worker, session, scenario_worker, ticket.intended, had_free_connection,
                        now)) {
      return;
    }
  }
}

void LoadRunner::RunClosedLoop(Worker& worker, db::Session& session,
                               ScenarioWorker& scenario_worker) {
  Nanos now = clock_.Now();
  Nanos intended = now + scenario_worker.PauseNs();
  while (!worker.retired.load(std::memory_order_relaxed)) {
    if (intended > now) GoIdle(worker, now);  // think time
    // Never asleep past the deadline: a think time or pause that ends after it (tpcc's reach
    // 2 minutes) would hold the run open.
    if (!SleepUntilOrStopped(std::min(intended, deadline_.load()), now) ||
        intended >= deadline_.load()) {
      return;
    }
    if (now < intended) continue;  // the deadline moved on while it slept: sleep on
    if (!TakeBudget()) {
      if (!pause_at_limit_.load()) return;
      // Paused at the limit: the next transaction is intended when the limit is raised, so
      // the pause is no client's latency.
      GoIdle(worker, now);
      if (!SleepUntilOrStopped(now + kPauseCheckSlice, now)) return;
      intended = now;
      continue;
    }
    if (!RunTransaction(worker, session, scenario_worker, intended, /*had_free_connection=*/true,
                        now)) {
      return;
    }
    intended = now + think_time_ + scenario_worker.PauseNs();
  }
}

bool LoadRunner::RunTransaction(Worker& worker, db::Session& session,
                                ScenarioWorker& scenario_worker, Nanos intended,
                                bool had_free_connection, Nanos& now) {
  const int query_type = scenario_worker.NextQueryType();
  worker.busy.store(true, std::memory_order_relaxed);
  const Nanos started = now;
  worker.time->Enter(ConnectionState::kInDbCall, started);
  // Counted by the session, not the workload: every statement the transaction sent, BEGIN,
  // COMMIT and ROLLBACK included, whichever workload it is and however it ends.
  const uint64_t sent_before = session.statements_sent();
  db::ExecOutcome outcome;
  Nanos connected = started;  // the service time starts here
  if (options_.connect_per_transaction) {
    // Closing the connection before waits for nothing (a goodbye sent and the socket closed).
    const absl::Status reconnected = session.Reconnect();
    recorder_.RecordSessionWork(session, worker.session_work);
    connected = clock_.Now();
    if (reconnected.ok()) {
      recorder_.RecordConnect(connected - started);
    } else {
      outcome.error = db::DbError{.error_class = db::ErrorClass::kConnection,
                                  .code = db::CannotConnectCode(driver_.dialect()),
                                  .message = std::string(reconnected.message())};
    }
  }
  if (outcome.ok()) outcome = TryTransaction(scenario_worker, query_type, session, false);
  // A retry policy tries the transaction again (the worker has rolled it back) while its error
  // is one of the policy's causes; it stays one transaction, timed from its intended start
  // through its last try. A stop ends the tries: the run is over, the transaction failed.
  const RetryPolicy& policy = retry_policies_[static_cast<size_t>(query_type)];
  // The cause of a failed try that the policy retries (a lost connection never is: the
  // transaction's fate at the server is the connection's).
  const auto retried_cause = [&](const db::ExecOutcome& failed) -> std::optional<db::RetryCause> {
    const std::optional<db::RetryCause> cause =
        db::RetryCauseOf(driver_.dialect(), failed.error->code);
    if (!cause || !policy.Retries(*cause) ||
        failed.error->error_class == db::ErrorClass::kConnection) {
      return std::nullopt;
    }
    return cause;
  };
  uint32_t tries = 1;
  for (; !outcome.ok() && tries < policy.max_tries && !stopping_.load(std::memory_order_relaxed);
       ++tries) {
    const std::optional<db::RetryCause> cause = retried_cause(outcome);
    if (!cause) break;
    recorder_.RecordRetry(query_type, *cause);
    outcome = TryTransaction(scenario_worker, query_type, session, true);
  }
  const Nanos ended = clock_.Now();
  const uint64_t statements = session.statements_sent() - sent_before;
  now = ended;
  worker.time->Enter(ConnectionState::kInAgent, ended);
  worker.busy.store(false, std::memory_order_relaxed);
  recorder_.RecordScheduleLag(started - intended, had_free_connection);
  if (outcome.ok()) {
    recorder_.RecordSuccess(query_type, ended - intended, ended - connected, statements);
    if (outcome.rolled_back) recorder_.RecordRolledBack(query_type);
    if (tries > 1) recorder_.RecordCommittedAfterTries(query_type, tries);
    completed_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  // Out of tries: its last allowed one failed on a cause it would have retried. A retried
  // transaction that then lost its connection, or met another error, failed for that reason.
  if (tries > 1 && tries == policy.max_tries && retried_cause(outcome)) {
    recorder_.RecordFailedAfterRetries(query_type);
  }
  // An ignored error is sysbench's "ignored error": counted apart by code, its latency in no
  // histogram (it is not a transaction), and the client goes on with a new transaction with new
  // parameters, as sysbench's restarted event draws new ones.
  const db::DbError error = ignored_errors_.Apply(*outcome.error);
  recorder_.RecordError(query_type, error, statements);
  completed_.fetch_add(1, std::memory_order_relaxed);
  switch (error.error_class) {
    case db::ErrorClass::kRetryable:
    case db::ErrorClass::kIgnored:
      return true;
    case db::ErrorClass::kConnection: {
      // Reconnecting takes time (backoff): what comes next is timed from when it is done. That
      // time is the database's unavailability, not the agent's work.
      worker.time->Enter(ConnectionState::kConnecting, ended);
      const bool reconnected = Reconnect(worker, session);
      recorder_.RecordSessionWork(session, worker.session_work);
      now = clock_.Now();
      worker.time->Enter(ConnectionState::kInAgent, now);
      return reconnected;
    }
    case db::ErrorClass::kFatal: {
      std::lock_guard lock(fatal_mu_);
      if (!fatal_error_) fatal_error_ = error;
    }
      Stop();
      return false;
  }
  return false;
}

db::ExecOutcome LoadRunner::TryTransaction(ScenarioWorker& scenario_worker, int query_type,
                                           db::Session& session, bool again) {
  const auto run = [&] {
    return again ? scenario_worker.Retry(query_type, session)
                 : scenario_worker.Run(query_type, session);
  };
  if (!options_.pipeline) return run();
  if (std::optional<db::DbError> refused = session.StartPipeline()) {
    return db::ExecOutcome{.error = std::move(refused)};
  }
  const db::ExecOutcome ran = run();
  db::ExecOutcome answered = session.EndPipeline();
  // An error the workload met while sending came first; the server's answers come after.
  return ran.ok() ? answered : ran;
}

LoadRunner::Ticket LoadRunner::TakeTicket(Nanos now) {
  std::lock_guard lock(pacer_mu_);
  if (stopping_.load()) {
    ended_at_ = std::min(ended_at_, clock_.Now());
    return {};
  }
  const Nanos deadline = deadline_.load();
  if (now >= deadline) {
    ended_at_ = std::min(ended_at_, deadline);
    return {};
  }
  const Nanos next = peeked_arrival_ ? *peeked_arrival_ : pacer_->Next();
  peeked_arrival_.reset();
  if (next >= deadline) {
    peeked_arrival_ = next;  // kept: a later deadline extension must not lose it
    ended_at_ = std::min(ended_at_, deadline);
    return {};
  }
  if (!TakeBudget()) {
    peeked_arrival_ = next;
    return {.paused = pause_at_limit_.load()};
  }
  return {.ok = true, .intended = next};
}

bool LoadRunner::TakeBudget() {
  // Counts only starts that happen, so that a limit raised later (a paused stage) is exact.
  uint64_t started = started_.load(std::memory_order_relaxed);
  do {
    if (started >= start_limit_.load(std::memory_order_relaxed)) return false;
  } while (!started_.compare_exchange_weak(started, started + 1, std::memory_order_relaxed));
  return true;
}

void LoadRunner::SetPauseAtLimit(bool pause) { pause_at_limit_.store(pause); }

void LoadRunner::RestartArrivals(const PacerFactory& pacer_factory, Nanos at) {
  std::lock_guard lock(pacer_mu_);
  if (!pacer_) return;  // not an open loop
  pacer_ = pacer_factory(at);
  peeked_arrival_.reset();
}

void LoadRunner::GoIdle(Worker& worker, Nanos& now) {
  // A worker about to wait has time to spare for a clock reading: the recording and the
  // ticket since `now` were the agent's work, not idle time.
  now = clock_.Now();
  worker.time->Enter(ConnectionState::kIdle, now);
}

bool LoadRunner::SleepUntilOrStopped(Nanos deadline, Nanos& now) {
  for (;;) {
    if (stopping_.load(std::memory_order_relaxed)) return false;
    now = clock_.Now();
    if (now >= deadline) return true;
    if (OnFiber()) {
      FiberSleepUntil(deadline);  // Stop() interrupts it
    } else {
      clock_.SleepUntil(std::min(deadline, now + kStopCheckSlice));
    }
  }
}

bool LoadRunner::Reconnect(Worker& worker, db::Session& session) {
  Nanos backoff = options_.reconnect_backoff_min;
  for (;;) {
    Nanos now = clock_.Now();
    if (!SleepUntilOrStopped(std::min(now + backoff, deadline_.load()), now)) return false;
    if (now >= deadline_.load()) return false;
    ConnectTurn turn(worker.connecting);
    if (session.Reconnect().ok()) return true;
    backoff = std::min(backoff * 2, options_.reconnect_backoff_max);
  }
}

void LoadRunner::SetRate(double per_second) {
  std::lock_guard lock(pacer_mu_);
  if (pacer_) pacer_->SetRate(per_second);
}

absl::Status LoadRunner::SetClients(int clients) {
  int to_start = 0;
  {
    std::lock_guard lock(workers_mu_);
    int active = 0;
    for (const auto& worker : workers_) active += !worker->retired && !worker->exited;
    to_start = clients - active;
    // Retire the newest first, so that the longest-running clients keep their sessions.
    for (auto it = workers_.rbegin(); it != workers_.rend() && to_start < 0; ++it) {
      if ((*it)->retired || (*it)->exited) continue;
      (*it)->retired = true;
      ++to_start;
    }
  }
  return to_start > 0 ? StartWorkers(to_start) : absl::OkStatus();
}

void LoadRunner::AddSlots(uint32_t first, uint32_t count) {
  std::lock_guard lock(workers_mu_);
  for (uint32_t i = 0; i < count; ++i) extra_slots_.push_back(first + i);
}

void LoadRunner::SetStartLimit(uint64_t transactions) { start_limit_.store(transactions); }

void LoadRunner::SetDeadline(Nanos deadline) { deadline_ = deadline; }

void LoadRunner::Stop() {
  stopping_ = true;
  ReleaseGate(/*open=*/false);
  std::lock_guard lock(workers_mu_);
  for (auto& loop : loops_) loop->InterruptSleeps();
}

void LoadRunner::Wait() {
  ReleaseSessions();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(workers_mu_);
    for (auto& worker : workers_) {
      if (worker->thread.joinable()) threads.push_back(std::move(worker->thread));
    }
  }
  for (auto& thread : threads) thread.join();
  // A loop's thread ends once its fibers have.
  std::vector<FiberLoop*> loops;
  {
    std::lock_guard lock(workers_mu_);
    for (auto& loop : loops_) loops.push_back(loop.get());
  }
  for (FiberLoop* loop : loops) loop->Finish();
  CountNotStarted();
}

void LoadRunner::CountNotStarted() {
  std::lock_guard lock(pacer_mu_);
  if (!pacer_ || ended_at_ == INT64_MAX) return;
  uint64_t missed = 0;
  while (missed < kMaxNotStartedWalk) {
    const Nanos next = peeked_arrival_ ? *peeked_arrival_ : pacer_->Next();
    peeked_arrival_ = next;
    if (next >= ended_at_) break;
    peeked_arrival_.reset();
    ++missed;
  }
  not_started_ += missed;
  ended_at_ = INT64_MAX;
}

int LoadRunner::InFlight() const {
  std::lock_guard lock(workers_mu_);
  int busy = 0;
  for (const auto& worker : workers_) busy += worker->busy.load(std::memory_order_relaxed);
  return busy;
}

int LoadRunner::Clients() const {
  std::lock_guard lock(workers_mu_);
  int live = 0;
  for (const auto& worker : workers_) live += !worker->exited.load();
  return live;
}

std::optional<db::DbError> LoadRunner::fatal_error() const {
  std::lock_guard lock(fatal_mu_);
  return fatal_error_;
}

}  // namespace dbload
