// One run's controller on its own: fake agents are AgentConns in a registry (their outboxes
// show what the run sends), time is simulated, and no metrics or state dir is given; the row
// check counts with a gated fake, and the probe, where a test gives one, reads what it scripts.
#include "coordinator/run_controller.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interval/interval_snapshot.h"
#include "tests/unit/gated_row_counter.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;
using Kind = v1::CoordinatorMessage::KindCase;

// The database's readings, handed to the probe one at a time by the test: each Read waits for
// the next answer (at most 10 s, then fails, as it does once closed), so the test knows which
// reading the run has seen.
class ScriptedReadings {
 public:
  void Answer(double commits, double sessions) {
    std::lock_guard lock(mu_);
    answers_.push_back({commits, sessions});
    changed_.notify_all();
  }
  // Until the probe has taken `count` readings in all.
  bool WaitReadings(int count) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return read_ >= count; });
  }
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    changed_.notify_all();
  }

  class Source final : public ProbeSource {
   public:
    explicit Source(std::shared_ptr<ScriptedReadings> script) : script_(std::move(script)) {}
    std::string name() const override { return "postgresql"; }
    absl::Status Read(std::vector<ProbeValue>& out) override {
      ScriptedReadings& s = *script_;
      std::unique_lock lock(s.mu_);
      if (!s.changed_.wait_for(lock, std::chrono::seconds(10),
                               [&] { return s.closed_ || !s.answers_.empty(); }) ||
          s.closed_) {
        return absl::UnavailableError("no answer");
      }
      const auto [commits, sessions] = s.answers_.front();
      s.answers_.erase(s.answers_.begin());
      out.push_back({.source = "postgresql", .name = "xact_commit", .value = commits});
      out.push_back(
          {.source = "postgresql", .name = "dbload_sessions", .value = sessions, .gauge = true});
      return absl::OkStatus();
    }

   private:
    std::shared_ptr<ScriptedReadings> script_;
  };

  // A probe reading `script` on the run's clock, every hour unless asked sooner.
  static ProbeSession Probe(Clock& clock, std::shared_ptr<ScriptedReadings> script) {
    auto opener = [script]() -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
      std::vector<std::unique_ptr<ProbeSource>> sources;
      sources.push_back(std::make_unique<Source>(script));
      return sources;
    };
    auto on_reading = [script] {
      std::lock_guard lock(script->mu_);
      ++script->read_;
      script->changed_.notify_all();
    };
    return ProbeSession(
        std::make_unique<DatabaseProbe>(
            clock, opener,
            DatabaseProbe::Options{.interval = 3600 * kSecond, .on_reading = on_reading}),
        nullptr);
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::pair<double, double>> answers_;
  int read_ = 0;  // readings taken, failures included
  bool closed_ = false;
};

class RunControllerTest : public ::testing::Test {
 protected:
  RunControllerTest() : clock_(100 * kSecond), registry_(mu_, nullptr), saver_({}, {}) {}

  std::shared_ptr<AgentConn> Connect(const std::string& name) {
    auto agent = std::make_shared<AgentConn>();
    agent->hello.set_name(name);
    agent->hello.set_cores(2);
    EXPECT_TRUE(registry_.Add(name, agent, clock_.Now()).ok());
    return agent;
  }

  // A closed loop of `clients` over the named agents, as Submit would launch it.
  // With a probe, the target is PostgreSQL's (whose commits the report reconciles).
  std::unique_ptr<RunController> Launch(uint32_t clients, const std::vector<std::string>& names,
                                        RowCheck rows = RowCheck(),
                                        ProbeSession probe = ProbeSession()) {
    RunLaunch launch{.id = "run-1-aa", .query_types = {"select"}, .started_at = "now"};
    launch.plan.set_name("test");
    launch.plan.mutable_target()->set_driver(probe.active() ? "postgresql" : "noop");
    launch.plan.mutable_target()->set_database("bench");
    launch.plan.mutable_load()->mutable_closed()->set_clients(clients);
    launch.plan.mutable_stop()->set_duration_ns(60 * kSecond);
    for (const std::string& name : names) {
      launch.names.push_back(name);
      launch.agents.push_back(registry_.agents().at(name));
    }
    launch.shares = SplitPlan(launch.plan, std::vector<double>(names.size(), 1));
    launch.rows = std::move(rows);
    return std::make_unique<RunController>(env_, std::move(launch), std::move(probe));
  }

