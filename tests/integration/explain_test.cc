// The database's EXPLAIN plans in the report, end to end: the real `dbload` against real
// PostgreSQL 15 and MariaDB 10.11 from tests/harness/dbenv. The plans must be the servers' own
// (they name the index the server picked), one per query type per stage however many agents
// run, and capturing them must leave the load's exact query count alone; what the capture
// costs the server is counted by PostgreSQL itself.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report.h"
#include "tests/harness/child_process.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

constexpr std::chrono::seconds kChildTimeout{60};

ProcessResult RunDbload(std::vector<std::string> args) {
  args.insert(args.begin(), DBLOAD_BINARY);
  return RunProcess(args, kChildTimeout);
}

enum class Backend { kPostgres, kMariaDb };

// A transaction of three statements (one with a quote in its value, so the literal must be
// quoted right for the server to explain it), and a query type whose one statement runs but
// cannot be explained.
constexpr char kAccountsWorkload[] = R"(name: accounts
tables:
  - name: accounts
    create:
      postgresql: CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner VARCHAR(40) NOT NULL, balance BIGINT NOT NULL)
      mysql: CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner VARCHAR(40) NOT NULL, balance BIGINT NOT NULL) ENGINE=InnoDB
    indexes: [CREATE INDEX accounts_owner ON accounts (owner)]
    data:
      rows: 2000
      columns:
        id: {row: true}
        owner: {pattern: {pattern: "o'wner{row}"}}
        balance: {uniform: {min: 0, max: 100}}
scenarios:
  - name: mix
    query_types:
      - name: transfer
        weight: 3
        transaction: true
        statements:
          - sql: SELECT balance FROM accounts WHERE id = ?
            params: [{uniform: {min: 1, max: 2000}}]
          - sql: UPDATE accounts SET balance = balance + 0 WHERE id = ?
            params: [{uniform: {min: 1, max: 2000}}]
          - sql: SELECT id FROM accounts WHERE owner = ?
            params: [{pattern: {pattern: "o'wner1{#}{#}"}}]
      - name: tag
        weight: 1
        statements:
          - sql:
              postgresql: SET application_name = 'dbload explain test'
              mysql: SET @dbload_explain_test = 1
)";

class ExplainTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_explain_test");
    // Nothing but the case itself may commit in database bench (see cli_test.cc).
    testing::TurnOffAutovacuum(servers());
  }
  static void TearDownTestSuite() { delete dir_; }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }
  static void CheckPlanChangeIsFlagged(Backend backend);

  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  static std::string Target(Backend backend) {
    const bool pg = backend == Backend::kPostgres;
    return absl::StrCat("target:\n  driver: ", pg ? "postgresql" : "mysql",
                        "\n  host: 127.0.0.1\n  port: ",
                        servers().Get(pg ? "PG_PORT" : "MARIADB_PORT"),
                        "\n  user: bench\n  database: bench\n  password_file: ",
                        servers().Get(pg ? "PG_PASSWORD_FILE" : "MARIADB_PASSWORD_FILE"), "\n");
  }

  // Prepares and runs `plan` (`extra` after `run PLAN`), returns its report; stdout in `out`.
  static v1::RunReport RunFresh(const std::string& plan, std::vector<std::string> extra,
                                std::string* out = nullptr) {
    EXPECT_EQ(RunDbload({"cleanup", plan}).exit_code, 0);
    const ProcessResult prepare = RunDbload({"prepare", plan});
    EXPECT_EQ(prepare.exit_code, 0) << prepare.Describe();
    return Run(plan, extra, out);
  }

  static v1::RunReport Run(const std::string& plan, std::vector<std::string> extra,
                           std::string* out = nullptr) {
    const std::string report_path = plan + ".json";
    std::vector<std::string> args = {"run", plan, "--report", report_path};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult run = RunDbload(args);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    if (out != nullptr) *out = run.out;
    return testing::ReadReport(report_path);
  }

  // bench's counters as PostgreSQL keeps them, read from database postgres (so the reading
  // itself is not counted).
  static std::map<std::string, int64_t> PgBenchCounters() {
    const std::string line = std::string(absl::StripAsciiWhitespace(testing::Psql(
        servers(), "postgres",
        "SELECT xact_commit || ' ' || xact_rollback || ' ' || sessions FROM pg_stat_database "
        "WHERE datname = 'bench'")));
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    std::map<std::string, int64_t> counters;
    if (parts.size() != 3) {
      ADD_FAILURE() << "pg_stat_database: " << line;
      return counters;
    }
    const char* names[] = {"xact_commit", "xact_rollback", "sessions"};
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(absl::SimpleAtoi(parts[i], &counters[names[i]]));
    return counters;
  }

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* ExplainTest::dir_ = nullptr;

