#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "db/noop_driver.h"
#include "base/field_error.h"
#include "workload/oltp.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<Scenario> ScenarioOf(const std::string& name,
                                     const std::map<std::string, std::string>& options) {
  auto workload = MakeWorkload("oltp", options);
  EXPECT_TRUE(workload.ok()) << workload.status();
  if (!workload.ok()) return nullptr;
  auto scenario = (*workload)->MakeScenario(name);
  EXPECT_TRUE(scenario.ok()) << scenario.status();
  return scenario.ok() ? *std::move(scenario) : nullptr;
}

std::vector<std::string> SqlOf(const Scenario& scenario, db::Dialect dialect) {
  std::vector<std::string> sql;
  for (const db::StatementSpec& spec : scenario.Statements(dialect)) sql.push_back(spec.sql);
  return sql;
}

// One statement the worker ran, with its parameters as text ("BEGIN", "COMMIT" and "ROLLBACK"
// have none).
struct Call {
  std::string what;  // the statement's SQL, or BEGIN / COMMIT / ROLLBACK
  std::vector<db::Value> params;
  std::vector<std::string> strings;  // copies of the string parameters, which are borrowed
};

// A Session that records what it is asked to do, answers `rows_per_statement` rows, and fails
// the `fail_at`-th Execute (1-based) when fail_at > 0.
class RecordingSession final : public db::Session {
 public:
  explicit RecordingSession(std::vector<db::StatementSpec> statements)
      : statements_(std::move(statements)) {}

  absl::Status Prepare(int, const db::StatementSpec&) override { return absl::OkStatus(); }
  db::ExecOutcome Execute(int id, std::span<const db::Value> params, bool) override {
    Call call{.what = id >= 0 && id < static_cast<int>(statements_.size())
                          ? statements_[id].sql
                          : absl::StrCat("unknown statement ", id),
              .params = {params.begin(), params.end()}};
    for (const db::Value& value : params) {
      if (const auto* text = std::get_if<std::string_view>(&value)) {
        call.strings.emplace_back(*text);
      }
    }
    calls.push_back(std::move(call));
    if (fail_at > 0 && ++executes_ == fail_at) {
      return db::ExecOutcome{.error = db::DbError{.error_class = db::ErrorClass::kRetryable,
                                                  .code = "40001",
                                                  .message = "could not serialize"}};
    }
    return db::ExecOutcome{.rows = rows_per_statement};
  }
  db::ExecOutcome ExecuteSql(std::string_view) override { return {}; }
  db::ExecOutcome Begin() override { return Record("BEGIN"); }
  db::ExecOutcome Commit() override { return Record("COMMIT"); }
  db::ExecOutcome Rollback() override { return Record("ROLLBACK"); }
  absl::Status Reconnect() override { return absl::OkStatus(); }
  db::ExecOutcome BulkInsert(std::string_view, std::span<const std::string>,
                             std::span<const db::Value>) override {
    return {};
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view, size_t) override {
    return std::vector<std::string>{};
  }

  std::vector<std::string> Whats() const {
    std::vector<std::string> whats;
    for (const Call& call : calls) whats.push_back(call.what);
    return whats;
  }

  std::vector<Call> calls;
  int64_t rows_per_statement = 1;
  int fail_at = 0;

 private:
  db::ExecOutcome Record(std::string what) {
    calls.push_back(Call{.what = std::move(what)});
    return {};
  }

  std::vector<db::StatementSpec> statements_;
  int executes_ = 0;
};

int64_t IntParam(const Call& call, size_t index) {
  EXPECT_LT(index, call.params.size()) << call.what;
  if (index >= call.params.size()) return -1;
  const auto* value = std::get_if<int64_t>(&call.params[index]);
  EXPECT_NE(value, nullptr) << call.what << " parameter " << index << " is not an integer";
  return value == nullptr ? -1 : *value;
}

// The table a recorded statement ran on ("sbtest7" -> 7).
int TableOf(const Call& call) {
  const size_t at = call.what.find("sbtest");
  if (at == std::string::npos) return 0;
  return std::atoi(call.what.c_str() + at + 6);
}

