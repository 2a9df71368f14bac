#include "agent/load_runner.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "db/noop_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/stub_session.h"

namespace dbload {
namespace {

// One query type that executes statement 0, ignoring the errors it is given.
class SingleStatementScenario final : public Scenario {
 public:
  // `make_worker`: workers of a test's own instead (what their transactions return).
  using WorkerFactory = std::function<std::unique_ptr<ScenarioWorker>()>;
  explicit SingleStatementScenario(std::vector<std::string> ignored = {}, RetryPolicy retry = {},
                                   WorkerFactory make_worker = nullptr)
      : ignored_(std::move(ignored)),
        retry_(std::move(retry)),
        make_worker_(std::move(make_worker)) {}
  const std::vector<std::string>& query_types() const override { return names_; }
  std::vector<RetryPolicy> RetryPolicies() const override { return {retry_}; }
  db::IgnoredErrors ErrorsToIgnore(db::Dialect) const override {
    return db::IgnoredErrors(ignored_);
  }
  std::vector<db::StatementSpec> Statements(db::Dialect) const override {
    return {{"q", "SELECT 1"}};
  }
  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot&) const override {
    if (make_worker_) return make_worker_();
    return std::make_unique<Worker>();
  }

 private:
  struct Worker final : ScenarioWorker {
    int NextQueryType() override { return 0; }
    db::ExecOutcome Run(int, db::Session& session) override { return session.Execute(0, {}); }
  };
  std::vector<std::string> names_ = {"q"};
  std::vector<std::string> ignored_;
  RetryPolicy retry_;
  WorkerFactory make_worker_;
};

// Two query types, drawn in turn: "point", one statement outside a transaction, and "txn",
// BEGIN + 3 statements + COMMIT, or ROLLBACK after the first failed statement (as oltp's). The
// worker counts every session call it makes, for the test to compare with what the runner
// recorded, which the worker never tells it.
class TwoShapesScenario final : public Scenario {
 public:
  explicit TwoShapesScenario(std::vector<std::string> ignored) : ignored_(std::move(ignored)) {}
  const std::vector<std::string>& query_types() const override { return names_; }
  db::IgnoredErrors ErrorsToIgnore(db::Dialect) const override {
    return db::IgnoredErrors(ignored_);
  }
  std::vector<db::StatementSpec> Statements(db::Dialect) const override {
    return {{"q", "SELECT 1"}};
  }
  std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot&) const override {
    return std::make_unique<Worker>(*this);
  }
  // Session calls made by all workers, by query type.
  mutable std::atomic<uint64_t> calls[2] = {0, 0};

 private:
  struct Worker final : ScenarioWorker {
    explicit Worker(const TwoShapesScenario& s) : s(s) {}
    int NextQueryType() override { return static_cast<int>(next++ % 2); }
    db::ExecOutcome Run(int query_type, db::Session& session) override {
      std::atomic<uint64_t>& calls = s.calls[query_type];
      ++calls;
      if (query_type == 0) return session.Execute(0, {});
      session.Begin();
      for (int i = 0; i < 3; ++i) {
        ++calls;
        db::ExecOutcome outcome = session.Execute(0, {});
        if (!outcome.ok()) {
          ++calls;
          session.Rollback();
          return outcome;
        }
      }
      ++calls;
      return session.Commit();
    }
    const TwoShapesScenario& s;
    uint64_t next = 0;
  };
  std::vector<std::string> names_ = {"point", "txn"};
  std::vector<std::string> ignored_;
};

// A database that stops answering between stall_from and stall_until (like SIGSTOP).
class StallingDriver final : public db::Driver {
 public:
  StallingDriver(Clock& clock, Nanos latency, Nanos stall_from, Nanos stall_until)
      : clock_(clock), latency_(latency), stall_from_(stall_from), stall_until_(stall_until) {}
  db::Dialect dialect() const override { return db::Dialect::kNoop; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    return std::make_unique<Session>(*this);
  }

 private:
  struct Session final : StubSession {
    explicit Session(StallingDriver& d) : d(d) {}
    db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override {
      const Nanos now = d.clock_.Now();
      Nanos done = now + d.latency_;
      if (done > d.stall_from_ && now < d.stall_until_) done = d.stall_until_ + d.latency_;
      d.clock_.SleepUntil(done);
      return {.rows = 1};
    }
    StallingDriver& d;
  };
  Clock& clock_;
  Nanos latency_, stall_from_, stall_until_;
};

// Every query takes `latency`; closing a session takes `close_time` (a slow disconnect).
class SlowCloseDriver final : public db::Driver {
 public:
  SlowCloseDriver(Clock& clock, Nanos latency, Nanos close_time)
      : clock_(clock), latency_(latency), close_time_(close_time) {}
  db::Dialect dialect() const override { return db::Dialect::kNoop; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    return std::make_unique<Session>(*this);
  }

 private:
  struct Session final : StubSession {
    explicit Session(SlowCloseDriver& d) : d(d) {}
    ~Session() override { d.clock_.SleepUntil(d.clock_.Now() + d.close_time_); }
    db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override {
      d.clock_.SleepUntil(d.clock_.Now() + d.latency_);
      return {.rows = 1};
    }
    SlowCloseDriver& d;
  };
  Clock& clock_;
  Nanos latency_, close_time_;
};

// Queries take `slow` on the first session connected and `fast` on the others. It notes when each
// session was closed and when the last answer came.
class TeardownWatchingDriver final : public db::Driver {
 public:
  TeardownWatchingDriver(Clock& clock, Nanos slow, Nanos fast)
      : clock_(clock), slow_(slow), fast_(fast) {}
  db::Dialect dialect() const override { return db::Dialect::kNoop; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    return std::make_unique<Session>(*this, connects_++ == 0 ? slow_ : fast_);
  }
  std::vector<Nanos> closes() const {
    std::lock_guard lock(mu_);
    return closes_;
  }
  Nanos last_answer() const {
    std::lock_guard lock(mu_);
    return last_answer_;
  }

