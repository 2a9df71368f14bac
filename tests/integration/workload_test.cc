// Workloads written in YAML (workloads/*.yaml) end to end, with the real `dbload` executable
// against real PostgreSQL 15 and MariaDB 10.11 (tests/harness/dbenv): prepare loads and
// validates the data set, runs of the shop cases change exactly the rows their reports say,
// also when submitted to a coordinator of its own process, whose stored report holds them,
// a killed load resumes to the exact row count, a prepare killed at any step of any phase (by
// the DBLOAD_TEST_KILL_AT hook, or by kill -9 while the server builds an index) resumes to what
// an uninterrupted one leaves, cleanup drops only what dbload created, and
// dbload refuses to write into a table it did not create. Every count is read with the
// database's own client (psql, mariadb), not through dbload.
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#if !defined(DBLOAD_BINARY) || !defined(DBLOAD_COORDINATOR_BINARY) || !defined(DBLOAD_AGENT_BINARY)
#error "DBLOAD_BINARY, DBLOAD_COORDINATOR_BINARY and DBLOAD_AGENT_BINARY must be defined"
#endif

namespace dbload {
namespace {

using ::dbload::testing::Child;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;

enum class Backend { kPostgres, kMariaDb };

std::string NameOf(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kPostgres ? "Postgres" : "MariaDb";
}

TestServers& Servers() { return TestServersEnvironment::Servers(); }

class WorkloadTest : public ::testing::TestWithParam<Backend> {
 public:
  // What the database says to `sql`, through its own client.
  std::string SqlOf(const std::string& sql) { return Sql(sql); }

 protected:
  void SetUp() override {
    scratch_ = std::make_unique<testing::ScratchDir>("dbload_workload_test");
    dir_ = scratch_->path();
  }
  void TearDown() override { scratch_.reset(); }

  bool pg() const { return GetParam() == Backend::kPostgres; }

  // A plan for `workload`/`scenario` on this backend, open loop at 2,000/s.
  std::string WritePlan(const std::string& workload, const std::string& scenario,
                        const std::string& options) {
    const std::string path = dir_ + "/plan.yaml";
    std::ofstream out(path);
    out << "name: workload-test\ntarget:\n  driver: " << (pg() ? "postgresql" : "mysql")
        << "\n  host: 127.0.0.1\n  port: " << Servers().Get(pg() ? "PG_PORT" : "MARIADB_PORT")
        << "\n  user: bench\n  password_file: "
        << Servers().Get(pg() ? "PG_PASSWORD_FILE" : "MARIADB_PASSWORD_FILE")
        << "\n  database: bench\n  pool: 4\nworkload: " << workload << "\nscenario: " << scenario
        << "\nworkload_options: " << options
        << "\nload: {open: {rate: 2000}}\nstop: {queries: 100, duration: 60s}\n";
    return path;
  }

  ProcessResult Dbload(std::vector<std::string> args,
                       std::chrono::seconds timeout = std::chrono::seconds(120)) {
    return testing::RunDbload(std::move(args), timeout);
  }

  std::string Sql(const std::string& sql) {
    return pg() ? dbload::testing::Psql(Servers(), "bench", sql)
                : dbload::testing::Mariadb(Servers(), "USE bench; " + sql);
  }

  int64_t Count(const std::string& table) {
    int64_t value = -1;
    EXPECT_TRUE(absl::SimpleAtoi(Sql("SELECT COUNT(*) FROM " + table), &value)) << table;
    return value;
  }

  int64_t TablesNamed(const std::string& names) {
    int64_t value = -1;
    const std::string schema = pg() ? "current_schema()" : "DATABASE()";
    EXPECT_TRUE(absl::SimpleAtoi(
        Sql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = " + schema +
            " AND table_name IN (" + names + ")"),
        &value));
    return value;
  }

  // Runs `scenario` for `queries` transactions and returns its report.
  v1::RunReport Run(const std::string& plan, const std::string& scenario, int queries,
                    int agents = 1) {
    const std::string report_path = dir_ + "/report.json";
    const ProcessResult run =
        Dbload({"run", plan, "--agents", absl::StrCat(agents), "--set", "scenario=" + scenario,
                "--set", absl::StrCat("stop.queries=", queries), "--report", report_path});
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    absl::StatusOr<v1::RunReport> report = testing::LoadReport(report_path);
    EXPECT_TRUE(report.ok()) << report.status() << "\n" << run.Describe();
    return report.ok() ? *report : v1::RunReport();
  }

  static uint64_t ExecutedOf(const v1::RunReport& report, const std::string& query_type) {
    for (const v1::QueryTypeReport& type : report.query_types()) {
      if (type.name() == query_type) return type.executed();
    }
    ADD_FAILURE() << "no query type " << query_type;
    return 0;
  }