constexpr char kTwoStages[] =
    "workload: oltp\nscenario: point_select\nworkload_options:\n  table_size: 1000\n"
    "load: {closed: {think_time: 0s}}\nstages:\n"
    "  - {name: first, queries: 600, clients: 2}\n"
    "  - {name: second, queries: 400, clients: 2}\n";

// Two agents, two stages: each stage has exactly one plan of point_select (only the first agent
// captures), the server's own, naming its primary key; the counts are the load's exactly; and
// PostgreSQL counts what the capture cost: one session, its start-up and one EXPLAIN a stage.
TEST_F(ExplainTest, PostgresTwoStagesHaveOnePlanEachNamingThePrimaryKey) {
  const std::string plan =
      WriteFile("pg_stages.yaml", absl::StrCat("name: pg_stages\n", Target(Backend::kPostgres),
                                               kTwoStages));
  EXPECT_EQ(RunDbload({"cleanup", plan}).exit_code, 0);
  ASSERT_EQ(RunDbload({"prepare", plan}).exit_code, 0);
  const std::map<std::string, int64_t> before = PgBenchCounters();
  std::string out;
  const v1::RunReport report = Run(plan, {"--agents", "2"}, &out);
  const std::map<std::string, int64_t> after = PgBenchCounters();

  ASSERT_EQ(report.stages_size(), 2);
  EXPECT_EQ(report.stages(0).executed(), 600u);
  EXPECT_EQ(report.stages(1).executed(), 400u);
  EXPECT_EQ(report.explains_size(), 0) << "a plan with stages has its plans in the stages";
  for (const v1::StageReport& stage : report.stages()) {
    ASSERT_EQ(stage.explains_size(), 1) << "stage " << stage.index();
    const v1::QueryPlan& plan = stage.explains(0);
    EXPECT_EQ(plan.query_type(), "point_select");
    // The statement as the workers send it, with the id one draw gave.
    EXPECT_THAT(plan.statement(), MatchesRegex("SELECT c FROM sbtest1 WHERE id=[0-9]+"));
    EXPECT_THAT(plan.plan(), HasSubstr("Index Scan using sbtest1_pkey on sbtest1"));
    EXPECT_TRUE(plan.error().empty()) << plan.error();
  }
  EXPECT_THAT(out, HasSubstr("EXPLAIN, stage 1 (first):\n  [point_select]\n    SELECT c FROM "
                             "sbtest1 WHERE id="));
  EXPECT_THAT(out, HasSubstr("EXPLAIN, stage 2 (second):"));
  EXPECT_THAT(out, HasSubstr("      Index Scan using sbtest1_pkey on sbtest1"));

  // Levels of 2 clients over 2 agents: 1 + 1 load sessions, each committing its start-up and 2
  // for preparing its statement (cli_test.cc's kPgCommitsPerConnection), and the EXPLAIN
  // session: its start-up, and an EXPLAIN per stage and one after the load, each in a
  // transaction rolled back. The report's reconciliation counts the same.
  EXPECT_EQ(after.at("sessions") - before.at("sessions"), 2 + 1);
  EXPECT_EQ(after.at("xact_commit") - before.at("xact_commit"), 1000 + 2 * 3 + 1);
  EXPECT_EQ(after.at("xact_rollback") - before.at("xact_rollback"), 3);
  const v1::CommitReconciliation& commits = report.commit_reconciliation();
  EXPECT_EQ(commits.verdict(), "matches") << commits.note() << "\n" << out;
  EXPECT_EQ(commits.connections_opened(), 3);
  EXPECT_EQ(commits.statements_prepared(), 2);

  // explain: {enabled: false} leaves them out, and the server sees no extra session.
  const std::map<std::string, int64_t> quiet_before = PgBenchCounters();
  const v1::RunReport quiet = Run(plan, {"--set", "explain.enabled=false"}, &out);
  const std::map<std::string, int64_t> quiet_after = PgBenchCounters();
  ASSERT_EQ(quiet.stages_size(), 2);
  EXPECT_EQ(quiet.stages(0).explains_size() + quiet.stages(1).explains_size(), 0);
  EXPECT_EQ(quiet_after.at("sessions") - quiet_before.at("sessions"), 2);
  EXPECT_THAT(out, Not(HasSubstr("EXPLAIN")));
}