 private:
  struct Session final : StubSession {
    Session(TeardownWatchingDriver& d, Nanos latency) : d(d), latency(latency) {}
    ~Session() override {
      std::lock_guard lock(d.mu_);
      d.closes_.push_back(d.clock_.Now());
    }
    db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override {
      const Nanos answer = d.clock_.Now() + latency;
      d.clock_.SleepUntil(answer);
      std::lock_guard lock(d.mu_);
      d.last_answer_ = std::max(d.last_answer_, answer);
      return {.rows = 1};
    }
    TeardownWatchingDriver& d;
    const Nanos latency;
  };
  Clock& clock_;
  const Nanos slow_, fast_;
  std::atomic<int> connects_{0};
  mutable std::mutex mu_;
  std::vector<Nanos> closes_;
  Nanos last_answer_ = 0;
};

// Every query takes `latency`; every reconnect takes `connect_time`, and every
// `refuse_every`-th one (when > 0) is refused after that time.
class SlowConnectDriver final : public db::Driver {
 public:
  SlowConnectDriver(Clock& clock, Nanos latency, Nanos connect_time, int refuse_every = 0)
      : clock_(clock),
        latency_(latency),
        connect_time_(connect_time),
        refuse_every_(refuse_every) {}
  db::Dialect dialect() const override { return db::Dialect::kNoop; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    const int now_connecting = ++connecting_;
    for (int most = most_connecting_;
         most < now_connecting && !most_connecting_.compare_exchange_weak(most, now_connecting);) {
    }
    clock_.SleepUntil(clock_.Now() + connect_time_);
    --connecting_;
    return std::make_unique<Session>(*this);
  }
  // The most first connects that were in progress at once.
  int most_connecting() const { return most_connecting_; }

 private:
  struct Session final : StubSession {
    explicit Session(SlowConnectDriver& d) : d(d) {}
    db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override {
      CountStatementSent();
      d.clock_.SleepUntil(d.clock_.Now() + d.latency_);
      return {.rows = 1};
    }
    absl::Status Reconnect() override {
      d.clock_.SleepUntil(d.clock_.Now() + d.connect_time_);
      if (d.refuse_every_ > 0 && ++reconnects % d.refuse_every_ == 0) {
        return absl::UnavailableError("connection refused");
      }
      CountConnectionOpened();
      return absl::OkStatus();
    }
    SlowConnectDriver& d;
    int reconnects = 0;
  };
  Clock& clock_;
  Nanos latency_, connect_time_;
  int refuse_every_;
  std::atomic<int> connecting_{0}, most_connecting_{0};
};

// A server `round_trip` away. Outside a pipeline each statement waits for its answer; inside
// one it is only sent, and EndPipeline waits one round trip for all the answers. Every
// `fail_every`-th pipeline (when > 0) is answered with a serialization failure.
class PipeliningDriver final : public db::Driver {
 public:
  PipeliningDriver(Clock& clock, Nanos round_trip, int fail_every = 0)
      : clock_(clock), round_trip_(round_trip), fail_every_(fail_every) {}
  db::Dialect dialect() const override { return db::Dialect::kPostgreSql; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    return std::make_unique<Session>(*this);
  }
  std::atomic<int> started{0}, ended{0};

 private:
  struct Session final : StubSession {
    explicit Session(PipeliningDriver& d) : d(d) {}
    db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override { return Sent(); }
    db::ExecOutcome Begin() override { return Sent(); }
    db::ExecOutcome Commit() override { return Sent(); }
    db::ExecOutcome Rollback() override { return Sent(); }
    std::optional<db::DbError> StartPipeline() override {
      ++d.started;
      pipelining = true;
      return std::nullopt;
    }
    db::ExecOutcome EndPipeline() override {
      ++d.ended;
      pipelining = false;
      d.clock_.SleepUntil(d.clock_.Now() + d.round_trip_);
      if (d.fail_every_ > 0 && ++pipelines % d.fail_every_ == 0) {
        return {.error = db::DbError{db::ErrorClass::kRetryable, "40001", "could not serialize"}};
      }
      return {.rows = 1};
    }
    db::ExecOutcome Sent() {
      CountStatementSent();
      if (pipelining) return {};
      d.clock_.SleepUntil(d.clock_.Now() + d.round_trip_);
      return {.rows = 1};
    }
    PipeliningDriver& d;
    bool pipelining = false;
    int pipelines = 0;
  };
  Clock& clock_;
  Nanos round_trip_;
  int fail_every_;
};

class RefusingDriver final : public db::Driver {
 public:
  db::Dialect dialect() const override { return db::Dialect::kNoop; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    return absl::UnauthenticatedError("password authentication failed for user \"bench\"");
  }
};

PacerFactory Uniform(double rate) {
  return [rate](Nanos start) { return std::make_unique<UniformPacer>(start, rate); };
}

// Every case runs on both engines: a thread per worker, and workers as fibers on two loops.
class LoadRunnerTest : public testing::TestWithParam<int> {
 protected:
  IntervalSnapshot DrainAll() { return recorder_.Drain(); }
  LoadRunner::Options Engine() const { return {.event_loops = GetParam()}; }

  SimulatedClock clock_;
  SingleStatementScenario scenario_;
  IntervalRecorder recorder_{1};
};

