// The engine of YAML workloads on a recording session: what each query type sends, in which
// order, with which values; captures, repeats, transactions, samples and their partitioning.

#include <algorithm>
#include <functional>
#include <set>

#include "absl/strings/str_split.h"
#include "base/field_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workload/declarative.h"
#include "workload/loader.h"
#include "workload/workload_parser.h"

namespace dbload {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Text(const db::Value& value) {
  if (const auto* number = std::get_if<int64_t>(&value)) return std::to_string(*number);
  if (const auto* text = std::get_if<std::string_view>(&value)) return std::string(*text);
  if (const auto* real = std::get_if<double>(&value)) return std::to_string(*real);
  return "NULL";
}

// Records every call; Execute returns a growing id when asked to capture, and fails the
// statement whose id is `fail_id`.
class RecordingSession final : public db::Session {
 public:
  absl::Status Prepare(int id, const db::StatementSpec& statement) override {
    prepared[id] = statement.sql;
    return absl::OkStatus();
  }
  db::ExecOutcome Execute(int id, std::span<const db::Value> params,
                          bool capture_first_value) override {
    std::string line = absl::StrCat("exec ", id);
    for (const db::Value& value : params) absl::StrAppend(&line, " ", Text(value));
    calls.push_back(line);
    db::ExecOutcome outcome;
    if (id == fail_id) {
      outcome.error = db::DbError{.error_class = db::ErrorClass::kRetryable, .code = "40001"};
      return outcome;
    }
    outcome.rows = 1;
    if (capture_first_value) outcome.first_value = ++last_id;
    return outcome;
  }
  db::ExecOutcome ExecuteSql(std::string_view sql) override {
    calls.push_back("sql " + std::string(sql));
    return {};
  }
  db::ExecOutcome Begin() override {
    calls.push_back("begin");
    return {};
  }
  db::ExecOutcome Commit() override {
    calls.push_back("commit");
    return {};
  }
  db::ExecOutcome Rollback() override {
    calls.push_back("rollback");
    return {};
  }
  absl::Status Reconnect() override { return absl::OkStatus(); }
  db::ExecOutcome BulkInsert(std::string_view table, std::span<const std::string> columns,
                             std::span<const db::Value> values) override {
    db::ExecOutcome outcome;
    outcome.rows = static_cast<int64_t>(values.size() / columns.size());
    calls.push_back(absl::StrCat("bulk ", std::string(table), " ", outcome.rows, " rows from ",
                                 Text(values[0])));
    return outcome;
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql, size_t) override {
    calls.push_back("fetch " + std::string(sql));
    if (fetch) return fetch(sql);
    return sample;
  }

  std::map<int, std::string> prepared;
  std::vector<std::string> calls;
  std::vector<std::string> sample = {"11", "12", "13", "14", "15"};
  std::function<std::vector<std::string>(std::string_view)> fetch;  // instead of `sample`
  int fail_id = -1;
  int64_t last_id = 100;
};

// Hands out sessions that forward to one RecordingSession, so a test sees what Setup did.
class FakeDriver final : public db::Driver {
 public:
  explicit FakeDriver(RecordingSession& session) : session_(session) {}
  db::Dialect dialect() const override { return db::Dialect::kPostgreSql; }
  db::Capabilities capabilities() const override { return {}; }
  absl::StatusOr<std::unique_ptr<db::Session>> Connect() override {
    ++connects;
    return std::unique_ptr<db::Session>(new Forwarding(session_));
  }
  int connects = 0;

 private:
  struct Forwarding final : db::Session {
    explicit Forwarding(RecordingSession& to) : to(to) {}
    absl::Status Prepare(int id, const db::StatementSpec& s) override { return to.Prepare(id, s); }
    db::ExecOutcome Execute(int id, std::span<const db::Value> p, bool c) override {
      return to.Execute(id, p, c);
    }
    db::ExecOutcome ExecuteSql(std::string_view sql) override { return to.ExecuteSql(sql); }
    db::ExecOutcome Begin() override { return to.Begin(); }
    db::ExecOutcome Commit() override { return to.Commit(); }
    db::ExecOutcome Rollback() override { return to.Rollback(); }
    absl::Status Reconnect() override { return absl::OkStatus(); }
    db::ExecOutcome BulkInsert(std::string_view t, std::span<const std::string> c,
                               std::span<const db::Value> v) override {
      return to.BulkInsert(t, c, v);
    }
    absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql,
                                                         size_t max_rows) override {
      return to.FetchColumn(sql, max_rows);
    }
    RecordingSession& to;
  };
  RecordingSession& session_;
};

