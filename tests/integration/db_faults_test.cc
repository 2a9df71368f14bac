// Faults of the database during a run, end to end: the real `dbload` executable runs an open loop
// (oltp point_select, 500/s, 4 connections, 8 s) against real PostgreSQL 15, MariaDB 10.11 and
// HAProxy started by tests/harness/dbenv, while the test restarts the server (`dbenv restart`),
// kills it or freezes it (signals by its PIDs). A load generator is most needed exactly when the
// database misbehaves, so each case proves the run survives the fault (exit 0, the full duration,
// no fatal error), says what happened (errors by class, the hole in the per-second intervals,
// latency measured from the intended start) and recovers (sessions back on the server, the rate
// reached again).
//
// What the database itself says is read with its own clients over the unix socket
// (tests/harness/sql_clients.h): the sessions dbload holds after the fault (pg_stat_activity,
// information_schema.processlist) prove that every connection was opened again.
//
// Servers come back through `dbenv restart DIR SERVICE` (same port, data and passwords). Every
// fault is undone by a scope guard (SIGCONT, restart), so a failing assertion never leaves a
// server stopped for the cases after it.
//
// Each case prints one "[figures]" line (errors by class, the hole, recovery) for the record.

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined (the path of the dbload executable)"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunDbload;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::dbload::testing::ToInt;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kTableSize = 1000;
// The load of every case: slow enough for a busy 2-core machine to keep up with (so that a hole
// in the intervals is the fault's, not the machine's), fast enough that a 2 s fault leaves
// hundreds of arrivals behind.
constexpr int kRate = 500;
constexpr int kPool = 4;
constexpr int kDurationS = 8;
constexpr int kArrivals = kRate * kDurationS;
// The fault starts once this many per-second lines were printed: the run is steady by then, and
// the rest of the 8 s leaves room to see the recovery.
constexpr int kLinesBeforeFault = 2;
constexpr std::chrono::seconds kChildTimeout{30};
// How long a restarted or killed server stays down. A bare restart takes ~0.3 s here, which the
// sessions' first reconnect attempts (100 ms backoff, doubling) bridge and the catch-up hides
// within the same second; a real outage (a crash until the supervisor restarts the server, a
// failover) lasts longer, and must show in the per-second intervals as a hole.
constexpr double kDownS = 1.5;

const std::regex kIntervalLine(R"(^\[\s*([0-9]+\.[0-9])s\] target )");

enum class Backend { kPostgres, kMariaDb };

// Runs `undo` when the scope ends, also when an assertion returns early.
class ScopeGuard {
 public:
  explicit ScopeGuard(std::function<void()> undo) : undo_(std::move(undo)) {}
  ~ScopeGuard() { undo_(); }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  std::function<void()> undo_;
};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The elapsed second of the last per-second line in `out`, or -1.
double LastLineElapsed(const std::string& out, int* lines) {
  double elapsed = -1;
  *lines = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    std::match_results<absl::string_view::const_iterator> match;
    if (std::regex_search(line.begin(), line.end(), match, kIntervalLine)) {
      ++*lines;
      EXPECT_TRUE(absl::SimpleAtod(match[1].str(), &elapsed));
    }
  }
  return elapsed;
}

// Errors of the report by class ("connection", "retryable", "fatal") and by class:code.
struct ErrorTally {
  std::map<std::string, uint64_t> by_class;
  std::map<std::string, uint64_t> by_code;
  uint64_t total = 0;
};

ErrorTally TallyErrors(const v1::RunReport& report) {
  ErrorTally tally;
  for (const v1::QueryTypeReport& type : report.query_types()) {
    for (const v1::ErrorCount& count : type.error_counts()) {
      tally.by_class[count.error_class()] += count.count();
      tally.by_code[absl::StrCat(count.error_class(), ":", count.code())] += count.count();
      tally.total += count.count();
    }
  }
  return tally;
}

std::string Join(const std::map<std::string, uint64_t>& counts) {
  return counts.empty() ? "none" : absl::StrJoin(counts, " ", absl::PairFormatter("="));
}

std::string IntervalSeries(const v1::RunReport& report) {
  std::vector<std::string> parts;
  for (const v1::IntervalSample& sample : report.intervals()) {
    parts.push_back(absl::StrCat(sample.elapsed_s(), "s:", sample.executed(), "/", sample.errors(),
                                 " p99=", static_cast<int64_t>(sample.p99_ms()), "ms"));
  }
  return absl::StrJoin(parts, ", ");
}

// When the fault happened, in the run's own elapsed seconds (the intervals' clock).
struct FaultWindow {
  double start_s = 0;
  double end_s = 0;
};

class DbFaultsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_db_faults_test");
    // The PostgreSQL restarts compare the report with the database's commits: an autovacuum
    // worker's visit to database bench (2 commits, once a minute) must not fall in between.
    testing::TurnOffAutovacuum(servers());
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  // An open-loop plan at kRate for kDurationS against `port` (PostgreSQL's or MariaDB's own, or
  // HAProxy's in front of one).
  static std::string Plan(Backend backend, const std::string& port_key) {
    const bool pg = backend == Backend::kPostgres;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    return WriteFile(
        name + ".yaml",
        absl::StrCat("name: ", name, "\ntarget:\n  driver: ", pg ? "postgresql" : "mysql",
                     "\n  host: 127.0.0.1\n  port: ", servers().GetInt(port_key),
                     "\n  user: bench\n  password_file: ",
                     servers().Get(pg ? "PG_PASSWORD_FILE" : "MARIADB_PASSWORD_FILE"),
                     "\n  database: bench\n  connect_timeout: 5s\n  pool: ", kPool,
                     "\nworkload: oltp\nscenario: point_select\nworkload_options:\n  table_size: ",
                     kTableSize, "\nload:\n  open:\n    rate: ", kRate,
                     "\nwarmup: 0s\nstop:\n  duration: ", kDurationS, "s\n"));
  }

  static int64_t RowsInTable(Backend backend) {
    if (backend == Backend::kPostgres) {
      if (testing::Psql(servers(), "bench", "SELECT to_regclass('public.sbtest1') IS NOT NULL") !=
          "t") {
        return -1;
      }
      return ToInt(testing::Psql(servers(), "bench", "SELECT count(*) FROM sbtest1"));
    }
    if (testing::Mariadb(servers(),
                         "SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                         "'bench' AND table_name = 'sbtest1'") != "1") {
      return -1;
    }
    return ToInt(testing::Mariadb(servers(), "SELECT count(*) FROM bench.sbtest1"));
  }

  static void EnsurePrepared(Backend backend) {
    if (RowsInTable(backend) == kTableSize) return;
    const std::string plan =
        Plan(backend, backend == Backend::kPostgres ? "PG_PORT" : "MARIADB_PORT");
    const ProcessResult cleanup = RunDbload({"cleanup", plan});
    ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    const ProcessResult prepare = RunDbload({"prepare", plan});
    ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
    ASSERT_EQ(RowsInTable(backend), kTableSize);
  }

  // `dbenv restart DIR SERVICE --down SEC`: the server (fast shutdown if it runs) down for
  // `down_s`, then back on its port. Returns how long it took.
  static double RestartServer(const std::string& service, double down_s) {
    const ProcessResult restart =
        RunProcess({"/bin/bash", TestServers::DbenvPath(), "restart", servers().dir(), service,
                    "--down", absl::StrCat(down_s)},
                   std::chrono::seconds(60));
    EXPECT_EQ(restart.exit_code, 0) << restart.Describe();
    return restart.seconds;
  }

  static std::vector<int> ServerPids(const std::string& service) {
    absl::StatusOr<std::vector<int>> pids = servers().Pids(service);
    EXPECT_TRUE(pids.ok()) << pids.status();
    return pids.ok() ? *pids : std::vector<int>{};
  }

  // dbload's sessions as the server lists them: every one of them was opened after the server
  // (re)started, so kPool of them prove that every connection was opened again.
  static int64_t DbloadSessions(Backend backend) {
    if (backend == Backend::kPostgres) {
      return ToInt(
          testing::Psql(servers(), "postgres",
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dbload'"));
    }
    // The load's sessions use database bench; the coordinator's probe connects without one.
    return ToInt(testing::Mariadb(servers(),
                                  "SELECT count(*) FROM information_schema.processlist "
                                  "WHERE user = 'bench' AND db = 'bench'"));
  }

  // Seconds from now until the server lists kPool dbload sessions (bounded by the run's end).
  static double WaitForSessions(Backend backend, const Clock::time_point since) {
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(kDurationS);
    int64_t sessions = -1;
    while (Clock::now() < give_up) {
      sessions = DbloadSessions(backend);
      if (sessions == kPool) return SecondsSince(since);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "dbload holds " << sessions << " sessions on the server, not " << kPool;
    return -1;
  }

  // Starts the run and returns once kLinesBeforeFault per-second lines were printed; `at_s` is
  // then the run's elapsed time as estimated from the last line. Estimates err early only by how
  // late dbload prints a line, which is milliseconds.
  static void StartRun(Child& child, Clock::time_point* line_seen, double* at_s) {
    int lines = 0;
    ASSERT_TRUE(child.PumpUntil(
        [&](const std::string& out) {
          LastLineElapsed(out, &lines);
          return lines >= kLinesBeforeFault;
        },
        std::chrono::seconds(15)))
        << "stdout:\n"
        << child.out() << "\nstderr:\n"
        << child.err();
    *line_seen = Clock::now();
    *at_s = LastLineElapsed(child.out(), &lines);
  }

  static double ElapsedAt(Clock::time_point line_seen, double line_s) {
    return line_s + SecondsSince(line_seen);
  }

  // Waits for the run to end and reads its report; checks what every case needs: exit 0, the
  // whole duration, no fatal error, every arrival accounted for.
  static v1::RunReport FinishRun(Child& child, const std::string& report_path) {
    const ProcessResult result = child.Wait(kChildTimeout);
    EXPECT_EQ(result.exit_code, kExitOk) << result.Describe();
    EXPECT_EQ(result.term_signal, 0) << result.Describe();
    EXPECT_FALSE(result.timed_out) << result.Describe();
    absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
    EXPECT_TRUE(report.ok()) << report.status() << "\n" << result.Describe();
    if (!report.ok()) return {};
    // The run went on through the fault: it ended because its time was up, not at the fault.
    EXPECT_EQ(report->end_reason(), "duration") << result.Describe();
    EXPECT_NEAR(report->total_duration_s(), kDurationS, 0.5);
    EXPECT_EQ(TallyErrors(*report).by_class.count("fatal"), 0u)
        << Join(TallyErrors(*report).by_code);
    EXPECT_EQ(TallyErrors(*report).total, report->errors());
    // Open loop: an arrival the fault delayed is executed late, fails, or is counted as not
    // started; none may vanish.
    const uint64_t accounted = report->executed() + report->errors() + report->not_started();
    EXPECT_NEAR(static_cast<double>(accounted), kArrivals, kArrivals * 0.01)
        << "executed " << report->executed() << " + errors " << report->errors()
        << " + not started " << report->not_started();
    return *report;
  }

  // Checks and prints what a fault that drops connections did: errors of class connection only,
  // a hole in the intervals during the fault, executions again after it and the rate reached.
  static void ExpectConnectionFaultSurvived(const v1::RunReport& report, const FaultWindow& fault,
                                            double sessions_back_s, const std::string& what) {
    ErrorTally errors = TallyErrors(report);
    EXPECT_GT(errors.by_class["connection"], 0u) << Join(errors.by_code);
    EXPECT_EQ(errors.by_class["connection"], errors.total) << Join(errors.by_code);

    // Which intervals hold what happened when. `dbload run` merges the agent's intervals on its
    // coordinator's tick, so the sample stamped L holds the agent's second that ended about a
    // tick earlier (delivery after the tick that just passed): its executions lie in [L-2, L].
    // The hole: the fewest executions of a sample that may hold part of the fault.
    uint64_t hole = UINT64_MAX;
    double hole_at = 0;
    // Executions after the fault, counted only in samples wholly after it (0.5 s margin for the
    // estimate of the fault's end).
    uint64_t after = 0;
    double recovered_at = -1;  // the first sample after the hole at 90 % of the rate
    for (const v1::IntervalSample& sample : report.intervals()) {
      const double earliest = sample.elapsed_s() - 2.0;
      if (sample.elapsed_s() > fault.start_s && earliest < fault.end_s + 0.5 &&
          sample.executed() < hole) {
        hole = sample.executed();
        hole_at = sample.elapsed_s();
      }
      if (earliest >= fault.end_s + 0.5) after += sample.executed();
      if (recovered_at < 0 && hole_at > 0 && sample.elapsed_s() > hole_at &&
          sample.executed() >= 0.9 * kRate) {
        recovered_at = sample.elapsed_s();
      }
    }
    EXPECT_LT(hole, kRate / 2) << "no interval shows the fault: " << IntervalSeries(report);
    EXPECT_GT(after, 0u) << "nothing executed after the fault: " << IntervalSeries(report);
    EXPECT_GT(recovered_at, 0) << "the rate was never reached again: " << IntervalSeries(report);
    if (!report.intervals().empty()) {
      EXPECT_GE(report.intervals(report.intervals_size() - 1).executed(), 0.8 * kRate)
          << IntervalSeries(report);
    }
    std::cout << "[figures] " << what << ": fault " << fault.start_s << "-" << fault.end_s
              << " s; errors " << Join(errors.by_code) << "; executed " << report.executed()
              << ", not started " << report.not_started() << "; hole " << hole
              << " executed in the sample stamped " << hole_at << " s; all " << kPool
              << " sessions back on the server " << sessions_back_s
              << " s after it was up; 90 % of the rate again in the sample stamped " << recovered_at
              << " s; response max " << report.response_time().max_ms()
              << " ms; intervals: " << IntervalSeries(report) << std::endl;
  }

  // The fault was the database's, and the report says so: no generator-limited mark, and an
  // interval that overlaps the fault (with a tick's slack, as above) is named database-stalled.
  // Prints the diagnosis as the text report has it.
  static void ExpectBlamedOnTheDatabase(const v1::RunReport& report, const FaultWindow& fault,
                                        const std::string& what) {
    // What the old run-wide judgement said: the stall's queueing was the agent's own work. An
    // interval within the fault (from half a second after its start to a second after its end)
    // may not be the generator's or the pool's. Intervals around it are not held to that: an
    // agent descheduled for 20 ms on a busy machine, with idle connections, is late by its own
    // doing. Known gap: the second in which a fault begins can still be judged the generator's
    // (HAProxy with its backend down at 2.0 s: 2.0-3.0 s, 488 completed and 4 connection errors).
    double start = 0;
    for (const v1::IntervalSample& sample : report.intervals()) {
      if (start >= fault.start_s + 0.5 && sample.elapsed_s() <= fault.end_s + 1.0) {
        EXPECT_NE(sample.limit(), v1::INTERVAL_LIMIT_GENERATOR)
            << start << "-" << sample.elapsed_s() << " s: " << IntervalSeries(report);
        EXPECT_NE(sample.limit(), v1::INTERVAL_LIMIT_POOL)
            << start << "-" << sample.elapsed_s() << " s: " << IntervalSeries(report);
      }
      start = sample.elapsed_s();
    }
    EXPECT_TRUE(report.database_stalled()) << IntervalSeries(report);
    std::vector<std::string> stalled;
    double from = 0;
    bool overlaps = false;
    for (const v1::IntervalSample& sample : report.intervals()) {
      if (sample.limit() == v1::INTERVAL_LIMIT_DATABASE_STALLED) {
        stalled.push_back(absl::StrCat(from, "-", sample.elapsed_s()));
        overlaps |= sample.elapsed_s() > fault.start_s && from < fault.end_s + 2.0;
      }
      from = sample.elapsed_s();
    }
    EXPECT_TRUE(overlaps) << "fault " << fault.start_s << "-" << fault.end_s << " s, stalled "
                          << absl::StrJoin(stalled, ", ") << "; " << IntervalSeries(report);
    std::vector<std::string> marks;
    for (absl::string_view line : absl::StrSplit(RenderReportText(report), '\n')) {
      if (absl::StrContains(line, "-LIMITED") || absl::StrContains(line, "-STALLED") ||
          absl::StrContains(line, "Intervals judged") ||
          absl::StrContains(line, "dispatch lag p99")) {
        marks.emplace_back(absl::StripAsciiWhitespace(line));
      }
    }
    std::cout << "[diagnosis] " << what << " (fault " << fault.start_s << "-" << fault.end_s
              << " s):\n  " << absl::StrJoin(marks, "\n  ") << std::endl;
  }

  // A run with `service` taken down by `take_down` (nothing for a restart of its own), started
  // again after kDownS and checked: connections came back, nothing lost, the database blamed.
  // `engine`: the plan's target.engine; `sets`: more --set options; `out`: the run's report, for
  // checks of the caller's own.
  void RunThroughARestart(Backend backend, const std::string& service, const std::string& what,
                          const std::function<void()>& take_down,
                          const std::string& engine = "threads",
                          const std::vector<std::string>& sets = {}, v1::RunReport* out = nullptr) {
    ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
    const std::string report_path =
        absl::StrCat(dir_->path(), "/", service, "_", engine, sets.size(), "_restart.json");
    std::vector<std::string> args = {
        DBLOAD_BINARY,
        "run",
        Plan(backend, backend == Backend::kPostgres ? "PG_PORT" : "MARIADB_PORT"),
        "--set",
        absl::StrCat("target.engine=", engine),
        "--report",
        report_path};
    for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
    Child child(args);
    Clock::time_point line_seen;
    double line_s = 0;
    ASSERT_NO_FATAL_FAILURE(StartRun(child, &line_seen, &line_s));

    bool up = false;
    ScopeGuard restore([&] {
      if (!up) RestartServer(service, 0);
    });
    FaultWindow fault{.start_s = ElapsedAt(line_seen, line_s)};
    ASSERT_NO_FATAL_FAILURE(take_down());
    const double took = RestartServer(service, kDownS);
    ASSERT_FALSE(::testing::Test::HasFailure());
    up = true;
    const Clock::time_point back = Clock::now();
    fault.end_s = ElapsedAt(line_seen, line_s);
    const double sessions_back_s = WaitForSessions(backend, back);

    const v1::RunReport report = FinishRun(child, report_path);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    const std::string down = absl::StrCat(what, ", down ", kDownS, " s");
    ExpectConnectionFaultSurvived(report, fault, sessions_back_s,
                                  absl::StrCat(down, " (", took, " s)"));
    ExpectBlamedOnTheDatabase(report, fault, down);
    if (backend == Backend::kPostgres) {
      // The database's commits are the report's and the connections' own, reconnects included.
      const v1::CommitReconciliation& commits = report.commit_reconciliation();
      ASSERT_TRUE(commits.available()) << commits.note();
      // Each load session reconnected once, and so did EXPLAIN's for its capture after the load.
      EXPECT_EQ(commits.connections_opened(), 2 * kPool + 2);
      EXPECT_EQ(commits.verdict(), "matches")
          << "database " << commits.database_commits() << ", report " << commits.report_commits()
          << ", connections " << commits.connection_commits() << " ("
          << commits.connections_opened() << " opened, " << commits.statements_prepared()
          << " prepared)";
    }
    if (out != nullptr) *out = report;
  }

  static void RunAConnectionPerTransaction(Backend backend, const std::string& port_key,
                                           const std::string& engine);

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* DbFaultsTest::dir_ = nullptr;

// ---------------------------------------------------------------------------------------------
// 1. PostgreSQL restarted (fast shutdown, as an operator would, then kDownS down): every session
//    loses its connection, reconnects with backoff once the server is back, and the load goes on.

TEST_F(DbFaultsTest, PostgresRestartMidRunIsSurvivedAndReported) {
  RunThroughARestart(Backend::kPostgres, "postgres", "postgres restart", [] {});
}

// The same on event loops: every fiber's session loses its socket at once (libpq closes it),
// reconnects on its fiber, and watches its new socket.
TEST_F(DbFaultsTest, PostgresRestartMidRunIsSurvivedOnEventLoops) {
  RunThroughARestart(Backend::kPostgres, "postgres", "postgres restart, event loops", [] {},
                     "event_loops");
}

// Pipelined transactions (BEGIN, 14 reads, COMMIT in one round trip) through the restart: the
// ones in flight fail as a whole, and the database's commit count is still the report's.
TEST_F(DbFaultsTest, PostgresRestartMidRunIsSurvivedWithPipelinedTransactions) {
  RunThroughARestart(Backend::kPostgres, "postgres", "postgres restart, pipelined read_only", [] {},
                     "event_loops", {"target.pipeline=true", "scenario=read_only"});
}

// ---------------------------------------------------------------------------------------------
// 2. MariaDB killed (SIGKILL: no goodbye to the clients, crash recovery on start) and started
//    again on the same port.

TEST_F(DbFaultsTest, MariaDbKilledAndRestartedMidRunIsSurvivedAndReported) {
  const std::vector<int> pids = ServerPids("mariadb");
  ASSERT_EQ(pids.size(), 1u);
  RunThroughARestart(Backend::kMariaDb, "mariadb", "mariadb SIGKILL", [&] {
    ASSERT_EQ(kill(pids[0], SIGKILL), 0) << std::strerror(errno);
  });
}

// The same on event loops: Connector/C's non-blocking sessions lose their sockets at once,
// reconnect on their fibers, and the load goes on.
TEST_F(DbFaultsTest, MariaDbKilledAndRestartedMidRunIsSurvivedOnEventLoops) {
  const std::vector<int> pids = ServerPids("mariadb");
  ASSERT_EQ(pids.size(), 1u);
  RunThroughARestart(
      Backend::kMariaDb, "mariadb", "mariadb SIGKILL, event loops",
      [&] { ASSERT_EQ(kill(pids[0], SIGKILL), 0) << std::strerror(errno); }, "event_loops");
}

// A SIGKILL resets MariaDB's status counters, so what the database counted is read from the
// table itself: every insert the report counts as executed is there after crash recovery, and
// besides them at most the inserts that ended in a connection error (one whose COMMIT reached
// the log before the kill is in the table although its client never heard so).
TEST_F(DbFaultsTest, MariaDbKilledMidInsertsKeepsEveryInsertTheReportCounts) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kMariaDb));
  const int64_t before = RowsInTable(Backend::kMariaDb);
  const std::vector<int> pids = ServerPids("mariadb");
  ASSERT_EQ(pids.size(), 1u);
  v1::RunReport report;
  RunThroughARestart(
      Backend::kMariaDb, "mariadb", "mariadb SIGKILL, inserts, event loops",
      [&] { ASSERT_EQ(kill(pids[0], SIGKILL), 0) << std::strerror(errno); }, "event_loops",
      {"scenario=insert"}, &report);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  const int64_t added = RowsInTable(Backend::kMariaDb) - before;
  const auto executed = static_cast<int64_t>(report.executed());
  const auto lost_connection = static_cast<int64_t>(TallyErrors(report).by_class["connection"]);
  std::cout << "[rows] " << added << " added; report: " << executed << " executed, "
            << lost_connection << " connection errors" << std::endl;
  EXPECT_GT(executed, 0);
  EXPECT_GE(added, executed);
  EXPECT_LE(added, executed + lost_connection);
}

// ---------------------------------------------------------------------------------------------
// 3. PostgreSQL frozen (SIGSTOP of the postmaster and every backend) for 2 s: nothing fails, but
//    the latency must show the stall. At most kPool transactions were in flight when it began;
//    the ~1000 arrivals due during it started late. Timing from the intended start (no
//    coordinated omission) makes those late ones count: p99.9 and even p99 show the stall,
//    whereas timing from the actual start would show it in at most kPool samples of 4000
//    (below p99.9). The service time (from the actual start) shows it for the in-flight ones.

TEST_F(DbFaultsTest, PostgresStallShowsInResponseTimeFromIntendedStart) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string report_path = dir_->path() + "/pg_stall.json";
  Child child({DBLOAD_BINARY, "run", Plan(Backend::kPostgres, "PG_PORT"), "--report", report_path});
  Clock::time_point line_seen;
  double line_s = 0;
  ASSERT_NO_FATAL_FAILURE(StartRun(child, &line_seen, &line_s));

  const std::vector<int> pids = ServerPids("postgres");
  ASSERT_GE(pids.size(), 2u);  // the postmaster and its children
  std::vector<int> stopped;
  size_t frozen = 0;
  ScopeGuard resume([&] {
    for (int pid : stopped) kill(pid, SIGCONT);
  });
  const double stall_start_s = ElapsedAt(line_seen, line_s);
  for (int pid : pids) {
    // A child may have exited since the list was made; the others must all stop.
    if (kill(pid, SIGSTOP) == 0) stopped.push_back(pid);
  }
  ASSERT_FALSE(stopped.empty());
  frozen = stopped.size();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int pid : stopped) kill(pid, SIGCONT);
  stopped.clear();
  const double stall_end_s = ElapsedAt(line_seen, line_s);

  const v1::RunReport report = FinishRun(child, report_path);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_EQ(report.errors(), 0u) << Join(TallyErrors(report).by_code);
  EXPECT_GE(report.response_time().max_ms(), 1900) << IntervalSeries(report);
  EXPECT_GE(report.response_time().p999_ms(), 1500) << IntervalSeries(report);
  EXPECT_GE(report.response_time().p99_ms(), 1000) << IntervalSeries(report);
  EXPECT_GE(report.service_time().max_ms(), 1900);
  // Few transactions were in flight, so the service time's p99 stays that of a healthy server.
  EXPECT_LT(report.service_time().p99_ms(), 500);
  std::cout << "[figures] postgres SIGSTOP " << stall_start_s << "-" << stall_end_s << " s ("
            << frozen << " processes): response max " << report.response_time().max_ms()
            << " p99.9 " << report.response_time().p999_ms() << " p99 "
            << report.response_time().p99_ms() << " p50 " << report.response_time().p50_ms()
            << " ms; service max " << report.service_time().max_ms() << " p99.9 "
            << report.service_time().p999_ms() << " p99 " << report.service_time().p99_ms()
            << " ms; executed " << report.executed() << " errors " << report.errors()
            << " not started " << report.not_started() << "; intervals: " << IntervalSeries(report)
            << std::endl;
  ExpectBlamedOnTheDatabase(report, {.start_s = stall_start_s, .end_s = stall_end_s},
                            "postgres SIGSTOP 2 s");
}

