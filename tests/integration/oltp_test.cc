// The oltp workload's sysbench scenarios against real PostgreSQL 15 and MariaDB 10.11 (started by
// tests/harness/dbenv). Each scenario's worker runs a fixed number of events directly on one
// session, and the statements it sent are counted by the servers themselves: pg_stat_user_tables
// and pg_stat_database on PostgreSQL, the session's Com_* status counters on MariaDB. That is
// what makes dbload's figures comparable with sysbench's: the same statements, the same number of
// them per event, in the same transactions.
//
// Then read_write under contention (issue 17): 4 and 64 closed-loop clients for a few seconds on
// a table small enough that duplicate keys and deadlocks happen, through the same run path as
// `dbload run` (RunPlanLocally). The run must go on through sysbench's ignored errors, count them
// apart by code, and count as transactions exactly what the database committed: the report's
// executed against pg_stat_database's xact_commit (and its ignored errors against
// xact_rollback), or MariaDB's global Com_commit and Com_rollback; and the table keeps its size
// (every DELETE + INSERT pair committed together, or rolled back together).
//
// And the report's statements (sysbench's queries, issue 17: QPS), in read_write under
// contention and in point_select, against the servers' own count of what dbload's sessions
// sent: MariaDB's global Com_stmt_execute + Com_begin + Com_commit + Com_rollback (counted as
// each statement arrives, failed ones included), PostgreSQL's pg_stat_statements calls of the
// load's user (loaded by this binary into its server: ALTER SYSTEM and `dbenv restart`), which
// counts the statements that completed, so that each failed transaction's failing statement
// comes on top. Both equalities are exact.
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/local_run.h"
#include "base/clock.h"
#include "db/driver.h"
#include "db/driver_factory.h"
#include "report/report.h"
#include "workload/workload.h"
#include "workload/loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_servers.h"

namespace dbload {
namespace {

using ::dbload::testing::PasswordOf;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    const absl::Status assert_ok_status = (expr);           \
    ASSERT_TRUE(assert_ok_status.ok()) << assert_ok_status; \
  } while (0)

#define ASSERT_EXEC_OK(outcome) \
  ASSERT_TRUE((outcome).ok()) << "[" << (outcome).error->code << "] " << (outcome).error->message

constexpr int kEvents = 200;
constexpr int kTables = 2;
constexpr int64_t kTableSize = 1000;
constexpr int64_t kRows = kTables * kTableSize;
// Transactions a PostgreSQL client session commits besides the load's: one for its set-up, and
// for each prepared statement its preparation and its description (the parameter count), each
// a transaction of its own; as distributed_test's 3 for point_select's one statement.
int64_t PgCommitsPerClient(size_t statements) { return 1 + 2 * static_cast<int64_t>(statements); }

enum class Backend { kPostgres, kMariaDb };

// What one event of a scenario sends with sysbench's defaults (oltp_*.lua).
struct EventShape {
  int selects = 0;  // 10 point selects + 4 range queries in read_only and read_write
  int updates = 0;
  int deletes = 0;
  int inserts = 0;
  bool transaction = false;
  int statements() const { return selects + updates + deletes + inserts; }
};

const std::map<std::string, EventShape>& Shapes() {
  static const auto* shapes = new std::map<std::string, EventShape>{
      {"point_select", {.selects = 1}},
      {"read_only", {.selects = 14, .transaction = true}},
      {"read_write",
       {.selects = 14, .updates = 2, .deletes = 1, .inserts = 1, .transaction = true}},
      {"write_only", {.updates = 2, .deletes = 1, .inserts = 1, .transaction = true}},
      {"update_index", {.updates = 1}},
      {"update_non_index", {.updates = 1}},
      {"delete", {.deletes = 1}},
      {"insert", {.inserts = 1}},
  };
  return *shapes;
}

// "name=value" rows into a map, names lower-cased (MariaDB's information_schema spells them in
// capitals).
std::map<std::string, int64_t> ParseCounters(const std::vector<std::string>& rows) {
  std::map<std::string, int64_t> counters;
  for (const std::string& row : rows) {
    const size_t equals = row.find('=');
    int64_t value = 0;
    EXPECT_NE(equals, std::string::npos) << row;
    if (equals == std::string::npos) continue;
    EXPECT_TRUE(absl::SimpleAtoi(row.substr(equals + 1), &value)) << row;
    counters[absl::AsciiStrToLower(row.substr(0, equals))] = value;
  }
  return counters;
}

std::map<std::string, int64_t> Delta(const std::map<std::string, int64_t>& before,
                                     const std::map<std::string, int64_t>& after) {
  std::map<std::string, int64_t> delta;
  for (const auto& [name, value] : after) {
    const auto it = before.find(name);
    delta[name] = value - (it == before.end() ? 0 : it->second);
  }
  return delta;
}

// A driver for `target` (its password from the plan's secret) on this thread, and one session.
void ConnectTo(const dbload::v1::Target& target, Clock& clock, std::unique_ptr<db::Driver>& driver,
               std::unique_ptr<db::Session>& session) {
  ASSERT_NE(target.port(), 0u);
  absl::StatusOr<std::string> password = PasswordOf(target);
  ASSERT_OK(password.status());
  absl::StatusOr<std::unique_ptr<db::Driver>> made = db::MakeDriver(target, *password, clock);
  ASSERT_OK(made.status());
  driver = *std::move(made);
  driver->ThreadStart();
  absl::StatusOr<std::unique_ptr<db::Session>> connected = driver->Connect();
  ASSERT_OK(connected.status());
  session = *std::move(connected);
}

class OltpTest : public ::testing::TestWithParam<std::tuple<Backend, std::string>> {
 protected:
  void SetUp() override {
    TestServers& servers = TestServersEnvironment::Servers();
    const dbload::v1::Target target =
        postgres() ? servers.PostgresTarget() : servers.MariaDbTarget();
    ASSERT_NO_FATAL_FAILURE(ConnectTo(target, clock_, driver_, session_));

    absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(
        "oltp", {{"tables", absl::StrCat(kTables)}, {"table_size", absl::StrCat(kTableSize)}});
    ASSERT_OK(workload.status());
    workload_ = *std::move(workload);
    ASSERT_OK(
        DropWorkloadData(workload_->DataSpec(), *session_, dialect()));  // left by a failed run
    ASSERT_OK(LoadWorkloadData(workload_->DataSpec(), *driver_, {}, nullptr));
    if (postgres()) {
      // The loader's own connections report their statistics as they exit, a little after
      // loading returns: wait until their inserts are counted, so that no case sees them.
      const std::string loaded = absl::StrCat(kTables * kTableSize);
      std::string seen;
      for (int i = 0; i < 100 && seen != "0|" + loaded; ++i) {
        if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        absl::StatusOr<std::vector<std::string>> rows = session_->FetchColumn(
            "SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend') || '|' || "
            "(SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname LIKE "
            "'sbtest%')",
            1);
        ASSERT_OK(rows.status());
        seen = rows->empty() ? "" : rows->front();
      }
      ASSERT_EQ(seen, "0|" + loaded) << "the loader's statistics did not arrive within 10 s";
      // Autovacuum workers' transactions would show up in pg_stat_database's xact_commit.
      for (int t = 1; t <= kTables; ++t) {
        ASSERT_EXEC_OK(session_->ExecuteSql(
            absl::StrCat("ALTER TABLE sbtest", t, " SET (autovacuum_enabled = off)")));
      }
    }
  }

