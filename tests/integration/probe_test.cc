// The database probe and the generator-limited mark end to end: the real `dbload` (and a real
// dbload-coordinator with a real agent) against real PostgreSQL 15, MariaDB 10.11 and HAProxy
// from tests/harness/dbenv. What the probe reports is checked against what the workload did
// (rows inserted, exactly) and against what the servers say of themselves (settings read with
// psql / mariadb), never only against dbload's own numbers.
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/usable_cores.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report.h"
#include "tests/harness/child_process.h"
#include "tests/harness/http_get.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY and DBLOAD_AGENT_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::ReadReport;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::chrono::seconds kChildTimeout{60};

ProcessResult RunDbload(std::vector<std::string> args) {
  args.insert(args.begin(), DBLOAD_BINARY);
  return RunProcess(args, kChildTimeout);
}

const v1::SaturationDelta* Find(
    const google::protobuf::RepeatedPtrField<v1::SaturationDelta>& deltas,
    const std::string& source, const std::string& name) {
  for (const v1::SaturationDelta& delta : deltas) {
    if (delta.source() == source && delta.name() == name) return &delta;
  }
  ADD_FAILURE() << "no saturation value " << source << "/" << name;
  return nullptr;
}

// The value of `source/name` over the run, or -1 (and a failure) when the report lacks it.
double DeltaOf(const google::protobuf::RepeatedPtrField<v1::SaturationDelta>& deltas,
               const std::string& source, const std::string& name) {
  const v1::SaturationDelta* delta = Find(deltas, source, name);
  return delta == nullptr ? -1 : delta->delta();
}

double MaxOf(const google::protobuf::RepeatedPtrField<v1::SaturationDelta>& deltas,
             const std::string& source, const std::string& name) {
  const v1::SaturationDelta* delta = Find(deltas, source, name);
  return delta == nullptr ? -1 : delta->max();
}

class ProbeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_probe_test");
    // Nothing but the case itself may write in database bench (see cli_test.cc).
    testing::TurnOffAutovacuum(servers());
  }
  static void TearDownTestSuite() { delete dir_; }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  // A plan for the oltp workload; `target` is the YAML of its target block's fields.
  static std::string Plan(const std::string& name, const std::string& driver, int port,
                          const std::string& password, const std::string& rest) {
    return WriteFile(absl::StrCat(name, ".yaml"),
                     absl::StrCat("name: ", name, "\ntarget:\n  driver: ", driver,
                                  "\n  host: 127.0.0.1\n  port: ", port,
                                  "\n  user: bench\n  database: bench\n  ", password,
                                  "\nworkload: oltp\nworkload_options:\n  table_size: 1000\n",
                                  rest));
  }
  static std::string PgPassword() {
    return absl::StrCat("password_file: ", servers().Get("PG_PASSWORD_FILE"));
  }

  // Runs `plan` after a fresh prepare, and returns its report (stdout in `out`).
  static v1::RunReport RunFresh(const std::string& plan, std::vector<std::string> extra,
                                std::string* out = nullptr) {
    EXPECT_EQ(RunDbload({"cleanup", plan}).exit_code, 0);
    const ProcessResult prepare = RunDbload({"prepare", plan});
    EXPECT_EQ(prepare.exit_code, 0) << prepare.Describe();
    const std::string report_path = plan + ".json";
    std::vector<std::string> args = {"run", plan, "--report", report_path};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult run = RunDbload(args);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    if (out != nullptr) *out = run.out;
    return ReadReport(report_path);
  }

  // A 2-s open loop of `rate`/s on the noop driver (`target` in YAML); `out` gets the text.
  static v1::RunReport RunNoop(const std::string& name, const std::string& target, int64_t rate,
                               std::string& out) {
    const std::string plan = WriteFile(
        name + ".yaml", absl::StrCat("name: ", name, "\ntarget: ", target,
                                     "\nworkload: oltp\nscenario: point_select\n"
                                     "load: {open: {rate: ", rate, "}}\nstop: {duration: 2s}\n"));
    const ProcessResult run = RunDbload({"run", plan, "--report", plan + ".json"});
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    out = run.out;
    return ReadReport(plan + ".json");
  }

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* ProbeTest::dir_ = nullptr;

