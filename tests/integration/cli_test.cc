// The `dbload` command end to end: the real executable runs as a child process against real
// PostgreSQL 15, MariaDB 10.11 and HAProxy (started by tests/harness/dbenv), with plan files
// written into a temporary directory. Exit codes, stdout, stderr and --report JSON are checked,
// and every count is checked against the database's own counters, read from a separate
// superuser session over the unix socket (psql, mariadb), never only against what dbload says.
//
// Counters used, and why they are exact:
//  - PostgreSQL pg_stat_user_tables (seq_scan + idx_scan) of sbtest1: each point_select
//    execution scans sbtest1 exactly once; nothing else touches the table while a case runs.
//    This is the exact count of the benchmark statement's executions.
//  - PostgreSQL pg_stat_database.xact_commit / sessions of database `bench`, read from a session
//    on database `postgres` (so the observer's own transactions are not counted in bench). See
//    kPgCommitsPerConnection for the per-connection allowance. Autovacuum is turned off on the
//    throwaway server (a worker visiting bench would commit transactions of its own).
//    These statistics reach shared memory asynchronously (a backend flushes them when it exits,
//    shortly after the client has gone), so reads wait until they are stable, bounded.
//  - MariaDB SHOW GLOBAL STATUS Com_stmt_execute / Com_stmt_prepare: the benchmark runs only
//    server-side prepared statements; the observer (mariadb -e) uses none.
//
// The oltp workload always uses the table sbtest1, so cases run one after another (as gtest
// does) and each one establishes the table state it needs (EnsurePrepared).
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/exit_codes.h"
#include "base/histogram.h"
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
using ::dbload::testing::LoadReport;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunDbload;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::dbload::testing::ToInt;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;


// Every child is bounded: a hung dbload fails its case instead of the whole binary.
constexpr std::chrono::seconds kChildTimeout{30};

// The oltp data set of every case: small, so prepare takes milliseconds.
constexpr int kTableSize = 1000;

// Transactions a dbload PostgreSQL connection commits besides the benchmark's statements, as
// pg_stat_database.xact_commit counts them: 1 for the backend's start-up (InitPostgres reads the
// catalogs in a transaction of its own), and per statement prepared 2: Parse + Sync
// (libpqxx's prepare_now) and Describe + Sync (the driver's PQdescribePrepared, for the
// parameter count) each run in an implicit transaction. point_select with tables=1 prepares one
// statement: 3. (Measured: 3000 point selects on 2 connections commit exactly 3006.)
constexpr int64_t kPgCommitsPerConnection = 3;

// ---------------------------------------------------------------------------------------------
// Small helpers.

int LineOf(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

int CountLines(const std::string& text, const std::regex& pattern) {
  int lines = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    lines += std::regex_search(line.begin(), line.end(), pattern);
  }
  return lines;
}

// A loopback TCP port nobody listens on (bound, then released).
uint32_t ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return 1;
  }
  close(fd);
  return ntohs(address.sin_port);
}

enum class Backend { kPostgres, kMariaDb };

