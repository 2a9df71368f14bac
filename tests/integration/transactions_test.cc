// Transactions a user writes in YAML, end to end with the real `dbload` executable over three
// agents against real PostgreSQL 15 and MariaDB 10.11 (tests/harness/dbenv): a transfer between
// two distinct accounts of an amount drawn once per transaction (let:), under contention (12
// clients, 4 accounts) at repeatable read, retried on deadlocks and serialization failures.
// What the report says is compared with what the servers counted (deadlocks, rollbacks) and
// with the accounts themselves (the transfers preserve the total, an invariant the coordinator
// checks after the run; a transfer that breaks it fails the run).

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/invariants.h"
#include "report/report.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#if !defined(DBLOAD_BINARY)
#error "DBLOAD_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::ProcessResult;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;

enum class Backend { kPostgres, kMariaDb };

TestServers& Servers() { return TestServersEnvironment::Servers(); }

constexpr int kAccounts = 4;
constexpr int64_t kOpeningBalance = 1000;

// A bank: accounts, and a log of transfers. The transfer reads the payer's balance (the
// snapshot a repeatable-read transaction then works from), moves one amount from one account to
// another, and logs it; under 12 clients on 4 accounts, deadlocks (opposite orders) and
// serialization failures (a row changed since the snapshot) are certain.
constexpr char kBank[] = R"yaml(name: bank
tables:
  - name: bank_accounts
    create: CREATE TABLE bank_accounts (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)
    data:
      rows: 4
      columns: {id: {row: true}, balance: 1000}
  - name: bank_log
    create:
      postgresql: CREATE TABLE bank_log (id BIGSERIAL PRIMARY KEY, amount BIGINT NOT NULL)
      mysql: CREATE TABLE bank_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, amount BIGINT NOT NULL)
invariants:
  - {name: total, sql: SELECT SUM(balance) FROM bank_accounts, unchanged: true}
  - {name: positive_amounts, sql: SELECT COUNT(*) FROM bank_log WHERE amount <= 0, expect: 0}
scenarios:
  - name: transfer
    isolation: repeatable_read
    # MariaDB reports a repeatable-read write conflict (ER_CHECKREAD) only with this on.
    session: [{mysql: "SET SESSION innodb_snapshot_isolation = ON"}]
    retry: {max_tries: 100}
    query_types:
      - name: transfer
        transaction: true
        changes: {bank_log: 1}
        let:
          amount: {uniform: {min: 1, max: 100}}
          from: {uniform: {min: 1, max: 4}}
          to: {uniform: {min: 1, max: 4}, distinct_from: [from]}
        statements:
          - sql: SELECT balance FROM bank_accounts WHERE id = ?
            params: [from]
          - sql: UPDATE bank_accounts SET balance = balance - ? WHERE id = ?
            params: [amount, from]
          - sql: UPDATE bank_accounts SET balance = balance + ? WHERE id = ?
            params: [amount, to]
          - sql: INSERT INTO bank_log (amount) VALUES (?)
            params: [amount]
)yaml";

class TransactionsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<testing::ScratchDir>("dbload_transactions_test");
    dir_ = scratch_->path();
    std::ofstream(dir_ + "/bank.yaml") << kBank;
  }

  bool pg() const { return GetParam() == Backend::kPostgres; }

  // Closed loop, 12 clients over the agents, `queries` transactions.
  std::string WritePlan(int queries, const std::string& more = "") {
    return WritePlanStopping(absl::StrCat("{queries: ", queries, ", duration: 120s}"), more);
  }

  std::string WritePlanStopping(const std::string& stop, const std::string& more = "") {
    const std::string path = dir_ + "/plan.yaml";
    std::ofstream out(path);
    out << "name: bank-test\ntarget:\n  driver: " << (pg() ? "postgresql" : "mysql")
        << "\n  host: 127.0.0.1\n  port: " << Servers().Get(pg() ? "PG_PORT" : "MARIADB_PORT")
        << "\n  user: bench\n  password_file: "
        << Servers().Get(pg() ? "PG_PASSWORD_FILE" : "MARIADB_PASSWORD_FILE")
        << "\n  database: bench\nworkload: bank.yaml\nscenario: transfer\n"
        << "load: {closed: {clients: 12}}\nstop: " << stop << "\n"
        << "probe: {enabled: false}\n"
        << more;
    return path;
  }

  std::string Sql(const std::string& sql) {
    return pg() ? testing::Psql(Servers(), "bench", sql)
                : testing::Mariadb(Servers(), "USE bench; " + sql);
  }

  // The server's count of rolled-back transactions and of deadlocks it broke, database-wide.
  struct Counters {
    int64_t rollbacks = 0;
    int64_t deadlocks = 0;
  };
  Counters Read() {
    if (pg()) {
      const testing::PgDatabaseCounters counters = testing::SettledPgDatabaseCounters(Servers());
      return {counters.xact_rollback, counters.deadlocks};
    }
    const std::string text = testing::Mariadb(
        Servers(),
        "SELECT CONCAT((SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
        "VARIABLE_NAME = 'COM_ROLLBACK'), ' ', (SELECT VARIABLE_VALUE FROM "
        "information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DEADLOCKS'))");
    Counters counters;
    const size_t space = text.find(' ');
    EXPECT_NE(space, std::string::npos) << text;
    EXPECT_TRUE(absl::SimpleAtoi(text.substr(0, space), &counters.rollbacks)) << text;
    EXPECT_TRUE(absl::SimpleAtoi(text.substr(space + 1), &counters.deadlocks)) << text;
    return counters;
  }

  std::unique_ptr<testing::ScratchDir> scratch_;
  std::string dir_;
};