constexpr char kShopLike[] = R"yaml(name: w
scenarios:
  - name: tx
    query_types:
      - name: user_and_order
        transaction: true
        statements:
          - sql: {postgresql: "INSERT INTO u (e) VALUES (?) RETURNING id", mysql: "INSERT INTO u (e) VALUES (?)"}
            params: [{pattern: {pattern: "e{seq}", start: 1}}]
            capture: uid
          - sql: INSERT INTO o (uid, n) VALUES {repeat}
            repeat: 2
            repeat_text: "(?, ?)"
            params: [{captured: uid}, {constant: "7"}]
  - name: deletes
    query_types:
      - name: delete
        statements:
          - sql: DELETE FROM o WHERE id = ?
            params: [{sample: {sql: SELECT id FROM o ORDER BY id, consume: true}}]
  - name: mixed
    query_types:
      - {name: a, weight: 1, statements: [{sql: SELECT 1}]}
      - {name: b, weight: 3, statements: [{sql: SELECT 2}]}
)yaml";

std::unique_ptr<Scenario> ScenarioOf(const std::string& name) {
  absl::StatusOr<v1::WorkloadSpec> spec = ParseWorkload(kShopLike, "w.yaml", {});
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::unique_ptr<Scenario>> scenario =
      MakeDeclarativeWorkload(*spec)->MakeScenario(name);
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return *std::move(scenario);
}

TEST(DeclarativeWorkloadTest, StatementsAreWrittenForEachDialect) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("tx");
  const auto pg = scenario->Statements(db::Dialect::kPostgreSql);
  ASSERT_EQ(pg.size(), 2u);
  EXPECT_EQ(pg[0].sql, "INSERT INTO u (e) VALUES ($1) RETURNING id");
  EXPECT_EQ(pg[1].sql, "INSERT INTO o (uid, n) VALUES ($1, $2), ($3, $4)");
  const auto my = scenario->Statements(db::Dialect::kMySql);
  EXPECT_EQ(my[0].sql, "INSERT INTO u (e) VALUES (?)");
  EXPECT_EQ(my[1].sql, "INSERT INTO o (uid, n) VALUES (?, ?), (?, ?)");
  EXPECT_THAT(scenario->query_types(), ElementsAre("user_and_order"));
}

TEST(DeclarativeWorkloadTest, ATransactionCarriesItsCapturedIdAndRepeatsItsValues) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("tx");
  RecordingSession session;
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 1, .index = 1, .count = 3});
  ASSERT_TRUE(worker->Run(worker->NextQueryType(), session).ok());
  ASSERT_TRUE(worker->Run(0, session).ok());
  // Slot 1 of 3: sequence values 2, 5, …; the captured ids 101, 102 flow into the next INSERT.
  EXPECT_THAT(session.calls, ElementsAre("begin", "exec 0 e2", "exec 1 101 7 101 7", "commit",
                                         "begin", "exec 0 e5", "exec 1 102 7 102 7", "commit"));
}

TEST(DeclarativeWorkloadTest, AFailedStatementRollsBackAndEndsTheTransaction) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("tx");
  RecordingSession session;
  session.fail_id = 0;
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 1, .index = 0, .count = 1});
  const db::ExecOutcome outcome = worker->Run(0, session);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "40001");
  EXPECT_THAT(session.calls, ElementsAre("begin", "exec 0 e1", "rollback"));
}

// A retry is the same transaction: the values it drew stay (the same sequence value), the values
// the transaction itself makes are made again (the id the first statement captures).
TEST(DeclarativeWorkloadTest, ARetryRunsTheTransactionAgainWithTheSameDrawnValues) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("tx");
  RecordingSession session;
  session.fail_id = 1;
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 1, .index = 0, .count = 1});
  ASSERT_FALSE(worker->Run(0, session).ok());
  session.fail_id = -1;
  ASSERT_TRUE(worker->Retry(0, session).ok());
  ASSERT_TRUE(worker->Run(0, session).ok());
  EXPECT_THAT(session.calls,
              ElementsAre("begin", "exec 0 e1", "exec 1 101 7 101 7", "rollback",  // first try
                          "begin", "exec 0 e1", "exec 1 102 7 102 7", "commit",    // its retry
                          "begin", "exec 0 e2", "exec 1 103 7 103 7", "commit"));  // the next
}