// ---------------------------------------------------------------------------------------------
// The fixture: observers of both databases, plan files, and the table state.

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_cli_test");
    TestServers& servers = TestServersEnvironment::Servers();
    // See the file comment: nothing but the case itself may commit in database bench.
    testing::TurnOffAutovacuum(servers);
    ASSERT_FALSE(servers.Get("HAPROXY_PG_PORT").empty());
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }
  static const std::string& dir() { return dir_->path(); }

  // A file in the suite's directory, named after the test so that messages are easy to read.
  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  static std::string TestName() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  // ---- plans ----

  struct TargetSpec {
    std::string driver;
    std::string host = "127.0.0.1";
    uint32_t port = 0;
    std::string password_file;
    uint32_t pool = 0;  // 0: the default
  };

  static TargetSpec Direct(Backend backend) {
    const bool pg = backend == Backend::kPostgres;
    return {.driver = pg ? "postgresql" : "mysql",
            .port = static_cast<uint32_t>(servers().GetInt(pg ? "PG_PORT" : "MARIADB_PORT")),
            .password_file = servers().Get(pg ? "PG_PASSWORD_FILE" : "MARIADB_PASSWORD_FILE")};
  }
  static TargetSpec ThroughHaproxy(Backend backend) {
    TargetSpec target = Direct(backend);
    target.port = static_cast<uint32_t>(servers().GetInt(
        backend == Backend::kPostgres ? "HAPROXY_PG_PORT" : "HAPROXY_MARIADB_PORT"));
    return target;
  }

  static std::string TargetYaml(const TargetSpec& target) {
    std::string yaml = absl::StrCat("target:\n  driver: ", target.driver, "\n  host: ", target.host,
                                    "\n  port: ", target.port,
                                    "\n  user: bench\n  password_file: ", target.password_file,
                                    "\n  database: bench\n  connect_timeout: 5s\n");
    if (target.pool > 0) absl::StrAppend(&yaml, "  pool: ", target.pool, "\n");
    return yaml;
  }

  // `load` and `stop` are YAML blocks ("load:\n  closed:\n ...").
  static std::string PlanYaml(const TargetSpec& target, const std::string& load,
                              const std::string& stop, const std::string& warmup = "0s") {
    return absl::StrCat("name: ", TestName(), "\n", TargetYaml(target),
                        "workload: oltp\nscenario: point_select\nworkload_options:\n  table_size: ",
                        kTableSize, "\n", load, "warmup: ", warmup, "\n", stop);
  }

  static std::string ClosedLoad(int clients, const std::string& think_time = "0s") {
    return absl::StrCat("load:\n  closed:\n    clients: ", clients,
                        "\n    think_time: ", think_time, "\n");
  }

  // A plan file for `backend` that just works: closed loop, 2 clients, 1 s.
  static std::string ShortPlan(const TargetSpec& target, const std::string& file_name) {
    return WriteFile(file_name, PlanYaml(target, ClosedLoad(2, "1ms"), "stop:\n  duration: 1s\n"));
  }

  // ---- observers ----

  // The servers' own clients (tests/harness/sql_clients.h), bound to this suite's servers.
  static std::vector<std::string> PsqlArgs(const std::string& database, const std::string& sql) {
    return dbload::testing::PsqlArgs(servers(), database, sql);
  }
  static std::string Psql(const std::string& database, const std::string& sql) {
    return dbload::testing::Psql(servers(), database, sql);
  }
  static std::string Mariadb(const std::string& sql) {
    return dbload::testing::Mariadb(servers(), sql);
  }

  using PgDatabaseCounters = testing::PgDatabaseCounters;

  // pg_stat_database of bench, read from database postgres once no dbload backend is left and
  // two reads 300 ms apart agree (backends flush their counts as they exit; bounded at 10 s).
  static PgDatabaseCounters PgCounters() { return testing::SettledPgDatabaseCounters(servers()); }

  // How many times sbtest1 was scanned (each point_select execution scans it once). Read from
  // database bench: call it before PgCounters() ahead of a run and after it afterwards, so that
  // this session's own transactions in bench fall outside the measured window.
  static int64_t PgTableScans() { return testing::PgTableScans(servers(), "sbtest1"); }

  struct MariaDbCounters {
    int64_t stmt_execute = -1;
    int64_t stmt_prepare = -1;
  };

  // Global status, settled (testing::SettledMariaDbStatus).
  static MariaDbCounters MariaDbStatus() {
    std::map<std::string, int64_t> values =
        testing::SettledMariaDbStatus(servers(), {"Com_stmt_execute", "Com_stmt_prepare"});
    return {values["Com_stmt_execute"], values["Com_stmt_prepare"]};
  }

  // Rows in sbtest1, or -1 when the table does not exist.
  static int64_t RowsInTable(Backend backend) {
    if (backend == Backend::kPostgres) {
      const std::string exists = Psql("bench", "SELECT to_regclass('public.sbtest1') IS NOT NULL");
      if (exists != "t") return -1;
      return ToInt(Psql("bench", "SELECT count(*) FROM sbtest1"));
    }
    const std::string exists = Mariadb(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'bench' AND "
        "table_name = 'sbtest1'");
    if (exists != "1") return -1;
    return ToInt(Mariadb("SELECT count(*) FROM bench.sbtest1"));
  }

  // Makes sure sbtest1 holds the data set, running `dbload cleanup` + `prepare` if not.
  static void EnsurePrepared(Backend backend) {
    if (RowsInTable(backend) == kTableSize) return;
    const std::string plan = ShortPlan(Direct(backend), "ensure_prepared.yaml");
    const ProcessResult cleanup = RunDbload({"cleanup", plan});
    ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    const ProcessResult prepare = RunDbload({"prepare", plan});
    ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
    ASSERT_EQ(RowsInTable(backend), kTableSize);
  }

  // Input that must be refused before any connection: exit 2, one line on stderr containing
  // every `expected` text, and PostgreSQL's counters for bench unchanged.
  void ExpectRejectedBeforeLoad(const std::vector<std::string>& args,
                                const std::vector<std::string>& expected) {
    const PgDatabaseCounters before = PgCounters();
    const ProcessResult result = RunDbload(args);
    EXPECT_EQ(result.exit_code, kExitUsage) << result.Describe();
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << "expected exactly one line on stderr\n"
        << result.Describe();
    EXPECT_TRUE(result.err.ends_with("\n")) << result.Describe();
    for (const std::string& text : expected) EXPECT_THAT(result.err, HasSubstr(text));
    EXPECT_THAT(result.out, Not(HasSubstr("Executed queries")));
    const PgDatabaseCounters after = PgCounters();
    EXPECT_EQ(after.sessions, before.sessions) << "dbload connected to bench";
    EXPECT_EQ(after.xact_commit, before.xact_commit);
    EXPECT_EQ(after.xact_rollback, before.xact_rollback);
  }

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* CliTest::dir_ = nullptr;

const std::regex kIntervalLine(R"(^\[\s*[0-9]+\.[0-9]s\] target )");

// ---------------------------------------------------------------------------------------------
// 1. prepare + closed-loop run on PostgreSQL, counted by the report and by the server.

TEST_F(CliTest, PostgresPrepareThenClosedLoopRunExecutesExactlyTheBudget) {
  // prepare from scratch, through the CLI.
  const std::string plan_text =
      PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2, "1ms"),
               // The server's counts below are the load's alone: EXPLAIN's connection and
               // statements would add to them (explain_test.cc counts those).
               "stop:\n  queries: 3000\nexplain: {enabled: false}\n");
  const std::string plan = WriteFile("pg_closed.yaml", plan_text);
  const ProcessResult cleanup = RunDbload({"cleanup", plan});
  ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
  ASSERT_EQ(RowsInTable(Backend::kPostgres), -1);
  const ProcessResult prepare = RunDbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
  EXPECT_THAT(prepare.out, HasSubstr("sbtest1: 1000 / 1000 rows"));
  EXPECT_THAT(prepare.out, HasSubstr("prepared in"));
  ASSERT_EQ(RowsInTable(Backend::kPostgres), kTableSize);

  // The think time (1 ms) stretches 3000 queries over ~1.5 s so that per-second lines appear.
  const std::string report_path = dir() + "/pg_closed.json";
  const int64_t scans_before = PgTableScans();
  const PgDatabaseCounters before = PgCounters();
  const ProcessResult run = RunDbload({"run", plan, "--report", report_path});
  const PgDatabaseCounters after = PgCounters();
  const int64_t scans_after = PgTableScans();

  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  EXPECT_GE(CountLines(run.out, kIntervalLine), 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("Total test duration: PT"));
  EXPECT_THAT(run.out, HasSubstr("Executed queries: 3000\n"));
  EXPECT_THAT(run.out, HasSubstr("Actual queries rate:"));
  EXPECT_THAT(run.out, HasSubstr("Percentile 50"));
  EXPECT_THAT(run.out, HasSubstr("Ended by: queries"));
  EXPECT_THAT(run.out, HasSubstr("Report written to " + report_path));

  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->executed(), 3000u);
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(report->end_reason(), "queries");
  ASSERT_EQ(report->query_types_size(), 1);
  EXPECT_EQ(report->query_types(0).name(), "point_select");
  EXPECT_EQ(report->query_types(0).executed(), 3000u);
  absl::StatusOr<Histogram> histogram =
      Histogram::FromProto(report->query_types(0).response_histogram());
  ASSERT_TRUE(histogram.ok()) << histogram.status();
  EXPECT_EQ(histogram->TotalCount(), 3000u);
  EXPECT_EQ(report->response_time().count(), 3000u);

  // The server agrees: the statement ran exactly 3000 times …
  EXPECT_EQ(scans_after - scans_before, 3000);
  // … and bench committed those 3000 transactions plus exactly the per-connection ones.
  EXPECT_EQ(after.xact_commit - before.xact_commit, 3000 + 2 * kPgCommitsPerConnection)
      << "expected the 3000 statements plus, for each of the 2 connections, its start-up and "
         "the round trips of preparing one statement (see kPgCommitsPerConnection; update it "
         "if the driver's connect/prepare round trips changed on purpose)";
  EXPECT_EQ(after.xact_rollback - before.xact_rollback, 0);
  EXPECT_EQ(after.sessions - before.sessions, 2);
}