TEST_F(ProbeTest, PostgresCountsEveryInsertedRowAndTheStagesAddUpToTheRun) {
  const std::string plan =
      Plan("pg_insert", "postgresql", servers().GetInt("PG_PORT"), PgPassword(),
           "scenario: insert\nload: {closed: {}}\nstages:\n"
           "  - {name: first, queries: 1500, clients: 2}\n"
           "  - {name: second, queries: 1500, clients: 2}\n");
  std::string out;
  const v1::RunReport report = RunFresh(plan, {}, &out);
  ASSERT_EQ(report.executed(), 3000u);
  ASSERT_EQ(report.errors(), 0u);
  EXPECT_TRUE(report.probe_error().empty()) << report.probe_error();

  // The server's own count of inserted tuples in bench, from before the load to after it.
  EXPECT_EQ(DeltaOf(report.saturation(), "postgresql", "tup_inserted"), 3000);
  EXPECT_DOUBLE_EQ(Find(report.saturation(), "postgresql", "tup_inserted")->per_query(), 1.0);
  // Autocommit inserts: one commit each, plus a few per connection (start-up, prepares) that
  // the probe cannot tell apart; its own transactions run in database postgres, not here.
  // EXPLAIN's connection adds its start-up, one EXPLAIN per stage and one after the load.
  const double commits = DeltaOf(report.saturation(), "postgresql", "commits");
  EXPECT_GE(commits, 3000);
  EXPECT_LE(commits, 3000 + 2 * 3 + 1 + 3);
  // Each insert writes WAL: at least its 120-character c and 60-character pad.
  EXPECT_GT(Find(report.saturation(), "postgresql", "wal_bytes")->per_query(), 180);
  ASSERT_EQ(report.stages_size(), 2);
  EXPECT_EQ(DeltaOf(report.stages(0).saturation(), "postgresql", "tup_inserted") +
                DeltaOf(report.stages(1).saturation(), "postgresql", "tup_inserted"),
            3000);
  // The server runs here: its processes' CPU and memory.
  EXPECT_GT(DeltaOf(report.saturation(), "process", "cpu_seconds"), 0);
  EXPECT_GT(DeltaOf(report.saturation(), "process", "rss_bytes"), 1e6);
  EXPECT_GE(MaxOf(report.saturation(), "process", "processes"), 4);  // postmaster, 2 backends, …

  // The manifest says what the server says of itself.
  const v1::RunManifest& manifest = report.manifest();
  EXPECT_EQ(manifest.server_product(), "PostgreSQL");
  EXPECT_TRUE(absl::StartsWith(manifest.server_version(), "PostgreSQL 15")) << manifest.server_version();
  EXPECT_EQ(manifest.server_settings().at("shared_buffers"),
            absl::StripAsciiWhitespace(testing::Psql(servers(), "postgres", "SHOW shared_buffers")));
  // What the commit reconciliation allows autovacuum, as the server shows it ("on", "1min").
  for (const char* setting : {"autovacuum", "autovacuum_naptime"}) {
    EXPECT_EQ(manifest.server_settings().at(setting),
              absl::StripAsciiWhitespace(
                  testing::Psql(servers(), "postgres", absl::StrCat("SHOW ", setting))))
        << setting;
  }
  ASSERT_EQ(manifest.agents_size(), 1);
  EXPECT_EQ(manifest.agents(0).cores(), UsableCores());
  EXPECT_EQ(manifest.seed(), report.plan().seed());

  // Its cost: one statement per reading, a reading a second (and one after the load).
  EXPECT_GE(report.probe_samples_size(), 2);
  EXPECT_LE(report.probe_samples_size(), report.total_duration_s() + 3);
  EXPECT_LE(report.probe_samples_size(), report.executed() / 100) << "more than 1 % of the queries";

  EXPECT_THAT(out, HasSubstr("Database, as the server counts it"));
  EXPECT_THAT(out, HasSubstr("postgresql/tup_inserted"));
}

