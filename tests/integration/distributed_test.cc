// The distributed path end to end: the real dbload-coordinator and three real dbload-agent
// processes on loopback, driven by the real `dbload` CLI (submit --wait, agents, report, stop),
// against a real PostgreSQL 15 started by tests/harness/dbenv. Every count is checked against the
// server's own counters (as in cli_test.cc, whose notes on them apply here):
//  - pg_stat_user_tables seq_scan + idx_scan of sbtest1: one per point_select execution, so the
//    scans' delta is exactly the transactions the agents completed (executed + errors);
//  - pg_stat_database sessions and xact_commit of bench: one session per connection an agent
//    opens (open loop: every agent with a share opens the plan's pool; closed loop: one per
//    client, so 7 clients over 3 agents open 7), and per connection kPgCommitsPerConnection
//    commits besides the benchmark's own.
// Also `dbload run --agents 3`, the same coordinator and agents in one process.
// A network cut is a TcpRelay (tests/harness/tcp_relay.h) between an agent and its coordinator.
//
// Every process started here is stopped by its PID in the suite's teardown (SIGTERM, then
// SIGKILL), also when a case fails.
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/exit_codes.h"
#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/tcp_relay.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || !defined(DBLOAD_AGENT_BINARY)
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY and DBLOAD_AGENT_BINARY must be defined"
#endif


namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::ListeningAddress;
using ::dbload::testing::LoadReport;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunDbload;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::dbload::testing::ToInt;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kChildTimeout{30};
constexpr int kTableSize = 1000;
constexpr int kAgents = 3;
// See cli_test.cc: backend start-up (1) + Parse/Sync and Describe/Sync of the one statement (2).
constexpr int64_t kPgCommitsPerConnection = 3;

// ---------------------------------------------------------------------------------------------
// The fixture: one coordinator and three agents for the whole suite, PostgreSQL's counters.

class DistributedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_distributed_test");
    // Nothing but the case itself may commit in database bench (see cli_test.cc).
    testing::TurnOffAutovacuum(servers());

    const std::string plan =
        WriteFile("prepare.yaml", PlanYaml(ClosedLoad(1), "stop:\n  queries: 1\n"));
    const ProcessResult cleanup = RunDbload({"cleanup", plan});
    ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    const ProcessResult prepare = RunDbload({"prepare", plan});
    ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();

    coordinator_ = new Child({DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0"});
    const std::string address = ListeningAddress(*coordinator_);
    ASSERT_TRUE(absl::StartsWith(address, "127.0.0.1:"))
        << "the coordinator did not say where it listens\n"
        << coordinator_->out() << coordinator_->err();
    address_ = new std::string(address);

    for (int i = 1; i <= kAgents; ++i) {
      agents_.push_back(new Child(
          {DBLOAD_AGENT_BINARY, "--coordinator", *address_, "--name", absl::StrCat("agent-", i)}));
    }
    // Connected: `dbload agents` lists all three (polled, bounded).
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    for (;;) {
      const ProcessResult listed = RunDbload({"agents", "--coordinator", *address_});
      ASSERT_EQ(listed.exit_code, kExitOk) << listed.Describe();
      if (AgentRows(listed.out).size() == static_cast<size_t>(kAgents)) break;
      ASSERT_LT(Clock::now(), give_up) << "agents did not connect within 10 s\n" << listed.out;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  static void TearDownTestSuite() {
    // Agents first, then the coordinator; each by its PID (the Child destructor).
    for (Child* agent : agents_) delete agent;
    agents_.clear();
    delete coordinator_;
    coordinator_ = nullptr;
    delete address_;
    address_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }
  static const std::string& address() { return *address_; }
  static const std::string& dir() { return dir_->path(); }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  static std::string PlanYaml(const std::string& load, const std::string& stop, uint32_t pool = 0) {
    std::string yaml = absl::StrCat(
        "name: distributed\ntarget:\n  driver: postgresql\n  host: 127.0.0.1\n  port: ",
        servers().Get("PG_PORT"),
        "\n  user: bench\n  password_file: ", servers().Get("PG_PASSWORD_FILE"),
        "\n  database: bench\n  connect_timeout: 5s\n");
    if (pool > 0) absl::StrAppend(&yaml, "  pool: ", pool, "\n");
    absl::StrAppend(&yaml,
                    "workload: oltp\nscenario: point_select\nworkload_options:\n  table_size: ",
                    kTableSize, "\n", load, "warmup: 0s\n", stop,
                    // The server's counts are the load's alone: no EXPLAIN connection.
                    "explain: {enabled: false}\n");
    return yaml;
  }
  static std::string ClosedLoad(int clients) {
    return absl::StrCat("load:\n  closed:\n    clients: ", clients, "\n    think_time: 1ms\n");
  }
  static std::string OpenLoad(int rate) {
    return absl::StrCat("load:\n  open:\n    rate: ", rate, "\n");
  }

  // The data rows of `dbload agents` (header and the empty-list note left out).
  static std::vector<std::vector<std::string>> AgentRows(const std::string& out) {
    std::vector<std::vector<std::string>> rows;
    for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "NAME") || absl::StartsWith(line, "(")) continue;
      rows.push_back(absl::StrSplit(line, ' ', absl::SkipEmpty()));
    }
    return rows;
  }

  // Whether `dbload agents` lists `count` agents at `address` within 10 s.
  static bool AgentsConnect(const std::string& address, size_t count) {
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < give_up) {
      if (AgentRows(RunDbload({"agents", "--coordinator", address}).out).size() == count) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << count << " agents did not connect to " << address << " within 10 s";
    return false;
  }

  // The servers' own clients (tests/harness/sql_clients.h), bound to this suite's servers.
  static std::vector<std::string> PsqlArgs(const std::string& database, const std::string& sql) {
    return dbload::testing::PsqlArgs(servers(), database, sql);
  }
  static std::string Psql(const std::string& database, const std::string& sql) {
    return dbload::testing::Psql(servers(), database, sql);
  }

  using PgDatabaseCounters = testing::PgDatabaseCounters;

  // pg_stat_database of bench once no backend is left in it and two reads 300 ms apart agree.
  static PgDatabaseCounters PgCounters() { return testing::SettledPgDatabaseCounters(servers()); }

  // Executions of point_select so far (read from bench: call before PgCounters() ahead of a run
  // and after it afterwards, as cli_test.cc explains).
  static int64_t PgTableScans() { return testing::PgTableScans(servers(), "sbtest1"); }

  // The sum of the measured intervals' executed: what the agents' reports added up to.
  static uint64_t IntervalSum(const v1::RunReport& report) {
    uint64_t sum = 0;
    for (const v1::IntervalSample& sample : report.intervals()) {
      if (!sample.warmup()) sum += sample.executed();
    }
    return sum;
  }

  // Open loop 3000/s for 2 s, pool 2: checks the report against the database, whichever way
  // `args` runs it.
  void ExpectOpenLoopCountedExactly(std::vector<std::string> args, const std::string& name) {
    const std::string plan =
        WriteFile(name + ".yaml", PlanYaml(OpenLoad(3000), "stop:\n  duration: 2s\n", 2));
    const std::string report_path = dir() + "/" + name + ".json";
    for (std::string& arg : args) {
      if (arg == "PLAN") arg = plan;
      if (arg == "REPORT") arg = report_path;
    }
    const int64_t scans_before = PgTableScans();
    const PgDatabaseCounters before = PgCounters();
    const ProcessResult run = RunDbload(args);
    const PgDatabaseCounters after = PgCounters();
    const int64_t scans_after = PgTableScans();

    ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
    absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->end_reason(), "duration");
    EXPECT_EQ(report->errors(), 0u);
    EXPECT_GT(report->executed(), 0u);
    EXPECT_THAT(run.out, HasSubstr(absl::StrCat("Executed queries: ", report->executed(), "\n")));
    EXPECT_EQ(IntervalSum(*report), report->executed());
    // Every arrival of 3000/s × 2 s split over the agents is accounted for (the uniform
    // schedules of three phase-shifted agents may each round by one at the end).
    const uint64_t accounted = report->executed() + report->not_started();
    EXPECT_GE(accounted, 6000u - kAgents) << "not started " << report->not_started();
    EXPECT_LE(accounted, 6000u + kAgents) << "not started " << report->not_started();
    // The database saw exactly what the report says.
    EXPECT_EQ(scans_after - scans_before, static_cast<int64_t>(report->executed()));
    // Each agent said when its sessions were open (the load started on all at the latest), and
    // each measured the plan's 2 s from there.
    ASSERT_EQ(report->agents_size(), kAgents);
    for (const v1::AgentSummary& agent : report->agents()) {
      EXPECT_GT(agent.ready_s(), 0) << agent.name();
      EXPECT_NEAR(agent.measured_s(), 2.0, 0.01) << agent.name();
    }
    // Each of the three agents opened the plan's pool of 2.
    EXPECT_EQ(after.sessions - before.sessions, kAgents * 2);
    EXPECT_EQ(after.xact_commit - before.xact_commit,
              static_cast<int64_t>(report->executed()) + kAgents * 2 * kPgCommitsPerConnection);
  }

  static testing::ScratchDir* dir_;
  static std::string* address_;
  static Child* coordinator_;
  static std::vector<Child*> agents_;
};