  std::unique_ptr<testing::ScratchDir> scratch_;
  std::string dir_;
};

constexpr char kSmallShop[] = "{users: 2000, items: 1000, orders: 4000, order_items: 8000}";

TEST_P(WorkloadTest, ShopPreparesRunsItsCasesExactlyAndCleansUp) {
  const std::string plan = WritePlan("shop", "insert_users", kSmallShop);
  const ProcessResult clean = Dbload({"cleanup", plan});
  ASSERT_EQ(clean.exit_code, 0) << clean.Describe();

  const std::string analyzed_mariadb =
      "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = "
      "'COM_ANALYZE'";
  const std::string analyzes_before = pg() ? "" : Sql(analyzed_mariadb);
  const ProcessResult prepare = Dbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  EXPECT_THAT(prepare.out, HasSubstr("order_items: 8000 / 8000 rows"));
  // Every table was vacuumed and analyzed by the prepare itself, not left to the server's
  // background work during the first measured run.
  if (pg()) {
    EXPECT_EQ(Sql("SELECT COUNT(*) FROM pg_stat_user_tables WHERE relname IN ('users', 'items', "
                  "'orders', 'order_items') AND vacuum_count > 0 AND analyze_count > 0"),
              "4");
  } else {
    int64_t before = 0, after = 0;
    ASSERT_TRUE(absl::SimpleAtoi(analyzes_before, &before)) << analyzes_before;
    ASSERT_TRUE(absl::SimpleAtoi(Sql(analyzed_mariadb), &after));
    EXPECT_EQ(after - before, 4);
  }
  EXPECT_EQ(Count("users"), 2000);
  EXPECT_EQ(Count("items"), 1000);
  EXPECT_EQ(Count("orders"), 4000);
  EXPECT_EQ(Count("order_items"), 8000);
  EXPECT_EQ(Sql("SELECT MIN(id) FROM users"), "1");
  EXPECT_EQ(Sql("SELECT MAX(id) FROM users"), "2000");
  // Again: everything is loaded already, so nothing changes.
  const ProcessResult again = Dbload({"prepare", plan});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(Count("users"), 2000);

  // Each case changes exactly the rows its report says it wrote.
  // Two agents: their sequences of new emails never collide (a unique index would refuse).
  v1::RunReport report = Run(plan, "insert_users", 300, /*agents=*/2);
  ASSERT_EQ(report.row_changes_size(), 1);  // dbload's own check, from the workload's changes
  EXPECT_EQ(report.row_changes(0).table(), "users");
  EXPECT_EQ(report.row_changes(0).after() - report.row_changes(0).before(), 300);
  EXPECT_EQ(report.row_changes(0).expected(), 300);
  EXPECT_EQ(report.executed(), 300u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_EQ(Count("users"), 2300);

  report = Run(plan, "batch_insert_items", 5);
  EXPECT_EQ(report.executed(), 5u);
  EXPECT_EQ(Count("items"), 1500);

  report = Run(plan, "delete_orders_batch", 3);
  EXPECT_EQ(report.executed(), 3u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_EQ(Count("orders"), 3700);
  EXPECT_EQ(Sql("SELECT COUNT(*) FROM order_items oi LEFT JOIN orders o ON o.id = oi.order_id "
                "WHERE o.id IS NULL"),
            "0");  // the delete cascaded

  const int64_t order_items_before = Count("order_items");
  report = Run(plan, "insert_user_order_items", 50);
  EXPECT_EQ(report.executed(), 50u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_EQ(Count("users"), 2350);
  EXPECT_EQ(Count("orders"), 3750);
  EXPECT_EQ(Count("order_items"), order_items_before + 100);
  // The captured ids linked them: every new order belongs to a new user.
  EXPECT_EQ(Sql("SELECT COUNT(*) FROM orders o JOIN users u ON u.id = o.user_id "
                "WHERE u.email LIKE 'tx%'"),
            "50");

  report = Run(plan, "select_users_by_email", 400);
  EXPECT_EQ(report.executed(), 400u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_GT(report.total_duration_s(), report.queries_duration_s());  // the sample was read

  // Two agents take disjoint parts of the same sample: every delete finds its row (the row
  // check would fail the run if two deleted the same id).
  report = Run(plan, "delete_orders", 100, /*agents=*/2);
  EXPECT_EQ(report.executed(), 100u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_EQ(Count("orders"), 3650);

  report = Run(plan, "mixed", 600);
  EXPECT_EQ(report.executed(), 600u);
  EXPECT_EQ(report.errors(), 0u);
  EXPECT_EQ(Count("users"), 2350 + static_cast<int64_t>(ExecutedOf(report, "insert_user")));
  EXPECT_EQ(Count("orders"), 3650 - static_cast<int64_t>(ExecutedOf(report, "delete_order")));
  EXPECT_GT(ExecutedOf(report, "select_user"), ExecutedOf(report, "delete_order"));

  const ProcessResult cleanup = Dbload({"cleanup", plan});
  ASSERT_EQ(cleanup.exit_code, 0) << cleanup.Describe();
  EXPECT_EQ(TablesNamed("'users', 'items', 'orders', 'order_items', 'dbload_load_state'"), 0);
}

TEST_P(WorkloadTest, PrepareRefusesATableItDidNotCreateAndCleanupLeavesIt) {
  const std::string plan = WritePlan("events", "insert_events", "{customers: 100, events: 100}");
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  Sql("CREATE TABLE customer (x INTEGER)");
  Sql("INSERT INTO customer VALUES (7)");
  const ProcessResult prepare = Dbload({"prepare", plan});
  EXPECT_NE(prepare.exit_code, 0) << prepare.Describe();
  EXPECT_THAT(prepare.err, HasSubstr("table customer already exists and was not created by dbload"));
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  EXPECT_EQ(Count("customer"), 1);  // untouched
  Sql("DROP TABLE customer");
  // Without the stranger, it loads.
  const ProcessResult loads = Dbload({"prepare", plan});
  EXPECT_EQ(loads.exit_code, 0) << loads.Describe();
  EXPECT_EQ(Count("event"), 100);
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
}

TEST_P(WorkloadTest, AKilledLoadResumesToTheExactRowCount) {
  // 600,000 rows in batches of 250,000, generated by the server.
  const std::string plan = WritePlan("tenant_orders", "pk_lookup", "{rows: 600000}");
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  {
    // Two parts (rows 1-300000 and 300001-600000) on two connections.
    Child loader({DBLOAD_BINARY, "prepare", plan, "--parallel", "2"});
    ASSERT_TRUE(loader.PumpUntil(
        [](const std::string& out) { return out.find("250000 / 600000") != std::string::npos; },
        std::chrono::seconds(60)))
        << loader.out() << loader.err();
    loader.Signal(SIGKILL);
    loader.Wait(std::chrono::seconds(10));
  }
  // Only whole batches (250000, or a part's last 50000), each with its part's watermark.
  const int64_t loaded = Count("tenant_orders");
  EXPECT_GE(loaded, 250000);
  EXPECT_LT(loaded, 600000);
  EXPECT_EQ(loaded % 50000, 0) << loaded;
  EXPECT_EQ(Sql("SELECT SUM(rows_done) FROM dbload_load_state WHERE tbl = 'tenant_orders' "
                "AND part >= 0"),
            std::to_string(loaded));

  const ProcessResult resumed = Dbload({"prepare", plan});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_THAT(resumed.out, HasSubstr(absl::StrCat("tenant_orders: resuming after ", loaded,
                                                  " committed rows (in 2 parts)")));
  EXPECT_EQ(Count("tenant_orders"), 600000);
  EXPECT_EQ(Sql("SELECT COUNT(DISTINCT order_id) FROM tenant_orders"), "600000");
  EXPECT_EQ(Sql("SELECT MAX(order_id) FROM tenant_orders"), "600000");
  // prepare validated the data set (its checks ran); the hot tenants hold about 80 %.
  const std::string hot = Sql("SELECT COUNT(*) FROM tenant_orders WHERE tenant_id <= 20");
  int64_t hot_rows = 0;
  ASSERT_TRUE(absl::SimpleAtoi(hot, &hot_rows));
  EXPECT_NEAR(hot_rows / 600000.0, 0.8, 0.01);

  // The scripts run on it.
  for (const std::string scenario : {"pk_lookup", "customer_latest", "hourly_aggregate", "mixed"}) {
    const v1::RunReport report = Run(plan, scenario, 200);
    EXPECT_EQ(report.executed(), 200u) << scenario;
    EXPECT_EQ(report.errors(), 0u) << scenario;
  }
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  EXPECT_EQ(TablesNamed("'tenant_orders'"), 0);
}

// A workload with every phase: two tables, three index steps (an index, a session setting, a
// foreign key), two after_load steps that are not idempotent (each adds to v: run twice, the
// check on SUM(v) fails), and checks. On PostgreSQL its steps are written as plainly as a user
// would (the step and its record commit together); on MariaDB, whose DDL commits by itself, the
// DDL steps can run again (IF NOT EXISTS), as workloads/README.md asks.
constexpr char kEveryPhase[] = R"yaml(name: every_phase
tables:
  - name: kp_parent
    create: CREATE TABLE kp_parent (id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL)
    data:
      rows: 100
      columns: {id: {row: true}, name: {pattern: {pattern: "parent {row}"}}}
  - name: kp
    create: CREATE TABLE kp (id BIGINT PRIMARY KEY, parent_id BIGINT NOT NULL, v INTEGER NOT NULL)
    indexes:
      - postgresql: CREATE INDEX kp_parent_id ON kp (parent_id)
        mysql: CREATE INDEX IF NOT EXISTS kp_parent_id ON kp (parent_id)
      - postgresql: SET work_mem = '8MB'
        mysql: SET SESSION foreign_key_checks = 0
      - postgresql: >-
          ALTER TABLE kp ADD CONSTRAINT kp_parent_fk FOREIGN KEY (parent_id)
          REFERENCES kp_parent (id)
        mysql: >-
          ALTER TABLE kp ADD CONSTRAINT kp_parent_fk FOREIGN KEY IF NOT EXISTS (parent_id)
          REFERENCES kp_parent (id)
    data:
      rows: 2000
      batch: 500
      columns: {id: {row: true}, parent_id: {uniform: {min: 1, max: 100}}, v: 0}
    after_load:
      - UPDATE kp SET v = v + 1 WHERE id <= 10
      - UPDATE kp SET v = v + 10 WHERE id <= 10
checks:
  - name: each after_load step ran once
    sql: SELECT SUM(v) FROM kp
    expect: 110
  - name: rows without their parent
    sql: SELECT COUNT(*) FROM kp k LEFT JOIN kp_parent p ON p.id = k.parent_id WHERE p.id IS NULL
    expect: 0
scenarios:
  - name: read
    query_types:
      - name: read
        statements:
          - sql: SELECT v FROM kp WHERE id = ?
            params: [{uniform: {min: 1, max: 2000}}]
)yaml";

// What a prepare leaves, read with the database's own client: rows, keys, indexes, foreign
// keys, after_load's effect, the load state, and (PostgreSQL) that each table was vacuumed and
// analyzed.
std::string PreparedState(WorkloadTest& test, bool pg, const std::vector<std::string>& tables) {
  std::string state;
  std::string names;
  for (const std::string& table : tables) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", "'", table, "'");
    const std::string key = table == "tenant_orders" ? "order_id" : "id";
    absl::StrAppend(&state, table, ": ",
                    test.SqlOf("SELECT CONCAT(COUNT(*), ' rows, ', COUNT(DISTINCT " + key +
                               "), ' keys') FROM " + table),
                    "\n");
  }
  if (pg) {
    absl::StrAppend(
        &state, "indexes: ",
        test.SqlOf("SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE "
                   "tablename IN (" + names + ")"),
        "\nforeign keys: ",
        test.SqlOf("SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE "
                   "contype = 'f' AND conrelid::regclass::text IN (" + names + ")"),
        "\nvacuumed and analyzed: ",
        test.SqlOf("SELECT COUNT(*) FROM pg_stat_user_tables WHERE relname IN (" + names +
                   ") AND vacuum_count > 0 AND analyze_count > 0"));
  } else {
    absl::StrAppend(
        &state, "indexes: ",
        test.SqlOf("SELECT GROUP_CONCAT(CONCAT(table_name, '.', index_name) ORDER BY table_name, "
                   "index_name) FROM information_schema.statistics WHERE table_schema = "
                   "DATABASE() AND seq_in_index = 1 AND table_name IN (" + names + ")"),
        "\nforeign keys: ",
        test.SqlOf("SELECT GROUP_CONCAT(constraint_name ORDER BY constraint_name) FROM "
                   "information_schema.referential_constraints WHERE constraint_schema = "
                   "DATABASE() AND table_name IN (" + names + ")"));
  }
  absl::StrAppend(&state, "\nload state: ",
                  test.SqlOf(std::string(pg ? "SELECT string_agg(" : "SELECT GROUP_CONCAT(") +
                             "CONCAT(tbl, ':', part, ':', rows_done, ':', phase)" +
                             (pg ? ", ','" : "") + " ORDER BY tbl, part" +
                             (pg ? "" : " SEPARATOR ','") +
                             ") FROM dbload_load_state WHERE tbl IN (" + names + ")"),
                  "\n");
  return state;
}

// Every kill point of the loader (DBLOAD_TEST_KILL_AT, workload/loader.h), one after
// the other, each followed by a resume that is killed at the next point: a prepare killed at
// any of them resumes to exactly what an uninterrupted prepare leaves. Two chains, as a point
// "before" a step and the point "after" it (the step run, its record not committed) are the
// same step.
TEST_P(WorkloadTest, APrepareKilledAtAnyStepOfAnyPhaseResumesToTheSameState) {
  std::ofstream(dir_ + "/every_phase.yaml") << kEveryPhase;
  const std::string plan = WritePlan("every_phase.yaml", "read", "{}");
  const std::vector<std::string> tables = {"kp_parent", "kp"};
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult whole = Dbload({"prepare", plan, "--parallel", "1"});
  ASSERT_EQ(whole.exit_code, 0) << whole.Describe();
  const std::string uninterrupted = PreparedState(*this, pg(), tables);
  EXPECT_THAT(uninterrupted, HasSubstr("kp: 2000 rows, 2000 keys\n"));
  EXPECT_THAT(uninterrupted, HasSubstr(pg() ? "indexes: kp_parent_id,kp_parent_pkey,kp_pkey"
                                            : "indexes: kp.kp_parent_id,kp.PRIMARY,"));
  EXPECT_THAT(uninterrupted, HasSubstr("foreign keys: kp_parent_fk\n"));

  // Killed at `point`: the process died there, by its own SIGKILL.
  const auto kill_at = [&](const std::string& point) {
    const ProcessResult killed =
        RunProcess({"/usr/bin/env", absl::StrCat("DBLOAD_TEST_KILL_AT=", point), DBLOAD_BINARY,
                    "prepare", plan, "--parallel", "1"},
                   std::chrono::seconds(60));
    EXPECT_EQ(killed.term_signal, SIGKILL) << point << "\n" << killed.Describe();
    EXPECT_THAT(killed.err, HasSubstr("DBLOAD_TEST_KILL_AT: killing this process at " + point));
  };
  const std::vector<std::vector<std::string>> chains = {
      {"create:kp_parent:before", "load:kp_parent:1", "create:kp:before", "load:kp:2",
       "index:kp:0:before", "index:kp:1:before", "index:kp:2:before", "after_load:kp:0:before",
       "after_load:kp:1:before", "analyze:kp:before", "check:before"},
      {"create:kp_parent:after", "load:kp_parent:end", "create:kp:after", "load:kp:1",
       "load:kp:2", "load:kp:end", "index:kp:0:after", "index:kp:1:after", "index:kp:2:after",
       "after_load:kp:0:after", "after_load:kp:1:after", "analyze:kp:after", "check:after"},
  };
  for (const std::vector<std::string>& chain : chains) {
    ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
    for (const std::string& point : chain) {
      kill_at(point);
      // What each database leaves at the interesting instants: PostgreSQL rolls a step back
      // with its record; MariaDB's DDL has committed (the resume runs it again, IF NOT EXISTS);
      // DML steps roll back with their record on both.
      if (point == "create:kp:after") {
        EXPECT_EQ(TablesNamed("'kp'"), pg() ? 0 : 1);
      }
      if (point == "index:kp:0:after") {
        EXPECT_EQ(SqlOf(pg() ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'kp_parent_id'"
                             : "SELECT COUNT(*) FROM information_schema.statistics WHERE "
                               "table_schema = DATABASE() AND index_name = 'kp_parent_id'"),
                  pg() ? "0" : "1");
      }
      if (point == "after_load:kp:0:after") {
        EXPECT_EQ(SqlOf("SELECT SUM(v) FROM kp"), "0");
      }
      if (point == "after_load:kp:1:after") {
        EXPECT_EQ(SqlOf("SELECT SUM(v) FROM kp"), "10");
      }
    }
    const ProcessResult resumed = Dbload({"prepare", plan, "--parallel", "1"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
    EXPECT_THAT(resumed.out, HasSubstr("row counts and checks validated"));
    EXPECT_EQ(PreparedState(*this, pg(), tables), uninterrupted) << chain.front();
  }
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
}

// Until the server shows (or, `present` false, no longer shows) a statement of another session
// whose text matches `like` (and `also`), polling every 10 ms inside the server for at most
// 30 s; whether it did.
std::string StatementFound(bool pg, const std::string& like, const std::string& also = "") {
  return pg ? "EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND "
              "backend_type = 'client backend' AND query LIKE '" + like + "'" + also + ")"
            : "EXISTS (SELECT 1 FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() "
              "AND INFO LIKE '" + like + "'" + also + ")";
}

// Whether the server runs a statement of another session matching `like` now.
bool StatementRunning(bool pg, const std::string& like) {
  const std::string found = StatementFound(pg, like);
  return (pg ? dbload::testing::Psql(Servers(), "bench",
                                     "SELECT CASE WHEN " + found + " THEN 'yes' ELSE 'no' END")
             : dbload::testing::Mariadb(Servers(), "SELECT IF(" + found + ", 'yes', 'no')")) ==
         "yes";
}

bool AwaitStatement(bool pg, const std::string& like, bool present,
                    const std::string& also = "") {
  const std::string found = StatementFound(pg, like, also);
  const std::string until = present ? found : "NOT " + found;
  const ProcessResult polled = RunProcess(
      pg ? dbload::testing::PsqlArgs(
               Servers(), "bench",
               "DO $$ BEGIN FOR i IN 1..3000 LOOP PERFORM pg_stat_clear_snapshot(); EXIT WHEN " +
                   until + "; PERFORM pg_sleep(0.01); END LOOP; END $$")
         : dbload::testing::MariadbArgs(
               Servers(), "DELIMITER //\nBEGIN NOT ATOMIC DECLARE i INT DEFAULT 0; WHILE i < "
                          "3000 AND NOT " + until +
                              " DO DO SLEEP(0.01); SET i = i + 1; END WHILE; END //"),
      std::chrono::seconds(90));
  EXPECT_EQ(polled.exit_code, 0) << polled.Describe();
  const std::string check = pg ? dbload::testing::Psql(Servers(), "bench",
                                                       "SELECT CASE WHEN " + until +
                                                           " THEN 'yes' ELSE 'no' END")
                               : dbload::testing::Mariadb(
                                     Servers(), "SELECT IF(" + until + ", 'yes', 'no')");
  return check == "yes";
}

// The issue's case: tenant_orders killed (kill -9 by PID, the real binary) while the server
// builds a secondary index. The server completes the statement of a client that died, so a
// resumed prepare must cope with what it finds: on PostgreSQL the index rolled back with its
// record, on MariaDB committed (IF NOT EXISTS then finds it); and while the killed prepare's
// statement still runs, the resumed one waits for it.
TEST_P(WorkloadTest, APrepareKilledWhileTheServerBuildsAnIndexResumes) {
  const std::string plan = WritePlan("tenant_orders", "pk_lookup", "{rows: 200000}");
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  const std::string any_index = "CREATE INDEX%tenant_orders_%";
  // Kills `prepare` (by its PID) as soon as the server runs its statement matching `like`.
  const auto kill_during = [&](Child& prepare, const std::string& like) {
    const bool seen = AwaitStatement(pg(), like, true);
    prepare.Signal(SIGKILL);
    const ProcessResult killed = prepare.Wait(std::chrono::seconds(10));
    EXPECT_TRUE(seen) << "prepare never reached " << like << "\n" << killed.Describe();
    EXPECT_EQ(killed.term_signal, SIGKILL) << killed.Describe();
  };

  // 1. Killed while the server builds the first index; resumed once the server is done with
  // the killed prepare's CREATE INDEX. Before the fix, that resume failed at once: "relation
  // "tenant_orders_customer" already exists [42P07]" (PostgreSQL), "Duplicate key name
  // 'tenant_orders_customer' [1061]" (MariaDB), and never reached a second index.
  {
    Child first({DBLOAD_BINARY, "prepare", plan});
    kill_during(first, "CREATE INDEX%tenant_orders_customer%");
  }
  ASSERT_FALSE(HasFailure());
  // The client is gone; the server still builds its index.
  EXPECT_TRUE(StatementRunning(pg(), "CREATE INDEX%tenant_orders_customer%"));
  ASSERT_TRUE(AwaitStatement(pg(), any_index, false));
  EXPECT_EQ(Count("tenant_orders"), 200000);

  // 2. Killed while its CREATE INDEX waits at the server for a lock the test holds; resumed at
  // once, while the killed prepare's statement is still queued there: the resumed prepare
  // says it waits, and does.
  Child holder(pg() ? dbload::testing::PsqlArgs(
                          Servers(), "bench",
                          "BEGIN; LOCK TABLE tenant_orders IN ROW EXCLUSIVE MODE; "
                          "SELECT pg_sleep(120)")
                    : dbload::testing::MariadbArgs(
                          Servers(), "USE bench; LOCK TABLES tenant_orders WRITE; "
                                     "SELECT SLEEP(120)"));
  ASSERT_TRUE(pg() ? AwaitStatement(true, "%pg_sleep(120)%", true, " AND wait_event = 'PgSleep'")
                   : AwaitStatement(false, "SELECT SLEEP(120)%", true));
  {
    Child queued({DBLOAD_BINARY, "prepare", plan});
    kill_during(queued, any_index);
  }
  ASSERT_FALSE(HasFailure());
  Child resumed({DBLOAD_BINARY, "prepare", plan});
  EXPECT_TRUE(resumed.PumpUntil(
      [](const std::string& out) {
        return out.find("waiting for another prepare of workload tenant_orders") !=
               std::string::npos;
      },
      std::chrono::seconds(30)))
      << resumed.out() << resumed.err();
  // Let the killed prepare's statement go: the server builds the index, then finds its client
  // gone.
  if (pg()) {
    dbload::testing::Psql(Servers(), "bench",
                          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query "
                          "LIKE '%pg_sleep(120)%' AND pid <> pg_backend_pid()");
  } else {
    dbload::testing::Mariadb(
        Servers(), "SELECT CONCAT('KILL ', ID) INTO @kill FROM information_schema.PROCESSLIST "
                   "WHERE INFO LIKE 'SELECT SLEEP(120)%' LIMIT 1; EXECUTE IMMEDIATE @kill");
  }
  holder.Wait(std::chrono::seconds(30));

  // 3. That resumed prepare killed while the server builds the second index; resumed at once,
  // perhaps while the server still builds it.
  kill_during(resumed, "CREATE INDEX%tenant_orders_status%");
  ASSERT_FALSE(HasFailure());
  const ProcessResult done = Dbload({"prepare", plan});
  ASSERT_EQ(done.exit_code, 0) << done.Describe();
  EXPECT_THAT(done.out, HasSubstr("row counts and checks validated"));
  const std::string state = PreparedState(*this, pg(), {"tenant_orders"});
  EXPECT_THAT(state, HasSubstr("tenant_orders: 200000 rows, 200000 keys\n"));
  EXPECT_THAT(state, HasSubstr(pg() ? "indexes: tenant_orders_created,tenant_orders_customer,"
                                      "tenant_orders_pkey,tenant_orders_status\n"
                                    : "indexes: tenant_orders.PRIMARY,tenant_orders.tenant_"
                                      "orders_created,tenant_orders.tenant_orders_customer,"
                                      "tenant_orders.tenant_orders_status\n"));
  EXPECT_THAT(state, HasSubstr("load state: tenant_orders:-1:0:done,"));
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
}

// A run submitted to a coordinator of its own process, split over two agents of their own: the
// coordinator counts the rows, once for the run, and the report it stores and serves
// (Control.GetReport: `dbload report --coordinator`) holds them, as does the one `submit --wait`
// shows.
TEST_P(WorkloadTest, ASubmittedRunsRowChangesAreInTheCoordinatorsStoredReport) {
  const std::string plan = WritePlan("shop", "insert_users", kSmallShop);
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = Dbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  Child coordinator({DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0"});
  const std::string address = testing::ListeningAddress(coordinator);
  ASSERT_FALSE(address.empty()) << coordinator.out() << coordinator.err();
  std::vector<std::unique_ptr<Child>> agents;
  for (const char* name : {"agent-1", "agent-2"}) {
    agents.push_back(std::make_unique<Child>(
        std::vector<std::string>{DBLOAD_AGENT_BINARY, "--coordinator", address, "--name", name}));
  }
  const ProcessResult submitted =
      Dbload({"submit", plan, "--coordinator", address, "--wait", "--min-agents", "2",
              "--wait-for-agents", "20s", "--set", "stop.queries=200"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.Describe();
  EXPECT_THAT(submitted.out, HasSubstr("across 2 agents"));
  EXPECT_THAT(submitted.out, HasSubstr("Rows changed"));

  const ProcessResult fetched = Dbload({"report", "--coordinator", address, "--format", "json"});
  ASSERT_EQ(fetched.exit_code, 0) << fetched.Describe();
  absl::StatusOr<v1::RunReport> stored = ParseReportJson(fetched.out);
  ASSERT_TRUE(stored.ok()) << stored.status() << "\n" << fetched.out;
  EXPECT_EQ(stored->executed(), 200u);
  EXPECT_EQ(stored->agents_size(), 2);
  ASSERT_EQ(stored->row_changes_size(), 1);
  EXPECT_EQ(stored->row_changes(0).table(), "users");
  EXPECT_EQ(stored->row_changes(0).after() - stored->row_changes(0).before(), 200);
  EXPECT_EQ(stored->row_changes(0).expected(), 200);
  EXPECT_EQ(stored->row_changes_not_checked(), "");
  EXPECT_EQ(Count("users"), 2200);
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
}

// Loading split over two agents in this process (`--agents 2`), four parts: each agent loads
// two, and the result is the same exact data set, validated.
TEST_P(WorkloadTest, PrepareOnTwoLocalAgentsLoadsEveryPartOnce) {
  const std::string plan = WritePlan("events", "insert_events", "{customers: 2000, events: 40000}");
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = Dbload({"prepare", plan, "--agents", "2", "--parallel", "4"});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  EXPECT_THAT(prepare.out, HasSubstr("loading 4 parts on 2 agents"));
  EXPECT_THAT(prepare.out, HasSubstr("loaded parts 0-1"));
  EXPECT_THAT(prepare.out, HasSubstr("loaded parts 2-3"));
  EXPECT_EQ(Count("customer"), 2000);
  EXPECT_EQ(Count("event"), 40000);
  EXPECT_EQ(Sql("SELECT COUNT(DISTINCT id) FROM event"), "40000");
  EXPECT_EQ(Sql("SELECT SUM(rows_done) FROM dbload_load_state WHERE tbl = 'event' AND part >= 0"),
            "40000");
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
}

// A user's own workload file (next to the plan) whose declared row changes do not happen:
// dbload compares the database's counts with its report and fails the run, saying so. A table
// without data is created empty (and dropped by cleanup).
TEST_P(WorkloadTest, AUserWorkloadWhoseRowsDoNotChangeAsDeclaredFailsTheRowCheck) {
  {
    std::ofstream out(dir_ + "/mine.yaml");
    out << R"yaml(name: mine
tables:
  - name: mine_t
    create: CREATE TABLE mine_t (id BIGINT PRIMARY KEY, v INTEGER NOT NULL)
    data:
      rows: 100
      columns: {id: {row: true}, v: {uniform: {min: 1, max: 9}}}
  - name: mine_log
    create: CREATE TABLE mine_log (id BIGINT PRIMARY KEY, note VARCHAR(20))
scenarios:
  - name: churn
    query_types:
      - name: add
        changes: {mine_t: 1}
        statements:
          - sql: INSERT INTO mine_t (id, v) VALUES (?, 1)
            params: [{sequence: {start: 1000}}]
      - name: remove_missing
        changes: {mine_t: -1}
        statements:
          - sql: DELETE FROM mine_t WHERE id = ?
            params: [{uniform: {min: 100000, max: 200000}}]
)yaml";
  }
  const std::string plan = WritePlan("mine.yaml", "churn", "{}");
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  const ProcessResult prepare = Dbload({"prepare", plan});
  ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
  EXPECT_EQ(TablesNamed("'mine_log'"), 1);
  EXPECT_EQ(Count("mine_log"), 0);
  const ProcessResult run = Dbload({"run", plan, "--set", "stop.queries=200"});
  EXPECT_EQ(run.exit_code, 1) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("Rows changed"));
  EXPECT_THAT(run.out, HasSubstr("MISMATCH"));
  EXPECT_THAT(run.err, HasSubstr("the database disagrees with the report: mine_t changed by +"));
  // The inserts happened; the deletes found nothing.
  EXPECT_GT(Count("mine_t"), 100);
  ASSERT_EQ(Dbload({"cleanup", plan}).exit_code, 0);
  EXPECT_EQ(TablesNamed("'mine_t', 'mine_log'"), 0);
}

// `dbload workloads` and `dbload workload check`: the catalogue, and errors that name the line
// and field (or the --set) of the mistake.
TEST(WorkloadCommandsTest, ListAndCheck) {
  const ProcessResult list = RunProcess({DBLOAD_BINARY, "workloads"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_THAT(list.out, HasSubstr("oltp: point_select read_only read_write write_only"));
  EXPECT_THAT(list.out, HasSubstr("shop: insert_users batch_insert_items"));
  EXPECT_THAT(list.out, HasSubstr("tenant_orders: pk_lookup"));
  EXPECT_THAT(list.out, HasSubstr("events: insert_events read_events"));
  EXPECT_THAT(list.out, HasSubstr("inventory: reserve hot_items"));

  const ProcessResult good = RunProcess({DBLOAD_BINARY, "workload", "check", "shop"});
  EXPECT_EQ(good.exit_code, 0) << good.Describe();
  EXPECT_THAT(good.out, HasSubstr("workload shop, 4 tables, 17 scenarios"));
  const ProcessResult option = RunProcess({DBLOAD_BINARY, "workload", "check", "shop", "--set",
                                           "user=5"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_THAT(option.err, HasSubstr("--set user: unknown option"));

  char pattern[] = "/tmp/dbload_workload_check.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string path = std::string(pattern) + "/bad.yaml";
  std::ofstream(path) << "name: bad\nscenarios:\n  - name: s\n    query_types:\n      - name: q\n"
                         "        statements:\n          - sql: SELECT ?\n"
                         "            params: [{uniform: {min: 5, max: 1}}]\n";
  const ProcessResult bad = RunProcess({DBLOAD_BINARY, "workload", "check", path});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr(path + ":8:46: scenarios.0.query_types.0.statements.0.params.0."
                                 "uniform.max: must be >= min (5), got 1"));
  std::filesystem::remove_all(pattern);
}

INSTANTIATE_TEST_SUITE_P(Databases, WorkloadTest,
                         ::testing::Values(Backend::kPostgres, Backend::kMariaDb), NameOf);

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