TEST_F(ExplainTest, MariaDbTwoStagesHaveOnePlanEachWithKeyPrimary) {
  const std::string plan = WriteFile(
      "my_stages.yaml", absl::StrCat("name: my_stages\n", Target(Backend::kMariaDb), kTwoStages));
  const v1::RunReport report = RunFresh(plan, {"--agents", "2"});
  ASSERT_EQ(report.stages_size(), 2);
  EXPECT_EQ(report.executed(), 1000u);
  for (const v1::StageReport& stage : report.stages()) {
    ASSERT_EQ(stage.explains_size(), 1) << "stage " << stage.index();
    const v1::QueryPlan& plan = stage.explains(0);
    EXPECT_EQ(plan.query_type(), "point_select");
    EXPECT_THAT(plan.statement(), MatchesRegex("SELECT c FROM sbtest1 WHERE id=[0-9]+"));
    // EXPLAIN FORMAT=JSON: a constant lookup by the primary key of one row.
    EXPECT_THAT(plan.plan(), HasSubstr("\"table_name\": \"sbtest1\""));
    EXPECT_THAT(plan.plan(), HasSubstr("\"access_type\": \"const\""));
    EXPECT_THAT(plan.plan(), HasSubstr("\"key\": \"PRIMARY\""));
    EXPECT_TRUE(plan.error().empty()) << plan.error();
  }
}