  // A run of 2 clients on agent "a" whose probe reads what `script` answers: its first reading
  // (`commits`, `sessions`) comes `read_after` the launch, and the load `load_after` that.
  std::unique_ptr<RunController> LaunchAfterAReading(
      const std::shared_ptr<ScriptedReadings>& script, double commits, double sessions,
      Nanos read_after = 0, Nanos load_after = 0) {
    std::unique_ptr<RunController> run =
        Launch(2, {"a"}, RowCheck(), ScriptedReadings::Probe(clock_, script));
    EXPECT_TRUE(registry_.agents().at("a")->outbox.empty()) << "the load waits for the reading";
    clock_.Advance(read_after);
    script->Answer(commits, sessions);
    EXPECT_TRUE(script->WaitReadings(1));
    clock_.Advance(load_after);
    run->OnProbeReading();
    EXPECT_EQ(Kinds(*registry_.agents().at("a")), std::vector<Kind>{Kind::kAssign});
    return run;
  }

  // One second of an agent's run: `executed` transactions of 1 ms.
  static v1::AgentReport Second(uint64_t sequence, uint64_t executed) {
    IntervalSnapshot snapshot;
    snapshot.query_types.resize(1);
    for (uint64_t i = 0; i < executed; ++i) {
      snapshot.query_types[0].response_time.Record(kMillisecond);
      snapshot.query_types[0].service_time.Record(kMillisecond);
    }
    v1::AgentReport report;
    report.set_run_id("run-1-aa");
    report.set_sequence(sequence);
    report.set_interval_s(1);
    report.set_elapsed_s(static_cast<double>(sequence));
    SnapshotToReport(snapshot, &report);
    return report;
  }

  // Second(sequence, executed) reported at `elapsed_s` into the run.
  static v1::AgentReport SecondAt(uint64_t sequence, uint64_t executed, double elapsed_s) {
    v1::AgentReport report = Second(sequence, executed);
    report.set_elapsed_s(elapsed_s);
    return report;
  }

  // The final report that follows one reaching the plan's end (60 s): what was in flight then,
  // one transaction completed in the next 2 ms.
  static v1::AgentReport FinalAfterTheEnd(uint64_t sequence) {
    v1::AgentReport report = SecondAt(sequence, 1, 60.002);
    report.set_interval_s(0.002);
    report.set_final(true);
    report.set_end_reason("duration");
    return report;
  }

  // The intervals the run published since `next`.
  static std::vector<v1::IntervalSample> Intervals(const RunController& run, uint64_t& next) {
    std::vector<v1::IntervalSample> samples;
    for (const v1::RunProgress& progress : run.progress().Since(next)) {
      if (progress.has_interval()) samples.push_back(progress.interval());
    }
    return samples;
  }

  static std::vector<Kind> Kinds(const AgentConn& agent) {
    std::vector<Kind> kinds;
    for (const v1::CoordinatorMessage& message : agent.outbox) kinds.push_back(message.kind_case());
    return kinds;
  }

  SimulatedClock clock_;
  std::mutex mu_;
  AgentRegistry registry_;
  RunSaver saver_;
  std::vector<std::string> logged_;
  std::vector<std::unique_ptr<DatabaseProbe>> retired_;
  int progress_pushed_ = 0;
  RunEnvironment env_{.clock = clock_,
                      .agents = registry_,
                      .saver = saver_,
                      .metrics = nullptr,
                      .log = [this](const std::string& line) { logged_.push_back(line); },
                      .dead_man_timeout = 5 * kSecond,
                      .stop_grace = 10 * kSecond,
                      .progress_pushed = [this] { ++progress_pushed_; },
                      .retired_probes = &retired_};
};