TEST_P(TransactionsTest, TransfersKeepTheTotalAndEveryRetryIsOneTheServerCounted) {
  const std::string plan = WritePlan(600);
  if (pg()) {
    // PostgreSQL looks for a deadlock only after a lock wait of deadlock_timeout (1 s by
    // default), so each of the run's hundreds would cost a second; this binary's own server
    // looks after 20 ms (MariaDB looks at once).
    testing::Psql(Servers(), "postgres", "ALTER SYSTEM SET deadlock_timeout = '20ms'");
    testing::Psql(Servers(), "postgres", "SELECT pg_reload_conf()");
  }
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = testing::RunDbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  const Counters before = Read();
  const std::string report_path = dir_ + "/report.json";
  const ProcessResult run = testing::RunDbload(
      {"run", plan, "--agents", "3", "--report", report_path}, std::chrono::seconds(120));
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const Counters after = Read();
  absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->query_types_size(), 1);
  const v1::QueryTypeReport& transfer = report->query_types(0);

  std::map<v1::RetryCause, uint64_t> retries;
  for (const v1::RetryCount& retry : transfer.retries()) retries[retry.cause()] += retry.count();
  std::map<std::string, uint64_t> errors;
  for (const v1::ErrorCount& error : transfer.error_counts()) errors[error.code()] += error.count();
  uint64_t retried_commits = 0;
  for (const v1::TriesCount& tries : transfer.committed_by_tries())
    retried_commits += tries.count();
  std::cout << "[" << (pg() ? "postgresql" : "mariadb") << " transfer, 12 clients, 3 agents, "
            << kAccounts << " accounts] executed " << report->executed() << ", errors "
            << report->errors() << ", retries: serialization " << retries[v1::SERIALIZATION]
            << ", deadlock " << retries[v1::DEADLOCK] << ", lock timeout "
            << retries[v1::LOCK_TIMEOUT] << "; committed after retrying " << retried_commits
            << ", failed after retrying " << transfer.failed_after_retries()
            << "; server: rollbacks +" << after.rollbacks - before.rollbacks << ", deadlocks +"
            << after.deadlocks - before.deadlocks << std::endl;

  // Every transaction ended (committed, or failed its 100th try), and the run's row check held:
  // one log row per committed transfer.
  EXPECT_EQ(report->executed() + report->errors(), 600u);
  EXPECT_EQ(Sql("SELECT COUNT(*) FROM bank_log"), absl::StrCat(report->executed()));
  // The same amount left one account and reached another: the total is the opening one.
  EXPECT_EQ(Sql("SELECT SUM(balance) FROM bank_accounts"),
            absl::StrCat(kAccounts * kOpeningBalance));
  // Contention was real, and retried: both causes on both servers.
  EXPECT_GT(retries[v1::DEADLOCK], 0u);
  EXPECT_GT(retries[v1::SERIALIZATION], 0u);
  EXPECT_EQ(report->retries(),
            retries[v1::SERIALIZATION] + retries[v1::DEADLOCK] + retries[v1::LOCK_TIMEOUT]);
  EXPECT_LE(retried_commits, report->executed());
  // Each failed try was one rollback at the server and each deadlock one the server broke: the
  // retries, and the errors of transactions that failed their last try. Each EXPLAIN capture
  // (at the start and after the load) ran in a transaction it rolled back, and so did each of
  // the coordinator's readings of the row counts and of the invariant, before and after.
  const uint64_t deadlock_errors = errors[pg() ? "40P01" : "1213"];
  EXPECT_EQ(after.deadlocks - before.deadlocks,
            static_cast<int64_t>(retries[v1::DEADLOCK] + deadlock_errors));
  const int captures = report->explains_size() + report->explains_after_load_size();
  EXPECT_EQ(captures, 2);
  ASSERT_GT(report->row_changes_size(), 0);
  ASSERT_GT(report->invariants_size(), 0);
  const int row_check_readings = 2 * 2;
  EXPECT_EQ(
      after.rollbacks - before.rollbacks,
      static_cast<int64_t>(report->retries() + report->errors()) + captures + row_check_readings);
  // The report says what the connections started with, and what it retried.
  const std::string text = RenderReportText(*report);
  EXPECT_THAT(text, HasSubstr(pg() ? "Connections start with: isolation repeatable_read\n"
                                   : "Connections start with: isolation repeatable_read; SET "
                                     "SESSION innodb_snapshot_isolation = ON\n"));
  EXPECT_THAT(text, HasSubstr("Retries (tries again with the same values"));
  // The invariants held, and the report says what they read.
  ASSERT_EQ(report->invariants_size(), 2) << report->invariants_not_checked();
  EXPECT_TRUE(report->invariants(0).holds());
  EXPECT_EQ(report->invariants(0).before(), absl::StrCat(kAccounts * kOpeningBalance));
  EXPECT_TRUE(report->invariants(1).holds());
  // Named with where the workload writes it.
  EXPECT_THAT(text, HasSubstr("  total: holds, `SELECT SUM(balance) FROM bank_accounts` was 4000 "
                              "before the load and 4000 after (must not change, written at "));
  EXPECT_THAT(report->invariants(0).source(), ::testing::MatchesRegex(".*bank.yaml:[0-9]+:[0-9]+"));
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
}