// sysbench's c/pad templates: 11-digit groups joined by '-'.
bool MatchesTemplate(const std::string& value, int groups) {
  if (value.size() != static_cast<size_t>(groups * 12 - 1)) return false;
  for (size_t i = 0; i < value.size(); ++i) {
    const bool dash = i % 12 == 11;
    if (dash ? value[i] != '-' : (value[i] < '0' || value[i] > '9')) return false;
  }
  return true;
}

TEST(OltpWorkloadTest, OffersEverySysbenchScenario) {
  auto workload = MakeWorkload("oltp", {});
  ASSERT_TRUE(workload.ok());
  EXPECT_THAT((*workload)->ScenarioNames(),
              ElementsAre("point_select", "read_only", "read_write", "write_only", "update_index",
                          "update_non_index", "delete", "insert"));
  for (const std::string& name : (*workload)->ScenarioNames()) {
    auto scenario = (*workload)->MakeScenario(name);
    ASSERT_TRUE(scenario.ok()) << name;
    // One event is one transaction, reported under the scenario's name.
    EXPECT_THAT((*scenario)->query_types(), ElementsAre(name));
  }
}

TEST(OltpWorkloadTest, PointSelectUsesSysbenchStatementsPerTable) {
  auto scenario = ScenarioOf("point_select", {{"tables", "3"}});
  ASSERT_NE(scenario, nullptr);
  const auto pg = scenario->Statements(db::Dialect::kPostgreSql);
  ASSERT_EQ(pg.size(), 3u);
  EXPECT_EQ(pg[2].sql, "SELECT c FROM sbtest3 WHERE id=$1");
  EXPECT_EQ(scenario->Statements(db::Dialect::kMySql)[0].sql, "SELECT c FROM sbtest1 WHERE id=?");
}

// The text of oltp_common.lua's stmt_defs, table by table; PostgreSQL numbers the placeholders
// as sysbench's pgsql driver does.
TEST(OltpWorkloadTest, ReadWriteStatementsAreSysbenchsPerDialect) {
  auto scenario = ScenarioOf("read_write", {{"tables", "2"}});
  ASSERT_NE(scenario, nullptr);
  EXPECT_THAT(
      SqlOf(*scenario, db::Dialect::kMySql),
      ElementsAre("SELECT c FROM sbtest1 WHERE id=?", "SELECT c FROM sbtest2 WHERE id=?",
                  "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
                  "SELECT c FROM sbtest2 WHERE id BETWEEN ? AND ?",
                  "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
                  "SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN ? AND ?",
                  "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
                  "SELECT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c",
                  "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
                  "SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c",
                  "UPDATE sbtest1 SET k=k+1 WHERE id=?", "UPDATE sbtest2 SET k=k+1 WHERE id=?",
                  "UPDATE sbtest1 SET c=? WHERE id=?", "UPDATE sbtest2 SET c=? WHERE id=?",
                  "DELETE FROM sbtest1 WHERE id=?", "DELETE FROM sbtest2 WHERE id=?",
                  "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
                  "INSERT INTO sbtest2 (id, k, c, pad) VALUES (?, ?, ?, ?)"));
  EXPECT_THAT(
      SqlOf(*scenario, db::Dialect::kPostgreSql),
      ElementsAre("SELECT c FROM sbtest1 WHERE id=$1", "SELECT c FROM sbtest2 WHERE id=$1",
                  "SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2",
                  "SELECT c FROM sbtest2 WHERE id BETWEEN $1 AND $2",
                  "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2",
                  "SELECT SUM(k) FROM sbtest2 WHERE id BETWEEN $1 AND $2",
                  "SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c",
                  "SELECT c FROM sbtest2 WHERE id BETWEEN $1 AND $2 ORDER BY c",
                  "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c",
                  "SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN $1 AND $2 ORDER BY c",
                  "UPDATE sbtest1 SET k=k+1 WHERE id=$1", "UPDATE sbtest2 SET k=k+1 WHERE id=$1",
                  "UPDATE sbtest1 SET c=$1 WHERE id=$2", "UPDATE sbtest2 SET c=$1 WHERE id=$2",
                  "DELETE FROM sbtest1 WHERE id=$1", "DELETE FROM sbtest2 WHERE id=$1",
                  "INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)",
                  "INSERT INTO sbtest2 (id, k, c, pad) VALUES ($1, $2, $3, $4)"));
}