TEST(DeclarativeWorkloadTest, ConsumedSamplesArePartitionedAcrossWorkersAndRunOut) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("deletes");
  RecordingSession setup;
  FakeDriver driver(setup);
  ASSERT_TRUE(scenario->Setup(driver).ok());
  // In a transaction rolled back: the reads commit nothing the commit reconciliation would
  // have to explain.
  EXPECT_THAT(setup.calls, ElementsAre("begin", "fetch SELECT id FROM o ORDER BY id", "rollback"));
  std::set<std::string> deleted;
  for (uint32_t slot = 0; slot < 2; ++slot) {
    std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 1, .index = slot, .count = 2});
    RecordingSession session;
    for (;;) {
      const db::ExecOutcome outcome = worker->Run(0, session);
      if (!outcome.ok()) {
        EXPECT_THAT(outcome.error->message, HasSubstr("used up"));
        break;
      }
      EXPECT_TRUE(deleted.insert(session.calls.back()).second) << session.calls.back();
    }
  }
  // Every id of the sample exactly once, over both workers.
  EXPECT_THAT(deleted, ElementsAre("exec 0 11", "exec 0 12", "exec 0 13", "exec 0 14", "exec 0 15"));
}

// An agent that reads the sample later (it joined a running run, after others consumed part
// of it) gives each slot the same values as the first reading did: a slot's values are those it
// owns by value, never a neighbour's.
TEST(DeclarativeWorkloadTest, ALaterReadingOfAConsumedSampleGivesEachSlotTheSameValues) {
  std::unique_ptr<Scenario> first = ScenarioOf("deletes");
  RecordingSession setup;
  setup.sample = {"11", "12", "13", "14", "15", "16", "17", "18"};
  FakeDriver driver(setup);
  ASSERT_TRUE(first->Setup(driver).ok());
  std::set<std::string> deleted;
  std::unique_ptr<ScenarioWorker> slot0 = first->NewWorker({.run_seed = 1, .index = 0, .count = 2});
  RecordingSession session0;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(slot0->Run(0, session0).ok());
    EXPECT_TRUE(deleted.insert(session0.calls.back()).second);
  }
  EXPECT_THAT(deleted, ElementsAre("exec 0 12", "exec 0 14"));  // even ids are slot 0's

  // Read again after those two are gone: slot 1 still takes exactly the odd ids.
  std::unique_ptr<Scenario> later = ScenarioOf("deletes");
  RecordingSession late_setup;
  late_setup.sample = {"11", "13", "15", "16", "17", "18"};
  FakeDriver late_driver(late_setup);
  ASSERT_TRUE(later->Setup(late_driver).ok());
  std::unique_ptr<ScenarioWorker> slot1 = later->NewWorker({.run_seed = 1, .index = 1, .count = 2});
  RecordingSession session1;
  std::vector<std::string> odd;
  for (;;) {
    const db::ExecOutcome outcome = slot1->Run(0, session1);
    if (!outcome.ok()) break;
    odd.push_back(session1.calls.back());
  }
  EXPECT_THAT(odd, ElementsAre("exec 0 11", "exec 0 13", "exec 0 15", "exec 0 17"));
}

TEST(DeclarativeWorkloadTest, AScenarioThatSamplesRefusesToStartOnAnEmptySample) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("deletes");
  RecordingSession setup;
  setup.sample.clear();
  FakeDriver driver(setup);
  EXPECT_THAT(scenario->Setup(driver).message(), HasSubstr("returned no rows"));
}

TEST(DeclarativeWorkloadTest, AScenarioWithoutSamplesOpensNoSessionToSetUp) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("tx");
  RecordingSession setup;
  FakeDriver driver(setup);
  ASSERT_TRUE(scenario->Setup(driver).ok());
  EXPECT_EQ(driver.connects, 0);
}

TEST(DeclarativeWorkloadTest, QueryTypesFollowTheirWeights) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("mixed");
  std::unique_ptr<ScenarioWorker> worker = scenario->NewWorker({.run_seed = 5, .index = 0, .count = 1});
  int counts[2] = {0, 0};
  for (int i = 0; i < 40'000; ++i) ++counts[worker->NextQueryType()];
  EXPECT_NEAR(counts[1] / 40'000.0, 0.75, 0.01);
}

constexpr char kTransfer[] = R"yaml(name: bank
scenarios:
  - name: move
    query_types:
      - name: transfer
        transaction: true
        let:
          amount: {uniform: {min: 1, max: 1000000}}
          from: {uniform: {min: 1, max: 2}}
          to: {uniform: {min: 1, max: 2}, distinct_from: [from]}
        statements:
          - sql: UPDATE a SET v = v - ? WHERE id = ?
            params: [amount, from]
          - sql: UPDATE a SET v = v + ? WHERE id = ?
            params: [amount, to]
      - name: never
        weight: 0
        statements: [{sql: SELECT 1}]
)yaml";