testing::ScratchDir* DistributedTest::dir_ = nullptr;
std::string* DistributedTest::address_ = nullptr;
Child* DistributedTest::coordinator_ = nullptr;
std::vector<Child*> DistributedTest::agents_;

TEST_F(DistributedTest, AgentsListsTheThreeAgents) {
  const ProcessResult listed = RunDbload({"agents", "--coordinator", address()});
  ASSERT_EQ(listed.exit_code, kExitOk) << listed.Describe();
  EXPECT_THAT(listed.out, HasSubstr("NAME"));
  const auto rows = AgentRows(listed.out);
  ASSERT_EQ(rows.size(), 3u) << listed.out;
  for (int i = 0; i < kAgents; ++i) {
    ASSERT_GE(rows[i].size(), 5u) << listed.out;
    EXPECT_EQ(rows[i][0], absl::StrCat("agent-", i + 1));
    EXPECT_EQ(rows[i][4], "-") << "idle agents have no run";
  }
}

// `dbload prepare --coordinator`: the three agent processes each load one part of every table
// (events: customer and event), the CLI creates the tables first and indexes and validates
// after; the database holds exactly the rows, and cleanup removes them.
TEST_F(DistributedTest, PrepareSplitsTheLoadingAcrossTheAgents) {
  std::string plan_text = PlanYaml(ClosedLoad(1), "stop:\n  queries: 1\n");
  plan_text = absl::StrReplaceAll(
      plan_text, {{"workload: oltp\nscenario: point_select\nworkload_options:\n  table_size: " +
                       std::to_string(kTableSize),
                   "workload: events\nscenario: insert_events\nworkload_options: {customers: 3000, "
                   "events: 30000}"}});
  const std::string plan = WriteFile("split_prepare.yaml", plan_text);
  ASSERT_EQ(RunDbload({"cleanup", plan}).exit_code, kExitOk);
  const ProcessResult prepared =
      RunDbload({"prepare", plan, "--coordinator", address(), "--parallel", "3"});
  ASSERT_EQ(prepared.exit_code, kExitOk) << prepared.Describe();
  EXPECT_THAT(prepared.out, HasSubstr("loading 3 parts on 3 agents"));
  for (int part = 0; part < 3; ++part) {
    EXPECT_THAT(prepared.out, HasSubstr(absl::StrCat("loaded part ", part))) << prepared.out;
  }
  EXPECT_THAT(prepared.out, HasSubstr("prepared in"));
  EXPECT_EQ(Psql("bench", "SELECT count(*) FROM customer"), "3000");
  EXPECT_EQ(Psql("bench", "SELECT count(*), count(DISTINCT id), max(id) FROM event"),
            "30000|30000|30000");
  EXPECT_EQ(Psql("bench", "SELECT string_agg(rows_done::text, ',' ORDER BY part) FROM "
                          "dbload_load_state WHERE tbl = 'event' AND part >= 0"),
            "10000,10000,10000");
  ASSERT_EQ(RunDbload({"cleanup", plan}).exit_code, kExitOk);
  EXPECT_EQ(Psql("bench", "SELECT to_regclass('public.event') IS NULL"), "t");
}

