#include "agent/run_executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "coordinator/planner.h"
#include "db/noop_driver.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/stub_session.h"
#include "workload/oltp.h"

namespace dbload {
namespace {

v1::Plan OpenPlan(double rate, Nanos duration) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(4);
  plan.mutable_load()->mutable_open()->set_rate(rate);
  plan.mutable_stop()->set_duration_ns(duration);
  plan.set_seed(3);
  return plan;
}

// The shares of `plan` split over `agents` agents, as each agent reads its assignment: the
// coordinator's split (SplitPlan) turned into RunShares as the agent link does.
std::vector<RunShare> SharesOfAgents(const v1::Plan& plan, int agents) {
  std::vector<RunShare> shares;
  for (const AgentShare& split : SplitPlan(plan, std::vector<double>(agents, 1.0))) {
    RunShare share;
    share.rate = split.rate;
    share.first_slot = split.first_slot;
    share.total_slots = split.total_slots;
    share.phase = split.phase;
    shares.push_back(share);
  }
  return shares;
}

// `count` arrivals of each share's pacer, all started at the same instant (the worst case: agents
// whose runs start together).
std::vector<std::vector<Nanos>> ArrivalsOf(const v1::Plan& plan,
                                           const std::vector<RunShare>& shares, int count,
                                           uint32_t stage = 0) {
  std::vector<std::vector<Nanos>> arrivals;
  for (const RunShare& share : shares) {
    std::unique_ptr<Pacer> pacer =
        MakePacerFactory(plan.load().open(), *share.rate, share, plan.seed(), stage)(kSecond);
    std::vector<Nanos>& times = arrivals.emplace_back();
    for (int i = 0; i < count; ++i) times.push_back(pacer->Next());
  }
  return arrivals;
}

struct MergedStats {
  double cv = 0;                   // of the merged stream's gaps
  int coincident = 0;              // gaps of at most 1 ns
  double expected_coincident = 0;  // what a Poisson stream of that rate would have
};

MergedStats MergeAndMeasure(const std::vector<std::vector<Nanos>>& arrivals) {
  std::vector<Nanos> merged;
  for (const auto& times : arrivals) merged.insert(merged.end(), times.begin(), times.end());
  std::sort(merged.begin(), merged.end());
  // Only up to the first stream's end is every agent still firing.
  Nanos end = merged.back();
  for (const auto& times : arrivals) end = std::min(end, times.back());
  merged.erase(std::upper_bound(merged.begin(), merged.end(), end), merged.end());
  MergedStats stats;
  double sum = 0, sum_squares = 0;
  for (size_t i = 1; i < merged.size(); ++i) {
    const double gap = static_cast<double>(merged[i] - merged[i - 1]);
    sum += gap;
    sum_squares += gap * gap;
    if (gap <= 1) ++stats.coincident;
  }
  const double n = static_cast<double>(merged.size() - 1);
  const double mean = sum / n;
  stats.cv = std::sqrt(sum_squares / n - mean * mean) / mean;
  // P(gap <= 1 ns) = 1 - exp(-1 ns / mean gap) for exponential gaps.
  stats.expected_coincident = n * (1 - std::exp(-1.0 / mean));
  return stats;
}

v1::Plan PoissonPlan(double rate, uint64_t seed) {
  v1::Plan plan = OpenPlan(rate, 10 * kSecond);
  plan.mutable_load()->mutable_open()->set_arrival(v1::OpenLoad::POISSON);
  plan.set_seed(seed);
  return plan;
}

TEST(ArrivalStreamsTest, ThreeAgentsPoissonStreamsMergeIntoOnePoissonStream) {
  // 3 agents at 1,000/s each: 30,000 merged arrivals.
  const v1::Plan plan = PoissonPlan(3'000, 42);
  const std::vector<RunShare> shares = SharesOfAgents(plan, 3);
  ASSERT_EQ(shares.size(), 3u);
  const std::vector<std::vector<Nanos>> arrivals = ArrivalsOf(plan, shares, 10'000);
  const MergedStats stats = MergeAndMeasure(arrivals);
  std::cout << "merged 3 agents: CV of gaps " << stats.cv << ", coincident arrivals (<= 1 ns) "
            << stats.coincident << " (a Poisson stream: " << stats.expected_coincident << ")\n";
  // A Poisson stream's gaps are exponential: CV 1 (its sampling error at 30,000 gaps is under 1 %).
  // Identical agents would give CV sqrt(5) (bursts of 3: gaps 0, 0, g) and 20,000 coincident
  // arrivals.
  EXPECT_NEAR(stats.cv, 1.0, 0.03);
  // Chance allows about 0.1 here (n gaps x P(gap <= 1 ns)).
  EXPECT_LE(stats.coincident, 1);
  // Every agent's stream differs from every other's, gap by gap.
  for (size_t a = 0; a < arrivals.size(); ++a) {
    for (size_t b = a + 1; b < arrivals.size(); ++b) {
      int equal = 0;
      for (size_t i = 0; i < arrivals[a].size(); ++i) equal += arrivals[a][i] == arrivals[b][i];
      EXPECT_EQ(equal, 0) << "agents " << a << " and " << b;
    }
  }
}

TEST(ArrivalStreamsTest, ArrivalsAreReproducibleAndDifferPerStageAndSeed) {
  const v1::Plan plan = PoissonPlan(3'000, 42);
  const std::vector<RunShare> shares = SharesOfAgents(plan, 3);
  // The same run seed and split: the same streams.
  EXPECT_EQ(ArrivalsOf(plan, shares, 1'000), ArrivalsOf(plan, shares, 1'000));
  // Each stage's stream is its own, and another seed gives other streams.
  const auto first_stage = ArrivalsOf(plan, shares, 1'000, 0);
  const auto second_stage = ArrivalsOf(plan, shares, 1'000, 1);
  const auto other_seed = ArrivalsOf(PoissonPlan(3'000, 43), shares, 1'000);
  for (size_t agent = 0; agent < shares.size(); ++agent) {
    EXPECT_NE(first_stage[agent], second_stage[agent]) << agent;
    EXPECT_NE(first_stage[agent], other_seed[agent]) << agent;
  }
  // An agent's stream depends on its place in the split, not on how many agents there are.
  EXPECT_EQ(ArrivalSeed(42, shares[1], 0), ArrivalSeed(42, shares[1], 0));
  EXPECT_NE(ArrivalSeed(42, shares[0], 0), ArrivalSeed(42, shares[1], 0));
}

TEST(ArrivalStreamsTest, UniformArrivalsOfThreeAgentsArePhaseShifted) {
  const v1::Plan plan = OpenPlan(3'000, 10 * kSecond);  // uniform, 1,000/s per agent
  const std::vector<RunShare> shares = SharesOfAgents(plan, 3);
  ASSERT_EQ(shares.size(), 3u);
  const std::vector<std::vector<Nanos>> arrivals = ArrivalsOf(plan, shares, 1'000);
  // Agent i fires i/3 of its 1 ms period after agent 0: the merged stream is evenly spaced.
  for (size_t agent = 0; agent < arrivals.size(); ++agent) {
    EXPECT_NEAR(static_cast<double>(arrivals[agent][0] - kSecond),
                static_cast<double>(agent) * kMillisecond / 3.0, 1)
        << agent;
  }
  std::vector<Nanos> merged;
  for (const auto& times : arrivals) merged.insert(merged.end(), times.begin(), times.end());
  std::sort(merged.begin(), merged.end());
  double worst = 0;  // the gap farthest from a third of a period
  for (size_t i = 1; i < merged.size(); ++i) {
    worst = std::max(worst,
                     std::abs(static_cast<double>(merged[i] - merged[i - 1]) - kMillisecond / 3.0));
  }
  EXPECT_LE(worst, 1.0);
}

class RunExecutorTest : public testing::Test {
 protected:
  // Runs on simulated time; `during` is called at each interval with the control mailbox.
  ExecutionResult Execute(const v1::Plan& plan, const RunShare& share,
                          std::function<void(int interval, RunControl&)> during = nullptr) {
    db::NoopDriver driver({.fixed_latency = 100 * kMicrosecond}, clock_);
    auto workload = MakeWorkload("oltp", {});
    auto scenario = *(*workload)->MakeScenario("point_select");
    RunControl control;
    int interval = 0;
    ExecutionHooks hooks{.on_interval =
                             [&](const IntervalOutput& out) {
                               per_interval_.push_back(out.snapshot.Executed());
                               if (during) during(++interval, control);
                             },
                         .control = &control};
    absl::StatusOr<ExecutionResult> result = ExecuteRun(plan, share, driver, *scenario, clock_, hooks);
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  SimulatedClock clock_;
  std::vector<uint64_t> per_interval_;
};

TEST_F(RunExecutorTest, ShareOverridesThePlansRate) {
  RunShare share;
  share.rate = 250;
  const ExecutionResult result = Execute(OpenPlan(1'000, 2 * kSecond), share);
  EXPECT_EQ(result.end_reason, "duration");
  uint64_t total = 0;
  for (uint64_t n : per_interval_) total += n;
  EXPECT_EQ(total, 500u);
}

TEST_F(RunExecutorTest, RateChangesThroughTheControlMailbox) {
  const ExecutionResult result =
      Execute(OpenPlan(1'000, 3 * kSecond), {}, [](int interval, RunControl& control) {
        if (interval == 1) control.SetRate(2'000);
      });
  ASSERT_GE(per_interval_.size(), 3u);
  EXPECT_NEAR(static_cast<double>(per_interval_[0]), 1'000, 2);
  // Picked up within a poll slice (100 ms) of the first interval's end.
  EXPECT_NEAR(static_cast<double>(per_interval_[2]), 2'000, 2);
  EXPECT_EQ(result.end_reason, "duration");
}

TEST_F(RunExecutorTest, StopThroughTheControlMailboxEndsTheRunWithItsReason) {
  const ExecutionResult result =
      Execute(OpenPlan(1'000, 60 * kSecond), {}, [](int interval, RunControl& control) {
        if (interval == 2) control.Stop("operator asked");
      });
  EXPECT_EQ(result.end_reason, "stopped: operator asked");
  EXPECT_LT(result.measured_s, 2.5);
}

TEST_F(RunExecutorTest, ClientsChangeThroughTheControlMailbox) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.mutable_load()->mutable_closed()->set_clients(1);
  plan.mutable_stop()->set_duration_ns(3 * kSecond);
  Execute(plan, {}, [](int interval, RunControl& control) {
    if (interval == 1) control.SetClients(3);
  });
  ASSERT_GE(per_interval_.size(), 3u);
  // 100 µs per transaction: 10,000/s per client.
  EXPECT_NEAR(static_cast<double>(per_interval_[0]), 10'000, 2);
  EXPECT_NEAR(static_cast<double>(per_interval_[2]), 30'000, 30);
}

// Sessions of the noop kind (100 µs a query) that take `close_time` to close (simulated) and
// note when their closing began.
class ClosingDriver final : public db::Driver {
 public:
  ClosingDriver(Clock& clock, Nanos close_time) : clock_(clock), close_time_(close_time) {}
  db::Dialect dialect() const override { return db::Dialect::kNoop; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    return std::make_unique<Session>(*this);
  }
  std::vector<Nanos> closes() {
    std::lock_guard lock(mu_);
    return closes_;
  }
  std::atomic<uint64_t> executes{0};

 private:
  struct Session final : StubSession {
    explicit Session(ClosingDriver& d) : d(d) {}
    ~Session() override {
      const Nanos now = d.clock_.Now();
      {
        std::lock_guard lock(d.mu_);
        d.closes_.push_back(now);
      }
      if (d.close_time_ > 0) d.clock_.SleepUntil(now + d.close_time_);
    }
    db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override {
      ++d.executes;
      d.clock_.SleepUntil(d.clock_.Now() + 100 * kMicrosecond);
      return {.rows = 1};
    }
    ClosingDriver& d;
  };
  Clock& clock_;
  const Nanos close_time_;
  std::mutex mu_;
  std::vector<Nanos> closes_;
};

// 10,000 sessions took PostgreSQL 7 s to close, and the run's duration and its empty intervals
// counted them (bench/RESULTS.md 32b).
TEST_F(RunExecutorTest, ClosingTheSessionsIsNotPartOfTheRun) {
  ClosingDriver driver(clock_, 3 * kSecond);
  auto workload = MakeWorkload("oltp", {});
  auto scenario = *(*workload)->MakeScenario("point_select");
  std::vector<uint64_t> intervals;
  ExecutionHooks hooks{.on_interval = [&](const IntervalOutput& out) {
    intervals.push_back(out.snapshot.Executed());
  }};
  const Nanos start = clock_.Now();
  absl::StatusOr<ExecutionResult> result =
      ExecuteRun(OpenPlan(1'000, 2 * kSecond), {}, driver, *scenario, clock_, hooks);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->end_reason, "duration");
  EXPECT_DOUBLE_EQ(result->measured_s, 2.0);
  EXPECT_EQ(intervals.size(), 2u);
  EXPECT_GE(clock_.Now(), start + 4900 * kMillisecond);  // the sessions did take their 3 s
}

// With on_load_over the sessions stay open after the load until CloseSessions (here at once),
// or at most kSessionHoldLimit (here none comes); the run's figures end with its load.
TEST_F(RunExecutorTest, AfterTheLoadTheSessionsWaitForCloseSessionsOrTheHoldLimit) {
  auto workload = MakeWorkload("oltp", {});
  auto scenario = *(*workload)->MakeScenario("point_select");
  for (const bool answered : {true, false}) {
    SCOPED_TRACE(answered ? "CloseSessions" : "no CloseSessions");
    ClosingDriver driver(clock_, 0);
    RunControl control;
    Nanos load_over_at = -1;
    ExecutionHooks hooks{.control = &control};
    hooks.on_load_over = [&] {
      load_over_at = clock_.Now();
      if (answered) control.CloseSessions();
    };
    absl::StatusOr<ExecutionResult> result =
        ExecuteRun(OpenPlan(1'000, kSecond), {}, driver, *scenario, clock_, hooks);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_DOUBLE_EQ(result->measured_s, 1.0);
    ASSERT_GE(load_over_at, 0);
    const Nanos closed_at = load_over_at + (answered ? 0 : kSessionHoldLimit);
    EXPECT_THAT(driver.closes(),
                testing::Each(testing::AllOf(testing::Ge(closed_at),
                                             testing::Le(closed_at + 10 * kMillisecond))));
    EXPECT_EQ(driver.closes().size(), 4u);
  }
}

// With on_sessions_ready the load waits for StartLoad, time standing still meanwhile as while
// the sessions connect; a stop during the wait ends the run there, with no load.
TEST_F(RunExecutorTest, TheLoadWaitsForStartLoadAndAStopMeanwhileEndsTheRunUnloaded) {
  auto workload = MakeWorkload("oltp", {});
  auto scenario = *(*workload)->MakeScenario("point_select");
  for (const bool started : {true, false}) {
    SCOPED_TRACE(started ? "StartLoad" : "Stop");
    ClosingDriver driver(clock_, 0);
    RunControl control;
    Nanos ready_at = -1;
    std::thread answer;
    ExecutionHooks hooks{.control = &control};
    uint64_t executed = 0;
    hooks.on_interval = [&](const IntervalOutput& out) { executed += out.snapshot.Executed(); };
    hooks.on_sessions_ready = [&] {
      ready_at = clock_.Now();
      answer = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        EXPECT_EQ(driver.executes.load(), 0u);  // nothing ran while it waited
        if (started) {
          control.StartLoad();
        } else {
          control.Stop("by the test");
        }
      });
    };
    absl::StatusOr<ExecutionResult> result =
        ExecuteRun(OpenPlan(1'000, kSecond), {}, driver, *scenario, clock_, hooks);
    answer.join();
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_GE(ready_at, 0);
    EXPECT_EQ(driver.closes().size(), 4u);
    if (started) {
      EXPECT_EQ(result->end_reason, "duration");
      EXPECT_DOUBLE_EQ(result->measured_s, 1.0);
      EXPECT_NEAR(static_cast<double>(executed), 1'000, 30);
      // The load's second began where the sessions were ready: the wait took no run time.
      EXPECT_THAT(driver.closes(), testing::Each(testing::Le(ready_at + kSecond + kMillisecond)));
    } else {
      EXPECT_EQ(result->end_reason, "stopped: by the test");
      EXPECT_EQ(result->end_reason_kind, v1::END_REASON_STOPPED);
      EXPECT_EQ(result->measured_s, 0);
      EXPECT_EQ(driver.executes.load(), 0u);
    }
  }
}

TEST_F(RunExecutorTest, ZeroShareRunsNothingButEndsOnTime) {
  RunShare share;
  share.rate = 0;
  const ExecutionResult result = Execute(OpenPlan(1'000, 2 * kSecond), share);
  uint64_t total = 0;
  for (uint64_t n : per_interval_) total += n;
  EXPECT_EQ(total, 0u);
  EXPECT_EQ(result.end_reason, "duration");
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

struct StagedInterval {
  uint32_t stage;
  double length_s;
  uint32_t clients;
  double target_rate;
  uint64_t executed;
  bool warmup;
  uint32_t knee_step;
};

class StagedRunTest : public testing::Test {
 protected:
  ExecutionResult Execute(const v1::Plan& plan, const RunShare& share = {},
                          std::function<void(const IntervalOutput&, RunControl&)> during = nullptr) {
    db::NoopDriver driver({.fixed_latency = 10 * kMillisecond}, clock_);
    auto workload = MakeWorkload("oltp", {});
    auto scenario = *(*workload)->MakeScenario("point_select");
    RunControl control;
    ExecutionHooks hooks{.on_interval =
                             [&](const IntervalOutput& out) {
                               intervals_.push_back({out.stage, out.length_s, out.clients,
                                                     out.target_rate, out.snapshot.Executed(),
                                                     out.warmup, out.knee_step});
                               if (during) during(out, control);
                             },
                         .control = &control};
    absl::StatusOr<ExecutionResult> result =
        ExecuteRun(plan, share, driver, *scenario, clock_, hooks);
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  SimulatedClock clock_;
  std::vector<StagedInterval> intervals_;
};

TEST_F(StagedRunTest, StaircaseAddsAClientEachStepAndIntervalsStopAtStageBoundaries) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(3);
  plan.mutable_load()->mutable_closed();
  plan.set_seed(5);
  v1::Stage& climb = *plan.add_stages();  // 1, 2, 3 clients, one second each
  climb.mutable_clients()->set_shape(v1::Level::STAIRCASE);
  climb.mutable_clients()->set_from(1);
  climb.mutable_clients()->set_step(1);
  climb.mutable_clients()->set_every_ns(kSecond);
  climb.mutable_clients()->set_max(3);
  v1::Stage& hold = *plan.add_stages();
  hold.set_duration_ns(1500 * kMillisecond);
  hold.mutable_clients()->set_shape(v1::Level::CONSTANT);
  hold.mutable_clients()->set_from(2);

  const ExecutionResult result = Execute(plan);
  EXPECT_EQ(result.end_reason, "duration");
  EXPECT_DOUBLE_EQ(result.measured_s, 4.5);
  ASSERT_EQ(intervals_.size(), 5u);
  // Each client runs 10 ms transactions back to back: 100 per second per client.
  const std::vector<uint32_t> stages = {1, 1, 1, 2, 2};
  const std::vector<uint32_t> clients = {1, 2, 3, 2, 2};
  const std::vector<double> lengths = {1, 1, 1, 1, 0.5};
  for (size_t i = 0; i < intervals_.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(intervals_[i].stage, stages[i]);
    EXPECT_DOUBLE_EQ(intervals_[i].length_s, lengths[i]);
    EXPECT_EQ(intervals_[i].clients, clients[i]);
    // A transaction in flight across a boundary counts where it ends: one per client at most;
    // and a client retired at a step down may start one more at the very instant of the step,
    // before it sees the retirement (threads racing at one simulated instant; seen under TSan).
    EXPECT_NEAR(static_cast<double>(intervals_[i].executed), 100.0 * clients[i] * lengths[i], 4);
  }
}

TEST_F(StagedRunTest, OpenLoopStagesThenALastStageOfExactlyItsQueryCount) {
  v1::Plan plan = OpenPlan(1, 0);
  plan.mutable_load()->mutable_open()->set_rate(0);
  plan.clear_stop();
  plan.set_warmup_ns(kSecond);
  v1::Stage& first = *plan.add_stages();
  first.set_duration_ns(2 * kSecond);
  first.mutable_rate()->set_shape(v1::Level::CONSTANT);
  first.mutable_rate()->set_from(200);
  v1::Stage& last = *plan.add_stages();
  last.set_queries(300);
  last.mutable_rate()->set_shape(v1::Level::CONSTANT);
  last.mutable_rate()->set_from(400);
  RunShare share;
  share.stage_queries = {0, 300};

  const ExecutionResult result = Execute(plan, share);
  EXPECT_EQ(result.end_reason, "queries");
  uint64_t warmup = 0, first_stage = 0, last_stage = 0;
  for (const StagedInterval& interval : intervals_) {
    if (interval.warmup) {
      warmup += interval.executed;
      EXPECT_EQ(interval.stage, 1u);
    } else if (interval.stage == 1) {
      first_stage += interval.executed;
      EXPECT_DOUBLE_EQ(interval.target_rate, 200);
    } else {
      last_stage += interval.executed;
      EXPECT_DOUBLE_EQ(interval.target_rate, 400);
    }
  }
  EXPECT_NEAR(static_cast<double>(warmup), 200, 2);
  EXPECT_NEAR(static_cast<double>(first_stage), 400, 2);
  EXPECT_EQ(last_stage, 300u);
  EXPECT_NEAR(result.measured_s, 2.75, 0.02);  // 2 s, then 300 at 400/s
}

TEST_F(StagedRunTest, KneeStageFollowsTheCoordinatorsStepsAndEndsTheRunWhenTold) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(8);
  plan.mutable_load()->mutable_closed();
  plan.set_seed(5);
  v1::KneeSearch& knee = *plan.add_stages()->mutable_knee();
  knee.set_from(2);
  knee.set_step(2);
  knee.set_max(8);
  knee.set_every_ns(2 * kSecond);
  knee.set_p99_ns(kSecond);
  // The "coordinator": after two intervals of a step, the next step at 2 clients more; after
  // step 3, the end.
  int seen = 0;
  const ExecutionResult result =
      Execute(plan, {}, [&seen](const IntervalOutput& out, RunControl& control) {
        if (out.knee_step == 0 || ++seen % 2 != 0) return;
        if (out.knee_step < 3) {
          control.SetKneeStep(out.knee_step + 1, 2.0 * (out.knee_step + 1));
        } else {
          control.EndKnee();
        }
      });
  EXPECT_EQ(result.end_reason, "knee");
  // Steps of 2, 4 and 6 clients, each cut where the step changed.
  std::vector<std::pair<uint32_t, uint32_t>> steps;  // (step, clients) per interval
  for (const StagedInterval& interval : intervals_) {
    steps.emplace_back(interval.knee_step, interval.clients);
    EXPECT_EQ(interval.stage, 1u);
  }
  const std::vector<std::pair<uint32_t, uint32_t>> expected = {
      {1, 2}, {1, 2}, {2, 4}, {2, 4}, {3, 6}, {3, 6}};
  ASSERT_GE(steps.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(steps[i], expected[i]) << i;
}

TEST_F(StagedRunTest, AStageThatEndsOnItsCountHandsItsSessionsToTheNext) {
  for (const bool open : {true, false}) {
    SCOPED_TRACE(open ? "open" : "closed");
    intervals_.clear();
    v1::Plan plan;
    plan.mutable_target()->set_driver("noop");
    plan.mutable_target()->set_pool(4);
    plan.set_seed(9);
    v1::Stage& counted = *plan.add_stages();
    counted.set_queries(250);
    v1::Stage& timed = *plan.add_stages();
    timed.set_duration_ns(kSecond);
    if (open) {
      plan.mutable_load()->mutable_open();
      counted.mutable_rate()->set_shape(v1::Level::CONSTANT);
      counted.mutable_rate()->set_from(400);
      timed.mutable_rate()->set_shape(v1::Level::CONSTANT);
      timed.mutable_rate()->set_from(200);
    } else {
      plan.mutable_load()->mutable_closed();
      counted.mutable_clients()->set_shape(v1::Level::CONSTANT);
      counted.mutable_clients()->set_from(4);
      timed.mutable_clients()->set_shape(v1::Level::CONSTANT);
      timed.mutable_clients()->set_from(2);
    }
    RunShare share;
    share.stage_queries = {250, 0};
    const ExecutionResult result = Execute(plan, share);
    EXPECT_EQ(result.end_reason, "duration");
    uint64_t executed[2] = {0, 0};
    for (const StagedInterval& interval : intervals_) executed[interval.stage - 1] += interval.executed;
    EXPECT_EQ(executed[0], 250u);  // exactly its count
    // 10 ms transactions: 200/s for a second (open), or 2 clients back to back (closed).
    EXPECT_NEAR(static_cast<double>(executed[1]), 200, 4);
    // The count took 250/400 s (open) or 250/(4 x 100) s (closed), then one second.
    EXPECT_NEAR(result.measured_s, 1.625, 0.15);
  }
}

}  // namespace
}  // namespace dbload