  void TearDown() override {
    if (session_ != nullptr && workload_ != nullptr) {
      EXPECT_TRUE(DropWorkloadData(workload_->DataSpec(), *session_, dialect()).ok());
    }
    session_.reset();
    if (driver_ != nullptr) driver_->ThreadEnd();
  }

  bool postgres() const { return std::get<0>(GetParam()) == Backend::kPostgres; }
  db::Dialect dialect() const {
    return postgres() ? db::Dialect::kPostgreSql : db::Dialect::kMySql;
  }

  // The servers' own counters, read on the worker's session: MariaDB's Com_* are per session,
  // and PostgreSQL only publishes a backend's statistics when that backend flushes them.
  std::map<std::string, int64_t> Counters() {
    if (postgres()) {
      // Flushed when the backend goes idle after this statement; every later statement runs in
      // a new transaction, which sees a new statistics snapshot.
      const db::ExecOutcome flushed = session_->ExecuteSql("SELECT pg_stat_force_next_flush()");
      EXPECT_TRUE(flushed.ok()) << flushed.error->message;
    }
    const char* sql =
        postgres() ? "SELECT unnest(ARRAY["
                     "'idx_scan=' || sum(coalesce(idx_scan, 0)), 'seq_scan=' || sum(seq_scan), "
                     "'n_tup_upd=' || sum(n_tup_upd), 'n_tup_del=' || sum(n_tup_del), "
                     "'n_tup_ins=' || sum(n_tup_ins), "
                     "'xact_commit=' || (SELECT xact_commit FROM pg_stat_database "
                     "WHERE datname = current_database()), "
                     "'xact_rollback=' || (SELECT xact_rollback FROM pg_stat_database "
                     "WHERE datname = current_database())]) "
                     "FROM pg_stat_user_tables "
                     "WHERE schemaname = current_schema() AND relname IN ('sbtest1', 'sbtest2')"
                   : "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) "
                     "FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN "
                     "('COM_SELECT', 'COM_UPDATE', 'COM_DELETE', 'COM_INSERT', 'COM_BEGIN', "
                     "'COM_COMMIT', 'COM_ROLLBACK', 'COM_STMT_EXECUTE')";
    absl::StatusOr<std::vector<std::string>> rows = session_->FetchColumn(sql, 100);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? ParseCounters(*rows) : std::map<std::string, int64_t>{};
  }