TEST_F(RunControllerTest, WithoutAProbeTheAssignmentsGoOutAtOnce) {
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(5, {"a", "b"});
  EXPECT_FALSE(run->done());
  EXPECT_EQ(run->participants(), (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(Kinds(*a), std::vector<Kind>{Kind::kAssign});
  ASSERT_EQ(Kinds(*b), std::vector<Kind>{Kind::kAssign});
  EXPECT_EQ(a->outbox[0].assign().load().clients() + b->outbox[0].assign().load().clients(), 5u);
  EXPECT_EQ(a->outbox[0].assign().dead_man_timeout_ns(), 5 * kSecond);
  EXPECT_EQ(a->run_id, "run-1-aa");
  EXPECT_EQ(b->participant, "b");
}

TEST_F(RunControllerTest, ALostAgentsClientsMoveToTheOthersAndTheRunIsDegraded) {
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(4, {"a", "b"});
  a->outbox.clear();
  b->run_id.clear();  // as the registry does when an agent goes
  run->OnAgentGone("b", "silent for 3.0s");
  ASSERT_EQ(Kinds(*a), std::vector<Kind>{Kind::kChange});
  EXPECT_EQ(a->outbox[0].change().run_id(), "run-1-aa");
  EXPECT_EQ(a->outbox[0].change().load().clients(), 4u);
  EXPECT_EQ(a->outbox[0].change().extra_slot_count(), 2u);
  const v1::RunReport report = run->Report();
  EXPECT_EQ(report.state(), "running");
  EXPECT_TRUE(report.degraded());
  ASSERT_EQ(report.lost_agents_size(), 1);
  EXPECT_EQ(report.lost_agents(0).name(), "b");
}

TEST_F(RunControllerTest, AStoppedRunEndsAfterTheGraceWithoutFinalReports) {
  auto a = Connect("a");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(2, {"a"});
  a->outbox.clear();
  run->Stop(v1::END_REASON_STOPPED, "stop requested");
  EXPECT_TRUE(run->stopping());
  ASSERT_EQ(Kinds(*a), std::vector<Kind>{Kind::kStop});
  EXPECT_EQ(a->outbox[0].stop().reason(), "stop requested");
  clock_.Advance(5 * kSecond);
  run->Tick(clock_.Now());
  EXPECT_FALSE(run->done());
  clock_.Advance(5 * kSecond);
  run->Tick(clock_.Now());
  ASSERT_TRUE(run->done());
  const v1::RunReport report = run->Report();
  EXPECT_EQ(report.state(), "stopped");
  EXPECT_THAT(report.end_reason(), HasSubstr("stopped; degraded: agent a lost (no final report"));
  EXPECT_GT(progress_pushed_, 0);
  uint64_t next = 0;
  const std::vector<v1::RunProgress> progress = run->progress().Since(next);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().state(), "interrupted");
}

// b's reports come 20 ms after each of our ticks (its start, plus the network): each interval
// waits for it, so every second holds one report of each agent and the rate is the run's.
TEST_F(RunControllerTest, AnIntervalWaitsForAReportThatArrivesJustAfterTheTick) {
  env_.interval_wait = 500 * kMillisecond;
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(4, {"a", "b"});
  uint64_t next = 0;
  (void)Intervals(*run, next);
  for (uint64_t second = 1; second <= 3; ++second) {
    clock_.Advance(kSecond - 30 * kMillisecond);
    run->OnReport("a", *a, Second(second, 100));
    clock_.Advance(10 * kMillisecond);
    run->Tick(clock_.Now());
    EXPECT_THAT(Intervals(*run, next), ::testing::IsEmpty()) << "second " << second;
    clock_.Advance(20 * kMillisecond);
    run->OnReport("b", *b, Second(second, 300));
    const std::vector<v1::IntervalSample> closed = Intervals(*run, next);
    ASSERT_EQ(closed.size(), 1u) << "second " << second;
    EXPECT_EQ(closed[0].executed(), 400u);
    EXPECT_DOUBLE_EQ(closed[0].achieved_rate(), 400);
  }
}

// The first interval waits for every agent's first report (its pool connects first); later, an
// agent that sends nothing holds an interval for interval_wait, no longer: then it closes with
// what the others sent.
TEST_F(RunControllerTest, ASilentAgentHoldsTheIntervalOnlyForTheWait) {
  env_.interval_wait = 500 * kMillisecond;
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(4, {"a", "b"});
  uint64_t next = 0;
  (void)Intervals(*run, next);
  clock_.Advance(kSecond);
  run->OnReport("a", *a, Second(1, 100));
  run->Tick(clock_.Now());
  clock_.Advance(kSecond);  // b connected slowly; a's second report waits with its first
  run->OnReport("a", *a, Second(2, 100));
  run->Poll(clock_.Now());
  EXPECT_THAT(Intervals(*run, next), ::testing::IsEmpty());
  clock_.Advance(200 * kMillisecond);
  run->OnReport("b", *b, Second(1, 100));
  std::vector<v1::IntervalSample> closed = Intervals(*run, next);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].executed(), 300u);
  EXPECT_DOUBLE_EQ(closed[0].achieved_rate(), 200);  // 100/s each, over their own seconds

  clock_.Advance(800 * kMillisecond);
  run->OnReport("a", *a, Second(3, 100));
  run->Tick(clock_.Now());
  clock_.Advance(499 * kMillisecond);
  run->Poll(clock_.Now());
  EXPECT_THAT(Intervals(*run, next), ::testing::IsEmpty());
  clock_.Advance(kMillisecond);
  run->Poll(clock_.Now());
  closed = Intervals(*run, next);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].executed(), 100u);

  // Without a wait, the interval closes at the tick whoever reported.
  env_.interval_wait = 0;
  clock_.Advance(kSecond);
  run->OnReport("a", *a, Second(4, 100));
  run->Tick(clock_.Now());
  EXPECT_THAT(Intervals(*run, next), ::testing::SizeIs(1));
}