TEST(OltpWorkloadTest, EachScenarioPreparesOnlyItsStatements) {
  const std::map<std::string, std::vector<std::string>> mysql = {
      {"point_select", {"SELECT c FROM sbtest1 WHERE id=?"}},
      {"read_only",
       {"SELECT c FROM sbtest1 WHERE id=?", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
        "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"}},
      {"write_only",
       {"UPDATE sbtest1 SET k=k+1 WHERE id=?", "UPDATE sbtest1 SET c=? WHERE id=?",
        "DELETE FROM sbtest1 WHERE id=?",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"}},
      {"update_index", {"UPDATE sbtest1 SET k=k+1 WHERE id=?"}},
      {"update_non_index", {"UPDATE sbtest1 SET c=? WHERE id=?"}},
      {"delete", {"DELETE FROM sbtest1 WHERE id=?"}},
      // oltp_insert.lua with auto_inc: id 0 makes AUTO_INCREMENT pick the id.
      {"insert", {"INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, ?, ?, ?)"}},
  };
  for (const auto& [name, expected] : mysql) {
    auto scenario = ScenarioOf(name, {});
    ASSERT_NE(scenario, nullptr);
    EXPECT_THAT(SqlOf(*scenario, db::Dialect::kMySql), ElementsAreArray(expected)) << name;
  }
  // On PostgreSQL oltp_insert.lua leaves id out, so that SERIAL assigns it.
  EXPECT_THAT(SqlOf(*ScenarioOf("insert", {}), db::Dialect::kPostgreSql),
              ElementsAre("INSERT INTO sbtest1 (k, c, pad) VALUES ($1, $2, $3)"));
  EXPECT_THAT(SqlOf(*ScenarioOf("update_non_index", {}), db::Dialect::kPostgreSql),
              ElementsAre("UPDATE sbtest1 SET c=$1 WHERE id=$2"));
}

TEST(OltpWorkloadTest, BadOptionsAndNamesAreRefusedWithTheirName) {
  EXPECT_EQ(FieldOf(MakeWorkload("oltp", {{"tables", "zero"}}).status()),
            "workload_options.tables");
  const absl::Status unknown = MakeWorkload("oltp", {{"table_sise", "10"}}).status();
  EXPECT_THAT(unknown.message(), HasSubstr("unknown option of workload oltp"));
  EXPECT_EQ(FieldOf(unknown), "workload_options.table_sise");
  EXPECT_THAT(MakeWorkload("tpcd", {}).status().message(), HasSubstr("unknown workload 'tpcd'"));
  auto workload = MakeWorkload("oltp", {});
  EXPECT_THAT((*workload)->MakeScenario("read_wrote").status().message(),
              HasSubstr("no scenario 'read_wrote'"));
  EXPECT_EQ(FieldOf((*workload)->MakeScenario("read_wrote").status()), "scenario");
}

TEST(OltpWorkloadTest, SysbenchOptionsAreParsedAndValidated) {
  auto parsed = ParseOltpOptions({});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->range_size, 100);
  EXPECT_EQ(parsed->point_selects, 10);
  EXPECT_EQ(parsed->simple_ranges, 1);
  EXPECT_EQ(parsed->sum_ranges, 1);
  EXPECT_EQ(parsed->order_ranges, 1);
  EXPECT_EQ(parsed->distinct_ranges, 1);
  EXPECT_EQ(parsed->index_updates, 1);
  EXPECT_EQ(parsed->non_index_updates, 1);
  EXPECT_EQ(parsed->delete_inserts, 1);
  EXPECT_TRUE(parsed->range_selects);
  EXPECT_FALSE(parsed->skip_trx);

  parsed = ParseOltpOptions({{"range_size", "7"},
                             {"point_selects", "0"},
                             {"simple_ranges", "2"},
                             {"sum_ranges", "3"},
                             {"order_ranges", "4"},
                             {"distinct_ranges", "5"},
                             {"index_updates", "6"},
                             {"non_index_updates", "7"},
                             {"delete_inserts", "8"},
                             {"range_selects", "false"},
                             {"skip_trx", "true"}});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->range_size, 7);
  EXPECT_EQ(parsed->point_selects, 0);
  EXPECT_EQ(parsed->simple_ranges, 2);
  EXPECT_EQ(parsed->sum_ranges, 3);
  EXPECT_EQ(parsed->order_ranges, 4);
  EXPECT_EQ(parsed->distinct_ranges, 5);
  EXPECT_EQ(parsed->index_updates, 6);
  EXPECT_EQ(parsed->non_index_updates, 7);
  EXPECT_EQ(parsed->delete_inserts, 8);
  EXPECT_FALSE(parsed->range_selects);
  EXPECT_TRUE(parsed->skip_trx);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"range_size", "0"},         {"range_size", "ten"},    {"point_selects", "-1"},
      {"simple_ranges", "1001"},   {"sum_ranges", "1.5"},    {"order_ranges", ""},
      {"distinct_ranges", "x"},    {"index_updates", "-2"},  {"non_index_updates", "y"},
      {"delete_inserts", "99999"}, {"skip_trx", "yes"},      {"skip_trx", "1"},
      {"range_selects", "TRUE"},   {"point_selects", "1e3"},
  };
  for (const auto& [key, value] : bad) {
    const absl::Status status = ParseOltpOptions({{key, value}}).status();
    EXPECT_FALSE(status.ok()) << key << "=" << value;
    EXPECT_EQ(FieldOf(status), "workload_options." + key) << status;
    EXPECT_THAT(status.message(), HasSubstr("'" + value + "'")) << status;
  }
}