  int64_t RowCount() {
    absl::StatusOr<std::vector<std::string>> rows = session_->FetchColumn(
        "SELECT (SELECT count(*) FROM sbtest1) + (SELECT count(*) FROM sbtest2)", 1);
    EXPECT_TRUE(rows.ok()) << rows.status();
    int64_t count = -1;
    if (rows.ok() && rows->size() == 1) {
      EXPECT_TRUE(absl::SimpleAtoi((*rows)[0], &count));
    }
    return count;
  }

  SteadyClock clock_;
  std::unique_ptr<db::Driver> driver_;
  std::unique_ptr<db::Session> session_;
  std::unique_ptr<Workload> workload_;
};

TEST_P(OltpTest, ServerCountsSysbenchsStatements) {
  const std::string& name = std::get<1>(GetParam());
  const EventShape& shape = Shapes().at(name);
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = workload_->MakeScenario(name);
  ASSERT_OK(scenario.status());
  const std::vector<db::StatementSpec> statements = (*scenario)->Statements(dialect());
  for (size_t id = 0; id < statements.size(); ++id) {
    ASSERT_OK(session_->Prepare(static_cast<int>(id), statements[id]));
  }
  ASSERT_OK((*scenario)->Setup(*driver_));
  std::unique_ptr<ScenarioWorker> worker = (*scenario)->NewWorker({.run_seed = 42});

  const std::map<std::string, int64_t> before = Counters();
  int64_t rows = 0;
  for (int event = 0; event < kEvents; ++event) {
    const db::ExecOutcome outcome = worker->Run(worker->NextQueryType(), *session_);
    ASSERT_EXEC_OK(outcome);
    rows += outcome.rows;
  }
  const std::map<std::string, int64_t> delta = Delta(before, Counters());
  const int64_t row_count = RowCount();

  std::string figures;
  for (const auto& [counter, value] : delta) absl::StrAppend(&figures, " ", counter, "=", value);
  std::cout << "[" << (postgres() ? "postgresql" : "mariadb") << " " << name << "] " << kEvents
            << " events, rows=" << rows << ", table rows=" << row_count << ";" << figures
            << std::endl;

  const int64_t n = kEvents;
  // Deletes hit every time when an INSERT puts the id back in the same transaction; oltp_delete
  // alone deletes rows once and then often misses (the "special" distribution's hot spot).
  const bool lone_deletes = shape.deletes > 0 && shape.inserts == 0;
  if (postgres()) {
    // Every SELECT, UPDATE and DELETE is one scan of one table, by index or (the planner's
    // choice for some 100-id ranges) sequentially; INSERTs scan nothing.
    EXPECT_EQ(delta.at("idx_scan") + delta.at("seq_scan"),
              n * (shape.selects + shape.updates + shape.deletes));
    // Point selects, updates and deletes by primary key always use it.
    const int point_selects = name == "point_select" ? 1 : std::max(shape.selects - 4, 0);
    const int point_lookups = point_selects + shape.updates + shape.deletes;
    EXPECT_GE(delta.at("idx_scan"), n * point_lookups);
    // Every id is always present at the start of an event, so every update hits one row.
    EXPECT_EQ(delta.at("n_tup_upd"), n * shape.updates);
    EXPECT_EQ(delta.at("n_tup_ins"), n * shape.inserts);
    if (lone_deletes) {
      EXPECT_GT(delta.at("n_tup_del"), 0);
      EXPECT_LT(delta.at("n_tup_del"), n);
      EXPECT_EQ(delta.at("n_tup_del"), rows);
    } else {
      EXPECT_EQ(delta.at("n_tup_del"), n * shape.deletes);
    }
    // One commit per event, or per statement in autocommit; plus the two reads' own: the first
    // counter read and the flush before the second.
    EXPECT_EQ(delta.at("xact_commit"), (shape.transaction ? n : n * shape.statements()) + 2);
    EXPECT_EQ(delta.at("xact_rollback"), 0);
  } else {
    // The second read is a SELECT that counts itself.
    EXPECT_EQ(delta.at("com_select"), n * shape.selects + 1);
    EXPECT_EQ(delta.at("com_update"), n * shape.updates);
    EXPECT_EQ(delta.at("com_delete"), n * shape.deletes);
    EXPECT_EQ(delta.at("com_insert"), n * shape.inserts);
    EXPECT_EQ(delta.at("com_begin"), shape.transaction ? n : 0);
    EXPECT_EQ(delta.at("com_commit"), shape.transaction ? n : 0);
    EXPECT_EQ(delta.at("com_rollback"), 0);
    // Server-side prepared statements, as sysbench's (the counter reads are plain queries).
    EXPECT_EQ(delta.at("com_stmt_execute"), n * shape.statements());
  }

  if (lone_deletes) {
    EXPECT_EQ(row_count, kRows - rows);
  } else {
    EXPECT_EQ(row_count, kRows + n * (shape.inserts - shape.deletes));
  }
  if (name == "insert") {
    EXPECT_EQ(rows, n);
  } else if (name == "read_write" || name == "write_only") {
    // Updates, the delete and the insert each affect one row (MariaDB counts an UPDATE that
    // leaves the row as it was as 0 rows, which a fresh random c never does).
    EXPECT_GE(rows, n * (shape.updates + shape.deletes + shape.inserts));
  }
}

// A session of the PostgreSQL superuser over the socket (trusted there), in the database
// `postgres`: it reads and resets pg_stat_statements (whose counts are the whole server's)
// without adding to what the load's user is counted for, nor to the load database's commits.
void ConnectAsPgSuperuser(Clock& clock, std::unique_ptr<db::Driver>& driver,
                          std::unique_ptr<db::Session>& session) {
  TestServers& servers = TestServersEnvironment::Servers();
  dbload::v1::Target target = servers.PostgresSocketTarget();
  target.set_user(servers.Get("PG_SUPERUSER"));
  target.set_database("postgres");
  target.clear_password_file();
  absl::StatusOr<std::unique_ptr<db::Driver>> made = db::MakeDriver(target, "", clock);
  ASSERT_OK(made.status());
  driver = *std::move(made);
  driver->ThreadStart();
  absl::StatusOr<std::unique_ptr<db::Session>> connected = driver->Connect();
  ASSERT_OK(connected.status());
  session = *std::move(connected);
}

// pg_stat_statements needs shared_preload_libraries, which the harness's server does not set:
// set it and restart the server (same port and data) once, before any session of the suite.
void EnablePgStatStatements() {
  SteadyClock clock;
  std::unique_ptr<db::Driver> driver;
  std::unique_ptr<db::Session> session;
  ASSERT_NO_FATAL_FAILURE(ConnectAsPgSuperuser(clock, driver, session));
  absl::StatusOr<std::vector<std::string>> loaded =
      session->FetchColumn("SHOW shared_preload_libraries", 1);
  ASSERT_OK(loaded.status());
  if (loaded->empty() || !absl::StrContains(loaded->front(), "pg_stat_statements")) {
    ASSERT_EXEC_OK(session->ExecuteSql(
        "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"));
    session.reset();
    const ProcessResult restart =
        RunProcess({"/bin/bash", TestServers::DbenvPath(), "restart",
                    TestServersEnvironment::Servers().dir(), "postgres"},
                   std::chrono::seconds(60));
    ASSERT_EQ(restart.exit_code, 0) << restart.Describe();
    absl::StatusOr<std::unique_ptr<db::Session>> again = driver->Connect();
    ASSERT_OK(again.status());
    session = *std::move(again);
  }
  ASSERT_EXEC_OK(session->ExecuteSql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"));
  session.reset();
  driver->ThreadEnd();
}

// Contention: a table of kContendedRows rows, whose hot spot (sysbench's "special" distribution
// sends 75 % of ids to the central 1 %) is 10 ids: the DELETE + INSERT of one id by two
// transactions at once gives PostgreSQL's 23505 (the second DELETE waited for the first, found
// the row gone, and its INSERT meets the first's committed row); updates of the same hot ids in
// different orders give deadlocks on both servers.
constexpr int64_t kContendedRows = 1000;
constexpr Nanos kContendedRun = 3 * kSecond;

class OltpContentionTest : public ::testing::TestWithParam<std::tuple<Backend, int>> {
 public:
  static void SetUpTestSuite() {
    static bool enabled = false;  // once per binary, for this suite and those derived from it
    if (enabled) return;
    enabled = true;
    EnablePgStatStatements();
  }

 protected:
  void SetUp() override {
    TestServers& servers = TestServersEnvironment::Servers();
    target_ = postgres() ? servers.PostgresTarget() : servers.MariaDbTarget();
    ASSERT_NO_FATAL_FAILURE(ConnectTo(target_, clock_, driver_, session_));
    options_ = {{"tables", "1"}, {"table_size", absl::StrCat(kContendedRows)}};
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload("oltp", options_);
    ASSERT_OK(workload.status());
    workload_ = *std::move(workload);
    ASSERT_OK(DropWorkloadData(workload_->DataSpec(), *session_,
                               driver_->dialect()));  // left by a failed run
    ASSERT_OK(LoadWorkloadData(workload_->DataSpec(), *driver_, {}, nullptr));
    if (postgres()) {
      ASSERT_EXEC_OK(session_->ExecuteSql("ALTER TABLE sbtest1 SET (autovacuum_enabled = off)"));
      // And for the catalogs, which each case's DROP and CREATE churn: an autovacuum worker's
      // transactions count in pg_stat_database's xact_commit too (a run once had 17 more
      // commits than its clients' and this session's).
      testing::TurnOffAutovacuum(servers);
    }
    WaitForOtherSessionsToEnd();
  }

  void TearDown() override {
    if (session_ != nullptr && workload_ != nullptr) {
      EXPECT_TRUE(DropWorkloadData(workload_->DataSpec(), *session_, driver_->dialect()).ok());
    }
    session_.reset();
    if (driver_ != nullptr) driver_->ThreadEnd();
    super_session_.reset();
    if (super_driver_ != nullptr) super_driver_->ThreadEnd();
  }

  bool postgres() const { return std::get<0>(GetParam()) == Backend::kPostgres; }
  int clients() const { return std::get<1>(GetParam()); }

  // PostgreSQL publishes a backend's statistics when it exits, a little after its connection
  // closed: the counters are read once no other session of the database is left (the loader's
  // before the run, the clients' after it).
  void WaitForOtherSessionsToEnd() {
    const std::string sql =
        postgres() ? "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
                   : "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID <> "
                     "CONNECTION_ID() AND DB = DATABASE()";
    std::string seen;
    for (int i = 0; i < 100 && seen != "0"; ++i) {
      if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ++own_transactions_;
      absl::StatusOr<std::vector<std::string>> rows = session_->FetchColumn(sql, 1);
      ASSERT_OK(rows.status());
      seen = rows->empty() ? "" : rows->front();
    }
    ASSERT_EQ(seen, "0") << "other sessions were still there after 10 s";
  }

  // Committed and rolled-back transactions as the server counts them: the database's on
  // PostgreSQL (each read is its own transaction: +1 commit), the server's COMMIT and ROLLBACK
  // statements on MariaDB (the workload's transactions end with them).
  std::map<std::string, int64_t> Counters() {
    if (postgres()) {
      // A backend flushes its transaction counts only along with some table's statistics (a
      // transaction that reads no table leaves them pending): this one reads a table, so that
      // the forced flush takes every earlier transaction of this session, and itself.
      const db::ExecOutcome flushed =
          session_->ExecuteSql("SELECT pg_stat_force_next_flush() FROM sbtest1 LIMIT 1");
      EXPECT_TRUE(flushed.ok()) << flushed.error->message;
    }
    const char* sql =
        postgres() ? "SELECT unnest(ARRAY['commits=' || xact_commit, 'rollbacks=' || "
                     "xact_rollback, 'deadlocks=' || deadlocks]) FROM pg_stat_database "
                     "WHERE datname = current_database()"
                   : "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM "
                     "information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('COM_COMMIT', "
                     "'COM_ROLLBACK', 'INNODB_DEADLOCKS', 'COM_BEGIN', 'COM_STMT_EXECUTE')";
    absl::StatusOr<std::vector<std::string>> rows = session_->FetchColumn(sql, 10);
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::map<std::string, int64_t> counters =
        rows.ok() ? ParseCounters(*rows) : std::map<std::string, int64_t>{};
    if (!postgres()) {
      counters["commits"] = counters["com_commit"];
      counters["rollbacks"] = counters["com_rollback"];
      counters["deadlocks"] = counters["innodb_deadlocks"];
      // Every statement of the load: prepared ones, and the transactions' START TRANSACTION,
      // COMMIT and ROLLBACK (this session's reads are plain SELECTs, counted as none of them).
      counters["statements"] = counters["com_stmt_execute"] + counters["com_begin"] +
                               counters["com_commit"] + counters["com_rollback"];
    }
    return counters;
  }

  // PostgreSQL: from now on pg_stat_statements counts afresh.
  void ResetStatementCounts() {
    ASSERT_NO_FATAL_FAILURE(ConnectAsPgSuperuser(clock_, super_driver_, super_session_));
    absl::StatusOr<std::vector<std::string>> reset =
        super_session_->FetchColumn("SELECT pg_stat_statements_reset()", 1);
    ASSERT_OK(reset.status());
  }

  // PostgreSQL: the statements of the load's user that completed since the reset (recorded as
  // each ends, so a finished run's are all there). This test's own session is the same user:
  // it must send nothing in between.
  int64_t CompletedStatements() {
    absl::StatusOr<std::vector<std::string>> rows = super_session_->FetchColumn(
        absl::StrCat("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE userid = "
                     "(SELECT oid FROM pg_roles WHERE rolname = '",
                     target_.user(), "')"),
        1);
    EXPECT_TRUE(rows.ok()) << rows.status();
    int64_t calls = -1;
    if (rows.ok() && rows->size() == 1) {
      EXPECT_TRUE(absl::SimpleAtoi(rows->front(), &calls));
    }
    return calls;
  }

  // What pg_stat_statements holds, for a message.
  std::string StatementCountsByText() {
    absl::StatusOr<std::vector<std::string>> rows = super_session_->FetchColumn(
        "SELECT calls || ' ' || left(query, 60) FROM pg_stat_statements ORDER BY calls DESC", 100);
    return rows.ok() ? absl::StrJoin(*rows, "\n") : std::string(rows.status().message());
  }

  int64_t RowCount() {
    absl::StatusOr<std::vector<std::string>> rows =
        session_->FetchColumn("SELECT count(*) FROM sbtest1", 1);
    EXPECT_TRUE(rows.ok()) << rows.status();
    int64_t count = -1;
    if (rows.ok() && rows->size() == 1) {
      EXPECT_TRUE(absl::SimpleAtoi((*rows)[0], &count));
    }
    return count;
  }

  dbload::v1::Plan Plan(const std::string& scenario = "read_write",
                        Nanos duration = kContendedRun) const {
    dbload::v1::Plan plan;
    plan.set_name(absl::StrCat("oltp-contention-", clients()));
    *plan.mutable_target() = target_;
    plan.mutable_target()->set_pool(static_cast<uint32_t>(clients()));
    plan.set_workload("oltp");
    for (const auto& [key, value] : options_) (*plan.mutable_workload_options())[key] = value;
    plan.set_scenario(scenario);
    plan.mutable_load()->mutable_closed()->set_clients(static_cast<uint32_t>(clients()));
    plan.mutable_stop()->set_duration_ns(duration);
    plan.set_seed(17);
    // The EXPLAIN capture's own connection and statements would be the server's to count too.
    plan.mutable_explain()->set_disabled(true);
    return plan;
  }

  // Runs read_write as `plan` says and checks the report's counts against the server's.
  void ReadWriteCountsAsTheServerDoes(const dbload::v1::Plan& plan);

  SteadyClock clock_;
  int64_t own_transactions_ = 0;  // polls of pg_stat_activity on session_
  std::unique_ptr<db::Driver> super_driver_;
  std::unique_ptr<db::Session> super_session_;
  dbload::v1::Target target_;
  std::map<std::string, std::string> options_;
  std::unique_ptr<db::Driver> driver_;
  std::unique_ptr<db::Session> session_;
  std::unique_ptr<Workload> workload_;
};

void OltpContentionTest::ReadWriteCountsAsTheServerDoes(const dbload::v1::Plan& plan) {
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = workload_->MakeScenario("read_write");
  ASSERT_OK(scenario.status());
  const std::map<std::string, int64_t> before = Counters();
  own_transactions_ = 0;
  if (postgres()) {
    ASSERT_NO_FATAL_FAILURE(ResetStatementCounts());
  }
  absl::StatusOr<dbload::v1::RunReport> report =
      RunPlanLocally(plan, *driver_, **scenario, clock_, {});
  ASSERT_OK(report.status());
  const int64_t completed_statements = postgres() ? CompletedStatements() : -1;
  WaitForOtherSessionsToEnd();
  const int64_t own_polls = own_transactions_;
  const std::map<std::string, int64_t> delta = Delta(before, Counters());

  std::map<std::string, uint64_t> ignored_by_code;
  uint64_t ignored_counted = 0;
  ASSERT_EQ(report->query_types_size(), 1);
  const dbload::v1::QueryTypeReport& read_write = report->query_types(0);
  for (const dbload::v1::ErrorCount& e : read_write.error_counts()) {
    if (e.error_class() != "ignored") continue;
    ignored_by_code[e.code()] += e.count();
    ignored_counted += e.count();
  }
  std::string codes;
  for (const auto& [code, count] : ignored_by_code) absl::StrAppend(&codes, " ", code, "=", count);
  std::cout << "[" << (postgres() ? "postgresql" : "mariadb") << " read_write, " << clients()
            << " clients"
            << (plan.target().engine() == dbload::v1::ENGINE_EVENT_LOOPS ? " on event loops" : "")
            << ", " << kContendedRun / kSecond << " s, " << kContendedRows << " rows] transactions "
            << report->executed() << ", errors " << report->errors() << ", ignored "
            << report->ignored() << " (" << (codes.empty() ? " none" : codes) << " ), statements "
            << report->statements() << "; server: commits +" << delta.at("commits")
            << ", rollbacks +" << delta.at("rollbacks") << ", deadlocks +" << delta.at("deadlocks")
            << ", statements "
            << (postgres() ? absl::StrCat(completed_statements, " completed (pg_stat_statements)")
                           : absl::StrCat("+", delta.at("statements"), " (Com_*)"))
            << std::endl;

  // The run ended by its duration, not by a duplicate key, and nothing else failed.
  EXPECT_EQ(report->end_reason(), "duration") << RenderReportText(*report);
  EXPECT_EQ(report->errors(), 0u) << RenderReportText(*report);
  EXPECT_GT(report->executed(), 0u);
  // Ignored errors are counted apart, by code, in the run's and the query type's figures; only
  // sysbench's codes for the dialect.
  EXPECT_EQ(read_write.ignored(), report->ignored());
  EXPECT_EQ(ignored_counted, report->ignored());
  EXPECT_EQ(read_write.executed(), report->executed());
  for (const auto& [code, count] : ignored_by_code) {
    EXPECT_THAT(code, postgres() ? ::testing::AnyOf("23505", "40P01", "40001")
                                 : ::testing::AnyOf("1213", "1020", "1205"));
  }
  // Their latency is not the transactions': the histogram holds the executed ones only.
  EXPECT_EQ(read_write.response_time().count(), report->executed());
  if (clients() == 64) {
    // 64 clients on a 10-id hot spot: duplicate keys and deadlocks do happen (here 6 to 22
    // 23505s and 11 to 41 40P01s per run on PostgreSQL, hundreds of 1213s on MariaDB); which
    // of them a run meets is chance, that it meets some is not.
    EXPECT_GT(report->ignored(), 0u);
  }
  if (report->ignored() > 0) {
    EXPECT_THAT(RenderReportText(*report), ::testing::HasSubstr("Ignored errors"));
  }

  // What the database committed is what the report counts as transactions; every ignored error
  // is one transaction the worker rolled back. PostgreSQL also counts the clients' own
  // transactions outside the load (PgCommitsPerClient each: session set-up and statement
  // preparation) and this session's own.
  const int64_t executed = static_cast<int64_t>(report->executed());
  const int64_t ignored = static_cast<int64_t>(report->ignored());
  if (postgres()) {
    const size_t statements = (*scenario)->Statements(db::Dialect::kPostgreSql).size();
    // This session's: the first read, the polls for the clients' exit, the second flush.
    const int64_t own = 1 + own_polls + 1;
    EXPECT_EQ(delta.at("commits") - executed - own, clients() * PgCommitsPerClient(statements));
  } else {
    EXPECT_EQ(delta.at("commits"), executed);
  }
  EXPECT_EQ(delta.at("rollbacks"), ignored);
  // Each deadlock the server detected ended one transaction, which the run ignored.
  EXPECT_EQ(delta.at("deadlocks"),
            static_cast<int64_t>(ignored_by_code[postgres() ? "40P01" : "1213"]));
  // Each committed event deleted one row and put it back; an ignored one changed nothing.
  EXPECT_EQ(RowCount(), kContendedRows);

  // Statements: what the server counted of the load, exactly. A committed event sent 20 (18 +
  // BEGIN + COMMIT), an ignored one 3 to 20 (BEGIN, up to its failing statement, ROLLBACK).
  const int64_t statements = static_cast<int64_t>(report->statements());
  if (postgres()) {
    // pg_stat_statements counts what completed: every statement but each ignored
    // transaction's failing one.
    EXPECT_EQ(completed_statements + ignored, statements) << StatementCountsByText();
  } else {
    EXPECT_EQ(delta.at("statements"), statements);
  }
  EXPECT_GE(statements, 20 * executed + 3 * ignored);
  EXPECT_LE(statements, 20 * (executed + ignored));
  EXPECT_EQ(read_write.statements(), report->statements());
  uint64_t interval_statements = 0;
  for (const dbload::v1::IntervalSample& sample : report->intervals()) {
    interval_statements += sample.statements();
  }
  EXPECT_EQ(interval_statements, report->statements());
  EXPECT_THAT(RenderReportText(*report),
              ::testing::HasSubstr(absl::StrCat("Statements: ", report->statements(), " (")));
}

TEST_P(OltpContentionTest, ReadWriteGoesOnThroughSysbenchsIgnoredErrorsAndCountsThemApart) {
  ReadWriteCountsAsTheServerDoes(Plan());
}

// The same with the clients as fibers on two event loops, waiting in epoll through libpq's
// asynchronous API or Connector/C's non-blocking one (target.engine: event_loops).
class OltpEventLoopsTest : public OltpContentionTest {};

TEST_P(OltpEventLoopsTest, ReadWriteOnEventLoopsCountsAsTheServerDoes) {
  dbload::v1::Plan plan = Plan();
  plan.mutable_target()->set_engine(dbload::v1::ENGINE_EVENT_LOOPS);
  plan.mutable_target()->set_event_loops(2);
  ReadWriteCountsAsTheServerDoes(plan);
}

// point_select: one statement per transaction, no transaction statements; the server's count
// of them is the report's.
class OltpPointSelectStatementsTest : public OltpContentionTest {};

TEST_P(OltpPointSelectStatementsTest, TheServerCountsTheReportsStatements) {
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = workload_->MakeScenario("point_select");
  ASSERT_OK(scenario.status());
  const dbload::v1::Plan plan = Plan("point_select", kSecond);
  const std::map<std::string, int64_t> before = Counters();
  if (postgres()) {
    ASSERT_NO_FATAL_FAILURE(ResetStatementCounts());
  }
  absl::StatusOr<dbload::v1::RunReport> report =
      RunPlanLocally(plan, *driver_, **scenario, clock_, {});
  ASSERT_OK(report.status());
  const int64_t completed_statements = postgres() ? CompletedStatements() : -1;
  WaitForOtherSessionsToEnd();
  const std::map<std::string, int64_t> delta = Delta(before, Counters());
  std::cout << "[" << (postgres() ? "postgresql" : "mariadb") << " point_select, " << clients()
            << " clients, 1 s] transactions " << report->executed() << ", statements "
            << report->statements() << "; server: "
            << (postgres() ? absl::StrCat(completed_statements, " (pg_stat_statements)")
                           : absl::StrCat("+", delta.at("statements"), " (Com_*)"))
            << std::endl;
  EXPECT_EQ(report->end_reason(), "duration");
  EXPECT_EQ(report->errors() + report->ignored(), 0u);
  EXPECT_GT(report->executed(), 0u);
  EXPECT_EQ(report->statements(), report->executed());
  const int64_t statements = static_cast<int64_t>(report->statements());
  if (postgres()) {
    EXPECT_EQ(completed_statements, statements) << StatementCountsByText();
  } else {
    EXPECT_EQ(delta.at("statements"), statements);
    EXPECT_EQ(delta.at("com_stmt_execute"), statements);
  }
}

// Issue 17 as it was: without sysbench's ignored errors, the first duplicate key is fatal and
// ends the run (and a deadlock counts as a retryable error).
class OltpWithoutIgnoredErrorsTest : public OltpContentionTest {};

TEST_P(OltpWithoutIgnoredErrorsTest, TheFirstDuplicateKeyEndsTheRun) {
  std::map<std::string, std::string> options = options_;
  options["ignore_errors"] = "none";
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload("oltp", options);
  ASSERT_OK(workload.status());
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = (*workload)->MakeScenario("read_write");
  ASSERT_OK(scenario.status());
  // Time enough for a duplicate key to come, since the run ends at the first: 64 clients can
  // spend seconds in PostgreSQL's 1 s deadlock timeout (a CI run once had 54 deadlocks and no
  // duplicate key in 3 s).
  dbload::v1::Plan plan = Plan("read_write", 20 * kSecond);
  (*plan.mutable_workload_options())["ignore_errors"] = "none";
  absl::StatusOr<dbload::v1::RunReport> report =
      RunPlanLocally(plan, *driver_, **scenario, clock_, {});
  ASSERT_OK(report.status());
  WaitForOtherSessionsToEnd();
  std::cout << "[postgresql read_write, " << clients() << " clients, ignore_errors: none] ended by "
            << report->end_reason() << "; transactions " << report->executed() << ", errors "
            << report->errors() << ", ignored " << report->ignored() << std::endl;
  EXPECT_THAT(report->end_reason(), ::testing::HasSubstr("23505"));
  EXPECT_EQ(report->ignored(), 0u);
  EXPECT_GE(report->errors(), 1u);
}

INSTANTIATE_TEST_SUITE_P(ReadWrite, OltpWithoutIgnoredErrorsTest,
                         ::testing::Values(std::tuple(Backend::kPostgres, 64)),
                         [](const auto&) { return std::string("pg_64_clients"); });

std::string ContentionCaseName(const ::testing::TestParamInfo<std::tuple<Backend, int>>& info) {
  return absl::StrCat(std::get<0>(info.param) == Backend::kPostgres ? "pg_" : "mariadb_",
                      std::get<1>(info.param), "_clients");
}

INSTANTIATE_TEST_SUITE_P(PointSelect, OltpPointSelectStatementsTest,
                         ::testing::Combine(::testing::Values(Backend::kPostgres,
                                                              Backend::kMariaDb),
                                            ::testing::Values(4)),
                         ContentionCaseName);

INSTANTIATE_TEST_SUITE_P(ReadWrite, OltpEventLoopsTest,
                         ::testing::Values(std::tuple(Backend::kPostgres, 64),
                                           std::tuple(Backend::kMariaDb, 64)),
                         ContentionCaseName);

INSTANTIATE_TEST_SUITE_P(ReadWrite, OltpContentionTest,
                         ::testing::Combine(::testing::Values(Backend::kPostgres,
                                                              Backend::kMariaDb),
                                            ::testing::Values(4, 64)),
                         ContentionCaseName);

std::string CaseName(const ::testing::TestParamInfo<std::tuple<Backend, std::string>>& info) {
  return absl::StrCat(std::get<0>(info.param) == Backend::kPostgres ? "pg_" : "mariadb_",
                      std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Scenarios, OltpTest,
    ::testing::Combine(::testing::Values(Backend::kPostgres, Backend::kMariaDb),
                       ::testing::Values("point_select", "read_only", "read_write", "write_only",
                                         "update_index", "update_non_index", "delete", "insert")),
    CaseName);

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