TEST_P(LoadRunnerTest, OpenLoopRunsExactlyTheScheduledArrivals) {
  db::NoopDriver driver({.fixed_latency = 500 * kMicrosecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartOpenLoop(Uniform(1'000), clock_.Now() + kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 1'000u);
  EXPECT_EQ(runner.not_started(), 0u);
  const Histogram& response = got.query_types[0].response_time;
  EXPECT_NEAR(response.Min(), 500 * kMicrosecond, 500 * kMicrosecond / 1000);
  EXPECT_LE(response.Max(), 500 * kMicrosecond * 1001 / 1000);
  EXPECT_EQ(got.schedule_lag.Max(), 0);
  // The connection was free at every arrival: all of the lag (none) is dispatch lag.
  EXPECT_EQ(got.dispatch_lag.TotalCount(), 1'000u);
}

TEST_P(LoadRunnerTest, OverloadedOpenLoopChargesQueueingAndCountsWhatNeverStarted) {
  // 1,000/s wanted; one connection can do only 500/s (2 ms each).
  db::NoopDriver driver({.fixed_latency = 2 * kMillisecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartOpenLoop(Uniform(1'000), clock_.Now() + kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 500u);
  // Every arrival is accounted for: executed or not started, none silently dropped.
  EXPECT_EQ(got.Executed() + runner.not_started(), 1'000u);
  const Histogram& response = got.query_types[0].response_time;
  const Histogram& service = got.query_types[0].service_time;
  // Arrival k (at k ms) starts at 2k ms and ends at 2k+2 ms: response k+2 ms, service 2 ms.
  EXPECT_NEAR(response.Max(), 501 * kMillisecond, kMillisecond);
  EXPECT_NEAR(response.ValueAtPercentile(50), 252 * kMillisecond, 2 * kMillisecond);
  EXPECT_NEAR(service.Max(), 2 * kMillisecond, 3 * kMicrosecond);
  EXPECT_NEAR(got.schedule_lag.Max(), 499 * kMillisecond, kMillisecond);
  // Only the first arrival found the connection free; every later one queued behind a busy
  // connection, which is the pool's limit (or the database's), not the agent falling behind.
  EXPECT_EQ(got.dispatch_lag.TotalCount(), 1u);
  EXPECT_EQ(got.dispatch_lag.Max(), 0);
}

TEST_P(LoadRunnerTest, StalledDatabaseShowsInEveryArrivalThatWaited) {
  // 4 connections at 1,000/s; the database stops answering from 0.5 s to 1.5 s.
  StallingDriver driver(clock_, 100 * kMicrosecond, 500 * kMillisecond, 1'500 * kMillisecond);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(4).ok());
  runner.StartOpenLoop(Uniform(1'000), clock_.Now() + 3 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 3'000u);
  const Histogram& response = got.query_types[0].response_time;
  EXPECT_NEAR(response.Max(), 1'000 * kMillisecond, 2 * kMillisecond);
  // About a thousand arrivals fell into the stall; each waited up to 1 s. A tool timing from
  // the actual send would have seen 4 slow queries; here the stall dominates the tail.
  EXPECT_GE(response.ValueAtPercentile(99.9), 990 * kMillisecond);
  EXPECT_GE(response.ValueAtPercentile(75), 200 * kMillisecond);
  EXPECT_LT(got.query_types[0].service_time.ValueAtPercentile(99.0), 1'001 * kMillisecond);
}

// Where the connections' time went, drained once a second as the agent does. Four connections
// at 1,000/s, 100 µs a query, the database stuck from 0.5 s to 1.5 s: the stuck calls count in
// both intervals they span (the old averages over the run showed the connections in database
// calls a third of the time; the seconds of the stall show them there half and more).
TEST_P(LoadRunnerTest, ConnectionTimeShowsAStallInTheIntervalsItSpans) {
  StallingDriver driver(clock_, 100 * kMicrosecond, 500 * kMillisecond, 1'500 * kMillisecond);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(4).ok());
  clock_.AttachThread();  // this thread drains on the clock, as the run executor does
  const Nanos start = clock_.Now();
  runner.StartOpenLoop(Uniform(1'000), start + 3 * kSecond);
  std::vector<ConnectionTime> intervals;
  for (int i = 1; i <= 3; ++i) {
    clock_.SleepUntil(start + i * kSecond);
    intervals.push_back(recorder_.Drain(clock_.Now()).connection_time);
  }
  clock_.DetachThread();  // joining is not waiting on the clock
  runner.Wait();
  constexpr double kMs = 1e6;
  // Four connections, each in exactly one state at every instant (until it leaves: in the
  // last interval each leaves once no arrival is left before the deadline, up to 4 ms early).
  EXPECT_NEAR(intervals[0].Total() / kMs, 4'000, 1);
  EXPECT_NEAR(intervals[1].Total() / kMs, 4'000, 1);
  EXPECT_NEAR(intervals[2].Total() / kMs, 4'000 - 8, 8);
  // 0–1 s: 500 queries of 0.1 ms, then all four stuck from 0.5 s.
  EXPECT_NEAR(intervals[0].in_db_call / kMs, 50 + 2'000, 10);
  // 1–2 s: stuck until 1.5 s, then the backlog of ~1,000 and the new arrivals (0.1 ms each).
  EXPECT_NEAR(intervals[1].in_db_call / kMs, 2'000 + 150, 20);
  // 2–3 s: a healthy database, the connections mostly waiting for arrivals.
  EXPECT_NEAR(intervals[2].in_db_call / kMs, 100, 5);
  EXPECT_NEAR(intervals[2].idle / kMs, 3'900 - 8, 8);
  for (const ConnectionTime& t : intervals) EXPECT_EQ(t.connecting, 0);
}

// After a connection error the worker reconnects with backoff: that time is the database's
// unavailability, counted apart from database calls and from the agent's own work. Every
// connection opened, reconnects included, did its own work on the server and is counted once
// (the commit reconciliation needs it).
TEST_P(LoadRunnerTest, ReconnectingTimeIsCountedApartAndEveryConnectionOpenedOnce) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 100,
                         .injected_error = {db::ErrorClass::kConnection, "08006", "gone"}},
                        clock_);
  LoadRunner::Options options = Engine();
  options.reconnect_backoff_min = 50 * kMillisecond;
  LoadRunner runner(driver, scenario_, recorder_, clock_, options);
  ASSERT_TRUE(runner.Connect(1).ok());
  const Nanos start = clock_.Now();
  runner.StartClosedLoop(0, start + kSecond);
  runner.Wait();
  const IntervalSnapshot got = recorder_.Drain(start + kSecond);
  const ConnectionTime& t = got.connection_time;
  // Seven failures, each followed by a 50 ms backoff (the last cut by the run's end).
  EXPECT_EQ(got.Errors(), 7u);
  EXPECT_EQ(got.connections_opened, 1u + 6) << "the first connect and six reconnects";
  EXPECT_GE(t.connecting, 6 * 50 * kMillisecond);
  EXPECT_LE(t.connecting, 7 * 50 * kMillisecond + kMillisecond);
  EXPECT_NEAR(static_cast<double>(t.in_db_call + t.connecting), kSecond, kMillisecond);
  EXPECT_EQ(t.idle, 0) << "a closed loop without think time never waits";
}

// pgbench -C: 1 ms queries, 3 ms connects, one per transaction, two closed-loop clients for 1 s.
TEST_P(LoadRunnerTest, AConnectionPerTransactionIsTimedApartAndNotInTheServiceTime) {
  SlowConnectDriver driver(clock_, kMillisecond, 3 * kMillisecond);
  LoadRunner::Options options = Engine();
  options.connect_per_transaction = true;
  LoadRunner runner(driver, scenario_, recorder_, clock_, options);
  ASSERT_TRUE(runner.Connect(2).ok());
  recorder_.Drain();  // the first connects, before the run
  const Nanos start = clock_.Now();
  runner.StartClosedLoop(0, start + kSecond);
  runner.Wait();
  const IntervalSnapshot got = recorder_.Drain(start + kSecond);
  EXPECT_EQ(got.Executed(), 2u * 250) << "4 ms each";
  EXPECT_EQ(got.connect_time.TotalCount(), 500u);
  EXPECT_NEAR(got.connect_time.Max(), 3 * kMillisecond, 3 * kMillisecond / 1000);
  EXPECT_EQ(got.connections_opened, 500u);
  const QueryTypeInterval& q = got.query_types[0];
  EXPECT_NEAR(q.service_time.Max(), kMillisecond, kMillisecond / 1000);
  EXPECT_NEAR(q.response_time.Min(), 4 * kMillisecond, 4 * kMillisecond / 1000);
  EXPECT_NEAR(static_cast<double>(got.connection_time.in_db_call), 2 * kSecond, kMillisecond)
      << "connecting for a transaction is the database's time, not a reconnect's";
  EXPECT_EQ(got.connection_time.connecting, 0);
}

// A refused connect fails its transaction as a connection error (the server never saw it); the
// worker then reconnects with backoff as after any lost connection, and goes on.
TEST_P(LoadRunnerTest, ARefusedConnectPerTransactionIsThatTransactionsConnectionError) {
  SlowConnectDriver driver(clock_, kMillisecond, kMillisecond, /*refuse_every=*/10);
  LoadRunner::Options options = Engine();
  options.connect_per_transaction = true;
  options.reconnect_backoff_min = 10 * kMillisecond;
  LoadRunner runner(driver, scenario_, recorder_, clock_, options);
  ASSERT_TRUE(runner.Connect(1).ok());
  const Nanos start = clock_.Now();
  runner.StartOpenLoop(Uniform(100), start + kSecond);
  runner.Wait();
  const IntervalSnapshot got = recorder_.Drain(start + kSecond);
  const auto& errors = got.query_types[0].errors;
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors.begin()->first,
            std::make_pair(db::ErrorClass::kConnection, std::string("08006")));
  // Every 10th connect is refused, and the reconnect after a refusal is a connect with no
  // transaction: transactions 10, 19, 28 … 100 fail, the 89 others are timed connects.
  EXPECT_EQ(got.Errors(), 11u);
  EXPECT_EQ(got.Executed(), 89u);
  EXPECT_EQ(got.connect_time.TotalCount(), 89u);
  EXPECT_EQ(runner.not_started(), 0u);
}

// pgbench's \startpipeline: a transaction of 5 statements (BEGIN, 3, COMMIT) costs one round
// trip instead of 5, as a single statement does. One client, 1 ms round trips, 1 s: 1,000
// transactions, half of each shape (without the pipeline 6 ms a pair: 334 start within the 1 s).
TEST_P(LoadRunnerTest, APipelinedTransactionTakesOneRoundTrip) {
  for (const bool pipeline : {false, true}) {
    SCOPED_TRACE(pipeline);
    IntervalRecorder recorder(2);
    PipeliningDriver driver(clock_, kMillisecond);
    const TwoShapesScenario shapes({});
    LoadRunner::Options options = Engine();
    options.pipeline = pipeline;
    LoadRunner runner(driver, shapes, recorder, clock_, options);
    ASSERT_TRUE(runner.Connect(1).ok());
    const Nanos start = clock_.Now();
    runner.StartClosedLoop(0, start + kSecond);
    runner.Wait();
    const IntervalSnapshot got = recorder.Drain(start + kSecond);
    const QueryTypeInterval& transaction = got.query_types[1];
    if (!pipeline) {
      EXPECT_EQ(got.Executed(), 334u);
      EXPECT_NEAR(transaction.service_time.Max(), 5 * kMillisecond, 5 * kMillisecond / 1000);
      EXPECT_EQ(driver.started, 0);
      continue;
    }
    EXPECT_EQ(got.Executed(), 1'000u);
    EXPECT_EQ(got.Statements(), 500u * 1 + 500u * 5) << "each statement is still counted";
    EXPECT_NEAR(transaction.service_time.Max(), kMillisecond, kMillisecond / 1000);
    EXPECT_EQ(driver.started, 1'000);
    EXPECT_EQ(driver.ended, 1'000);
  }
}

// The pipeline's answer is the transaction's: a serialization failure found at its end is
// retried as any other, each try in a pipeline of its own. Every 2nd pipeline fails: the first
// transaction commits at once, each of the 99 others on its 2nd try.
TEST_P(LoadRunnerTest, APipelineAnsweredWithAnErrorIsRetriedInAPipelineOfItsOwn) {
  PipeliningDriver driver(clock_, kMillisecond, /*fail_every=*/2);
  const SingleStatementScenario retrying({},
                                         {.max_tries = 3, .on = {db::RetryCause::kSerialization}});
  LoadRunner::Options options = Engine();
  options.pipeline = true;
  LoadRunner runner(driver, retrying, recorder_, clock_, options);
  runner.SetStartLimit(100);
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 100u);
  EXPECT_EQ(got.Errors(), 0u);
  EXPECT_EQ(driver.started, 199);
  EXPECT_EQ(driver.ended, 199);
  const RetryTally& retry = got.query_types[0].retry;
  EXPECT_THAT(retry.retries,
              testing::ElementsAre(testing::Pair(db::RetryCause::kSerialization, 99u)));
  EXPECT_THAT(retry.committed_by_tries, testing::ElementsAre(testing::Pair(2u, 99u)));
}

// 20 workers whose connects take 10 ms each, at most 4 connecting at once: on two event loops
// (2 each) they connect in 5 rounds; threads connect all at once, each on its own.
TEST_P(LoadRunnerTest, EventLoopsOpenOnlySoManyConnectionsAtOnce) {
  SlowConnectDriver driver(clock_, kMillisecond, 10 * kMillisecond);
  LoadRunner::Options options = Engine();
  options.connects_at_once = 4;
  LoadRunner runner(driver, scenario_, recorder_, clock_, options);
  const Nanos start = clock_.Now();
  ASSERT_TRUE(runner.Connect(20).ok());
  if (GetParam() > 0) {
    EXPECT_EQ(driver.most_connecting(), 4);
    EXPECT_EQ(clock_.Now() - start, 5 * 10 * kMillisecond);
  } else {
    EXPECT_EQ(driver.most_connecting(), 20);
    EXPECT_EQ(clock_.Now() - start, 10 * kMillisecond);
  }
}

// Open loop at 1,000/s on one connection, 0.5 ms a query: half the time in database calls,
// half waiting for the next arrival.
TEST_P(LoadRunnerTest, WaitingForArrivalsIsIdleTime) {
  db::NoopDriver driver({.fixed_latency = 500 * kMicrosecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  const Nanos start = clock_.Now();
  runner.StartOpenLoop(Uniform(1'000), start + kSecond);
  runner.Wait();
  const ConnectionTime t = recorder_.Drain(start + kSecond).connection_time;
  EXPECT_NEAR(static_cast<double>(t.in_db_call), 500 * kMillisecond, kMillisecond);
  EXPECT_NEAR(static_cast<double>(t.idle), 500 * kMillisecond, kMillisecond);
  EXPECT_EQ(t.connecting, 0);
}

TEST_P(LoadRunnerTest, ClosedLoopClientsRunBackToBack) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(3).ok());
  runner.StartClosedLoop(0, clock_.Now() + kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 3'000u);
  EXPECT_NEAR(got.query_types[0].response_time.Max(), kMillisecond, kMillisecond / 1000);
  // A closed-loop client is its own connection: it never queues for one.
  EXPECT_EQ(got.dispatch_lag.TotalCount(), 3'000u);
}

TEST_P(LoadRunnerTest, FinishedAtIsTheLastTransactionsEndNotTheSessionTeardown) {
  SlowCloseDriver driver(clock_, kMillisecond, 5 * kSecond);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(2).ok());
  const Nanos start = clock_.Now();
  runner.StartClosedLoop(0, start + kSecond);
  runner.Wait();
  EXPECT_EQ(DrainAll().Executed(), 2'000u);
  EXPECT_EQ(runner.FinishedAt(), start + kSecond);  // not start + 6 s
}

// A server ends a backend per closed connection: closed while other transactions still ran, the
// sessions would slow those down and lengthen the run.
TEST_P(LoadRunnerTest, AtTheEndSessionsCloseOnceTheLastTransactionHasEnded) {
  TeardownWatchingDriver driver(clock_, 300 * kMillisecond, kMillisecond);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(3).ok());
  const Nanos start = clock_.Now();
  runner.StartClosedLoop(0, start + kSecond);
  runner.Wait();
  // The slow session's last transaction starts at 0.9 s and ends at 1.2 s; the two others' last
  // ones end at 1 s.
  const Nanos last = start + 1200 * kMillisecond;
  EXPECT_EQ(driver.last_answer(), last);
  EXPECT_EQ(runner.FinishedAt(), last);
  EXPECT_THAT(driver.closes(), testing::ElementsAre(last, last, last));
}

TEST_P(LoadRunnerTest, AClientRemovedWhileTheRunGoesOnClosesItsSessionAtOnce) {
  TeardownWatchingDriver driver(clock_, kMillisecond, kMillisecond);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ClockThread control(clock_);
  const Nanos start = clock_.Now();
  ASSERT_TRUE(runner.Connect(3).ok());
  runner.StartClosedLoop(0, start + 2 * kSecond);
  clock_.SleepUntil(start + kSecond + 250 * kMicrosecond);
  ASSERT_TRUE(runner.SetClients(1).ok());
  clock_.SleepUntil(start + kSecond + 500 * kMicrosecond + kMillisecond);
  // Each retired client ends the transaction it is in (started at 1 s), then closes.
  const Nanos retired = start + kSecond + kMillisecond;
  EXPECT_THAT(driver.closes(), testing::ElementsAre(retired, retired));
  clock_.DetachThread();
  runner.Wait();
  clock_.AttachThread();  // balance the ClockThread guard
  EXPECT_THAT(driver.closes(), testing::ElementsAre(retired, retired, start + 2 * kSecond));
}

TEST_P(LoadRunnerTest, ThinkTimeSpacesTransactionsAndIsNotLatency) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(2).ok());
  runner.StartClosedLoop(9 * kMillisecond, clock_.Now() + kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 200u);  // one per 10 ms per client
  EXPECT_LE(got.query_types[0].response_time.Max(), kMillisecond * 1001 / 1000);
}

// A workload's own pause (tpcc's keying and think times) comes before each transaction, the
// first included, on top of the plan's think time, and is not latency.
struct PausingWorker final : ScenarioWorker {
  int NextQueryType() override { return 0; }
  db::ExecOutcome Run(int, db::Session& session) override { return session.Execute(0, {}); }
  int64_t PauseNs() override { return kSecond; }
};

TEST_P(LoadRunnerTest, AWorkloadsPauseComesBeforeEachTransactionAndIsNotLatency) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  const SingleStatementScenario scenario({}, {}, [] { return std::make_unique<PausingWorker>(); });
  LoadRunner runner(driver, scenario, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(2).ok());
  // Starts at 1 s, 2.011 s … 9.091 s: 1 s of pause, 10 ms of think time and 1 ms of latency
  // apart; the 10th would start past the 10 s deadline.
  runner.StartClosedLoop(10 * kMillisecond, clock_.Now() + 10 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 2u * 9);
  EXPECT_LE(got.query_types[0].response_time.Max(), kMillisecond * 1001 / 1000);
}

// A pause that would end past the deadline does not hold the run open.
struct LongPausingWorker final : ScenarioWorker {
  int NextQueryType() override { return 0; }
  db::ExecOutcome Run(int, db::Session& session) override { return session.Execute(0, {}); }
  int64_t PauseNs() override { return 100 * kSecond; }
};

TEST_P(LoadRunnerTest, APauseEndingPastTheDeadlineEndsTheRunAtTheDeadline) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  const SingleStatementScenario scenario({}, {},
                                         [] { return std::make_unique<LongPausingWorker>(); });
  LoadRunner runner(driver, scenario, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(2).ok());
  const Nanos start = clock_.Now();
  runner.StartClosedLoop(0, start + 10 * kSecond);
  runner.Wait();
  EXPECT_EQ(DrainAll().Executed(), 0u);
  EXPECT_LE(clock_.Now(), start + 10 * kSecond + kMillisecond);
}

TEST_P(LoadRunnerTest, ClientsCanBeAddedAndRemovedWhileRunning) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ClockThread control(clock_);  // this thread's sleeps are part of simulated time
  const Nanos start = clock_.Now();
  ASSERT_TRUE(runner.Connect(2).ok());
  runner.StartClosedLoop(0, start + 3 * kSecond);
  // Control actions happen at odd fractions of a millisecond so that they never coincide with a
  // transaction's end (threads woken at the same simulated instant race in real time).
  clock_.SleepUntil(start + kSecond + 250 * kMicrosecond);
  EXPECT_EQ(recorder_.Drain().Executed(), 2'000u);
  ASSERT_TRUE(runner.SetClients(5).ok());
  clock_.SleepUntil(start + 2 * kSecond + 500 * kMicrosecond);
  EXPECT_EQ(recorder_.Drain().Executed(), 5'000u);
  ASSERT_TRUE(runner.SetClients(1).ok());
  clock_.SleepUntil(start + 3 * kSecond + 750 * kMicrosecond);
  // Retired clients finish the transaction they are in (1 each), then leave.
  EXPECT_EQ(recorder_.Drain().Executed(), 1'000u + 4u);
  clock_.DetachThread();
  runner.Wait();
  clock_.AttachThread();  // balance the ClockThread guard
  EXPECT_EQ(runner.Clients(), 0);
}

TEST_P(LoadRunnerTest, RateChangesWhileRunning) {
  db::NoopDriver driver({.fixed_latency = 100 * kMicrosecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ClockThread control(clock_);
  const Nanos start = clock_.Now();
  ASSERT_TRUE(runner.Connect(2).ok());
  runner.StartOpenLoop(Uniform(1'000), start + 2 * kSecond);
  clock_.SleepUntil(start + kSecond - 1);
  runner.SetRate(3'000);
  clock_.SleepUntil(start + 2 * kSecond);
  clock_.DetachThread();
  runner.Wait();
  clock_.AttachThread();
  EXPECT_NEAR(static_cast<double>(recorder_.Drain().Executed()), 4'000.0, 2.0);
}

TEST_P(LoadRunnerTest, BudgetBoundsTheNumberOfTransactions) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  runner.SetStartLimit(123);
  ASSERT_TRUE(runner.Connect(4).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  EXPECT_EQ(recorder_.Drain().Executed(), 123u);
  EXPECT_LT(clock_.Now(), kSecond);
}

TEST_P(LoadRunnerTest, ErrorsAreCountedByClassAndCode) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 10,
                         .injected_error = {db::ErrorClass::kRetryable, "40001", "serialize"}},
                        clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 900u);
  EXPECT_EQ(got.Errors(), 100u);
  EXPECT_EQ((got.query_types[0].errors.at({db::ErrorClass::kRetryable, "40001"})), 100u);
}

// sysbench's ignored errors: a duplicate key (fatal to the classifier) that the scenario ignores
// is counted apart by code, is neither executed nor an error, has no latency recorded, and the
// client goes on.
TEST_P(LoadRunnerTest, IgnoredErrorsAreCountedApartAndTheRunGoesOn) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 10,
                         .injected_error = {db::ErrorClass::kFatal, "23505", "duplicate key"}},
                        clock_);
  const SingleStatementScenario ignoring({"40P01", "23505"});
  LoadRunner runner(driver, ignoring, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + kSecond);
  runner.Wait();
  EXPECT_FALSE(runner.fatal_error().has_value());
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 900u);
  EXPECT_EQ(got.Errors(), 0u);
  EXPECT_EQ(got.Ignored(), 100u);
  EXPECT_EQ(got.Completed(), 1'000u);
  EXPECT_EQ(got.query_types[0].response_time.TotalCount(), 900u);
  EXPECT_EQ(got.query_types[0].service_time.TotalCount(), 900u);
  EXPECT_THAT(got.query_types[0].errors,
              testing::ElementsAre(testing::Pair(
                  testing::Pair(db::ErrorClass::kIgnored, std::string("23505")), 100u)));
}

TEST_P(LoadRunnerTest, AnErrorTheScenarioDoesNotIgnoreKeepsItsClass) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 10,
                         .injected_error = {db::ErrorClass::kFatal, "23505", "duplicate key"}},
                        clock_);
  const SingleStatementScenario ignoring({"40P01"});
  LoadRunner runner(driver, ignoring, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  ASSERT_TRUE(runner.fatal_error().has_value());
  EXPECT_EQ(runner.fatal_error()->error_class, db::ErrorClass::kFatal);
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Executed(), 9u);
  EXPECT_EQ(got.Errors(), 1u);
  EXPECT_EQ(got.Ignored(), 0u);
}

TEST_P(LoadRunnerTest, IgnoredErrorsTakeTheirStartsFromTheBudget) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 4,
                         .injected_error = {db::ErrorClass::kRetryable, "40P01", "deadlock"}},
                        clock_);
  const SingleStatementScenario ignoring({"40P01"});
  LoadRunner runner(driver, ignoring, recorder_, clock_, Engine());
  runner.SetStartLimit(123);
  ASSERT_TRUE(runner.Connect(3).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Completed(), 123u);
  EXPECT_GT(got.Ignored(), 0u);
  EXPECT_EQ(got.Errors(), 0u);
}

// pgbench's --max-tries: a serialization failure is tried again, the transaction commits on its
// second try and is one transaction, timed from its intended start through that try.
TEST_P(LoadRunnerTest, ARetriedTransactionIsOneTransactionTimedThroughItsLastTry) {
  // Executes 10, 20, … of the session fail; each failure's retry (the next Execute) commits.
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 10,
                         .injected_error = {db::ErrorClass::kRetryable, "40001", "serialize"}},
                        clock_);
  const SingleStatementScenario retrying({},
                                         {.max_tries = 3, .on = {db::RetryCause::kSerialization}});
  LoadRunner runner(driver, retrying, recorder_, clock_, Engine());
  runner.SetStartLimit(500);
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  // 500 transactions sent 555 statements: 55 of them failed once (statements 10 … 550).
  EXPECT_EQ(got.Executed(), 500u);
  EXPECT_EQ(got.Errors(), 0u);
  EXPECT_EQ(got.Statements(), 555u);
  const RetryTally& retry = got.query_types[0].retry;
  EXPECT_THAT(retry.retries,
              testing::ElementsAre(testing::Pair(db::RetryCause::kSerialization, 55u)));
  EXPECT_THAT(retry.committed_by_tries, testing::ElementsAre(testing::Pair(2u, 55u)));
  EXPECT_EQ(retry.failed_after_retries, 0u);
  // Two tries of 1 ms each: the retried transactions' latency is 2 ms, the others' 1 ms.
  const Histogram& response = got.query_types[0].response_time;
  EXPECT_LT(response.ValueAtPercentile(89.0), kMillisecond * 3 / 2);  // rank 445 of 500
  EXPECT_GE(response.ValueAtPercentile(89.2), 2 * kMillisecond);      // rank 446
}

TEST_P(LoadRunnerTest, ATransactionThatFailsEveryTryFailsOnceAfterItsLastTry) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 1,
                         .injected_error = {db::ErrorClass::kRetryable, "40P01", "deadlock"}},
                        clock_);
  const SingleStatementScenario retrying({}, {.max_tries = 3, .on = {db::RetryCause::kDeadlock}});
  LoadRunner runner(driver, retrying, recorder_, clock_, Engine());
  runner.SetStartLimit(10);
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Completed(), 10u);
  EXPECT_EQ(got.Errors(), 10u);
  EXPECT_EQ(got.Statements(), 30u);
  const RetryTally& retry = got.query_types[0].retry;
  EXPECT_THAT(retry.retries, testing::ElementsAre(testing::Pair(db::RetryCause::kDeadlock, 20u)));
  EXPECT_EQ(retry.failed_after_retries, 10u);
  EXPECT_TRUE(retry.committed_by_tries.empty());
}

// A transaction retried on a conflict whose retry then lost its connection failed for that
// reason: one connection error, not a failure after retrying (it had tries left).
struct ConflictThenLostConnectionWorker final : ScenarioWorker {
  int NextQueryType() override { return 0; }
  db::ExecOutcome Run(int, db::Session& session) override {
    return Failed(session, {db::ErrorClass::kRetryable, "40001", "could not serialize"});
  }
  db::ExecOutcome Retry(int, db::Session& session) override {
    return Failed(session, {db::ErrorClass::kConnection, "57P01", "terminating connection"});
  }
  static db::ExecOutcome Failed(db::Session& session, db::DbError error) {
    db::ExecOutcome outcome = session.Execute(0, {});
    outcome.error = std::move(error);
    return outcome;
  }
};

TEST_P(LoadRunnerTest, ARetryThatLosesItsConnectionIsAConnectionErrorNotOutOfTries) {
  db::NoopDriver driver({.fixed_latency = kMillisecond}, clock_);
  const SingleStatementScenario scenario(
      {}, {.max_tries = 5, .on = {db::RetryCause::kSerialization}},
      [] { return std::make_unique<ConflictThenLostConnectionWorker>(); });
  LoadRunner runner(driver, scenario, recorder_, clock_, Engine());
  runner.SetStartLimit(4);
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  EXPECT_EQ(got.Errors(), 4u);
  const RetryTally& retry = got.query_types[0].retry;
  EXPECT_THAT(retry.retries,
              testing::ElementsAre(testing::Pair(db::RetryCause::kSerialization, 4u)));
  EXPECT_EQ(retry.failed_after_retries, 0u);
}

TEST_P(LoadRunnerTest, OnlyThePolicysCausesAreTriedAgain) {
  for (const auto& [code, error_class] : std::vector<std::pair<std::string, db::ErrorClass>>{
           {"40001", db::ErrorClass::kRetryable}, {"23505", db::ErrorClass::kFatal}}) {
    SCOPED_TRACE(code);
    IntervalRecorder recorder(1);
    db::NoopDriver driver({.fixed_latency = kMillisecond,
                           .fail_every = 5,
                           .injected_error = {error_class, code, "no retry"}},
                          clock_);
    const SingleStatementScenario retrying({}, {.max_tries = 5, .on = {db::RetryCause::kDeadlock}});
    LoadRunner runner(driver, retrying, recorder, clock_, Engine());
    runner.SetStartLimit(20);
    ASSERT_TRUE(runner.Connect(1).ok());
    runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
    runner.Wait();
    const IntervalSnapshot got = recorder.Drain();
    EXPECT_TRUE(got.query_types[0].retry.empty());
    EXPECT_GE(got.Errors(), 1u);
    EXPECT_EQ(got.Statements(), got.Completed());
  }
}

// Every statement a transaction sent counts, BEGIN, COMMIT and ROLLBACK included, whether the
// transaction committed, failed or was ignored, and in its own query type.
TEST_P(LoadRunnerTest, StatementsSentAreCountedPerQueryTypeWhateverTheOutcome) {
  // Every 7th Execute of a session fails: a deadlock the scenario ignores, or (other codes) a
  // retryable error.
  for (const std::string ignored : {"40P01", "none"}) {
    SCOPED_TRACE(ignored);
    db::NoopDriver driver({.fixed_latency = kMillisecond,
                           .fail_every = 7,
                           .injected_error = {db::ErrorClass::kRetryable, "40P01", "deadlock"}},
                          clock_);
    TwoShapesScenario scenario({ignored});
    IntervalRecorder recorder(2);
    LoadRunner runner(driver, scenario, recorder, clock_, Engine());
    runner.SetStartLimit(1'000);
    ASSERT_TRUE(runner.Connect(3).ok());
    runner.StartClosedLoop(0, clock_.Now() + 100 * kSecond);
    runner.Wait();
    const IntervalSnapshot got = recorder.Drain();
    EXPECT_EQ(got.Completed(), 1'000u);
    EXPECT_GT(got.Errors() + got.Ignored(), 0u);
    EXPECT_EQ(ignored == "none" ? got.Ignored() : got.Errors(), 0u);
    EXPECT_EQ(got.query_types[0].statements, scenario.calls[0].load());
    EXPECT_EQ(got.query_types[1].statements, scenario.calls[1].load());
    // A point sends 1, a committed txn 5, a failed one 3 to 5: the counts are the calls, not a
    // constant per transaction.
    const uint64_t points = got.query_types[0].response_time.TotalCount() +
                            got.query_types[0].ErrorCount() + got.query_types[0].IgnoredCount();
    EXPECT_EQ(got.query_types[0].statements, points);
    const QueryTypeInterval& txn = got.query_types[1];
    const uint64_t failed = txn.ErrorCount() + txn.IgnoredCount();
    EXPECT_GT(failed, 0u);
    EXPECT_GE(txn.statements, 5 * txn.response_time.TotalCount() + 3 * failed);
    EXPECT_LE(txn.statements, 5 * (txn.response_time.TotalCount() + failed));
    EXPECT_EQ(got.Statements(), scenario.calls[0].load() + scenario.calls[1].load());
  }
}

TEST_P(LoadRunnerTest, ConnectionErrorsReconnectWithBackoffAndTheRunGoesOn) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 100,
                         .injected_error = {db::ErrorClass::kConnection, "08006", "gone"}},
                        clock_);
  LoadRunner::Options options = Engine();
  options.reconnect_backoff_min = 50 * kMillisecond;
  LoadRunner runner(driver, scenario_, recorder_, clock_, options);
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + kSecond);
  runner.Wait();
  const IntervalSnapshot got = DrainAll();
  // Cycles of 99 good + 1 failed (100 ms) + 50 ms backoff: 150 ms each; the 7th failure comes
  // at 1 s.
  EXPECT_EQ(got.Errors(), 7u);
  EXPECT_EQ(got.Executed(), 7u * 99);
}

TEST_P(LoadRunnerTest, FatalErrorStopsTheRunAndIsKept) {
  db::NoopDriver driver({.fixed_latency = kMillisecond,
                         .fail_every = 5,
                         .injected_error = {db::ErrorClass::kFatal, "42P01", "no such table"}},
                        clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ASSERT_TRUE(runner.Connect(1).ok());
  runner.StartClosedLoop(0, clock_.Now() + 10 * kSecond);
  runner.Wait();
  ASSERT_TRUE(runner.fatal_error().has_value());
  EXPECT_EQ(runner.fatal_error()->code, "42P01");
  EXPECT_EQ(DrainAll().Executed(), 4u);
}

TEST_P(LoadRunnerTest, ConnectFailureIsReturnedBeforeAnyLoad) {
  RefusingDriver driver;
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  const absl::Status status = runner.Connect(3);
  EXPECT_THAT(status.message(), testing::HasSubstr("password authentication failed"));
  runner.Wait();
  EXPECT_EQ(DrainAll().Executed(), 0u);
}

TEST_P(LoadRunnerTest, StopEndsARunEarlyAndArrivalsAfterItAreNotCountedAsMissed) {
  db::NoopDriver driver({.fixed_latency = 100 * kMicrosecond}, clock_);
  LoadRunner runner(driver, scenario_, recorder_, clock_, Engine());
  ClockThread control(clock_);
  const Nanos start = clock_.Now();
  ASSERT_TRUE(runner.Connect(2).ok());
  runner.StartOpenLoop(Uniform(1'000), start + 100 * kSecond);
  clock_.SleepUntil(start + kSecond);
  runner.Stop();
  clock_.DetachThread();
  runner.Wait();
  clock_.AttachThread();
  EXPECT_NEAR(static_cast<double>(recorder_.Drain().Executed()), 1'000.0, 2.0);
  EXPECT_LE(runner.not_started(), 2u);
  EXPECT_LT(clock_.Now(), start + kSecond + 100 * kMillisecond);
}

INSTANTIATE_TEST_SUITE_P(Engines, LoadRunnerTest, testing::Values(0, 2),
                         [](const testing::TestParamInfo<int>& info) {
                           return info.param == 0 ? std::string("Threads")
                                                  : std::string("EventLoops");
                         });

}  // namespace
}  // namespace dbload