// An agent that joins the running run (in a lost one's place) holds no interval before its first
// report: the others' seconds go out on time meanwhile.
TEST_F(RunControllerTest, AJoinerHoldsNoIntervalBeforeItsFirstReport) {
  env_.interval_wait = 500 * kMillisecond;
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(4, {"a", "b"});
  uint64_t next = 0;
  (void)Intervals(*run, next);
  clock_.Advance(kSecond);
  run->OnReport("a", *a, Second(1, 100));
  run->OnReport("b", *b, Second(1, 100));
  run->Tick(clock_.Now());
  ASSERT_THAT(Intervals(*run, next), ::testing::SizeIs(1));
  b->run_id.clear();
  run->OnAgentGone("b", "silent for 3.0s");
  auto c = Connect("c");
  ASSERT_TRUE(run->WantsJoiner(clock_.Now()));
  ASSERT_TRUE(run->Join("c", *c, clock_.Now()));
  clock_.Advance(kSecond);
  run->OnReport("a", *a, Second(2, 100));
  run->Tick(clock_.Now());
  const std::vector<v1::IntervalSample> closed = Intervals(*run, next);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].executed(), 100u);
}

// The report that reaches the end of the plan's duration (60 s here) is followed at once by the
// agent's final one (what was in flight then): the last interval waits for it.
TEST_F(RunControllerTest, TheLastIntervalWaitsForTheFinalReportThatFollowsTheEnd) {
  env_.interval_wait = 500 * kMillisecond;
  auto a = Connect("a");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(2, {"a"});
  uint64_t next = 0;
  (void)Intervals(*run, next);
  clock_.Advance(60 * kSecond);
  run->Tick(clock_.Now());
  run->OnReport("a", *a, SecondAt(1, 100, 60));
  EXPECT_THAT(Intervals(*run, next), ::testing::IsEmpty());
  clock_.Advance(2 * kMillisecond);
  run->OnReport("a", *a, FinalAfterTheEnd(2));
  run->Tick(clock_.Now());
  const std::vector<v1::IntervalSample> closed = Intervals(*run, next);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].executed(), 101u);
}

// An agent found with its report in while another was awaited, whose next report then reaches
// the end of the plan's duration, is waited for again: its final report follows.
TEST_F(RunControllerTest, AnAgentWhoseNewReportReachesTheEndIsWaitedForAgain) {
  env_.interval_wait = 500 * kMillisecond;
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(4, {"a", "b"});
  uint64_t next = 0;
  (void)Intervals(*run, next);
  clock_.Advance(60 * kSecond);
  run->Tick(clock_.Now());
  run->OnReport("a", *a, SecondAt(1, 100, 59));  // a is in; b is awaited
  run->OnReport("a", *a, SecondAt(2, 100, 60));
  clock_.Advance(10 * kMillisecond);
  run->OnReport("b", *b, SecondAt(1, 100, 59.5));
  EXPECT_THAT(Intervals(*run, next), ::testing::IsEmpty()) << "a's final report is to come";
  run->OnReport("a", *a, FinalAfterTheEnd(3));
  const std::vector<v1::IntervalSample> closed = Intervals(*run, next);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].executed(), 301u);
}