TEST_F(ProbeTest, MariaDbThroughHaproxyShowsTheProxyAndTheServer) {
  const std::string plan = Plan(
      "my_insert", "mysql", servers().GetInt("HAPROXY_MARIADB_PORT"),
      absl::StrCat("password_file: ", servers().Get("MARIADB_PASSWORD_FILE"), "\n  pool: 3"),
      absl::StrCat("scenario: insert\nload: {closed: {clients: 3, think_time: 1ms}}\n"
                   "stop: {duration: 3s}\nprobe: {haproxy_stats: ",
                   servers().Get("HAPROXY_STATS_SOCKET"), "}\n"));
  const v1::RunReport report = RunFresh(plan, {});
  ASSERT_GT(report.executed(), 300u);
  ASSERT_EQ(report.errors(), 0u);
  EXPECT_TRUE(report.probe_error().empty()) << report.probe_error();
  // MariaDB 10.11 counts rows written by its handlers (it has no Innodb_rows_* any more).
  EXPECT_EQ(DeltaOf(report.saturation(), "mysql", "Handler_write"), report.executed());
  EXPECT_GE(MaxOf(report.saturation(), "mysql", "connections"), 4);  // 3 of the load, the probe
  // HAProxy in front: both of dbenv's servers up, the load's sessions through it.
  EXPECT_EQ(DeltaOf(report.saturation(), "haproxy", "servers_up"), 2);
  EXPECT_GE(MaxOf(report.saturation(), "haproxy", "current_sessions"), 3);
  EXPECT_GT(DeltaOf(report.saturation(), "process", "cpu_seconds"), 0);
  EXPECT_GT(DeltaOf(report.saturation(), "process", "rss_bytes"), 1e6);
  EXPECT_EQ(report.manifest().server_product(), "MariaDB");
  EXPECT_EQ(report.manifest().server_settings().at("innodb_buffer_pool_size"),
            absl::StripAsciiWhitespace(
                testing::Mariadb(servers(), "SELECT @@innodb_buffer_pool_size")));
}

TEST_F(ProbeTest, ProbeTurnedOffReadsNothing) {
  const std::string plan =
      Plan("pg_off", "postgresql", servers().GetInt("PG_PORT"), PgPassword(),
           "scenario: point_select\nload: {closed: {clients: 1}}\nstop: {queries: 500}\n");
  std::string out;
  const v1::RunReport report = RunFresh(plan, {"--set", "probe.enabled=false"}, &out);
  EXPECT_EQ(report.executed(), 500u);
  EXPECT_EQ(report.probe_samples_size(), 0);
  EXPECT_EQ(report.saturation_size(), 0);
  EXPECT_TRUE(report.probe_error().empty());
  EXPECT_THAT(out, Not(HasSubstr("Database, as the server counts it")));
}