// ---------------------------------------------------------------------------------------------
// 1b. Stages across two agents: a staircase then a last stage of exactly its query count; every
//     stage's numbers come from its own intervals, and the server counts the same.

TEST_F(CliTest, StagedRunOverTwoAgentsReportsEachStageAndTheServerAgrees) {
  EnsurePrepared(Backend::kPostgres);
  const std::string plan = WriteFile(
      "pg_stages.yaml",
      PlanYaml(Direct(Backend::kPostgres), "load: {closed: {think_time: 1ms}}\n",
               "stages:\n"
               "  - {name: climb, clients: {from: 1, step: 1, every: 1s, max: 3}}\n"
               "  - {name: burst, queries: 800, clients: 3}\n"
               "  - {name: last, queries: 1500, clients: 2}\n"
               "explain: {enabled: false}\n"));  // counts of the load alone, as above
  const std::string report_path = dir() + "/pg_stages.json";
  const int64_t scans_before = PgTableScans();
  const PgDatabaseCounters before = PgCounters();
  const ProcessResult run = RunDbload({"run", plan, "--agents", "2", "--report", report_path});
  const PgDatabaseCounters after = PgCounters();
  const int64_t scans_after = PgTableScans();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("Stages (response time in ms"));
  EXPECT_THAT(run.out, HasSubstr(" stage 1 target 1 clients"));

  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->stages_size(), 3);
  const v1::StageReport& climb = report->stages(0);
  const v1::StageReport& burst = report->stages(1);
  const v1::StageReport& last = report->stages(2);
  // A stage in the middle that ends on its count: exactly it, over both agents.
  EXPECT_EQ(burst.executed() + burst.errors(), 800u);
  EXPECT_EQ(climb.name(), "climb");
  EXPECT_NEAR(climb.duration_s(), 3.0, 0.1);
  EXPECT_EQ(climb.max_clients(), 3u);
  EXPECT_GT(climb.executed(), 0u);
  EXPECT_EQ(last.executed() + last.errors(), 1500u);
  EXPECT_EQ(climb.executed() + burst.executed() + last.executed(), report->executed());
  EXPECT_EQ(report->end_reason(), "queries");
  // Stage totals come from their histograms, like the run's.
  absl::StatusOr<Histogram> last_histogram =
      Histogram::FromProto(last.query_types(0).response_histogram());
  ASSERT_TRUE(last_histogram.ok()) << last_histogram.status();
  EXPECT_EQ(last_histogram->TotalCount(), last.executed());

  // The server ran exactly what the report says, over 3 sessions: levels 1, 2, 3 spread over
  // two agents are 1/0, 1/1, 2/1, so agent 1 starts two clients and agent 2 one.
  EXPECT_EQ(scans_after - scans_before, static_cast<int64_t>(report->executed()));
  EXPECT_EQ(after.sessions - before.sessions, 3);
  EXPECT_EQ(after.xact_commit - before.xact_commit,
            static_cast<int64_t>(report->executed()) + 3 * kPgCommitsPerConnection);
}

TEST_F(CliTest, AbortRuleEndsTheRunEarlyWithItsReasonAndExitCode3) {
  EnsurePrepared(Backend::kPostgres);
  // No point select answers within a microsecond: the rule breaks at once and holds.
  const std::string plan =
      WriteFile("pg_abort.yaml", PlanYaml(Direct(Backend::kPostgres), ClosedLoad(1, "1ms"),
                                          "stop: {duration: 60s}\n"
                                          "abort: {p99_above: 1us, for: 2s}\n"));
  const std::string report_path = dir() + "/pg_abort.json";
  const auto started = Clock::now();
  const ProcessResult run = RunDbload({"run", plan, "--report", report_path});
  EXPECT_EQ(run.exit_code, kExitAborted) << run.Describe();
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(20));
  EXPECT_THAT(run.err, HasSubstr("aborted: p99"));
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(report->end_reason(), StartsWith("aborted: p99 "));
  EXPECT_THAT(report->end_reason(), HasSubstr("above 0.001 ms for"));
  EXPECT_GT(report->executed(), 0u);
  EXPECT_LT(report->total_duration_s(), 10);
}