// A YAML workload: the transaction's three statements each explained in one QueryPlan (with
// the quoted value the server accepted), the statement EXPLAIN refuses reported in `error`, and
// the run's query count exact all the same.
void CheckAccountsPlans(const v1::RunReport& report, Backend backend) {
  EXPECT_EQ(report.executed(), 400u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_EQ(report.end_reason(), "queries");
  ASSERT_EQ(report.query_types_size(), 2);
  EXPECT_EQ(report.query_types(0).executed() + report.query_types(1).executed(), 400u);
  EXPECT_GT(report.query_types(1).executed(), 0u) << "the unexplainable statement ran";
  ASSERT_EQ(report.explains_size(), 2);
  const v1::QueryPlan& transfer = report.explains(0);
  EXPECT_EQ(transfer.query_type(), "transfer");
  EXPECT_TRUE(transfer.error().empty()) << transfer.error();
  const std::vector<std::string> statements = absl::StrSplit(transfer.statement(), '\n');
  ASSERT_EQ(statements.size(), 3u) << transfer.statement();
  EXPECT_THAT(statements[0], MatchesRegex("SELECT balance FROM accounts WHERE id = [0-9]+"));
  EXPECT_THAT(statements[1],
              MatchesRegex("UPDATE accounts SET balance = balance \\+ 0 WHERE id = [0-9]+"));
  const bool pg = backend == Backend::kPostgres;
  EXPECT_THAT(statements[2], MatchesRegex(pg ? "SELECT id FROM accounts WHERE owner = 'o''wner1[0-9][0-9]'"
                                             : "SELECT id FROM accounts WHERE owner = 'o\\\\'wner1[0-9][0-9]'"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(transfer.plan(), HasSubstr(absl::StrCat("-- statement ", i + 1, ": ", statements[i])));
  }
  // Each statement's plan, by the index the server used for it.
  const std::string& text = transfer.plan();
  const size_t second = text.find("-- statement 2");
  const size_t third = text.find("-- statement 3");
  ASSERT_NE(second, std::string::npos);
  ASSERT_NE(third, std::string::npos);
  if (pg) {
    EXPECT_THAT(text.substr(0, second), HasSubstr("Index Scan using accounts_pkey on accounts"));
    EXPECT_THAT(text.substr(second, third - second), HasSubstr("Update on accounts"));
    EXPECT_THAT(text.substr(second, third - second), HasSubstr("accounts_pkey"));
    EXPECT_THAT(text.substr(third), HasSubstr("accounts_owner"));
  } else {
    EXPECT_THAT(text.substr(0, second), HasSubstr("\"key\": \"PRIMARY\""));
    EXPECT_THAT(text.substr(second, third - second), HasSubstr("\"update\": 1"));
    EXPECT_THAT(text.substr(second, third - second), HasSubstr("\"key\": \"PRIMARY\""));
    EXPECT_THAT(text.substr(third), HasSubstr("\"key\": \"accounts_owner\""));
  }
  const v1::QueryPlan& tag = report.explains(1);
  EXPECT_EQ(tag.query_type(), "tag");
  EXPECT_THAT(tag.statement(), HasSubstr("SET "));
  EXPECT_THAT(tag.error(), HasSubstr("syntax"));
}

TEST_F(ExplainTest, PostgresTransactionPlansEachStatementAndReportsTheUnexplainable) {
  WriteFile("accounts.yaml", kAccountsWorkload);
  const std::string plan = WriteFile(
      "pg_accounts.yaml",
      absl::StrCat("name: pg_accounts\n", Target(Backend::kPostgres),
                   "workload: ./accounts.yaml\nscenario: mix\nload: {closed: {clients: 2}}\n"
                   "warmup: 200ms\nstop: {queries: 400}\n"));
  std::string out;
  const v1::RunReport report = RunFresh(plan, {}, &out);
  CheckAccountsPlans(report, Backend::kPostgres);
  EXPECT_THAT(out, HasSubstr("EXPLAIN (captured as the measured part started):\n  [transfer]\n"));
  EXPECT_THAT(out, HasSubstr("    EXPLAIN failed: "));
}

TEST_F(ExplainTest, MariaDbTransactionPlansEachStatementAndReportsTheUnexplainable) {
  WriteFile("accounts.yaml", kAccountsWorkload);
  const std::string plan = WriteFile(
      "my_accounts.yaml",
      absl::StrCat("name: my_accounts\n", Target(Backend::kMariaDb),
                   "workload: ./accounts.yaml\nscenario: mix\nload: {closed: {clients: 2}}\n"
                   "stop: {queries: 400}\n"));
  CheckAccountsPlans(RunFresh(plan, {}), Backend::kMariaDb);
}

// A lookup by a column that has no index until the test adds one during the run, and a
// transaction whose second statement reads the row its first one inserted (a captured id).
constexpr char kLookupsWorkload[] = R"yaml(name: lookups
tables:
  - name: lookup_rows
    create:
      postgresql: CREATE TABLE lookup_rows (id BIGINT PRIMARY KEY, k BIGINT NOT NULL, v BIGINT NOT NULL)
      mysql: CREATE TABLE lookup_rows (id BIGINT PRIMARY KEY, k BIGINT NOT NULL, v BIGINT NOT NULL) ENGINE=InnoDB
    data:
      rows: 20000
      columns: {id: {row: true}, k: {row: true}, v: {uniform: {min: 0, max: 100}}}
  - name: lookup_log
    create:
      postgresql: CREATE TABLE lookup_log (id BIGSERIAL PRIMARY KEY, k BIGINT NOT NULL)
      mysql: CREATE TABLE lookup_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, k BIGINT NOT NULL) ENGINE=InnoDB
scenarios:
  - name: find
    query_types:
      - name: by_k
        statements:
          - sql: SELECT v FROM lookup_rows WHERE k = ?
            params: [{uniform: {min: 1, max: 20000}}]
      - name: log_and_read
        transaction: true
        statements:
          - sql: {postgresql: "INSERT INTO lookup_log (k) VALUES (?) RETURNING id", mysql: "INSERT INTO lookup_log (k) VALUES (?)"}
            params: [{uniform: {min: 1, max: 20000}}]
            capture: log_id
          - sql: SELECT k FROM lookup_log WHERE id = ?
            params: [{captured: log_id}]
)yaml";