// A row check whose every "select" adds a row to t, counting with `counter`.
RowCheck RowsOfT(GatedRowCounter& counter) {
  v1::Plan plan;
  plan.set_scenario("write");
  v1::Scenario& write = *plan.mutable_workload_spec()->add_scenarios();
  write.set_name("write");
  v1::QueryType& select = *write.add_query_types();
  select.set_name("select");
  (*select.mutable_changes())["t"] = 1;
  return RowCheck::For(
      plan, [&counter](const v1::Plan&) -> absl::StatusOr<RowCounter> { return counter.counter(); },
      counter.on_counted());
}

v1::AgentReport Final(v1::AgentReport report, const std::string& end_reason) {
  report.set_final(true);
  report.set_end_reason(end_reason);
  return report;
}

// The rows of a write scenario are counted once for the run, whatever its number of agents:
// its load waits for the count before it, its end for the count after the last final report,
// and its report (the one the coordinator serves and saves) holds both.
TEST_F(RunControllerTest, TheRowsAreCountedOnceBeforeTheLoadAndAfterTheLastFinalReport) {
  GatedRowCounter counter;  // outlives the run, which waits for its counts when it goes
  auto a = Connect("a"), b = Connect("b");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(2, {"a", "b"}, RowsOfT(counter));
  run->Tick(clock_.Now());
  EXPECT_TRUE(a->outbox.empty());
  EXPECT_TRUE(b->outbox.empty());
  counter.Answer(GatedRowCounter::Counts{{"t", 10}});
  ASSERT_TRUE(counter.WaitCounted(1));
  run->OnProbeReading();  // the coordinator's ticker, told by the count
  ASSERT_EQ(Kinds(*a), std::vector<Kind>{Kind::kAssign});
  ASSERT_EQ(Kinds(*b), std::vector<Kind>{Kind::kAssign});

  clock_.Advance(kSecond);
  run->OnReport("a", *a, Final(Second(1, 2), "duration"));
  run->OnReport("b", *b, Final(Second(1, 3), "duration"));
  run->Tick(clock_.Now());
  EXPECT_FALSE(run->done());
  counter.Answer(GatedRowCounter::Counts{{"t", 15}});
  ASSERT_TRUE(counter.WaitCounted(2));
  run->OnProbeReading();
  ASSERT_TRUE(run->done());
  EXPECT_EQ(counter.asked().size(), 2u);
  const v1::RunReport report = run->Report();
  EXPECT_EQ(report.state(), "finished");
  EXPECT_EQ(report.executed(), 5u);
  ASSERT_EQ(report.row_changes_size(), 1);
  EXPECT_EQ(report.row_changes(0).table(), "t");
  EXPECT_EQ(report.row_changes(0).before(), 10);
  EXPECT_EQ(report.row_changes(0).after(), 15);
  EXPECT_EQ(report.row_changes(0).expected(), 5);
  EXPECT_EQ(report.row_changes_not_checked(), "");
}