TEST_F(CliTest, KneeSearchAcrossTwoAgentsFindsTheCapacityOfTheNoopEngine) {
  // Two agents × 2 connections × 20 ms per transaction: 200/s at most, however slow the machine
  // (slower only lowers it). 30/s meets the SLO easily; 500/s and then the bisection's 265/s
  // cannot reach 80 % of their rate.
  const std::string plan = WriteFile("noop_knee.yaml", R"(name: noop-knee
target: {driver: noop, noop: {fixed: 20ms}, pool: 2}
workload: oltp
scenario: point_select
load: {open: {}}
stages:
  - name: knee
    knee: {from: 30, step: 470, max: 1000, every: 1s, refine: 1, p99: 500ms, achieved: 0.8}
)");
  const std::string report_path = dir() + "/noop_knee.json";
  const ProcessResult run = RunDbload({"run", plan, "--agents", "2", "--report", report_path});
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("the highest load that met the SLO was 30/s"));
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->end_reason(), "knee");
  ASSERT_EQ(report->stages_size(), 1);
  const v1::StageReport& stage = report->stages(0);
  EXPECT_EQ(stage.knee(), 30);
  ASSERT_EQ(stage.knee_steps_size(), 3);
  const std::vector<double> levels = {30, 500, 265};
  uint64_t judged = 0;
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(stage.knee_steps(i).level(), levels[i]);
    EXPECT_EQ(stage.knee_steps(i).met(), i == 0) << stage.knee_steps(i).missed();
    EXPECT_GE(stage.knee_steps(i).judged_s(), 0.99);
    judged += stage.knee_steps(i).executed();
  }
  // Each step was judged on part of what ran in it; the stage counts everything.
  EXPECT_LE(judged, stage.executed());
  EXPECT_EQ(stage.executed(), report->executed());
}

// ---------------------------------------------------------------------------------------------
// 2. Open loop on MariaDB: every arrival is either executed or counted as not started, and the
//    server executed exactly what the report says.


TEST_F(CliTest, MariaDbOpenLoopAccountsForEveryArrival) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kMariaDb));
  TargetSpec target = Direct(Backend::kMariaDb);
  target.pool = 4;
  const std::string plan =
      WriteFile("mariadb_open.yaml",
                PlanYaml(target, "load:\n  open:\n    rate: 1000\n", "stop:\n  duration: 2s\n"));
  const std::string report_path = dir() + "/mariadb_open.json";
  const MariaDbCounters before = MariaDbStatus();
  const ProcessResult run = RunDbload({"run", plan, "--report", report_path});
  const MariaDbCounters after = MariaDbStatus();

  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  EXPECT_GE(CountLines(run.out, kIntervalLine), 1) << run.out;
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->end_reason(), "duration");
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_GT(report->executed(), 0u);
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("Executed queries: ", report->executed(), "\n")));
  // Uniform arrivals at start + k ms for k = 0, 1, …: those before start + 2 s are k = 0 … 1999.
  // The arrival at exactly start + 2 s is excluded (the deadline is exclusive); ±1 allows for
  // the pacer's start and the deadline being read from the clock at two (close) moments, which
  // can move that one boundary arrival in or out. Anything more means arrivals were lost, or
  // the run's window was not the 2 s the plan asked for.
  const int64_t accounted = static_cast<int64_t>(report->executed() + report->not_started());
  EXPECT_GE(accounted, 1999) << "executed " << report->executed() << " + not started "
                             << report->not_started() << "\n"
                             << run.out;
  EXPECT_LE(accounted, 2001) << "executed " << report->executed() << " + not started "
                             << report->not_started();
  // Every started transaction is one COM_STMT_EXECUTE, successful or not.
  EXPECT_EQ(after.stmt_execute - before.stmt_execute,
            static_cast<int64_t>(report->executed() + report->errors()));
  // One prepared statement per connection.
  EXPECT_EQ(after.stmt_prepare - before.stmt_prepare, 4);
}

// ---------------------------------------------------------------------------------------------
// 3. Through HAProxy.

TEST_F(CliTest, RunsThroughHaproxyToPostgres) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string plan = ShortPlan(ThroughHaproxy(Backend::kPostgres), "haproxy_pg.yaml");
  const std::string report_path = dir() + "/haproxy_pg.json";
  const int64_t scans_before = PgTableScans();
  PgCounters();  // let the observer's own session settle before the run
  const ProcessResult run = RunDbload({"run", plan, "--report", report_path});
  PgCounters();
  const int64_t scans_after = PgTableScans();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->executed(), 0u);
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(scans_after - scans_before, static_cast<int64_t>(report->executed()));
}

TEST_F(CliTest, RunsThroughHaproxyToMariaDb) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kMariaDb));
  const std::string plan = ShortPlan(ThroughHaproxy(Backend::kMariaDb), "haproxy_mariadb.yaml");
  const std::string report_path = dir() + "/haproxy_mariadb.json";
  const MariaDbCounters before = MariaDbStatus();
  const ProcessResult run = RunDbload({"run", plan, "--report", report_path});
  const MariaDbCounters after = MariaDbStatus();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(report->executed(), 0u);
  EXPECT_EQ(report->errors(), 0u);
  EXPECT_EQ(after.stmt_execute - before.stmt_execute, static_cast<int64_t>(report->executed()));
}

// ---------------------------------------------------------------------------------------------
// 4. Bad input: exit 2 before any connection, one line naming the file, the line and the field.

TEST_F(CliTest, UnknownKeyNamesFileLineFieldAndSuggestion) {
  std::string text = PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2), "stop:\n  duration: 1s\n");
  text.replace(text.find("  database: bench"), 17, "  databse: bench");
  const std::string plan = WriteFile("plan.yaml", text);
  ExpectRejectedBeforeLoad({"run", plan}, {absl::StrCat(plan, ":", LineOf(text, "databse:"), ":"),
                                           "target.databse", "did you mean 'database'"});
}

TEST_F(CliTest, WrongTypeNamesFileLineAndField) {
  std::string text = PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2), "stop:\n  duration: 1s\n");
  const size_t port = text.find("  port: ");
  text.replace(port, text.find('\n', port) - port, "  port: abc");
  const std::string plan = WriteFile("plan.yaml", text);
  ExpectRejectedBeforeLoad({"run", plan}, {absl::StrCat(plan, ":", LineOf(text, "port: abc"), ":"),
                                           "target.port", "\"abc\""});
}