// Generator-limited (the agent itself could not keep up), pool-limited (arrivals queued for
// busy connections: the database's latency, or too small a pool) and neither.
TEST_F(ProbeTest, AnImpossibleRateIsMarkedGeneratorLimitedAndAnEasyOneIsNot) {
  std::string out;
  const v1::RunReport limited = RunNoop("noop", "{driver: noop, pool: 2}", 50'000'000, out);
  EXPECT_TRUE(limited.generator_limited());
  EXPECT_FALSE(limited.generator_limited_reason().empty());
  EXPECT_THAT(out, HasSubstr("GENERATOR-LIMITED: "));
  EXPECT_FALSE(limited.pool_limited()) << limited.pool_limited_reason();
  EXPECT_EQ(limited.probe_samples_size(), 0) << "the noop driver has no server to probe";

  // 2 connections of 2 ms each serve 1,000/s; 2,000/s are asked for. The agent idles while
  // its connections wait: arrivals queue for them, and that is the pool's limit, not its own.
  const v1::RunReport queued =
      RunNoop("slow", "{driver: noop, pool: 2, noop: {fixed: 2ms}}", 2'000, out);
  EXPECT_FALSE(queued.generator_limited()) << queued.generator_limited_reason();
  EXPECT_TRUE(queued.pool_limited());
  EXPECT_THAT(queued.pool_limited_reason(), HasSubstr("pool of 2 per agent"));
  EXPECT_GT(queued.schedule_lag().p99_ms(), 100);
  EXPECT_LT(queued.dispatch_lag().p99_ms(), 10);
  EXPECT_THAT(out, HasSubstr("POOL-LIMITED: "));
  EXPECT_THAT(out, Not(HasSubstr("GENERATOR-LIMITED")));

  const std::string easy =
      Plan("pg_easy", "postgresql", servers().GetInt("PG_PORT"), PgPassword(),
           "scenario: point_select\nload: {open: {rate: 200}}\nstop: {duration: 2s}\n");
  const v1::RunReport fine = RunFresh(easy, {});
  EXPECT_EQ(fine.executed(), 400u);
  EXPECT_FALSE(fine.pool_limited()) << fine.pool_limited_reason();
  EXPECT_FALSE(fine.database_stalled()) << fine.database_stalled_reason();
  // On a quiet machine the agent starts these within microseconds. On a loaded one (the
  // scheduler waking its threads milliseconds late) that lateness can be most of a fast
  // query's p99, and then the mark must say so, as a share of it, and nothing else.
  if (fine.dispatch_lag().p99_ms() <= 1.0) {
    EXPECT_FALSE(fine.generator_limited()) << fine.generator_limited_reason();
  } else if (fine.generator_limited()) {
    EXPECT_THAT(fine.generator_limited_reason(), ::testing::StartsWith("dispatch lag p99 "));
    std::cout << "[loaded machine] " << fine.generator_limited_reason() << std::endl;
  }
}

// A workload of one query type: a transaction of 3 statements (BEGIN … COMMIT around them).
std::string ThreeStatementWorkload(testing::ScratchDir& dir) {
  return dir.Write("three.yaml", R"(name: three
tables:
  - name: probe_three
    create: CREATE TABLE probe_three (id INT PRIMARY KEY, v INT NOT NULL)
    data:
      rows: 10
      columns:
        id: {row: true}
        v: {uniform: {min: 0, max: 0}}
scenarios:
  - name: txn
    query_types:
      - name: three
        transaction: true
        statements:
          - sql: SELECT v FROM probe_three WHERE id = ?
            params: [{uniform: {min: 1, max: 5}}]
          - sql: UPDATE probe_three SET v = v + 1 WHERE id = ?
            params: [{uniform: {min: 1, max: 5}}]
          - sql: SELECT COUNT(*) FROM probe_three
)");
}

// `commits` means committed transactions wherever it is given: N transactions of 3 statements
// are N commits on PostgreSQL (xact_commit of bench; the probe's own statements run in database
// postgres, so only the load's connections' start-up adds a few). MariaDB counts no such thing
// (its Handler_commit, which `commits` used to be, counts 4 per such transaction): it has no
// `commits`, and its own counters say what they count.
TEST_F(ProbeTest, CommitsAreTransactionsOnBothServers) {
  constexpr int kTransactions = 300;
  const std::string workload = ThreeStatementWorkload(*dir_);
  const std::string rest =
      absl::StrCat("scenario: txn\nload: {closed: {clients: 1}}\nstop: {queries: ", kTransactions,
                   "}\n");
  const std::string pg_plan = WriteFile(
      "pg_three.yaml",
      absl::StrCat("name: pg_three\ntarget:\n  driver: postgresql\n  host: 127.0.0.1\n  port: ",
                   servers().GetInt("PG_PORT"), "\n  user: bench\n  database: bench\n  pool: 1\n  ",
                   PgPassword(), "\nworkload: ", workload, "\n", rest));
  const v1::RunReport pg = RunFresh(pg_plan, {});
  ASSERT_EQ(pg.executed(), static_cast<uint64_t>(kTransactions));
  ASSERT_EQ(pg.errors(), 0u);
  const double pg_commits = DeltaOf(pg.saturation(), "postgresql", "commits");
  EXPECT_GE(pg_commits, kTransactions);
  // One per transaction, plus a few that the load's connection (start-up, preparing its 3
  // statements) and EXPLAIN's connection commit: 11 here, far from 4 per transaction.
  EXPECT_LE(pg_commits, kTransactions + 20);
  EXPECT_NEAR(Find(pg.saturation(), "postgresql", "commits")->per_query(), 1.0, 0.05);

  const std::string my_plan = WriteFile(
      "my_three.yaml",
      absl::StrCat("name: my_three\ntarget:\n  driver: mysql\n  host: 127.0.0.1\n  port: ",
                   servers().GetInt("MARIADB_PORT"), "\n  user: bench\n  database: bench\n",
                   "  pool: 1\n  password_file: ", servers().Get("MARIADB_PASSWORD_FILE"),
                   "\nworkload: ", workload, "\n", rest));
  const v1::RunReport my = RunFresh(my_plan, {});
  ASSERT_EQ(my.executed(), static_cast<uint64_t>(kTransactions));
  ASSERT_EQ(my.errors(), 0u);
  for (const v1::SaturationDelta& delta : my.saturation()) {
    EXPECT_NE(delta.name(), "commits") << "MariaDB has no counter of transactions";
    EXPECT_NE(delta.name(), "rollbacks");
  }
  // The server's own names, for what they count (the probe commits nothing; its reads are
  // SELECTs of status tables, which add no Handler_commit).
  EXPECT_EQ(DeltaOf(my.saturation(), "mysql", "Com_commit"), kTransactions);
  EXPECT_GE(DeltaOf(my.saturation(), "mysql", "Handler_commit"), 4 * kTransactions);
  std::cout << "figures: " << kTransactions << " transactions of 3 statements: postgresql/commits "
            << pg_commits << "; mysql/Com_commit "
            << DeltaOf(my.saturation(), "mysql", "Com_commit") << ", mysql/Handler_commit "
            << DeltaOf(my.saturation(), "mysql", "Handler_commit") << "\n";
}

// A workload that deletes parents whose children go with them: each probe_parent row has one
// child in each of three tables, by FOREIGN KEY … ON DELETE CASCADE.
std::string CascadeWorkload(testing::ScratchDir& dir) {
  std::string tables;
  for (const char* child : {"a", "b", "c"}) {
    absl::StrAppend(&tables, "  - name: probe_child_", child,
                    "\n    create: CREATE TABLE probe_child_", child,
                    " (id INT PRIMARY KEY, parent_id INT NOT NULL, FOREIGN KEY (parent_id) ",
                    "REFERENCES probe_parent (id) ON DELETE CASCADE)\n",
                    "    data:\n      rows: 1000\n",
                    "      columns: {id: {row: true}, parent_id: {row: true}}\n");
  }
  return dir.Write("cascade.yaml", absl::StrCat(R"(name: cascade
tables:
  - name: probe_parent
    create: CREATE TABLE probe_parent (id INT PRIMARY KEY)
    data:
      rows: 1000
      columns: {id: {row: true}}
)",
                                               tables, R"(scenarios:
  - name: delete_parent
    query_types:
      - name: delete_parent
        statements:
          - sql: DELETE FROM probe_parent WHERE id = ?
            params: [{sample: {sql: SELECT id FROM probe_parent ORDER BY id, consume: true}}]
)"));
}

// What a cascading delete is on each server, by the server's own counters, and that no common
// name pretends they are one: PostgreSQL's tup_deleted counts the parent and its 3 children,
// MariaDB's Handler_delete the parent only (measured; db_probe.cc). Neither gives rows_deleted
// (nor rows_inserted / rows_updated, which differ likewise), and MariaDB gives no commits.
TEST_F(ProbeTest, ACascadingDeleteIsCountedByEachServersOwnNameAndNoCommonOne) {
  constexpr int kDeletes = 300;
  const std::string workload = CascadeWorkload(*dir_);
  const std::string rest = absl::StrCat("scenario: delete_parent\nload: {closed: {clients: 1}}\n",
                                        "stop: {queries: ", kDeletes, "}\n");
  auto plan = [&](const std::string& name, const std::string& driver, int port,
                  const std::string& password) {
    return WriteFile(absl::StrCat(name, ".yaml"),
                     absl::StrCat("name: ", name, "\ntarget:\n  driver: ", driver,
                                  "\n  host: 127.0.0.1\n  port: ", port,
                                  "\n  user: bench\n  database: bench\n  pool: 1\n  ", password,
                                  "\nworkload: ", workload, "\n", rest));
  };
  const v1::RunReport pg = RunFresh(
      plan("pg_cascade", "postgresql", servers().GetInt("PG_PORT"), PgPassword()), {});
  ASSERT_EQ(pg.executed(), static_cast<uint64_t>(kDeletes));
  ASSERT_EQ(pg.errors(), 0u);
  EXPECT_TRUE(pg.probe_error().empty()) << pg.probe_error();
  // The children really went: the server says so.
  EXPECT_EQ(testing::Psql(servers(), "bench", "SELECT COUNT(*) FROM probe_child_b"),
            absl::StrCat(1000 - kDeletes));
  EXPECT_EQ(DeltaOf(pg.saturation(), "postgresql", "tup_deleted"), 4 * kDeletes);
  EXPECT_EQ(DeltaOf(pg.saturation(), "postgresql", "commits"),
            DeltaOf(pg.saturation(), "postgresql", "xact_commit"));

  const v1::RunReport my = RunFresh(
      plan("my_cascade", "mysql", servers().GetInt("MARIADB_PORT"),
           absl::StrCat("password_file: ", servers().Get("MARIADB_PASSWORD_FILE"))),
      {});
  ASSERT_EQ(my.executed(), static_cast<uint64_t>(kDeletes));
  ASSERT_EQ(my.errors(), 0u);
  EXPECT_TRUE(my.probe_error().empty()) << my.probe_error();
  EXPECT_EQ(testing::Mariadb(servers(), "SELECT COUNT(*) FROM bench.probe_child_b"),
            absl::StrCat(1000 - kDeletes));
  EXPECT_EQ(DeltaOf(my.saturation(), "mysql", "Handler_delete"), kDeletes);

  for (const v1::RunReport* report : {&pg, &my}) {
    for (const v1::SaturationDelta& delta : report->saturation()) {
      EXPECT_THAT(delta.name(), Not(::testing::StartsWith("rows_")))
          << delta.source() << ": no common name for rows";
      if (delta.source() == "mysql") {
        EXPECT_NE(delta.name(), "commits");
        EXPECT_NE(delta.name(), "rollbacks");
      }
      // What the figure rests on: the run's readings from its first to its last that hold it.
      uint32_t readings = 0;
      for (const v1::ProbeSample& sample : report->probe_samples()) {
        if (sample.elapsed_s() >= delta.from_s() && sample.elapsed_s() <= delta.to_s() &&
            sample.values().count(absl::StrCat(delta.source(), "/", delta.name())) > 0) {
          ++readings;
        }
      }
      EXPECT_EQ(delta.readings(), readings) << delta.source() << "/" << delta.name();
      if (delta.source() == "postgresql" || delta.source() == "mysql") {
        EXPECT_GE(delta.readings(), 2u) << delta.name();
      }
    }
  }
  std::cout << "figures: " << kDeletes << " deletes of a parent with 3 cascaded children: "
            << "postgresql/tup_deleted " << DeltaOf(pg.saturation(), "postgresql", "tup_deleted")
            << ", mysql/Handler_delete " << DeltaOf(my.saturation(), "mysql", "Handler_delete")
            << "; readings " << pg.probe_samples_size() << " and " << my.probe_samples_size()
            << "\n";
}

// A server restart in the middle of a run: the probe loses its connection, says so while the
// server is down, and reads again once it is back. The report must not keep the stale error,
// and MariaDB's counters, which restart from zero, must not give negative deltas.
TEST_F(ProbeTest, AMariaDbRestartLeavesNoStaleErrorAndNoNegativeCounter) {
  const std::string plan = Plan(
      "my_restart", "mysql", servers().GetInt("MARIADB_PORT"),
      absl::StrCat("password_file: ", servers().Get("MARIADB_PASSWORD_FILE"), "\n  pool: 2"),
      "scenario: insert\nload: {closed: {clients: 2, think_time: 2ms}}\n"
      "stop: {duration: 9s}\n");
  ASSERT_EQ(RunDbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = RunDbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  const std::string report_path = plan + ".json";
  Child run({DBLOAD_BINARY, "run", plan, "--report", report_path});
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const ProcessResult restart =
      RunProcess({"/bin/bash", TestServers::DbenvPath(), "restart", servers().dir(), "mariadb",
                  "--down", "1.5"},
                 std::chrono::seconds(60));
  ASSERT_EQ(restart.exit_code, 0) << restart.Describe();
  const ProcessResult done = run.Wait(std::chrono::seconds(60));
  ASSERT_FALSE(done.timed_out) << done.Describe();
  const v1::RunReport report = ReadReport(report_path);
  ASSERT_GT(report.executed(), 100u) << done.Describe();

  // The restart happened inside the probe's readings: Questions went back, and there are
  // readings after it.
  bool went_back = false;
  double previous = -1;
  size_t after_restart = 0;
  for (const v1::ProbeSample& sample : report.probe_samples()) {
    const auto it = sample.values().find("mysql/Questions");
    if (it == sample.values().end()) continue;
    if (went_back) ++after_restart;
    if (previous >= 0 && it->second < previous) went_back = true;
    previous = it->second;
  }
  ASSERT_TRUE(went_back) << "the restart did not fall between two readings";
  EXPECT_GE(after_restart, 2u);
  // The run's delta is what the readings show the server counted, a reset counting the new
  // value from zero (Prometheus' rate() rule), not the last reading minus the first.
  const size_t first = [&] {
    for (size_t i = 0; i < static_cast<size_t>(report.probe_samples_size()); ++i) {
      if (report.probe_samples(i).elapsed_s() >= Find(report.saturation(), "mysql", "Questions")
                                                     ->from_s()) {
        return i;
      }
    }
    return size_t{0};
  }();
  double counted = 0;
  previous = -1;
  for (size_t i = first; i < static_cast<size_t>(report.probe_samples_size()); ++i) {
    const auto it = report.probe_samples(i).values().find("mysql/Questions");
    if (it == report.probe_samples(i).values().end()) continue;
    if (previous >= 0) counted += it->second >= previous ? it->second - previous : it->second;
    previous = it->second;
  }
  EXPECT_EQ(DeltaOf(report.saturation(), "mysql", "Questions"), counted);
  std::cout << "figures: readings " << report.probe_samples_size() << " (" << after_restart
            << " after the restart); mysql/Questions delta " << counted
            << " (last reading minus first: " << previous - report.probe_samples(first)
                                                              .values().at("mysql/Questions")
            << "); executed " << report.executed() << ", errors " << report.errors()
            << "; probe_error '" << report.probe_error() << "'\n";
  EXPECT_TRUE(report.probe_error().empty())
      << "the probe read again after the restart but still says: " << report.probe_error();
  EXPECT_THAT(done.out, Not(HasSubstr("Database probe:")));
  for (const v1::SaturationDelta& delta : report.saturation()) {
    EXPECT_GE(delta.delta(), 0) << delta.source() << "/" << delta.name();
  }
  // What the server counted, before and after its restart. The rows written between the last
  // reading before the shutdown and the shutdown are lost with the server's counters (up to a
  // probe interval's worth); otherwise every insert that succeeded wrote a row, and the ones
  // in flight at the shutdown may have been written without their answer.
  const double written = DeltaOf(report.saturation(), "mysql", "Handler_write");
  EXPECT_GE(written, 0.6 * static_cast<double>(report.executed()));
  EXPECT_LE(written, report.executed() + report.errors() + 4);
}

// A coordinator daemon that cannot read a plan's password runs the plan without a probe and
// says why; with a password it can read, /metrics carries what the probe read.
TEST_F(ProbeTest, CoordinatorWithoutThePasswordSaysSoAndMetricsCarryTheProbe) {
  const std::string password = [] {
    std::ifstream in(servers().Get("PG_PASSWORD_FILE"));
    std::string line;
    std::getline(in, line);
    return line;
  }();
  unsetenv("DBLOAD_PROBE_TEST_PASSWORD");
  Child coordinator({DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--metrics",
                     "127.0.0.1:0"});
  ASSERT_TRUE(coordinator.PumpUntil(
      [](const std::string& out) { return absl::StrContains(out, "/metrics\n"); },
      std::chrono::seconds(10)))
      << coordinator.out() << coordinator.err();
  std::string address, metrics_port;
  for (absl::string_view line : absl::StrSplit(coordinator.out(), '\n')) {
    if (absl::ConsumePrefix(&line, "listening on ")) address = std::string(line);
    if (absl::ConsumePrefix(&line, "metrics on http://127.0.0.1:")) {
      metrics_port = std::string(line.substr(0, line.find('/')));
    }
  }
  ASSERT_FALSE(address.empty());
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(metrics_port, &port)) << coordinator.out();
  // Only the agent has the password in its environment.
  setenv("DBLOAD_PROBE_TEST_PASSWORD", password.c_str(), 1);
  Child agent({DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", "probe-agent"});
  unsetenv("DBLOAD_PROBE_TEST_PASSWORD");

  const std::string by_env =
      Plan("pg_env", "postgresql", servers().GetInt("PG_PORT"),
           "password_env: DBLOAD_PROBE_TEST_PASSWORD",
           "scenario: point_select\nload: {closed: {clients: 1}}\nstop: {queries: 300}\n");
  setenv("DBLOAD_PROBE_TEST_PASSWORD", password.c_str(), 1);  // for prepare, here
  EXPECT_EQ(RunDbload({"cleanup", by_env}).exit_code, 0);
  ASSERT_EQ(RunDbload({"prepare", by_env}).exit_code, 0);
  unsetenv("DBLOAD_PROBE_TEST_PASSWORD");
  const std::string submit_wait = "--wait-for-agents";
  ProcessResult submitted = RunDbload({"submit", by_env, "--coordinator", address, submit_wait,
                                       "10s", "--wait", "--report", by_env + ".json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.Describe();
  const v1::RunReport without = ReadReport(by_env + ".json");
  EXPECT_EQ(without.executed(), 300u);
  EXPECT_THAT(without.probe_error(), HasSubstr("DBLOAD_PROBE_TEST_PASSWORD"));
  EXPECT_THAT(without.probe_error(), HasSubstr("coordinator"));
  EXPECT_EQ(without.probe_samples_size(), 0);
  EXPECT_THAT(submitted.out, HasSubstr("Database probe: probe off"));

  const std::string by_file =
      Plan("pg_file", "postgresql", servers().GetInt("PG_PORT"), PgPassword(),
           "scenario: point_select\nload: {closed: {clients: 1}}\nstop: {queries: 300}\n");
  submitted = RunDbload({"submit", by_file, "--coordinator", address, submit_wait, "10s",
                         "--wait", "--report", by_file + ".json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.Describe();
  const v1::RunReport with = ReadReport(by_file + ".json");
  EXPECT_TRUE(with.probe_error().empty()) << with.probe_error();
  EXPECT_GT(with.probe_samples_size(), 0);
  std::string error;
  const std::optional<std::string> page = testing::HttpGet(port, "/metrics", error);
  ASSERT_TRUE(page.has_value()) << error;
  const std::string run_label = absl::StrCat("run=\"", with.run_id(), "\"");
  bool commits = false, up = false;
  for (absl::string_view line : absl::StrSplit(*page, '\n')) {
    if (!absl::StrContains(line, run_label)) continue;
    if (absl::StartsWith(line, "dbload_db_counter_total{") &&
        absl::StrContains(line, "name=\"commits\"") &&
        absl::StrContains(line, "source=\"postgresql\"")) {
      double value = 0;
      ASSERT_TRUE(absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &value)) << line;
      EXPECT_GE(value, 300) << "the server's commits in bench, cumulative";
      commits = true;
    }
    if (absl::StartsWith(line, "dbload_probe_up{")) {
      EXPECT_TRUE(absl::EndsWith(line, " 1")) << line;
      up = true;
    }
  }
  EXPECT_TRUE(commits && up) << *page;
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb", "haproxy"});
}