// sysbench's ignored errors: by default its set for the target's dialect, the same for every
// scenario (a deadlock can end a write_only event as well).
TEST(OltpWorkloadTest, IgnoresSysbenchsErrorsPerDialectByDefault) {
  const auto codes = [](const std::map<std::string, std::string>& options, db::Dialect dialect) {
    const std::set<std::string, std::less<>> set =
        ScenarioOf("read_write", options)->ErrorsToIgnore(dialect).codes();
    return std::vector<std::string>(set.begin(), set.end());
  };
  EXPECT_THAT(codes({}, db::Dialect::kPostgreSql), ElementsAre("23505", "40001", "40P01"));
  EXPECT_THAT(codes({}, db::Dialect::kMySql), ElementsAre("1020", "1205", "1213"));
  EXPECT_THAT(codes({{"ignore_errors", "sysbench"}}, db::Dialect::kMySql),
              ElementsAre("1020", "1205", "1213"));
  EXPECT_THAT(codes({}, db::Dialect::kNoop), ElementsAre());
  // --mysql-ignore-errors' equivalent, for either dialect; "none" makes every error count.
  EXPECT_THAT(codes({{"ignore_errors", "1062, 1213"}}, db::Dialect::kMySql),
              ElementsAre("1062", "1213"));
  EXPECT_THAT(codes({{"ignore_errors", "40P01"}}, db::Dialect::kPostgreSql), ElementsAre("40P01"));
  EXPECT_THAT(codes({{"ignore_errors", "none"}}, db::Dialect::kPostgreSql), ElementsAre());
  EXPECT_FALSE(ScenarioOf("point_select", {})->ErrorsToIgnore(db::Dialect::kMySql).empty());

  for (const std::string bad : {"all", "", "23505,", "2350x", "123456", "23505;40P01"}) {
    const absl::Status status = ParseOltpOptions({{"ignore_errors", bad}}).status();
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_EQ(FieldOf(status), "workload_options.ignore_errors") << status;
    EXPECT_THAT(status.message(), HasSubstr("'" + bad + "'")) << status;
  }
}