TEST_F(CliTest, NegativeRateNamesFileLineAndField) {
  const std::string text = PlanYaml(Direct(Backend::kPostgres), "load:\n  open:\n    rate: -5\n",
                                    "stop:\n  duration: 1s\n");
  const std::string plan = WriteFile("plan.yaml", text);
  ExpectRejectedBeforeLoad({"run", plan}, {absl::StrCat(plan, ":", LineOf(text, "rate: -5"), ":"),
                                           "load.open.rate", "must be > 0"});
}

TEST_F(CliTest, MissingTargetIsNamed) {
  std::string text = PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2), "stop:\n  duration: 1s\n");
  const size_t begin = text.find("target:");
  text.erase(begin, text.find("workload:") - begin);
  const std::string plan = WriteFile("plan.yaml", text);
  // A missing field has no line of its own: the file and the field are named.
  ExpectRejectedBeforeLoad({"run", plan}, {plan + ": target: missing"});
}

TEST_F(CliTest, UnknownWorkloadOptionNamesFileLineAndField) {
  std::string text = PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2), "stop:\n  duration: 1s\n");
  text.replace(text.find("  table_size:"), 0, "  colour: red\n");
  const std::string plan = WriteFile("plan.yaml", text);
  ExpectRejectedBeforeLoad({"run", plan},
                           {absl::StrCat(plan, ":", LineOf(text, "colour: red"), ":"),
                            "workload_options.colour", "unknown option of workload oltp"});
}

TEST_F(CliTest, UnknownScenarioNamesFileLineAndField) {
  std::string text = PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2), "stop:\n  duration: 1s\n");
  text.replace(text.find("scenario: point_select"), 22, "scenario: point_insert");
  const std::string plan = WriteFile("plan.yaml", text);
  ExpectRejectedBeforeLoad({"run", plan},
                           {absl::StrCat(plan, ":", LineOf(text, "scenario: point_insert"), ":"),
                            "scenario", "point_insert", "point_select"});
}

TEST_F(CliTest, MissingPlanFileIsNamed) {
  const std::string plan = dir() + "/no_such_plan.yaml";
  ExpectRejectedBeforeLoad({"run", plan}, {plan, "No such file"});
}

// ---------------------------------------------------------------------------------------------
// 5. Connection failures and passwords.

TEST_F(CliTest, UnreachableDatabaseNamesTheAddress) {
  TargetSpec target = Direct(Backend::kPostgres);
  target.port = ClosedPort();
  const std::string plan = ShortPlan(target, "unreachable.yaml");
  const ProcessResult run = RunDbload({"run", plan});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("127.0.0.1:", target.port)));
  EXPECT_THAT(run.err, HasSubstr("connect"));
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.Describe();
  EXPECT_THAT(run.out, Not(HasSubstr("Executed queries")));
}

TEST_F(CliTest, WrongPasswordIsAnAuthenticationErrorThatNeverShowsIt) {
  const std::string wrong = absl::StrCat("Wr0ngPassw0rd", getpid(), "xyz");
  const std::string password_file = WriteFile("wrong_password", wrong + "\n");
  for (Backend backend : {Backend::kPostgres, Backend::kMariaDb}) {
    SCOPED_TRACE(backend == Backend::kPostgres ? "postgres" : "mariadb");
    TargetSpec target = Direct(backend);
    target.password_file = password_file;
    const std::string plan = ShortPlan(target, "wrong_password.yaml");
    const ProcessResult run = RunDbload({"run", plan});
    EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
    EXPECT_THAT(run.err, HasSubstr("authentication"));
    EXPECT_THAT(run.err, HasSubstr(plan));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.Describe();
    EXPECT_THAT(run.out + run.err, Not(HasSubstr(wrong)));
    EXPECT_THAT(run.out + run.err, Not(HasSubstr("Passw0rd")));
  }
}

TEST_F(CliTest, CorrectPasswordNeverAppearsInOutputOrReport) {
  for (Backend backend : {Backend::kPostgres, Backend::kMariaDb}) {
    SCOPED_TRACE(backend == Backend::kPostgres ? "postgres" : "mariadb");
    ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
    absl::StatusOr<std::string> password =
        backend == Backend::kPostgres ? servers().PostgresPassword() : servers().MariaDbPassword();
    ASSERT_TRUE(password.ok()) << password.status();
    ASSERT_GE(password->size(), 8u);
    const std::string plan = ShortPlan(Direct(backend), "password.yaml");
    const std::string report_path = dir() + "/password.json";
    const ProcessResult run = RunDbload({"run", plan, "--report", report_path});
    ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
    absl::StatusOr<std::string> json = dbload::testing::ReadFile(report_path);
    ASSERT_TRUE(json.ok()) << json.status();
    EXPECT_THAT(run.out, Not(HasSubstr(*password)));
    EXPECT_THAT(run.err, Not(HasSubstr(*password)));
    EXPECT_THAT(*json, Not(HasSubstr(*password)));
  }
}

// ---------------------------------------------------------------------------------------------
// 6. --set overrides a plan value exactly as if it were written in the file.

TEST_F(CliTest, SetOverrideChangesTheQueryBudget) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string plan =
      WriteFile("set_override.yaml",
                PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2), "stop:\n  queries: 3000\n"));
  const std::string report_path = dir() + "/set_override.json";
  const int64_t scans_before = PgTableScans();
  PgCounters();
  const ProcessResult run =
      RunDbload({"run", plan, "--set", "stop.queries=500", "--report", report_path});
  PgCounters();
  const int64_t scans_after = PgTableScans();
  ASSERT_EQ(run.exit_code, kExitOk) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("Executed queries: 500\n"));
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->executed(), 500u);
  EXPECT_EQ(report->plan().stop().queries(), 500u);
  EXPECT_EQ(scans_after - scans_before, 500);
}