// 3b. PostgreSQL frozen for 1 s, the shortest stall the per-second intervals must still tell
//     apart from the generator's lateness: averaged over the run, its connections were in
//     database calls a few percent of the time, and the old diagnosis blamed the queueing on
//     the agent's own work. At least half of the stall falls in one interval, where they were
//     in database calls at least half the time and completed next to nothing.

TEST_F(DbFaultsTest, PostgresOneSecondStallIsTheDatabasesNotTheGenerators) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string report_path = dir_->path() + "/pg_stall_1s.json";
  Child child({DBLOAD_BINARY, "run", Plan(Backend::kPostgres, "PG_PORT"), "--report", report_path});
  Clock::time_point line_seen;
  double line_s = 0;
  ASSERT_NO_FATAL_FAILURE(StartRun(child, &line_seen, &line_s));

  const std::vector<int> pids = ServerPids("postgres");
  ASSERT_GE(pids.size(), 2u);
  std::vector<int> stopped;
  ScopeGuard resume([&] {
    for (int pid : stopped) kill(pid, SIGCONT);
  });
  FaultWindow fault{.start_s = ElapsedAt(line_seen, line_s)};
  for (int pid : pids) {
    if (kill(pid, SIGSTOP) == 0) stopped.push_back(pid);
  }
  ASSERT_FALSE(stopped.empty());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (int pid : stopped) kill(pid, SIGCONT);
  stopped.clear();
  fault.end_s = ElapsedAt(line_seen, line_s);

  const v1::RunReport report = FinishRun(child, report_path);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  EXPECT_GE(report.response_time().max_ms(), 900) << IntervalSeries(report);
  ExpectBlamedOnTheDatabase(report, fault, "postgres SIGSTOP 1 s");
}