// oltp_read_write.lua's event(), with oltp_common.lua's defaults: BEGIN, 10 point selects,
// one each of the four range queries, the two updates, DELETE then INSERT, COMMIT.
TEST(OltpWorkloadTest, ReadWriteEventIsSysbenchsStatementSequence) {
  constexpr int kTables = 3;
  constexpr int64_t kTableSize = 1000;
  auto scenario =
      ScenarioOf("read_write", {{"tables", "3"}, {"table_size", "1000"}, {"range_size", "100"}});
  ASSERT_NE(scenario, nullptr);
  auto worker = scenario->NewWorker({.run_seed = 5, .index = 0, .count = 1});
  RecordingSession session(scenario->Statements(db::Dialect::kMySql));
  std::set<int> tables_seen;
  constexpr int kEvents = 50;
  for (int event = 0; event < kEvents; ++event) {
    session.calls.clear();
    const int type = worker->NextQueryType();
    EXPECT_EQ(type, 0);
    const db::ExecOutcome outcome = worker->Run(type, session);
    ASSERT_TRUE(outcome.ok());
    // Every statement answered one row.
    EXPECT_EQ(outcome.rows, 18);

    std::vector<std::string> shape;
    for (const Call& call : session.calls) {
      const std::string& sql = call.what;
      shape.push_back(sql == "BEGIN" || sql == "COMMIT" ? sql : sql.substr(0, sql.find(" sbtest")));
    }
    std::vector<std::string> expected = {"BEGIN"};
    for (int i = 0; i < 10; ++i) expected.push_back("SELECT c FROM");
    expected.insert(expected.end(), {"SELECT c FROM", "SELECT SUM(k) FROM", "SELECT c FROM",
                                     "SELECT DISTINCT c FROM", "UPDATE", "UPDATE", "DELETE FROM",
                                     "INSERT INTO", "COMMIT"});
    ASSERT_THAT(shape, ElementsAreArray(expected));
    const std::vector<Call>& calls = session.calls;
    EXPECT_THAT(calls[11].what, HasSubstr("WHERE id BETWEEN ? AND ?"));
    EXPECT_THAT(calls[11].what, Not(HasSubstr("ORDER BY")));
    EXPECT_THAT(calls[13].what, HasSubstr("BETWEEN ? AND ? ORDER BY c"));
    EXPECT_THAT(calls[15].what, HasSubstr("SET k=k+1 WHERE id=?"));
    EXPECT_THAT(calls[16].what, HasSubstr("SET c=? WHERE id=?"));

    // One table per execute_*() group: the 10 point selects share theirs.
    for (int i = 1; i <= 10; ++i) {
      EXPECT_EQ(TableOf(calls[i]), TableOf(calls[1]));
      const int64_t id = IntParam(calls[i], 0);
      EXPECT_GE(id, 1);
      EXPECT_LE(id, kTableSize);
    }
    for (int i = 1; i <= 18; ++i) {
      EXPECT_GE(TableOf(calls[i]), 1);
      EXPECT_LE(TableOf(calls[i]), kTables);
      tables_seen.insert(TableOf(calls[i]));
    }
    for (int i = 11; i <= 14; ++i) {
      ASSERT_EQ(calls[i].params.size(), 2u);
      const int64_t low = IntParam(calls[i], 0);
      EXPECT_GE(low, 1);
      EXPECT_LE(low, kTableSize);
      EXPECT_EQ(IntParam(calls[i], 1), low + 99);  // BETWEEN id AND id+range_size-1
    }
    ASSERT_EQ(calls[15].params.size(), 1u);
    EXPECT_GE(IntParam(calls[15], 0), 1);
    EXPECT_LE(IntParam(calls[15], 0), kTableSize);
    ASSERT_EQ(calls[16].params.size(), 2u);
    ASSERT_EQ(calls[16].strings.size(), 1u);
    EXPECT_TRUE(MatchesTemplate(calls[16].strings[0], 10)) << calls[16].strings[0];
    EXPECT_LE(IntParam(calls[16], 1), kTableSize);

    // DELETE and INSERT of the same id in the same table; a fresh k, c and pad.
    const Call& deleted = calls[17];
    const Call& inserted = calls[18];
    EXPECT_EQ(TableOf(deleted), TableOf(inserted));
    ASSERT_EQ(deleted.params.size(), 1u);
    ASSERT_EQ(inserted.params.size(), 4u);
    EXPECT_EQ(IntParam(inserted, 0), IntParam(deleted, 0));
    EXPECT_GE(IntParam(inserted, 1), 1);
    EXPECT_LE(IntParam(inserted, 1), kTableSize);
    ASSERT_EQ(inserted.strings.size(), 2u);
    EXPECT_TRUE(MatchesTemplate(inserted.strings[0], 10)) << inserted.strings[0];
    EXPECT_TRUE(MatchesTemplate(inserted.strings[1], 5)) << inserted.strings[1];
  }
  EXPECT_EQ(tables_seen.size(), static_cast<size_t>(kTables));
}