// A transfer that credits another amount than it debits breaks the total: the run fails with
// exit status 5, and its report and its error name the invariant and what it read.
TEST_P(TransactionsTest, ABrokenInvariantFailsTheRunAndSaysWhich) {
  std::string broken = kBank;
  broken.replace(broken.find("params: [amount, to]"), 20, "params: [bonus, to]");
  broken.replace(broken.find("          amount:"), 0,
                 "          bonus: {uniform: {min: 101, max: 200}}\n");
  std::ofstream(dir_ + "/bank.yaml") << broken;
  // With a warm-up, whose transfers the row check counts too (else exit 1, not 5).
  const std::string plan = WritePlan(200, "warmup: 500ms\n");
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = testing::RunDbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  const std::string report_path = dir_ + "/report.json";
  const ProcessResult run = testing::RunDbload(
      {"run", plan, "--agents", "3", "--report", report_path}, std::chrono::seconds(120));
  EXPECT_EQ(run.exit_code, 5) << run.Describe();
  EXPECT_THAT(run.err, HasSubstr("an invariant of the workload is broken: total: BROKEN, `SELECT "
                                 "SUM(balance) FROM bank_accounts` was 4000 before the load and "));
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("positive_amounts")));
  absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->invariants_size(), 2);
  EXPECT_FALSE(report->invariants(0).holds());
  EXPECT_EQ(report->invariants(0).after(), Sql("SELECT SUM(balance) FROM bank_accounts"));
  EXPECT_TRUE(report->invariants(1).holds());
  ASSERT_EQ(report->row_changes_size(), 1) << report->row_changes_not_checked();
  const v1::RowChange& log = report->row_changes(0);
  EXPECT_EQ(log.after() - log.before(), log.expected());
  EXPECT_EQ(static_cast<uint64_t>(log.expected()),
            report->executed() + report->query_types(0).warmup_executed());
  EXPECT_GT(report->query_types(0).warmup_executed(), 0u);
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
}