// The agents close their sessions before their final reports, but the server ends their
// backends (and PostgreSQL's publish their last counts) when it gets to them: the reading after
// the load that still lists one of dbload's sessions is followed by another, and the run ends on
// the one that lists none. Its commits are then whole. How many there were before the load says
// nothing: a row check's session may be open then (a TPC-C run's count fell 259 commits short
// when the end waited only for as many as before the load).
TEST_F(RunControllerTest, TheReadingAfterTheLoadWaitsForTheRunsSessionsToLeaveTheDatabase) {
  auto script = std::make_shared<ScriptedReadings>();
  auto a = Connect("a");
  std::lock_guard lock(mu_);
  // Before the load, the row check's session reading the counts.
  std::unique_ptr<RunController> run =
      LaunchAfterAReading(script, 1000, 1, 500 * kMillisecond, 200 * kMillisecond);
  absl::Cleanup close = [&] { script->Close(); };

  clock_.Advance(kSecond);
  run->OnReport("a", *a, Final(Second(1, 2), "duration"));
  script->Answer(1002, 1);  // the reading asked for at once: one of the agent's backends is there
  ASSERT_TRUE(script->WaitReadings(2));
  run->OnProbeReading();
  run->Tick(clock_.Now());
  EXPECT_FALSE(run->done());
  script->Answer(1005, 0);  // the next, asked for 100 ms later: it exited
  ASSERT_TRUE(script->WaitReadings(3));
  run->OnProbeReading();
  ASSERT_TRUE(run->done());
  const v1::RunReport report = run->Report();
  ASSERT_EQ(report.probe_samples_size(), 3);
  // On the run's clock, which started with the load 200 ms after the first reading.
  EXPECT_DOUBLE_EQ(report.probe_samples(0).elapsed_s(), -0.2);
  EXPECT_DOUBLE_EQ(report.probe_samples(2).elapsed_s(), 1);
  EXPECT_EQ(report.commit_reconciliation().database_commits(), 5);
}

// Sessions that never leave (another dbload run's on the same database) hold the end for
// kProbeFinalWait (3 s) only; the report then says its count was read with them open.
TEST_F(RunControllerTest, SessionsThatStayHoldTheEndForTheFinalWaitOnly) {
  auto script = std::make_shared<ScriptedReadings>();
  auto a = Connect("a");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = LaunchAfterAReading(script, 1000, 0);
  absl::Cleanup close = [&] { script->Close(); };

  clock_.Advance(kSecond);
  run->OnReport("a", *a, Final(Second(1, 2), "duration"));
  script->Answer(1001, 1);
  ASSERT_TRUE(script->WaitReadings(2));
  run->OnProbeReading();
  clock_.Advance(2900 * kMillisecond);
  run->Tick(clock_.Now());
  EXPECT_FALSE(run->done());
  clock_.Advance(100 * kMillisecond);
  run->Tick(clock_.Now());
  ASSERT_TRUE(run->done());
  const v1::RunReport report = run->Report();
  EXPECT_EQ(report.probe_samples_size(), 2);
  EXPECT_EQ(report.commit_reconciliation().verdict(),
            "incomplete: sessions still open at the last reading");
}

// A stop goes out at once, even to a run still counting its rows; a run that was stopped is not
// counted after (its transactions were cut short), and its report has no row changes.
TEST_F(RunControllerTest, AStoppedRunsRowsAreNotCountedAfterIt) {
  GatedRowCounter counter;
  auto a = Connect("a");
  std::lock_guard lock(mu_);
  std::unique_ptr<RunController> run = Launch(1, {"a"}, RowsOfT(counter));
  run->Stop(v1::END_REASON_STOPPED, "stop requested");
  ASSERT_EQ(Kinds(*a), (std::vector<Kind>{Kind::kAssign, Kind::kStop}));
  run->OnReport("a", *a, Final(Second(1, 2), "stopped"));
  ASSERT_TRUE(run->done());
  const v1::RunReport report = run->Report();
  EXPECT_EQ(report.state(), "stopped");
  EXPECT_EQ(report.row_changes_size(), 0);
  EXPECT_EQ(report.row_changes_not_checked(), "");
  counter.Answer(GatedRowCounter::Counts{{"t", 10}});  // the count before, still under way
  ASSERT_TRUE(counter.WaitCounted(1));
  EXPECT_EQ(counter.asked().size(), 1u);
}

TEST_F(RunControllerTest, ARestoredRunIsServedAsItEnded) {
  v1::RunReport saved;
  saved.set_run_id("run-9-zz");
  saved.set_state("finished");
  saved.set_executed(42);
  std::lock_guard lock(mu_);
  RunController run(env_, saved);
  EXPECT_TRUE(run.done());
  EXPECT_EQ(run.id(), "run-9-zz");
  EXPECT_EQ(run.Report().executed(), 42u);
  EXPECT_EQ(run.progress().count(), 1u);
}

}  // namespace
}  // namespace dbload