std::unique_ptr<Scenario> TransferScenario() {
  absl::StatusOr<v1::WorkloadSpec> spec = ParseWorkload(kTransfer, "bank.yaml", {});
  EXPECT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::unique_ptr<Scenario>> scenario =
      MakeDeclarativeWorkload(*spec)->MakeScenario("move");
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return *std::move(scenario);
}

TEST(DeclarativeWorkloadTest, VariablesAreDrawnOncePerTransactionAndDistinctOnesDiffer) {
  std::unique_ptr<Scenario> scenario = TransferScenario();
  RecordingSession session;
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 3, .index = 0, .count = 1});
  std::set<std::string> amounts, directions;
  for (int i = 0; i < 200; ++i) {
    session.calls.clear();
    ASSERT_EQ(worker->NextQueryType(), 0);  // `never` weighs 0
    ASSERT_TRUE(worker->Run(0, session).ok());
    ASSERT_EQ(session.calls.size(), 4u);
    // "exec 0 AMOUNT FROM", "exec 1 AMOUNT TO"
    const std::vector<std::string> debit = absl::StrSplit(session.calls[1], ' ');
    const std::vector<std::string> credit = absl::StrSplit(session.calls[2], ' ');
    ASSERT_EQ(debit.size(), 4u);
    EXPECT_EQ(debit[2], credit[2]) << "the same amount in both statements";
    EXPECT_NE(debit[3], credit[3]) << "from and to are distinct rows";
    amounts.insert(debit[2]);
    directions.insert(debit[3] + ">" + credit[3]);
  }
  EXPECT_GT(amounts.size(), 190u) << "a new amount for each transaction";
  EXPECT_EQ(directions, (std::set<std::string>{"1>2", "2>1"}));
}

// A statement the server refuses is named where the workload writes it, counted from 1.
TEST(DeclarativeWorkloadTest, StatementsSayWhereTheWorkloadWritesThem) {
  const std::vector<db::StatementSpec> statements =
      TransferScenario()->Statements(db::Dialect::kPostgreSql);
  ASSERT_EQ(statements.size(), 3u);
  EXPECT_EQ(statements[1].name, "transfer_2");
  EXPECT_EQ(statements[1].where,
            "bank.yaml:14:18: scenario move, query type transfer, statement 2 of 2");
}

TEST(DeclarativeWorkloadTest, ExplainBindsTheValuesOfOneDrawOfTheVariables) {
  std::unique_ptr<Scenario> scenario = TransferScenario();
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 3, .index = 0, .count = 1});
  const std::vector<ExplainTarget> targets = worker->ExplainTargets(0, {});
  ASSERT_EQ(targets.size(), 2u);
  ASSERT_EQ(targets[0].params.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<int64_t>(targets[0].params[0]));
  EXPECT_EQ(targets[0].params[0], targets[1].params[0]);
  EXPECT_NE(targets[0].params[1], targets[1].params[1]);
}

// EXPLAIN of a statement that binds a captured value needs the value: the capturing statement
// is handed over to be run (agent/plan_capture.h runs it in a transaction it rolls back).
TEST(DeclarativeWorkloadTest, ExplainBindsTheValueTheCapturingStatementGave) {
  std::unique_ptr<Scenario> scenario = ScenarioOf("tx");
  std::unique_ptr<ScenarioWorker> worker =
      scenario->NewWorker({.run_seed = 3, .index = 0, .count = 1});
  std::vector<int> ran;
  const std::vector<ExplainTarget> targets =
      worker->ExplainTargets(0, [&](const ExplainTarget& target) -> std::optional<int64_t> {
        ran.push_back(target.statement);
        return 41;
      });
  EXPECT_THAT(ran, ElementsAre(0));  // the INSERT … RETURNING id only
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[1].params[0], ParamValue(int64_t{41}));
  EXPECT_EQ(targets[1].params[2], ParamValue(int64_t{41}));

  // Without a way to run it, the captured value is NULL.
  const std::vector<ExplainTarget> unrun = worker->ExplainTargets(0, {});
  EXPECT_EQ(unrun[1].params[0], ParamValue());
}