TEST(OltpWorkloadTest, ScenariosWithoutTransactionsRunTheirStatementsAlone) {
  const std::map<std::string, std::vector<std::string>> expected = {
      {"point_select", {"SELECT c FROM sbtest1 WHERE id=?"}},
      {"update_index", {"UPDATE sbtest1 SET k=k+1 WHERE id=?"}},
      {"update_non_index", {"UPDATE sbtest1 SET c=? WHERE id=?"}},
      {"delete", {"DELETE FROM sbtest1 WHERE id=?"}},
      {"insert", {"INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, ?, ?, ?)"}},
  };
  for (const auto& [name, sequence] : expected) {
    auto scenario = ScenarioOf(name, {});
    ASSERT_NE(scenario, nullptr);
    auto worker = scenario->NewWorker({});
    RecordingSession session(scenario->Statements(db::Dialect::kMySql));
    ASSERT_TRUE(worker->Run(0, session).ok());
    EXPECT_THAT(session.Whats(), ElementsAreArray(sequence)) << name;
  }
  auto insert = ScenarioOf("insert", {});
  RecordingSession session(insert->Statements(db::Dialect::kMySql));
  ASSERT_TRUE(insert->NewWorker({})->Run(0, session).ok());
  ASSERT_EQ(session.calls[0].params.size(), 3u);  // k, c, pad
  EXPECT_LE(IntParam(session.calls[0], 0), 10'000);
  EXPECT_TRUE(MatchesTemplate(session.calls[0].strings[0], 10));
  EXPECT_TRUE(MatchesTemplate(session.calls[0].strings[1], 5));
}

TEST(OltpWorkloadTest, WriteOnlyAndReadOnlyFollowTheirScripts) {
  auto write_only = ScenarioOf("write_only", {{"index_updates", "2"}});
  RecordingSession writes(write_only->Statements(db::Dialect::kMySql));
  ASSERT_TRUE(write_only->NewWorker({})->Run(0, writes).ok());
  EXPECT_THAT(writes.Whats(),
              ElementsAre("BEGIN", "UPDATE sbtest1 SET k=k+1 WHERE id=?",
                          "UPDATE sbtest1 SET k=k+1 WHERE id=?",
                          "UPDATE sbtest1 SET c=? WHERE id=?", "DELETE FROM sbtest1 WHERE id=?",
                          "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", "COMMIT"));

  auto read_only = ScenarioOf("read_only", {{"point_selects", "2"}, {"range_selects", "false"}});
  RecordingSession reads(read_only->Statements(db::Dialect::kMySql));
  ASSERT_TRUE(read_only->NewWorker({})->Run(0, reads).ok());
  EXPECT_THAT(reads.Whats(), ElementsAre("BEGIN", "SELECT c FROM sbtest1 WHERE id=?",
                                         "SELECT c FROM sbtest1 WHERE id=?", "COMMIT"));
}

TEST(OltpWorkloadTest, SkipTrxLeavesOutBeginAndCommit) {
  for (const std::string name : {"read_only", "read_write", "write_only"}) {
    auto scenario = ScenarioOf(name, {{"skip_trx", "true"}});
    ASSERT_NE(scenario, nullptr);
    RecordingSession session(scenario->Statements(db::Dialect::kPostgreSql));
    ASSERT_TRUE(scenario->NewWorker({})->Run(0, session).ok());
    const std::vector<std::string> whats = session.Whats();
    EXPECT_EQ(whats.size(), name == "read_only" ? 14u : name == "read_write" ? 18u : 4u);
    for (const std::string& what : whats) {
      EXPECT_NE(what, "BEGIN") << name;
      EXPECT_NE(what, "COMMIT") << name;
    }
  }
}

TEST(OltpWorkloadTest, TheFirstErrorRollsBackAndEndsTheEvent) {
  auto scenario = ScenarioOf("read_write", {});
  RecordingSession session(scenario->Statements(db::Dialect::kMySql));
  session.fail_at = 3;
  const db::ExecOutcome outcome = scenario->NewWorker({})->Run(0, session);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->code, "40001");
  EXPECT_THAT(session.Whats(), ElementsAre("BEGIN", "SELECT c FROM sbtest1 WHERE id=?",
                                           "SELECT c FROM sbtest1 WHERE id=?",
                                           "SELECT c FROM sbtest1 WHERE id=?", "ROLLBACK"));

  // Without a transaction there is nothing to roll back.
  auto autocommit = ScenarioOf("write_only", {{"skip_trx", "true"}});
  RecordingSession plain(autocommit->Statements(db::Dialect::kMySql));
  plain.fail_at = 2;
  ASSERT_FALSE(autocommit->NewWorker({})->Run(0, plain).ok());
  EXPECT_THAT(plain.Whats(), ElementsAre("UPDATE sbtest1 SET k=k+1 WHERE id=?",
                                         "UPDATE sbtest1 SET c=? WHERE id=?"));
}