// ---------------------------------------------------------------------------------------------
// 7. SIGINT: a prompt stop, exit 130, and a complete report (text and JSON).

TEST_F(CliTest, SigintEndsTheRunWithACompleteReport) {
  ASSERT_NO_FATAL_FAILURE(EnsurePrepared(Backend::kPostgres));
  const std::string plan = WriteFile(
      "sigint.yaml",
      PlanYaml(Direct(Backend::kPostgres), ClosedLoad(2, "1ms"), "stop:\n  duration: 60s\n"));
  const std::string report_path = dir() + "/sigint.json";
  const int64_t scans_before = PgTableScans();
  PgCounters();
  Child child({DBLOAD_BINARY, "run", plan, "--report", report_path});
  child.Pump(std::chrono::milliseconds(1500));
  const Clock::time_point signalled = Clock::now();
  child.Signal(SIGINT);
  const ProcessResult run = child.Wait(std::chrono::seconds(15));
  const double stop_seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  PgCounters();
  const int64_t scans_after = PgTableScans();

  EXPECT_FALSE(run.timed_out) << run.Describe();
  EXPECT_LT(stop_seconds, 3.0) << "dbload took " << stop_seconds << " s to stop after SIGINT";
  EXPECT_EQ(run.exit_code, kExitInterrupted) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("Ended by: interrupted"));
  EXPECT_THAT(run.out, HasSubstr("Executed queries: "));
  absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->end_reason(), "interrupted");
  EXPECT_GT(report->executed(), 0u);
  EXPECT_LT(report->total_duration_s(), 10.0);
  EXPECT_FALSE(std::filesystem::exists(report_path + ".tmp"));
  for (const auto& entry : std::filesystem::directory_iterator(dir())) {
    EXPECT_FALSE(entry.path().string().ends_with(".tmp")) << entry.path();
  }
  // Every transaction started before the interrupt finished and was recorded.
  EXPECT_EQ(scans_after - scans_before,
            static_cast<int64_t>(report->executed() + report->errors()));
}

// ---------------------------------------------------------------------------------------------
// 8. prepare is idempotent on its own tables and refuses a table it did not create; cleanup
//    drops only its own.

TEST_F(CliTest, PrepareTwiceKeepsTheDataAndAForeignTableIsRefused) {
  for (Backend backend : {Backend::kPostgres, Backend::kMariaDb}) {
    SCOPED_TRACE(backend == Backend::kPostgres ? "postgres" : "mariadb");
    ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
    const std::string plan = ShortPlan(Direct(backend), "prepare_twice.yaml");
    const ProcessResult again = RunDbload({"prepare", plan});
    EXPECT_EQ(again.exit_code, kExitOk) << again.Describe();
    EXPECT_THAT(again.out, HasSubstr("sbtest1: 1000 / 1000 rows"));
    EXPECT_EQ(RowsInTable(backend), kTableSize) << "the loaded table was touched";

    const ProcessResult cleanup = RunDbload({"cleanup", plan});
    EXPECT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    EXPECT_EQ(RowsInTable(backend), -1);
    // A table of the same name that someone else created.
    const std::string create = "CREATE TABLE bench.sbtest1 (id INTEGER)";
    if (backend == Backend::kPostgres) {
      Psql("bench", "CREATE TABLE sbtest1 (id INTEGER)");
    } else {
      Mariadb(create);
    }
    const ProcessResult refused = RunDbload({"prepare", plan});
    EXPECT_EQ(refused.exit_code, kExitUsage) << refused.Describe();
    EXPECT_THAT(refused.err, HasSubstr("sbtest1 already exists and was not created by dbload"));
    EXPECT_THAT(refused.err, HasSubstr(plan));
    EXPECT_EQ(RunDbload({"cleanup", plan}).exit_code, kExitOk);
    EXPECT_EQ(RowsInTable(backend), 0) << "cleanup dropped a table dbload did not create";
    if (backend == Backend::kPostgres) {
      Psql("bench", "DROP TABLE sbtest1");
    } else {
      Mariadb("DROP TABLE bench.sbtest1");
    }
    const ProcessResult prepare = RunDbload({"prepare", plan});
    EXPECT_EQ(prepare.exit_code, kExitOk) << prepare.Describe();
    EXPECT_EQ(RowsInTable(backend), kTableSize);
  }
}

// ---------------------------------------------------------------------------------------------
// 9. Missing tables: every session prepares its statements before the load starts, so the
//    server's error (42P01 / 1146) stops the run there: exit 2, nothing run, the code, the
//    table and the plan named.

TEST_F(CliTest, MissingTableFailsBeforeLoadWithTheServersCode) {
  for (Backend backend : {Backend::kPostgres, Backend::kMariaDb}) {
    SCOPED_TRACE(backend == Backend::kPostgres ? "postgres" : "mariadb");
    const std::string plan = ShortPlan(Direct(backend), "missing_table.yaml");
    const ProcessResult cleanup = RunDbload({"cleanup", plan});
    ASSERT_EQ(cleanup.exit_code, kExitOk) << cleanup.Describe();
    ASSERT_EQ(RowsInTable(backend), -1);

    const ProcessResult run = RunDbload({"run", plan, "--report", dir() + "/missing.json"});
    EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
    EXPECT_THAT(run.err, HasSubstr(backend == Backend::kPostgres ? "42P01" : "1146"));
    EXPECT_THAT(run.err, HasSubstr("sbtest1"));
    EXPECT_THAT(run.err, HasSubstr(plan));
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.Describe();
    EXPECT_EQ(CountLines(run.out, kIntervalLine), 0) << "load started: " << run.out;
    EXPECT_THAT(run.out, Not(HasSubstr("Executed queries")));
    EXPECT_FALSE(std::filesystem::exists(dir() + "/missing.json"));

    ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
  }
}