// ---------------------------------------------------------------------------------------------
// 4. Through HAProxy, PostgreSQL stopped for 2 s and started again: HAProxy accepts connections
//    and closes them when it cannot reach its backend, which dbload must classify as connection
//    errors (not fatal) and recover from once the backend is back.

TEST_F(DbFaultsTest, HaproxyBackendDownIsSurvivedAndReported) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string report_path = dir_->path() + "/haproxy_pg_down.json";
  Child child(
      {DBLOAD_BINARY, "run", Plan(Backend::kPostgres, "HAPROXY_PG_PORT"), "--report", report_path});
  Clock::time_point line_seen;
  double line_s = 0;
  ASSERT_NO_FATAL_FAILURE(StartRun(child, &line_seen, &line_s));

  bool up = false;
  ScopeGuard restore([&] {
    if (!up) RestartServer("postgres", 0);
  });
  FaultWindow fault{.start_s = ElapsedAt(line_seen, line_s)};
  const double took = RestartServer("postgres", 2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  up = true;
  const Clock::time_point back = Clock::now();
  fault.end_s = ElapsedAt(line_seen, line_s);
  const double sessions_back_s = WaitForSessions(Backend::kPostgres, back);

  const v1::RunReport report = FinishRun(child, report_path);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  ExpectConnectionFaultSurvived(report, fault, sessions_back_s,
                                absl::StrCat("haproxy, postgres down 2 s (", took, " s)"));
  ExpectBlamedOnTheDatabase(report, fault, "haproxy, postgres down 2 s");
}

