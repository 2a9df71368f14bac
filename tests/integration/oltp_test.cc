// The oltp workload's sysbench scenarios against real PostgreSQL 15 and MariaDB 10.11 (started by
// tests/harness/dbenv). Each scenario's worker runs a fixed number of events directly on one
// session, and the statements it sent are counted by the servers themselves: pg_stat_user_tables
// and pg_stat_database on PostgreSQL, the session's Com_* status counters on MariaDB. That is
// what makes dbload's figures comparable with sysbench's: the same statements, the same number of
// them per event, in the same transactions.

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/db/driver.h"
#include "common/db/driver_factory.h"
#include "common/workload.h"
#include "common/workloads/loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/test_servers.h"

namespace dbload {
namespace {

using ::dbload::testing::PasswordOf;
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

class OltpTest : public ::testing::TestWithParam<std::tuple<Backend, std::string>> {
 protected:
  void SetUp() override {
    TestServers& servers = TestServersEnvironment::Servers();
    const dbload::v1::Target target =
        postgres() ? servers.PostgresTarget() : servers.MariaDbTarget();
    ASSERT_NE(target.port(), 0u);
    absl::StatusOr<std::string> password = PasswordOf(target);
    ASSERT_OK(password.status());
    absl::StatusOr<std::unique_ptr<db::Driver>> driver = db::MakeDriver(target, *password, clock_);
    ASSERT_OK(driver.status());
    driver_ = *std::move(driver);
    driver_->ThreadStart();
    absl::StatusOr<std::unique_ptr<db::Session>> session = driver_->Connect();
    ASSERT_OK(session.status());
    session_ = *std::move(session);

    absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(
        "oltp", {{"tables", absl::StrCat(kTables)}, {"table_size", absl::StrCat(kTableSize)}});
    ASSERT_OK(workload.status());
    workload_ = *std::move(workload);
    ASSERT_OK(DropWorkloadData(workload_->DataSpec(), *session_));  // left by a failed run
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
      EXPECT_TRUE(DropWorkloadData(workload_->DataSpec(), *session_).ok());
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
  ::testing::InitGoogleTest(&argc, argv);
  dbload::testing::TestServersEnvironment::Register({"postgres", "mariadb"});
  return RUN_ALL_TESTS();
}