TEST_F(DistributedTest, SubmitWaitSplitsAnOpenLoopAcrossThreeAgentsExactly) {
  ExpectOpenLoopCountedExactly({"submit", "PLAN", "--coordinator", address(), "--min-agents", "3",
                                "--wait-for-agents", "10s", "--wait", "--report", "REPORT"},
                               "submit_open");
}

TEST_F(DistributedTest, RunWithThreeInProcessAgentsCountsExactly) {
  ExpectOpenLoopCountedExactly({"run", "PLAN", "--agents", "3", "--report", "REPORT"}, "run_open");
}

// Poisson arrivals: each agent draws its own stream (from the run's seed and its place in the
// split). Agents seeded alike fired at the same instants and executed identical counts.
TEST_F(DistributedTest, PoissonArrivalsOfThreeAgentsAreEachTheirOwn) {
  const std::string plan =
      WriteFile("poisson.yaml", PlanYaml("load:\n  open:\n    rate: 3000\n    arrival: poisson\n",
                                         "stop:\n  duration: 2s\n", 2));
  const std::string report_path = dir() + "/poisson.json";
  const ProcessResult run = RunDbload({"run", plan, "--agents", "3", "--report", report_path});
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->agents_size(), kAgents);
  std::set<uint64_t> counts;
  for (const v1::AgentSummary& agent : report->agents()) counts.insert(agent.executed());
  // About 2,000 each, a standard deviation of 45: three equal counts would be a 1 in 10,000
  // chance, and the same stream on every agent gives them every time.
  EXPECT_GE(counts.size(), 2u) << "every agent executed " << *counts.begin();
}

// Two agents of 500 connections each (event loops; this suite's server takes 1,100): each opens
// its pool before the load, the coordinator starts both loads at once (StartLoad) and closes
// their sessions once both loads are over (CloseSessions), so the run's first second has the
// whole rate and each agent measures the plan's duration, its connects and closes outside it
// (closing 1,000 sessions took PostgreSQL most of a second: bench/RESULTS.md 32a). The server
// counted every connection and transaction the report did.
TEST_F(DistributedTest, TwoAgentsOfFiveHundredConnectionsStartAndEndTogether) {
  constexpr int kPool = 500, kRate = 2400;
  const std::string plan =
      WriteFile("thousand_connections.yaml",
                absl::StrReplaceAll(PlanYaml(OpenLoad(kRate), "stop:\n  duration: 3s\n", kPool),
                                    {{"  pool: ", "  engine: event_loops\n  pool: "},
                                     // 1,000 connections at once queue for the server's 2 cores.
                                     {"connect_timeout: 5s", "connect_timeout: 60s"}}));
  const std::string report_path = dir() + "/thousand_connections.json";
  const PgDatabaseCounters before = PgCounters();
  const ProcessResult run = RunDbload({"run", plan, "--agents", "2", "--report", report_path});
  const PgDatabaseCounters after = PgCounters();

  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->end_reason(), "duration");
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_NEAR(report->queries_duration_s(), 3.0, 0.01) << run.out;
  ASSERT_EQ(report->agents_size(), 2);
  for (const v1::AgentSummary& agent : report->agents()) {
    EXPECT_GT(agent.ready_s(), 0) << agent.name();
    EXPECT_NEAR(agent.measured_s(), 3.0, 0.01) << agent.name() << "\n" << run.out;
  }
  // Both agents' shares from the first second on (one agent alone would be about 1,200).
  ASSERT_FALSE(report->intervals().empty());
  EXPECT_GE(report->intervals(0).executed(), 0.9 * kRate) << run.out;
  const uint64_t accounted = report->executed() + report->not_started();
  EXPECT_GE(accounted, 3u * kRate - 2) << run.out;
  EXPECT_LE(accounted, 3u * kRate + 2) << run.out;
  EXPECT_EQ(after.sessions - before.sessions, 2 * kPool);
  EXPECT_EQ(after.xact_commit - before.xact_commit,
            static_cast<int64_t>(report->executed()) + 2 * kPool * kPgCommitsPerConnection)
      << run.out;
}

TEST_F(DistributedTest, ClosedLoopSpreadsSevenClientsOverThreeAgents) {
  const std::string plan =
      WriteFile("closed.yaml", PlanYaml(ClosedLoad(7), "stop:\n  queries: 6000\n"));
  const std::string report_path = dir() + "/closed.json";
  const int64_t scans_before = PgTableScans();
  const PgDatabaseCounters before = PgCounters();
  Child submit({DBLOAD_BINARY, "submit", plan, "--coordinator", address(), "--min-agents", "3",
                "--wait", "--report", report_path});
  ASSERT_TRUE(
      submit.PumpUntil([](const std::string& out) { return absl::StrContains(out, "agent-3\n"); },
                       std::chrono::seconds(10)))
      << submit.out() << submit.err();
  const std::string header = submit.out().substr(0, submit.out().find('\n'));
  EXPECT_THAT(header, HasSubstr("across 3 agents: agent-1, agent-2, agent-3"));
  const std::string run_id = std::vector<std::string>(absl::StrSplit(header, ' '))[1];
  // While it runs, every agent works for it.
  const ProcessResult listed = RunDbload({"agents", "--coordinator", address()});
  ASSERT_EQ(listed.exit_code, kExitOk) << listed.Describe();
  const ProcessResult run = submit.Wait(kChildTimeout);
  const PgDatabaseCounters after = PgCounters();
  const int64_t scans_after = PgTableScans();

  const auto rows = AgentRows(listed.out);
  ASSERT_EQ(rows.size(), 3u) << listed.out;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 5u) << listed.out;
    EXPECT_EQ(row[4], run_id) << listed.out;
  }
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->end_reason(), "queries");
  EXPECT_EQ(report->executed(), 6000u);
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(IntervalSum(*report), 6000u);
  EXPECT_EQ(scans_after - scans_before, 6000);
  // 7 clients split 3/2/2: one connection each, 7 in all, never one more.
  EXPECT_EQ(after.sessions - before.sessions, 7);
  EXPECT_EQ(after.xact_commit - before.xact_commit, 6000 + 7 * kPgCommitsPerConnection);

  // The coordinator keeps the report: `dbload report RUN` shows the same run.
  const ProcessResult text = RunDbload({"report", run_id, "--coordinator", address()});
  ASSERT_EQ(text.exit_code, kExitOk) << text.Describe();
  EXPECT_THAT(text.out, HasSubstr("Executed queries: 6000\n"));
  const ProcessResult json =
      RunDbload({"report", run_id, "--coordinator", address(), "--format", "json"});
  ASSERT_EQ(json.exit_code, kExitOk) << json.Describe();
  absl::StatusOr<v1::RunReport> fetched = ParseReportJson(json.out);
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->executed(), 6000u);
}