// A statement the server refuses stops the run before its load, named where the workload writes
// it (file, line, 1-based statement); only a missing table suggests that prepare was not run.
TEST_P(TransactionsTest, AStatementTheServerRefusesIsNamedWhereItIsWritten) {
  std::string wrong = kBank;
  wrong.replace(wrong.find("UPDATE bank_accounts SET balance = balance + ?"), 6, "UPDAET");
  std::ofstream(dir_ + "/bank.yaml") << wrong;
  const std::string plan = WritePlan(10);
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
  ASSERT_EQ(testing::RunDbload({"prepare", plan}).exit_code, 0);
  const ProcessResult syntax = testing::RunDbload({"run", plan});
  EXPECT_EQ(syntax.exit_code, 2) << syntax.Describe();
  EXPECT_THAT(syntax.err, HasSubstr("bank.yaml:34:18: scenario transfer, query type transfer, "
                                    "statement 3 of 4: ["));
  EXPECT_THAT(syntax.err, ::testing::Not(HasSubstr("dbload prepare")));
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult missing = testing::RunDbload({"run", plan});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
  EXPECT_THAT(missing.err, HasSubstr("statement 1 of 4: ["));
  EXPECT_THAT(missing.err, HasSubstr("(has `dbload prepare` been run for this plan?)"));
}

// PostgreSQL restarted (fast shutdown, 1 s down) while twelve clients over two agents retry
// their conflicts: the run survives it, the transactions the restart cut off are connection
// errors (not retries, and not failures after retrying), and what the database holds is exactly
// what the report says committed: one log row per executed transfer, the total unchanged.
TEST_P(TransactionsTest, ARestartDuringRetriesLosesAndDoublesNoTransfer) {
  if (!pg()) GTEST_SKIP() << "one server is enough: the retry loop is the same for both";
  const std::string plan = WritePlanStopping("{duration: 6s}");
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
  ASSERT_EQ(testing::RunDbload({"prepare", plan}).exit_code, 0);
  const std::string report_path = dir_ + "/restart.json";
  ProcessResult run;
  std::thread load([&] {
    run = testing::RunDbload({"run", plan, "--agents", "2", "--report", report_path},
                             std::chrono::seconds(120));
  });
  // Once the twelve clients are connected (and retrying), the server goes down for a second.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (testing::ToInt(testing::Psql(Servers(), "postgres",
                                      "SELECT count(*) FROM pg_stat_activity WHERE usename = "
                                      "'bench' AND datname = 'bench'")) < 12 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const ProcessResult restart =
      testing::RunProcess({"/bin/bash", TestServers::DbenvPath(), "restart", Servers().dir(),
                           "postgres", "--down", "1"},
                          std::chrono::seconds(60));
  load.join();
  ASSERT_EQ(restart.exit_code, 0) << restart.Describe();
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
  ASSERT_TRUE(report.ok()) << report.status();
  const v1::QueryTypeReport& transfer = report->query_types(0);
  uint64_t connection_errors = 0;
  for (const v1::ErrorCount& error : transfer.error_counts()) {
    if (error.error_class() == "connection") connection_errors += error.count();
  }
  std::cout << "[postgresql restart during retries] executed " << report->executed() << ", errors "
            << report->errors() << " (connection " << connection_errors << "), retries "
            << report->retries() << ", failed after retrying " << transfer.failed_after_retries()
            << std::endl;
  EXPECT_GT(connection_errors, 0u) << "the restart cut transactions off";
  EXPECT_GT(report->retries(), 0u);
  EXPECT_EQ(transfer.failed_after_retries(), 0u) << "a lost connection is not a retry's failure";
  // The database holds exactly the committed transfers, and the same total.
  ASSERT_EQ(report->row_changes_size(), 1) << report->row_changes_not_checked();
  const v1::RowChange& log = report->row_changes(0);
  EXPECT_EQ(log.after() - log.before(), log.expected());
  EXPECT_EQ(Sql("SELECT COUNT(*) FROM bank_log"), absl::StrCat(report->executed()));
  ASSERT_EQ(report->invariants_size(), 2) << report->invariants_not_checked();
  EXPECT_TRUE(report->invariants(0).holds()) << DescribeInvariant(report->invariants(0));
  EXPECT_EQ(Sql("SELECT SUM(balance) FROM bank_accounts"),
            absl::StrCat(kAccounts * kOpeningBalance));
  ASSERT_EQ(testing::RunDbload({"cleanup", plan}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Servers, TransactionsTest,
                         ::testing::Values(Backend::kPostgres, Backend::kMariaDb),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param == Backend::kPostgres ? "Postgres" : "MariaDb";
                         });

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