// A table dropped while the run is going: the next execution fails with the server's code,
// which is fatal: the run stops at once, the report says why, and the exit code is 1.
// (PRODUCT NOTE: nothing is written to stderr in this case; the reason is only in the report
// on stdout. Not asserted; see the report of this test's author.)
TEST_F(CliTest, TableDroppedMidRunEndsTheRunWithExitOneAndTheServersCode) {
  for (Backend backend : {Backend::kPostgres, Backend::kMariaDb}) {
    const bool pg = backend == Backend::kPostgres;
    SCOPED_TRACE(pg ? "postgres" : "mariadb");
    ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
    const std::string plan =
        WriteFile("dropped_mid_run.yaml",
                  PlanYaml(Direct(backend), ClosedLoad(2, "1ms"), "stop:\n  duration: 60s\n"));
    const std::string report_path = dir() + "/dropped_mid_run.json";
    Child child({DBLOAD_BINARY, "run", plan, "--report", report_path});
    child.Pump(std::chrono::milliseconds(1000));
    if (pg) {
      Psql("bench", "DROP TABLE sbtest1");
    } else {
      Mariadb("DROP TABLE bench.sbtest1");
    }
    const ProcessResult run = child.Wait(std::chrono::seconds(15));
    const std::string code = pg ? "42P01" : "1146";

    EXPECT_FALSE(run.timed_out) << run.Describe();
    EXPECT_LT(run.seconds, 10.0) << "a fatal error must end the run at once";
    EXPECT_EQ(run.exit_code, kExitRunFailed) << run.Describe();
    EXPECT_THAT(run.out, HasSubstr("Ended by: fatal error " + code));
    absl::StatusOr<v1::RunReport> report = LoadReport(report_path);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_THAT(report->end_reason(), ::testing::StartsWith("fatal error " + code));
    EXPECT_THAT(report->end_reason(), HasSubstr("sbtest1"));
    EXPECT_GT(report->executed(), 0u);
    EXPECT_GE(report->errors(), 1u);
    ASSERT_EQ(report->query_types_size(), 1);
    uint64_t fatal = 0;
    for (const auto& error : report->query_types(0).error_counts()) {
      EXPECT_EQ(error.error_class(), "fatal");
      EXPECT_EQ(error.code(), code);
      fatal += error.count();
    }
    EXPECT_EQ(fatal, report->errors());

    ASSERT_NO_FATAL_FAILURE(EnsurePrepared(backend));
  }
}

// ---------------------------------------------------------------------------------------------
// --help and -h: every command and subcommand prints its usage to stdout and exits 0.

// The commands `dbload --help` lists: each line indented by two spaces that starts with a
// lower-case word, up to its first argument ("suite run SUITE …" -> "suite run"); "suite list |
// suites" names two.
std::vector<std::vector<std::string>> ListedCommands(const std::string& usage) {
  std::vector<std::vector<std::string>> commands;
  for (absl::string_view line : absl::StrSplit(usage, '\n')) {
    if (line.size() < 3 || line.substr(0, 2) != "  " || !absl::ascii_islower(line[2])) continue;
    for (absl::string_view form : absl::StrSplit(line.substr(2), " | ")) {
      std::vector<std::string> words;
      for (absl::string_view word : absl::StrSplit(form, ' ', absl::SkipEmpty())) {
        if (!absl::ascii_islower(word[0])) break;
        words.emplace_back(word);
      }
      commands.push_back(words);
    }
  }
  return commands;
}

TEST(CliHelpTest, EveryCommandAndSubcommandPrintsItsUsageForHelpAndH) {
  const ProcessResult top = RunDbload({"--help"});
  ASSERT_EQ(top.exit_code, kExitOk) << top.Describe();
  std::vector<std::vector<std::string>> commands = ListedCommands(top.out);
  // The list mirrors the usage text; these must be among them (nested ones included).
  std::vector<std::string> names;
  for (const auto& words : commands) names.push_back(absl::StrJoin(words, " "));
  for (const char* expected :
       {"run", "prepare", "cleanup", "report", "compare", "suite report", "workloads",
        "workload check", "suite run", "suite check", "suite list", "suites", "version", "submit",
        "watch", "stop", "agents"}) {
    EXPECT_THAT(names, ::testing::Contains(expected));
  }
  // The command groups alone too: `dbload suite --help` lists its subcommands.
  commands.push_back({"suite"});
  commands.push_back({"workload"});
  for (const auto& words : commands) {
    const std::string name = absl::StrJoin(words, " ");
    for (const char* help : {"--help", "-h"}) {
      std::vector<std::string> args = words;
      args.push_back(help);
      const ProcessResult result = RunDbload(args);
      EXPECT_EQ(result.exit_code, kExitOk) << name << " " << help << ": " << result.Describe();
      EXPECT_THAT(result.out, HasSubstr("usage:")) << name << " " << help;
      EXPECT_THAT(result.out, HasSubstr("dbload " + name)) << name << " " << help;
      EXPECT_THAT(result.err, Not(HasSubstr("unknown"))) << name << " " << help;
    }
  }
  // After the command's own arguments as well, and `dbload help COMMAND`.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "plan.yaml", "--agents", "2", "--help"},
        std::vector<std::string>{"help", "run"}}) {
    const ProcessResult result = RunDbload(args);
    EXPECT_EQ(result.exit_code, kExitOk) << result.Describe();
    EXPECT_THAT(result.out, HasSubstr("dbload run PLAN.yaml")) << result.Describe();
  }
  const ProcessResult unknown = RunDbload({"frobnicate", "--help"});
  EXPECT_EQ(unknown.exit_code, kExitUsage) << unknown.Describe();
  EXPECT_THAT(unknown.err, HasSubstr("unknown command 'frobnicate'"));
}