// ---------------------------------------------------------------------------------------------
// 5. A connection per transaction (pgbench -C, target.connect: per_transaction): a connection
//    storm at a fixed rate. The server counts every connection, and the report times each
//    connect apart from the transaction's service time.

// Connections the server counted for database bench (PostgreSQL: sessions, read from database
// postgres so the reading is not one; MariaDB: every connection attempt, the reading's own too).
int64_t ServerConnections(Backend backend) {
  if (backend == Backend::kPostgres) {
    return ToInt(testing::Psql(TestServersEnvironment::Servers(), "postgres",
                               "SELECT sessions FROM pg_stat_database WHERE datname = 'bench'"));
  }
  return ToInt(testing::Mariadb(TestServersEnvironment::Servers(),
                                "SELECT variable_value FROM information_schema.global_status "
                                "WHERE variable_name = 'CONNECTIONS'"));
}

void DbFaultsTest::RunAConnectionPerTransaction(Backend backend, const std::string& port_key,
                                                const std::string& engine) {
  constexpr int kStormRate = 50, kStormS = 3;
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
  const std::string report_path = absl::StrCat(dir_->path(), "/", port_key, "_", engine, "_c.json");
  const int64_t before = ServerConnections(backend);
  const ProcessResult run =
      RunDbload({"run", Plan(backend, port_key), "--report", report_path, "--set",
                 "target.connect=per_transaction", "--set", absl::StrCat("target.engine=", engine),
                 "--set", absl::StrCat("load.open.rate=", kStormRate), "--set",
                 absl::StrCat("stop.duration=", kStormS, "s")});
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  // PostgreSQL counts a session when its backend reports its statistics: at the latest when it
  // exits, which the last connection's may do a moment after dbload.
  int64_t counted = ServerConnections(backend) - before;
  for (int i = 0; i < 40 && backend == Backend::kPostgres && counted < kStormRate * kStormS; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    counted = ServerConnections(backend) - before;
  }
  absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->executed(), kStormRate * kStormS) << run.Describe();
  EXPECT_EQ(report->errors(), 0u) << Join(TallyErrors(*report).by_code);
  EXPECT_EQ(report->connect_time().count(), report->executed());
  EXPECT_GT(report->connect_time().p50_ms(), 0);
  // The service time is the transaction's statement alone, the connect is not in it.
  EXPECT_LT(report->service_time().p50_ms(), report->connect_time().p50_ms());
  EXPECT_GT(report->response_time().p50_ms(), report->connect_time().p50_ms());
  std::cout << "[" << port_key << ", " << engine << "] " << report->executed()
            << " transactions, each on its own connection: connect p50 "
            << report->connect_time().p50_ms() << " ms, p99 " << report->connect_time().p99_ms()
            << " ms; service p50 " << report->service_time().p50_ms() << " ms; the server counted "
            << counted << " connections\n";
  // Beside the transactions' own: the workers' first connections (which checked the target)
  // and EXPLAIN's.
  const int64_t expected_extra = kPool + 1;
  if (backend == Backend::kPostgres) {
    const v1::CommitReconciliation& commits = report->commit_reconciliation();
    EXPECT_EQ(commits.connections_opened(), report->executed() + expected_extra);
    EXPECT_EQ(commits.verdict(), "matches")
        << "database " << commits.database_commits() << ", report " << commits.report_commits()
        << ", connections " << commits.connection_commits();
    EXPECT_EQ(counted, static_cast<int64_t>(commits.connections_opened()));
  } else {
    // And the probe's one connection, and the reading after the run.
    EXPECT_EQ(counted, static_cast<int64_t>(report->executed()) + expected_extra + 2);
  }
}