// A coordinator of this test's own, with a state dir, and one agent dialling it.
std::unique_ptr<Child> StartCoordinator(const std::string& state_dir, std::string& address) {
  auto coordinator = std::make_unique<Child>(std::vector<std::string>{
      DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--state-dir", state_dir});
  address = ListeningAddress(*coordinator);
  return coordinator;
}

TEST_F(DistributedTest, StateDirKeepsReportsAcrossRestartsAndACrashedRunIsInterrupted) {
  const std::string state_dir = dir() + "/state";
  std::string first_address;
  std::unique_ptr<Child> coordinator = StartCoordinator(state_dir, first_address);
  ASSERT_FALSE(first_address.empty()) << coordinator->out() << coordinator->err();
  Child agent({DBLOAD_AGENT_BINARY, "--coordinator", first_address, "--name", "solo"});
  ASSERT_TRUE(AgentsConnect(first_address, 1));

  // A finished run, and a long one that the coordinator is killed in the middle of (after its
  // report so far was saved at 5 s).
  const std::string finished_plan =
      WriteFile("state_finished.yaml", PlanYaml(OpenLoad(500), "stop:\n  queries: 600\n"));
  const std::string finished_path = dir() + "/state_finished.json";
  const ProcessResult finished = RunDbload({"submit", finished_plan, "--coordinator",
                                            first_address, "--wait", "--report", finished_path});
  ASSERT_EQ(finished.exit_code, kExitOk) << finished.Describe();
  absl::StatusOr<v1::RunReport> finished_report = LoadReport(finished_path);
  ASSERT_TRUE(finished_report.ok()) << finished_report.status();
  EXPECT_EQ(finished_report->state(), "finished");

  const std::string long_plan =
      WriteFile("state_long.yaml", PlanYaml(OpenLoad(200), "stop:\n  duration: 60s\n"));
  const ProcessResult submitted = RunDbload({"submit", long_plan, "--coordinator", first_address});
  ASSERT_EQ(submitted.exit_code, kExitOk) << submitted.Describe();
  const std::string long_run(absl::StripAsciiWhitespace(submitted.out));
  std::this_thread::sleep_for(std::chrono::milliseconds(7500));
  coordinator->Signal(SIGKILL);
  coordinator->Wait(std::chrono::seconds(5));

  std::string address;
  coordinator = StartCoordinator(state_dir, address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  const ProcessResult again =
      RunDbload({"report", finished_report->run_id(), "--coordinator", address, "--format", "json"});
  ASSERT_EQ(again.exit_code, kExitOk) << again.Describe();
  absl::StatusOr<v1::RunReport> restored = ParseReportJson(again.out);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->executed(), 600u);
  EXPECT_EQ(restored->state(), "finished");
  EXPECT_EQ(restored->response_time().p99_ms(), finished_report->response_time().p99_ms());

  const ProcessResult cut = RunDbload({"report", long_run, "--coordinator", address, "--format",
                                       "json"});
  ASSERT_EQ(cut.exit_code, kExitOk) << cut.Describe();
  absl::StatusOr<v1::RunReport> interrupted = ParseReportJson(cut.out);
  ASSERT_TRUE(interrupted.ok()) << interrupted.status();
  EXPECT_EQ(interrupted->state(), "interrupted");
  EXPECT_THAT(interrupted->end_reason(), HasSubstr("the coordinator stopped during the run"));
  // Saved at 5 s (at 200/s): about a thousand transactions, none invented.
  EXPECT_GE(interrupted->executed(), 600u);
  EXPECT_LE(interrupted->executed(), 200u * 8);
  // Counts and duration come from the same intervals: the duration is the sum of the intervals'
  // lengths, and the rate is theirs (it was 10 % low, one interval's time counted without its
  // transactions).
  double lengths = 0;
  uint64_t summed = 0;
  for (const v1::IntervalSample& sample : interrupted->intervals()) {
    if (sample.warmup()) continue;
    lengths += sample.length_s();
    summed += sample.executed();
  }
  EXPECT_EQ(summed, interrupted->executed());
  ASSERT_GT(lengths, 0);
  EXPECT_NEAR(interrupted->total_duration_s(), lengths, 1e-6) << cut.out;
  EXPECT_NEAR(static_cast<double>(interrupted->executed()) / interrupted->total_duration_s(),
              static_cast<double>(summed) / lengths, 1e-6);
  EXPECT_NEAR(interrupted->actual_rate(), static_cast<double>(summed) / lengths, 1e-6);
}

// An agent killed mid-run: its rate moves to the others within 3 s (the merged rate is the
// plan's again, within 5 %); restarted, it joins the run again as r3#2 and takes a third.
TEST_F(DistributedTest, AKilledAgentsRateIsTakenOverByTheOthersAndItRejoins) {
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(dir() + "/resplit_state", address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  std::vector<std::unique_ptr<Child>> agents;
  auto start_agent = [&](int i) {
    return std::make_unique<Child>(std::vector<std::string>{
        DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", absl::StrCat("r", i)});
  };
  for (int i = 1; i <= 3; ++i) agents.push_back(start_agent(i));
  ASSERT_TRUE(AgentsConnect(address, 3));
  const std::string plan =
      WriteFile("resplit.yaml", PlanYaml(OpenLoad(600), "stop:\n  duration: 16s\n"));
  const ProcessResult submitted = RunDbload({"submit", plan, "--coordinator", address});
  ASSERT_EQ(submitted.exit_code, kExitOk) << submitted.Describe();
  const std::string run(absl::StripAsciiWhitespace(submitted.out));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  agents[2]->Signal(SIGKILL);  // r3: its 200/s must move to r1 and r2
  // Restarted well after the coordinator noticed (within 3 s): it joins at the next tick.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  agents[2] = start_agent(3);
  const ProcessResult watched = RunDbload({"watch", run, "--coordinator", address});
  ProcessResult fetched = RunDbload({"report", run, "--coordinator", address, "--format", "json"});
  ASSERT_EQ(fetched.exit_code, kExitOk) << fetched.Describe();
  absl::StatusOr<v1::RunReport> report = ParseReportJson(fetched.out);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->end_reason(), HasSubstr("degraded: agent r3 lost"));
  // From 3 s after the kill (the coordinator notices within 3 s) to the end, the merged rate is
  // the plan's, within 5 %: first over r1 and r2, then over r1, r2 and r3#2.
  auto mean_rate = [&](double from_s, double to_s) {
    uint64_t executed = 0;
    int seconds = 0;
    for (const v1::IntervalSample& sample : report->intervals()) {
      if (sample.warmup() || sample.elapsed_s() < from_s || sample.elapsed_s() > to_s) continue;
      executed += sample.executed();
      ++seconds;
    }
    EXPECT_GE(seconds, 2) << watched.out;
    return seconds == 0 ? 0.0 : static_cast<double>(executed) / seconds;
  };
  EXPECT_NEAR(mean_rate(6.5, 8.5), 600, 30) << watched.out;
  EXPECT_NEAR(mean_rate(11.5, 15.5), 600, 30) << watched.out;
  ASSERT_EQ(report->agents_size(), 4);
  bool rejoined = false;
  for (const v1::AgentSummary& agent : report->agents()) {
    if (agent.name() != "r3#2") continue;
    rejoined = true;
    // About a third of 600/s for the 6-7 s it ran.
    EXPECT_GT(agent.executed(), 1000u);
    EXPECT_EQ(agent.end_reason(), "duration");
  }
  EXPECT_TRUE(rejoined) << fetched.out;
  coordinator->Pump(std::chrono::milliseconds(50));
  EXPECT_THAT(coordinator->err(), HasSubstr("agent r3 joined as r3#2 with 200/s"));
}

// An agent killed (SIGKILL) mid-run at an open-loop rate: the CLI that followed the run exits
// with 4 (degraded), and the report names the lost agent with a bound on what it ran after its
// last report. The database counted more commits than the report (the agent's last
// transactions), never fewer, and no more than that bound; the report reconciles the two.
TEST_F(DistributedTest, AKilledAgentIsBoundedReconciledAndTheRunExitsDegraded) {
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(dir() + "/loss_state", address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  std::vector<std::unique_ptr<Child>> agents;
  for (int i = 1; i <= 3; ++i) {
    agents.push_back(std::make_unique<Child>(std::vector<std::string>{
        DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", absl::StrCat("l", i)}));
  }
  ASSERT_TRUE(AgentsConnect(address, 3));
  const std::string plan =
      WriteFile("loss.yaml", PlanYaml(OpenLoad(1200), "stop:\n  duration: 8s\n", 4));
  const std::string report_path = dir() + "/loss.json";
  const PgDatabaseCounters before = PgCounters();
  Child submit({DBLOAD_BINARY, "submit", plan, "--coordinator", address, "--min-agents", "3",
                "--wait", "--report", report_path});
  // Killed between two of its reports, 3.4 s into the load.
  ASSERT_TRUE(
      submit.PumpUntil([](const std::string& out) { return absl::StrContains(out, "[   3.0s]"); },
                       std::chrono::seconds(15)))
      << submit.out() << submit.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  agents[2]->Signal(SIGKILL);
  const ProcessResult run = submit.Wait(kChildTimeout);
  const PgDatabaseCounters after = PgCounters();

  EXPECT_EQ(run.exit_code, kExitDegraded) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr("run degraded: 1 agent(s) lost")) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("DEGRADED: 1 agent(s) lost")) << run.out;
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->degraded());
  EXPECT_THAT(report->end_reason(), HasSubstr("degraded: agent l3 lost"));
  ASSERT_EQ(report->lost_agents_size(), 1) << run.out;
  const v1::LostAgent& lost = report->lost_agents(0);
  EXPECT_EQ(lost.name(), "l3");
  EXPECT_DOUBLE_EQ(lost.rate(), 400);
  ASSERT_TRUE(lost.bound_known()) << lost.bound_note();
  EXPECT_GT(lost.lost_s(), lost.last_report_s());
  EXPECT_LE(lost.unreported_if_stopped(), lost.unreported_max());

  // The database against the report: one session per connection, kPgCommitsPerConnection
  // commits each besides the load's.
  const int64_t counted = after.xact_commit - before.xact_commit;
  const int64_t overhead = (after.sessions - before.sessions) * kPgCommitsPerConnection;
  const int64_t uncounted = counted - static_cast<int64_t>(report->executed()) - overhead;
  EXPECT_GE(uncounted, 0) << run.out;
  EXPECT_LE(uncounted, static_cast<int64_t>(lost.unreported_max())) << run.out;
  // A killed agent stops at once: the tighter bound holds too.
  EXPECT_LE(uncounted, static_cast<int64_t>(lost.unreported_if_stopped())) << run.out;
  const v1::CommitReconciliation& reconciled = report->commit_reconciliation();
  ASSERT_TRUE(reconciled.available()) << reconciled.note();
  EXPECT_EQ(reconciled.database_commits(), counted)
      << run.out << "before the run " << before.xact_commit << ", after it " << after.xact_commit
      << "; " << testing::PgProbeTrail(*report);
  EXPECT_EQ(reconciled.report_commits(), static_cast<int64_t>(report->executed()));
  EXPECT_EQ(reconciled.connection_commits(), overhead);
  EXPECT_EQ(reconciled.difference(), uncounted);
  EXPECT_EQ(reconciled.verdict(), uncounted == 0 ? "matches" : "within the lost agents' bound");
  EXPECT_THAT(run.out, HasSubstr("Commits: the database counted"));
  std::cout << "killed agent l3: uncounted by the report " << uncounted
            << " transactions; bound if stopped when lost " << lost.unreported_if_stopped()
            << ", bound allowing the dead-man timeout " << lost.unreported_max() << " ("
            << lost.bound_note() << ")\n";
}

// Closed loop: the killed agent's clients move to the others (on spare slots): the database
// has the plan's 6 client sessions again, and the report's intervals say 6 clients. Restarted,
// the agent joins again as k3#2 and takes 2 of them back.
TEST_F(DistributedTest, AKilledAgentsClientsAreTakenOverByTheOthersAndItRejoins) {
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(dir() + "/move_clients_state", address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  std::vector<std::unique_ptr<Child>> agents;
  for (int i = 1; i <= 3; ++i) {
    agents.push_back(std::make_unique<Child>(std::vector<std::string>{
        DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", absl::StrCat("k", i)}));
  }
  ASSERT_TRUE(AgentsConnect(address, 3));
  const std::string plan =
      WriteFile("move_clients.yaml", PlanYaml(ClosedLoad(6), "stop:\n  duration: 14s\n"));
  const ProcessResult submitted = RunDbload({"submit", plan, "--coordinator", address});
  ASSERT_EQ(submitted.exit_code, kExitOk) << submitted.Describe();
  const std::string run(absl::StripAsciiWhitespace(submitted.out));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string count_sessions =
      "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench' AND backend_type = 'client "
      "backend' AND pid <> pg_backend_pid()";
  EXPECT_EQ(Psql("postgres", count_sessions), "6");
  agents[2]->Signal(SIGKILL);  // k3: its 2 clients must move to k1 and k2
  // The coordinator notices within 3 s; the survivors connect their new clients.
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  EXPECT_EQ(Psql("postgres", count_sessions), "6");
  agents[2] = std::make_unique<Child>(std::vector<std::string>{
      DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", "k3"});
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Psql("postgres", count_sessions), "6");
  const ProcessResult watched = RunDbload({"watch", run, "--coordinator", address});
  ProcessResult fetched = RunDbload({"report", run, "--coordinator", address, "--format", "json"});
  ASSERT_EQ(fetched.exit_code, kExitOk) << fetched.Describe();
  absl::StatusOr<v1::RunReport> report = ParseReportJson(fetched.out);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->end_reason(), HasSubstr("degraded: agent k3 lost"));
  EXPECT_EQ(report->errors(), 0u);
  int checked = 0;
  for (const v1::IntervalSample& sample : report->intervals()) {
    // After the join has settled (a transition's interval counts the most clients each agent
    // had in it, old and new).
    if (sample.warmup() || sample.elapsed_s() < 11.5 || sample.elapsed_s() > 13.5) continue;
    EXPECT_EQ(sample.clients(), 6u) << "at " << sample.elapsed_s() << " s\n" << watched.out;
    ++checked;
  }
  EXPECT_GE(checked, 2) << watched.out;
  coordinator->Pump(std::chrono::milliseconds(50));
  EXPECT_THAT(coordinator->err(), HasSubstr("2 clients of lost agents moved to k1, k2"));
  EXPECT_THAT(coordinator->err(), HasSubstr("agent k3 joined as k3#2 with 2 clients"));
  bool rejoined = false;
  for (const v1::AgentSummary& agent : report->agents()) {
    if (agent.name() == "k3#2") rejoined = agent.executed() > 0;
  }
  EXPECT_TRUE(rejoined) << fetched.out;
}

TEST_F(DistributedTest, AgentsStopWhenTheCoordinatorDiesAndComeBackIdle) {
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(dir() + "/deadman_state", address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  Child agent({DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", "orphan"});
  ASSERT_TRUE(AgentsConnect(address, 1));
  const std::string plan =
      WriteFile("deadman.yaml", PlanYaml(OpenLoad(300), "stop:\n  duration: 60s\n"));
  const ProcessResult submitted = RunDbload({"submit", plan, "--coordinator", address});
  ASSERT_EQ(submitted.exit_code, kExitOk) << submitted.Describe();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const int64_t scans_before_kill = PgTableScans();
  coordinator->Signal(SIGKILL);
  coordinator->Wait(std::chrono::seconds(5));
  // The dead-man timeout is 5 s: by then the agent has stopped its load and closed its
  // sessions (PgCounters waits for bench to have no backend), and nothing runs afterwards.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  const PgDatabaseCounters stopped = PgCounters();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(PgCounters(), stopped) << "transactions in bench after the dead-man timeout";
  EXPECT_GT(PgTableScans(), scans_before_kill) << "the load ran until the coordinator died";

  // A coordinator on the same address: the agent dials in again and is idle.
  coordinator = std::make_unique<Child>(
      std::vector<std::string>{DBLOAD_COORDINATOR_BINARY, "--listen", address});
  ASSERT_TRUE(AgentsConnect(address, 1)) << coordinator->out() << coordinator->err();
  const auto rows = AgentRows(RunDbload({"agents", "--coordinator", address}).out);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_GE(rows[0].size(), 5u);
  EXPECT_EQ(rows[0][0], "orphan");
  EXPECT_EQ(rows[0][4], "-") << "a reconnected agent waits for an assignment";
}

TEST_F(DistributedTest, ErrorsNameTheCoordinatorAndTheRun) {
  const ProcessResult unknown = RunDbload({"report", "run-0-nosuch", "--coordinator", address()});
  EXPECT_EQ(unknown.exit_code, kExitUsage) << unknown.Describe();
  EXPECT_THAT(unknown.err, HasSubstr("run-0-nosuch"));
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1) << unknown.Describe();

  const ProcessResult stop = RunDbload({"stop", "run-0-nosuch", "--coordinator", address()});
  EXPECT_EQ(stop.exit_code, kExitUsage) << stop.Describe();
  EXPECT_THAT(stop.err, HasSubstr("run-0-nosuch"));

  // A port nobody listens on: the coordinator's address is named.
  const std::string plan =
      WriteFile("unreachable.yaml", PlanYaml(ClosedLoad(1), "stop:\n  queries: 1\n"));
  const ProcessResult submit = RunDbload({"submit", plan, "--coordinator", "127.0.0.1:1"});
  EXPECT_EQ(submit.exit_code, kExitUsage) << submit.Describe();
  EXPECT_THAT(submit.err, HasSubstr("127.0.0.1:1"));
  EXPECT_EQ(std::count(submit.err.begin(), submit.err.end(), '\n'), 1) << submit.Describe();

  // More agents than are connected, without waiting: refused, nothing started.
  const ProcessResult too_many =
      RunDbload({"submit", plan, "--coordinator", address(), "--min-agents", "4"});
  EXPECT_EQ(too_many.exit_code, kExitUsage) << too_many.Describe();
  EXPECT_THAT(too_many.err, HasSubstr("needs 4 agents"));
}

// A network cut between the one agent of a run and its coordinator (a TcpRelay between them, cut
// both ways; the CLI talks to the coordinator directly). The agent must stop its load within the
// dead-man timeout (5 s, the coordinator's default, sent in the assignment) whatever it makes of
// the cut, which the database proves: no transaction in bench from then on. The coordinator ends
// the run with what the agent reported before the cut, never more than the database ran; and once
// the network is back the agent dials in again and waits, idle, for a new assignment.
TEST_F(DistributedTest, ANetworkCutStopsTheLoadAndTheAgentComesBackIdle) {
  constexpr std::chrono::seconds kDeadMan{5};
  constexpr int kRate = 300;
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(dir() + "/cut_state", address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  dbload::testing::TcpRelay relay(address);
  ASSERT_NE(relay.port(), 0);
  Child agent({DBLOAD_AGENT_BINARY, "--coordinator", relay.address(), "--name", "cut"});
  ASSERT_TRUE(AgentsConnect(address, 1)) << agent.out() << agent.err();

  const std::string plan =
      WriteFile("cut.yaml", PlanYaml(OpenLoad(kRate), "stop:\n  duration: 30s\n"));
  const std::string report_path = dir() + "/cut.json";
  const int64_t scans_before = PgTableScans();
  const PgDatabaseCounters before = PgCounters();
  Child submit(
      {DBLOAD_BINARY, "submit", plan, "--coordinator", address, "--wait", "--report", report_path});
  ASSERT_TRUE(submit.PumpUntil([](const std::string& out) { return absl::StrContains(out, "\n"); },
                               std::chrono::seconds(10)))
      << submit.out() << submit.err();
  const std::string header = submit.out().substr(0, submit.out().find('\n'));
  ASSERT_THAT(header, HasSubstr("across 1 agent: cut"));
  const std::string run_id = std::vector<std::string>(absl::StrSplit(header, ' '))[1];
  submit.Pump(std::chrono::seconds(2));  // load for 2 s (and its progress lines read)
  const Clock::time_point cut_at = Clock::now();
  relay.Cut();
  const auto since_cut = [&] {
    return std::chrono::duration<double>(Clock::now() - cut_at).count();
  };

  // The coordinator loses the run's only agent: the run ends as failed (exit 1), with the report
  // of what the agent had said, and the agent is no longer listed.
  const ProcessResult run = submit.Wait(kChildTimeout);
  const double run_ended_s = since_cut();
  EXPECT_EQ(run.exit_code, kExitRunFailed) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr("every agent was lost")) << run.Describe();
  EXPECT_LT(run_ended_s, kDeadMan.count() + 1.0) << run.Describe();
  const ProcessResult during_cut = RunDbload({"agents", "--coordinator", address});
  ASSERT_EQ(during_cut.exit_code, kExitOk) << during_cut.Describe();
  EXPECT_TRUE(AgentRows(during_cut.out).empty()) << during_cut.out;

  // When the agent's sessions in bench closed: how soon the load stopped, for the record.
  std::optional<double> sessions_closed_s;
  while (!sessions_closed_s && Clock::now() < cut_at + kDeadMan + std::chrono::seconds(1)) {
    if (Psql("postgres", "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench'") == "0") {
      sessions_closed_s = since_cut();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  EXPECT_TRUE(sessions_closed_s.has_value())
      << "the agent's sessions outlived the dead-man timeout";

  // Within the dead-man timeout (plus a second for closing its sessions) the agent's load has
  // stopped: PgCounters also waits for bench to have no backend left. Nothing runs afterwards.
  std::this_thread::sleep_until(cut_at + kDeadMan + std::chrono::seconds(1));
  const PgDatabaseCounters stopped = PgCounters();
  const double stopped_s = since_cut();
  std::this_thread::sleep_until(cut_at + kDeadMan + std::chrono::seconds(4));
  EXPECT_EQ(PgCounters(), stopped) << "transactions in bench after the dead-man timeout\n"
                                   << agent.out() << agent.err();

  // The report: what the agent reported before the cut, counted once.
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status() << "\n" << run.Describe();
  EXPECT_EQ(report->run_id(), run_id);
  EXPECT_EQ(report->state(), "failed");
  EXPECT_THAT(report->end_reason(), HasSubstr("failed: every agent was lost"));
  EXPECT_THAT(report->end_reason(), HasSubstr("agent cut lost"));
  EXPECT_GT(report->executed(), 0u);
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(IntervalSum(*report), report->executed());
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("Executed queries: ", report->executed(), "\n")));
  const ProcessResult fetched =
      RunDbload({"report", run_id, "--coordinator", address, "--format", "json"});
  ASSERT_EQ(fetched.exit_code, kExitOk) << fetched.Describe();
  absl::StatusOr<v1::RunReport> kept = ParseReportJson(fetched.out);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->executed(), report->executed());
  EXPECT_EQ(kept->state(), "failed");

  // The network is back: the agent dials in again and waits for an assignment; the database still
  // sees nothing in bench, then and 2 s later.
  relay.Restore();
  const Clock::time_point restored_at = Clock::now();
  ASSERT_TRUE(AgentsConnect(address, 1)) << agent.out() << agent.err();
  const double reconnect_s = std::chrono::duration<double>(Clock::now() - restored_at).count();
  const auto rows = AgentRows(RunDbload({"agents", "--coordinator", address}).out);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_GE(rows[0].size(), 5u);
  EXPECT_EQ(rows[0][0], "cut");
  EXPECT_EQ(rows[0][4], "-") << "a reconnected agent waits for an assignment";
  EXPECT_EQ(PgCounters(), stopped) << "transactions in bench after the reconnection";
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(PgCounters(), stopped) << "transactions in bench after the reconnection\n"
                                   << agent.out() << agent.err();

  // The database's own count of the run (read last: reading bench's tables opens a session in
  // it). Each connection commits kPgCommitsPerConnection besides the benchmark's transactions.
  const int64_t sessions = stopped.sessions - before.sessions;
  const int64_t committed =
      stopped.xact_commit - before.xact_commit - sessions * kPgCommitsPerConnection;
  const int64_t scans = PgTableScans() - scans_before;
  EXPECT_GT(sessions, 0);
  EXPECT_EQ(scans, committed);
  // Never more than the database ran; less by what ran after the agent's last interval report
  // (at most about one interval of 1 s at the plan's rate, and the cut's own).
  EXPECT_LE(static_cast<int64_t>(report->executed()), committed);
  EXPECT_LE(committed - static_cast<int64_t>(report->executed()), 2 * kRate);
  std::cout << "[ cut ] run ended " << run_ended_s << " s after the cut (exit " << run.exit_code
            << "); sessions closed " << sessions_closed_s.value_or(-1)
            << " s after it; bench settled " << stopped_s << " s after it; reported "
            << report->executed() << ", committed " << committed << " (scans " << scans
            << ", sessions " << sessions << "); reconnected " << reconnect_s
            << " s after the restore\n";
}

// A silent partition (the relay stops moving bytes but keeps both connections open, as a
// dropped route does): nothing tells the agent from TCP, so its own dead-man timer must stop the
// load, within the timeout the coordinator sent it (5 s); the database sees nothing after.
TEST_F(DistributedTest, ASilentPartitionStopsTheLoadWithinTheDeadManTimeout) {
  constexpr std::chrono::seconds kDeadMan{5};
  std::string address;
  std::unique_ptr<Child> coordinator = StartCoordinator(dir() + "/freeze_state", address);
  ASSERT_FALSE(address.empty()) << coordinator->out() << coordinator->err();
  dbload::testing::TcpRelay relay(address);
  ASSERT_NE(relay.port(), 0);
  Child agent({DBLOAD_AGENT_BINARY, "--coordinator", relay.address(), "--name", "frozen"});
  ASSERT_TRUE(AgentsConnect(address, 1)) << agent.out() << agent.err();

  const std::string plan =
      WriteFile("freeze.yaml", PlanYaml(OpenLoad(300), "stop:\n  duration: 30s\n"));
  const PgDatabaseCounters before = PgCounters();
  Child submit({DBLOAD_BINARY, "submit", plan, "--coordinator", address, "--wait"});
  ASSERT_TRUE(submit.PumpUntil([](const std::string& out) { return absl::StrContains(out, "\n"); },
                               std::chrono::seconds(10)))
      << submit.out() << submit.err();
  submit.Pump(std::chrono::seconds(2));
  const Clock::time_point frozen_at = Clock::now();
  relay.Freeze();

  // The coordinator hears nothing for its silence limit (3 s) and gives the run up.
  const ProcessResult run = submit.Wait(kChildTimeout);
  EXPECT_EQ(run.exit_code, kExitRunFailed) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr("every agent was lost")) << run.Describe();

  // The agent, hearing nothing either, stops by itself: its sessions are gone by the timeout
  // (plus a second to close them), and no transaction runs in bench afterwards.
  std::this_thread::sleep_until(frozen_at + kDeadMan + std::chrono::seconds(1));
  const PgDatabaseCounters stopped = PgCounters();
  EXPECT_EQ(Psql("postgres", "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench'"), "0")
      << "the agent's sessions outlived the dead-man timeout\n" << agent.err();
  std::this_thread::sleep_until(frozen_at + kDeadMan + std::chrono::seconds(4));
  EXPECT_EQ(PgCounters(), stopped) << "transactions in bench after the dead-man timeout\n"
                                   << agent.out() << agent.err();
  EXPECT_TRUE(agent.running()) << "the agent exited instead of waiting for its coordinator";

  // Cut off, the agent ran on after the coordinator lost it, until its dead-man timeout: what
  // the database counted beyond the report is within the bound that allows for that timeout.
  const ProcessResult fetched = RunDbload({"report", "--coordinator", address, "--format", "json"});
  ASSERT_EQ(fetched.exit_code, kExitOk) << fetched.Describe();
  absl::StatusOr<v1::RunReport> report = ParseReportJson(fetched.out);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->lost_agents_size(), 1) << fetched.out;
  const v1::LostAgent& lost = report->lost_agents(0);
  EXPECT_DOUBLE_EQ(lost.dead_man_s(), 5);
  const int64_t uncounted = stopped.xact_commit - before.xact_commit -
                            static_cast<int64_t>(report->executed()) -
                            (stopped.sessions - before.sessions) * kPgCommitsPerConnection;
  EXPECT_GE(uncounted, 0);
  EXPECT_LE(uncounted, static_cast<int64_t>(lost.unreported_max())) << lost.bound_note();
  std::cout << "partitioned agent: uncounted " << uncounted << ", bound if stopped when lost "
            << lost.unreported_if_stopped() << ", with the dead-man timeout "
            << lost.unreported_max() << "\n";

  // The route comes back: the agent finds the coordinator again and waits, idle.
  relay.Thaw();
  ASSERT_TRUE(AgentsConnect(address, 1)) << agent.out() << agent.err();
  const auto rows = AgentRows(RunDbload({"agents", "--coordinator", address}).out);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_GE(rows[0].size(), 5u);
  EXPECT_EQ(rows[0][4], "-") << "a reconnected agent waits for an assignment";
  EXPECT_EQ(PgCounters(), stopped) << "transactions in bench after the reconnection";
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  // Room for TwoAgentsOfFiveHundredConnectionsStartAndEndTogether (1,000) and the others.
  setenv("DBENV_PG_MAX_CONNECTIONS", "1100", /*overwrite=*/1);
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres"});
}