TEST(CliHelpTest, DaemonsPrintTheirUsageForHelpAndH) {
  for (const char* binary : {DBLOAD_AGENT_BINARY, DBLOAD_COORDINATOR_BINARY}) {
    const std::string name = std::filesystem::path(binary).filename().string();
    for (const char* help : {"--help", "-h"}) {
      const ProcessResult result = RunProcess({binary, help}, kChildTimeout);
      EXPECT_EQ(result.exit_code, kExitOk) << name << " " << help << ": " << result.Describe();
      EXPECT_THAT(result.out, HasSubstr("usage: " + name)) << name << " " << help;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Limits (plan/plan_limits.h): plans that would exhaust dbload are refused before any load,
// with exit status 2 and a message naming the field and the limit.

// `prlimit` around dbload, so that a lowered limit is cheap to reach.
ProcessResult RunDbloadLimited(const std::string& limit, std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/bin/prlimit", limit, DBLOAD_BINARY});
  return RunProcess(args, kChildTimeout);
}

TEST_F(CliTest, TooManyQueryTypesAndAnAliasBombAreRefusedNamingTheLine) {
  std::string types = "name: many\nscenarios:\n  - name: s\n    query_types:\n";
  for (int q = 0; q < 257; ++q) {
    absl::StrAppend(&types, "      - {name: q", q, ", statements: [{sql: SELECT 1}]}\n");
  }
  const std::string many = WriteFile("many.yaml", types);
  const std::string plan = WriteFile(
      "many_plan.yaml",
      absl::StrCat("name: many\ntarget: {driver: noop}\nworkload: ", many,
                   "\nscenario: s\nload: {closed: {clients: 1}}\nstop: {duration: 1s}\n"));
  ProcessResult run = RunDbload({"run", plan});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat(many, ":5:7: scenarios.0.query_types: 257 query "
                                              "types; a scenario may have at most 256")));
  EXPECT_EQ(CountLines(run.out, kIntervalLine), 0) << "load started: " << run.out;

  // One 512 KiB statement used 200 times: 100 MB once expanded, from a 513 KB file.
  std::string bomb = absl::StrCat("name: bomb\nscenarios:\n  - name: s\n    query_types:\n"
                                  "      - name: q\n        statements:\n          - sql: &big "
                                  "\"SELECT '",
                                  std::string(512 << 10, 'x'), "'\"\n");
  for (int i = 1; i < 200; ++i) bomb += "          - sql: *big\n";
  const std::string path = WriteFile("bomb.yaml", bomb);
  const Clock::time_point start = Clock::now();
  run = RunDbload({"workload", "check", path});
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat(path, ":38:18: the file expands to more than "
                                              "16777216 bytes at this alias")));
}

// Each client is a thread of the agent: past what the agent can start, refused naming the bound.
// (The kernel exempts root from RLIMIT_NPROC; the agent keeps to it all the same, so that this
// holds for any user.)
TEST_F(CliTest, ClientsBeyondTheAgentsThreadsAreRefusedBeforeAnyLoad) {
  const ProcessResult counted = RunProcess(
      {"/bin/sh", "-c", "ps -L -u \"$(id -u)\" --no-headers | wc -l"}, kChildTimeout);
  ASSERT_EQ(counted.exit_code, 0) << counted.Describe();
  const int64_t user_threads = ToInt(counted.out);
  ASSERT_GT(user_threads, 0);
  // Room for dbload's own threads (gRPC, the coordinator), far from 500 clients'.
  const std::string nproc = absl::StrCat("--nproc=", user_threads + 150);
  const std::string plan = WriteFile(
      "threads.yaml", absl::StrCat("name: threads\ntarget: {driver: noop}\nworkload: oltp\n"
                                   "scenario: point_select\nload: {closed: {clients: 500}}\n"
                                   "stop: {duration: 1s}\n"));
  const ProcessResult run = RunDbloadLimited(nproc, {"run", plan});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat(plan, ": load.closed.clients: agent ")));
  EXPECT_THAT(run.err, HasSubstr("cannot run 500 clients: they need 508 threads (one each, "
                                 "plus 8), and it can start "));
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat("(RLIMIT_NPROC ", user_threads + 150, ", ")));
  EXPECT_EQ(CountLines(run.out, kIntervalLine), 0) << "load started: " << run.out;
}

// Each connection is a file descriptor: 40 connections under `ulimit -n 64` are refused before
// any is opened; and connections beyond the server's max_connections (300 on the harness's
// PostgreSQL) are refused once the probe has read it, before any agent is assigned.
TEST_F(CliTest, ConnectionsBeyondTheAgentsFilesOrTheServersMaxConnectionsAreRefused) {
  const PgDatabaseCounters before = PgCounters();
  const std::string files =
      WriteFile("files.yaml",
                PlanYaml(Direct(Backend::kPostgres), ClosedLoad(40), "stop:\n  duration: 1s\n"));
  ProcessResult run = RunDbloadLimited("--nofile=64:64", {"run", files});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr(absl::StrCat(files, ": load.closed.clients: agent ")));
  EXPECT_THAT(run.err, HasSubstr("cannot open 40 connections: they need 73 file descriptors "
                                 "(one each, plus 32 of its own, plus 1 for EXPLAIN), and it can "
                                 "open "));
  EXPECT_THAT(run.err, HasSubstr("(RLIMIT_NOFILE 64, "));
  EXPECT_EQ(CountLines(run.out, kIntervalLine), 0) << "load started: " << run.out;

  const std::string server = WriteFile(
      "max_connections.yaml",
      PlanYaml(Direct(Backend::kPostgres), ClosedLoad(300), "stop:\n  duration: 1s\n"));
  run = RunDbload({"run", server});
  EXPECT_EQ(run.exit_code, kExitUsage) << run.Describe();
  EXPECT_THAT(run.err,
              HasSubstr(absl::StrCat(server, ": target: load.closed.clients: the run needs 301 "
                                     "connections over all agents, and the server allows "
                                     "max_connections 300, of which dbload leaves 5 free")));
  EXPECT_EQ(CountLines(run.out, kIntervalLine), 0) << "load started: " << run.out;
  // Nothing reached database bench but the CLI's own checks (a connection or two, not 300).
  const PgDatabaseCounters after = PgCounters();
  EXPECT_LE(after.sessions - before.sessions, 4);
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb", "haproxy"});
}