// Plans captured at the start and after the load: an index added during the run changes by_k's
// plan and the report names the change; log_and_read is explained with the id its INSERT gave
// (run in a transaction that is rolled back: the table keeps only the load's rows), so the
// server plans a real lookup rather than one of NULL.
void ExplainTest::CheckPlanChangeIsFlagged(Backend backend) {
  const bool pg = backend == Backend::kPostgres;
  const std::string name = pg ? "pg_lookups" : "my_lookups";
  WriteFile("lookups.yaml", kLookupsWorkload);
  const std::string plan = WriteFile(
      name + ".yaml",
      absl::StrCat("name: ", name, "\n", Target(backend),
                   "workload: ./lookups.yaml\nscenario: find\nload: {closed: {clients: 1}}\n"
                   "stop: {duration: 4s}\n"));
  EXPECT_EQ(RunDbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = RunDbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  auto sql = [&](const std::string& statement) {
    return pg ? testing::Psql(servers(), "bench", statement)
              : testing::Mariadb(servers(), absl::StrCat("USE bench; ", statement));
  };
  // The table the load fills is left unanalyzed: PostgreSQL still calls its size unknown (-1),
  // not 0, so the load's prepared plans are not made for an empty table.
  EXPECT_THAT(prepare.out, HasSubstr("lookup_log: empty, so not analyzed"));
  if (pg) {
    EXPECT_EQ(sql("SELECT reltuples FROM pg_class WHERE relname = 'lookup_log'"), "-1");
  }
  const testing::PgDatabaseCounters before =
      pg ? testing::SettledPgDatabaseCounters(servers(), "bench") : testing::PgDatabaseCounters{};

  const std::string report_path = plan + ".json";
  ProcessResult run;
  std::thread load([&] { run = RunDbload({"run", plan, "--report", report_path}); });
  // The start's capture has its own connection beside the load's one: once both are there, its
  // plans are taken (within milliseconds of connecting); then the index arrives.
  const std::string sessions =
      pg ? "SELECT count(*) FROM pg_stat_activity WHERE datname = 'bench' AND usename = 'bench'"
         : "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'bench'";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  const auto count_sessions = [&] {
    return testing::ToInt(pg ? testing::Psql(servers(), "postgres", sessions)
                             : testing::Mariadb(servers(), sessions));
  };
  while (count_sessions() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  sql(pg ? "CREATE INDEX lookup_rows_k ON lookup_rows (k); ANALYZE lookup_rows"
         : "CREATE INDEX lookup_rows_k ON lookup_rows (k); ANALYZE TABLE lookup_rows");
  load.join();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const v1::RunReport report = testing::ReadReport(report_path);

  ASSERT_EQ(report.explains_size(), 2);
  ASSERT_EQ(report.explains_after_load_size(), 2);
  ASSERT_EQ(report.plan_changes_size(), 1) << report.DebugString();
  const v1::PlanChange& change = report.plan_changes(0);
  std::cout << "[" << name << "] " << change.query_type() << ": " << change.before_shape() << " -> "
            << change.after_shape() << "; log_and_read explained as "
            << report.explains(1).statement() << std::endl;
  EXPECT_EQ(change.query_type(), "by_k");
  EXPECT_EQ(change.before(), "the start");
  EXPECT_EQ(change.after(), "after the load");
  EXPECT_THAT(change.before_shape(),
              HasSubstr(pg ? "Seq Scan on lookup_rows" : "table lookup_rows access_type=ALL"));
  EXPECT_THAT(change.after_shape(), HasSubstr("lookup_rows_k"));
  EXPECT_THAT(run.out, HasSubstr("PLAN CHANGED during the run"));
  EXPECT_THAT(run.out, HasSubstr("EXPLAIN after the load (the plans that changed):\n  [by_k]\n"));

  for (const v1::QueryPlan* read : {&report.explains(1), &report.explains_after_load(1)}) {
    EXPECT_EQ(read->query_type(), "log_and_read");
    EXPECT_TRUE(read->error().empty()) << read->error();
    EXPECT_THAT(read->statement(),
                MatchesRegex("(.|\n)*SELECT k FROM lookup_log WHERE id = [0-9]+"));
    EXPECT_THAT(read->plan(), pg ? HasSubstr("Index Scan using lookup_log_pkey on lookup_log")
                                 : HasSubstr("\"access_type\": \"const\""));
  }
  const uint64_t logged =
      report.query_types(1).executed() + report.query_types(1).warmup_executed();
  EXPECT_GT(logged, 0u);
  EXPECT_EQ(testing::ToInt(sql("SELECT COUNT(*) FROM lookup_log")), static_cast<int64_t>(logged))
      << "the capture's INSERTs were rolled back";
  if (pg) {
    // One rolled-back transaction per query type and capture: two query types, the start's
    // capture and the last.
    const testing::PgDatabaseCounters after =
        testing::SettledPgDatabaseCounters(servers(), "bench");
    EXPECT_EQ(after.xact_rollback - before.xact_rollback, 2 * 2);
  }
}

TEST_F(ExplainTest, PostgresPlanChangedDuringTheRunIsNamed) {
  CheckPlanChangeIsFlagged(Backend::kPostgres);
}

TEST_F(ExplainTest, MariaDbPlanChangedDuringTheRunIsNamed) {
  CheckPlanChangeIsFlagged(Backend::kMariaDb);
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