TEST_F(DbFaultsTest, PostgresConnectionPerTransactionOnEventLoops) {
  RunAConnectionPerTransaction(Backend::kPostgres, "PG_PORT", "event_loops");
}

TEST_F(DbFaultsTest, PostgresConnectionPerTransactionThroughHaproxy) {
  RunAConnectionPerTransaction(Backend::kPostgres, "HAPROXY_PG_PORT", "threads");
}

TEST_F(DbFaultsTest, MariaDbConnectionPerTransaction) {
  RunAConnectionPerTransaction(Backend::kMariaDb, "MARIADB_PORT", "threads");
}

// A connection per transaction through a PostgreSQL restart: the connects refused while it is
// down fail their transactions as connection errors, no arrival is lost, and the server's own
// counts agree with the report's: every connection it saw, and every commit.
TEST_F(DbFaultsTest, PostgresRestartWithAConnectionPerTransaction) {
  constexpr int kStormRate = 50;
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string report_path = dir_->path() + "/pg_restart_per_transaction.json";
  const int64_t before = ServerConnections(Backend::kPostgres);
  Child child({DBLOAD_BINARY, "run", Plan(Backend::kPostgres, "PG_PORT"), "--set",
               "target.connect=per_transaction", "--set",
               absl::StrCat("load.open.rate=", kStormRate), "--report", report_path});
  Clock::time_point line_seen;
  double line_s = 0;
  ASSERT_NO_FATAL_FAILURE(StartRun(child, &line_seen, &line_s));
  bool up = false;
  ScopeGuard restore([&] {
    if (!up) RestartServer("postgres", 0);
  });
  FaultWindow fault{.start_s = ElapsedAt(line_seen, line_s)};
  RestartServer("postgres", kDownS);
  ASSERT_FALSE(::testing::Test::HasFailure());
  up = true;
  fault.end_s = ElapsedAt(line_seen, line_s);

  const ProcessResult result = child.Wait(kChildTimeout);
  ASSERT_EQ(result.exit_code, kExitOk) << result.Describe();
  absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->end_reason(), "duration");
  ErrorTally errors = TallyErrors(*report);
  EXPECT_GT(errors.by_class["connection"], 0u) << Join(errors.by_code);
  EXPECT_EQ(errors.by_class["connection"], report->errors()) << Join(errors.by_code);
  EXPECT_EQ(report->executed() + report->errors() + report->not_started(),
            static_cast<uint64_t>(kStormRate * kDurationS));
  // Every transaction that ran connected first; so did one that failed after its connect.
  EXPECT_GE(report->connect_time().count(), report->executed());
  EXPECT_LE(report->connect_time().count(), report->executed() + report->errors());

  const v1::CommitReconciliation& commits = report->commit_reconciliation();
  ASSERT_TRUE(commits.available()) << commits.note();
  EXPECT_EQ(commits.verdict(), "matches")
      << "database " << commits.database_commits() << ", report " << commits.report_commits()
      << ", connections " << commits.connection_commits();
  // A backend counts its session when it exits: the last one's may come a moment after dbload.
  int64_t counted = ServerConnections(Backend::kPostgres) - before;
  for (int i = 0; i < 40 && counted < static_cast<int64_t>(commits.connections_opened()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    counted = ServerConnections(Backend::kPostgres) - before;
  }
  EXPECT_EQ(counted, static_cast<int64_t>(commits.connections_opened()));
  std::cout << "[figures] postgres restart, a connection per transaction, fault " << fault.start_s
            << "-" << fault.end_s << " s: executed " << report->executed() << ", errors "
            << Join(errors.by_code) << ", not started " << report->not_started()
            << "; connections opened " << commits.connections_opened() << ", counted by the server "
            << counted << "; commits: database " << commits.database_commits() << ", report "
            << commits.report_commits() << "; intervals: " << IntervalSeries(*report) << std::endl;
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb", "haproxy"});
}