// A spec that reaches the agent inside a plan may come from any client: a reference to nothing
// is an error that names it, not an exception in the agent.
TEST(DeclarativeWorkloadTest, AHandBuiltSpecWithADanglingReferenceIsRefusedByName) {
  absl::StatusOr<v1::WorkloadSpec> spec = ParseWorkload(kTransfer, "bank.yaml", {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  v1::WorkloadSpec unknown_variable = *spec;
  unknown_variable.mutable_scenarios(0)
      ->mutable_query_types(0)
      ->mutable_statements(1)
      ->mutable_params(1)
      ->set_variable("nowhere");
  const absl::Status status =
      MakeDeclarativeWorkload(unknown_variable)->MakeScenario("move").status();
  EXPECT_EQ(FieldOf(status), "workload_spec.scenarios[move].query_types.0.statements.1.params.1");
  EXPECT_THAT(status.message(), HasSubstr("no variable 'nowhere'"));
  v1::WorkloadSpec unknown_capture = *spec;
  unknown_capture.mutable_scenarios(0)
      ->mutable_query_types(0)
      ->mutable_statements(0)
      ->mutable_params(0)
      ->set_captured("id");
  EXPECT_THAT(MakeDeclarativeWorkload(unknown_capture)->MakeScenario("move").status().message(),
              HasSubstr("no earlier statement captures 'id'"));
}

// A spec built in code (as oltp's) may leave the batch at 0: the loader still advances, in
// batches of the default size, each committed with its watermark.
TEST(DeclarativeWorkloadTest, LoadingABuiltSpecWithoutABatchSizeUsesTheDefault) {
  v1::WorkloadSpec spec;
  spec.set_name("built");
  v1::Table& table = *spec.add_tables();
  table.set_name("t");
  table.mutable_create()->set_any("CREATE TABLE t (id BIGINT)");
  table.mutable_data()->set_rows(25'000);
  v1::Column& id = *table.mutable_data()->add_columns();
  id.set_name("id");
  id.mutable_generator()->set_row(true);
  RecordingSession session;
  session.fetch = [](std::string_view sql) -> std::vector<std::string> {
    if (sql.starts_with("SELECT COUNT(*)")) return {"25000"};
    if (sql.find("part >= 0") != std::string_view::npos) return {"0|0"};  // its one part
    if (sql == "SELECT 1 FROM t LIMIT 1") return {"1"};                   // it has rows
    return {};  // no load state yet, no table yet
  };
  FakeDriver driver(session);
  ASSERT_TRUE(LoadWorkloadData(spec, driver, {}, nullptr).ok());
  std::vector<std::string> bulk;
  std::vector<std::string> watermarks;
  for (const std::string& call : session.calls) {
    if (call.starts_with("bulk")) bulk.push_back(call);
    if (call.find("SET rows_done") != std::string::npos) watermarks.push_back(call.substr(0, 60));
  }
  EXPECT_THAT(bulk, ElementsAre("bulk t 10000 rows from 1", "bulk t 10000 rows from 10001",
                                "bulk t 5000 rows from 20001"));
  EXPECT_EQ(watermarks.size(), 3u);  // one per batch, each in the batch's transaction
  // Vacuumed and analyzed after the last batch, before the table is recorded as done.
  const auto vacuum = std::find(session.calls.begin(), session.calls.end(), "sql VACUUM (ANALYZE) t");
  ASSERT_NE(vacuum, session.calls.end());
  EXPECT_GT(vacuum - session.calls.begin(),
            std::find(session.calls.begin(), session.calls.end(), "bulk t 5000 rows from 20001") -
                session.calls.begin());
  const auto done = std::find_if(vacuum, session.calls.end(), [](const std::string& call) {
    return call.find("SET phase = 'done'") != std::string::npos;
  });
  EXPECT_NE(done, session.calls.end());
}

// A prepare resumed at its second index step: the session setting before it runs again (the
// connection is new), the steps already recorded do not, and each step commits in one
// transaction with its record (PostgreSQL), before the vacuum and the table's last record.
TEST(DeclarativeWorkloadTest, AResumedPrepareRunsEachRemainingStepOnceWithItsRecord) {
  v1::WorkloadSpec spec;
  spec.set_name("resumed");
  v1::Table& table = *spec.add_tables();
  table.set_name("t");
  table.mutable_create()->set_any("CREATE TABLE t (a BIGINT)");
  table.add_indexes()->set_any("SET work_mem = '8MB'");
  table.add_indexes()->set_any("CREATE INDEX t_b ON t (b)");
  table.add_indexes()->set_any("CREATE INDEX t_a ON t (a)");
  table.add_after_load()->set_any("UPDATE t SET a = 1");
  RecordingSession session;
  session.fetch = [](std::string_view sql) -> std::vector<std::string> {
    if (sql.starts_with("SELECT pg_try_advisory_lock")) return {"t"};
    if (sql.starts_with("SELECT CONCAT(phase")) return {"index:2|1"};  // t_b built
    if (sql.find("pg_tables") != std::string_view::npos) return {"t"};
    if (sql.starts_with("SELECT COUNT(*)")) return {"0"};
    if (sql == "SELECT 1 FROM t LIMIT 1") return {"1"};
    return {};
  };
  FakeDriver driver(session);
  ASSERT_TRUE(LoadWorkloadData(spec, driver, {}, nullptr).ok());
  std::vector<std::string> calls;
  for (const std::string& call : session.calls) {
    if (!call.starts_with("fetch") && call.find(kLoadStateTable + std::string(" (")) ==
                                          std::string::npos) {
      calls.push_back(call);
    }
  }
  const std::string where = " WHERE workload = 'resumed' AND tbl = 't' AND part = -1";
  EXPECT_THAT(calls,
              ElementsAre("sql SET work_mem = '8MB'", "begin", "sql CREATE INDEX t_a ON t (a)",
                          "sql UPDATE dbload_load_state SET phase = 'after_load:0'" + where,
                          "commit", "begin", "sql UPDATE t SET a = 1",
                          "sql UPDATE dbload_load_state SET phase = 'analyze'" + where, "commit",
                          "sql VACUUM (ANALYZE) t",
                          "sql UPDATE dbload_load_state SET phase = 'done'" + where));
}

// A table the load fills is empty after prepare: it is not analyzed (PostgreSQL would keep the
// load's prepared plans for an empty table), and prepare says so. One that something analyzed
// while empty all the same is a warning naming the query types that read it.
TEST(DeclarativeWorkloadTest, AnEmptyTableIsNotAnalyzedAndOneAnalyzedEmptyIsAWarning) {
  constexpr char kLog[] = R"yaml(name: logged
tables:
  - name: log
    create: CREATE TABLE log (id BIGSERIAL PRIMARY KEY, v BIGINT)
  - name: log_archive
    create: CREATE TABLE log_archive (id BIGINT)
scenarios:
  - name: s
    query_types:
      - name: write
        statements: [{sql: "INSERT INTO log (v) VALUES (1)"}]
      - name: read
        statements: [{sql: "SELECT v FROM log WHERE id = 1"}]
      - name: archive
        statements: [{sql: "SELECT id FROM log_archive WHERE id = 1"}]
)yaml";
  absl::StatusOr<v1::WorkloadSpec> spec = ParseWorkload(kLog, "log.yaml", {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  for (const char* reltuples : {"-1", "0"}) {
    RecordingSession session;
    session.fetch = [&](std::string_view sql) -> std::vector<std::string> {
      if (sql.starts_with("SELECT pg_try_advisory_lock")) return {"t"};
      if (sql.starts_with("SELECT COUNT(*)")) return {"0"};
      if (sql.starts_with("SELECT reltuples FROM pg_class WHERE oid = 'log'")) return {reltuples};
      if (sql.find("part >= 0") != std::string_view::npos) return {"0|0"};  // its one part
      return {};  // no load state, no rows
    };
    FakeDriver driver(session);
    std::vector<std::string> notes;
    const absl::Status loaded =
        LoadWorkloadData(*spec, driver, {}, [&](const PrepareProgress& progress) {
          if (!progress.note.empty()) notes.push_back(progress.note);
        });
    ASSERT_TRUE(loaded.ok()) << loaded;
    EXPECT_THAT(session.calls, Not(Contains(HasSubstr("ANALYZE"))));
    EXPECT_THAT(notes, Contains(StartsWith("log: empty, so not analyzed")));
    if (std::string_view(reltuples) == "0") {
      EXPECT_THAT(notes, Contains(HasSubstr("WARNING: it was analyzed while empty (pg_class."
                                            "reltuples = 0), so the statements the load "
                                            "prepares for s/write, s/read may keep plans")));
    } else {
      EXPECT_THAT(notes, Not(Contains(HasSubstr("WARNING"))));
    }
  }
}

}  // namespace
}  // namespace dbload