TEST(OltpWorkloadTest, TheSameSeedGivesTheSameSequence) {
  auto scenario = ScenarioOf("read_write", {{"tables", "4"}, {"table_size", "1000"}});
  const auto statements = scenario->Statements(db::Dialect::kPostgreSql);
  auto run = [&](uint32_t index) {
    auto worker = scenario->NewWorker({.run_seed = 9, .index = index, .count = 2});
    RecordingSession session(statements);
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(worker->Run(worker->NextQueryType(), session).ok());
    std::vector<std::string> trace;
    for (const Call& call : session.calls) {
      std::string line = call.what;
      for (const db::Value& value : call.params) {
        if (const auto* number = std::get_if<int64_t>(&value)) absl::StrAppend(&line, " ", *number);
      }
      for (const std::string& text : call.strings) absl::StrAppend(&line, " ", text);
      trace.push_back(std::move(line));
    }
    return trace;
  };
  const std::vector<std::string> first = run(1);
  EXPECT_EQ(first.size(), 20u * 20u);
  EXPECT_EQ(first, run(1));
  EXPECT_NE(first, run(0));  // another slot draws other keys
}

TEST(OltpWorkloadTest, SpecialDistributionHasSysbenchsHotSpot) {
  OltpOptions options;
  Random random(1);
  constexpr int kDraws = 400'000;
  int in_hot_window = 0;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t id = SpecialDistribution(random, 1, 1'000'000, options);
    ASSERT_GE(id, 1);
    ASSERT_LE(id, 1'000'000);
    in_hot_window += id >= 495'000 && id <= 505'001;  // the central 1 %
  }
  // 75 % land in the hot window, plus the gaussian part's small share of it.
  EXPECT_NEAR(in_hot_window / static_cast<double>(kDraws), 0.75 + 0.25 * 0.05, 0.02);
}

TEST(OltpWorkloadTest, WorkersRunOnTheNoopDriver) {
  SimulatedClock clock;
  db::NoopDriver driver({}, clock);
  for (const std::string name : {"point_select", "read_write", "insert"}) {
    auto session = *driver.Connect();
    auto scenario = ScenarioOf(name, {{"tables", "4"}, {"table_size", "1000"}});
    const auto statements = scenario->Statements(db::Dialect::kNoop);
    for (size_t id = 0; id < statements.size(); ++id) {
      ASSERT_TRUE(session->Prepare(static_cast<int>(id), statements[id]).ok());
    }
    auto worker = scenario->NewWorker({.run_seed = 9, .index = 1, .count = 2});
    for (int i = 0; i < 10; ++i) EXPECT_TRUE(worker->Run(worker->NextQueryType(), *session).ok());
  }
}

}  // namespace
}  // namespace dbload
