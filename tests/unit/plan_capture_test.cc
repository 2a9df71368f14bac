#include "agent/plan_capture.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "workload/workload_parser.h"
#include "workload/declarative.h"
#include "tests/unit/stub_session.h"

namespace dbload {
namespace {

using db::Dialect;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SqlLiteral, NumbersNullAndNegativesThatCannotBecomeComments) {
  for (Dialect dialect : {Dialect::kPostgreSql, Dialect::kMySql}) {
    EXPECT_EQ(SqlLiteral(std::monostate(), dialect), "NULL");
    EXPECT_EQ(SqlLiteral(int64_t{42}, dialect), "42");
    EXPECT_EQ(SqlLiteral(int64_t{-7}, dialect), "(-7)");
    EXPECT_EQ(SqlLiteral(std::numeric_limits<int64_t>::min(), dialect),
              "(-9223372036854775808)");
    EXPECT_EQ(SqlLiteral(0.1, dialect), "0.1");  // shortest text that reads back the same
    EXPECT_EQ(SqlLiteral(-2.5, dialect), "(-2.5)");
  }
  EXPECT_EQ(SqlLiteral(std::nan(""), Dialect::kPostgreSql), "'NaN'");
  EXPECT_EQ(SqlLiteral(-HUGE_VAL, Dialect::kPostgreSql), "'-Infinity'");
  EXPECT_EQ(SqlLiteral(HUGE_VAL, Dialect::kMySql), "NULL");
  // `x -?` with -7 inlined stays a subtraction.
  std::vector<ParamValue> minus_seven(1);
  minus_seven[0] = int64_t{-7};
  EXPECT_EQ(InlineParams("SELECT 1 -?", minus_seven, Dialect::kMySql), "SELECT 1 -(-7)");
}

TEST(SqlLiteral, PostgresDoublesQuotesAndUsesEscapeStringsForBackslashes) {
  EXPECT_EQ(SqlLiteral(std::string("plain"), Dialect::kPostgreSql), "'plain'");
  EXPECT_EQ(SqlLiteral(std::string("o'brien"), Dialect::kPostgreSql), "'o''brien'");
  EXPECT_EQ(SqlLiteral(std::string("a\\'b"), Dialect::kPostgreSql), "E'a\\\\''b'");
  EXPECT_EQ(SqlLiteral(std::string(""), Dialect::kPostgreSql), "''");
}

TEST(SqlLiteral, MysqlEscapesWithBackslashes) {
  EXPECT_EQ(SqlLiteral(std::string("o'brien"), Dialect::kMySql), "'o\\'brien'");
  EXPECT_EQ(SqlLiteral(std::string("a\\b"), Dialect::kMySql), "'a\\\\b'");
  EXPECT_EQ(SqlLiteral(std::string("l1\nl2\r\x1a"), Dialect::kMySql), "'l1\\nl2\\r\\Z'");
  EXPECT_EQ(SqlLiteral(std::string("nul\0x", 5), Dialect::kMySql), "'nul\\0x'");
}

TEST(InlineParams, ReplacesPlaceholdersOutsideStringsAndComments) {
  // Filled one by one: GCC 12 sees an uninitialized string in a braced list of variants.
  std::vector<ParamValue> values(3);
  values[0] = int64_t{1};
  values[1] = std::string("it's");
  EXPECT_EQ(InlineParams("SELECT '?' , ? FROM t WHERE a = ? AND b = ? -- ?\n", values,
                         Dialect::kMySql),
            "SELECT '?' , 1 FROM t WHERE a = 'it\\'s' AND b = NULL -- ?\n");
  // PostgreSQL's numbered placeholders, in any order; $10 is not $1 followed by 0.
  std::vector<ParamValue> ten;
  for (int64_t i = 1; i <= 10; ++i) ten.emplace_back(std::in_place_type<int64_t>, i * 100);
  EXPECT_EQ(InlineParams("SELECT $2, $1, '$1', $10", ten, Dialect::kPostgreSql),
            "SELECT 200, 100, '$1', 1000");
  // A placeholder without a value is NULL rather than left for the server to refuse.
  EXPECT_EQ(InlineParams("SELECT $3", values, Dialect::kPostgreSql), "SELECT NULL");
  EXPECT_EQ(InlineParams("SELECT ?, ?, ?, ?", values, Dialect::kMySql),
            "SELECT 1, 'it\\'s', NULL, NULL");
}

// A session that answers EXPLAIN with one line naming the statement, and refuses what it is
// told to.
class FakeSession final : public StubSession {
 public:
  db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override {
    ADD_FAILURE() << "EXPLAIN must not execute the workload's statements";
    return {};
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql, size_t) override {
    sent.emplace_back(sql);
    if (!refuse.empty() && sql.find(refuse) != std::string_view::npos) {
      return absl::InvalidArgumentError("syntax error at or near \"SET\"");
    }
    return std::vector<std::string>{"plan of", std::string(sql)};
  }

  std::vector<std::string> sent;
  std::string refuse;
};

TEST(ExplainQueryTypes, OltpExplainsEachStatementOfTheEventOnceWithDrawnValues) {
  auto workload = MakeWorkload("oltp", {{"table_size", "1000"}, {"tables", "1"}});
  ASSERT_TRUE(workload.ok()) << workload.status();
  auto scenario = (*workload)->MakeScenario("point_select");
  ASSERT_TRUE(scenario.ok());
  auto worker = (*scenario)->NewWorker({.run_seed = 1, .index = 0, .count = 1});
  FakeSession session;
  std::vector<v1::QueryPlan> plans =
      ExplainQueryTypes(**scenario, *worker, session, Dialect::kPostgreSql);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].query_type(), "point_select");
  EXPECT_TRUE(plans[0].error().empty()) << plans[0].error();
  ASSERT_EQ(session.sent.size(), 1u);
  // The id is a real draw: an integer from 1 to table_size in place of $1.
  int64_t id = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      plans[0].statement().substr(std::string("SELECT c FROM sbtest1 WHERE id=").size()), &id))
      << plans[0].statement();
  EXPECT_GE(id, 1);
  EXPECT_LE(id, 1000);
  EXPECT_EQ(session.sent[0], "EXPLAIN (FORMAT TEXT) " + plans[0].statement());
  EXPECT_EQ(plans[0].plan(), "plan of\n" + session.sent[0]);

  // read_write: ten point selects, four ranges, three writes, the delete and the insert of
  // delete_inserts: each statement once, in the event's order; MySQL's EXPLAIN gives JSON.
  auto read_write = (*workload)->MakeScenario("read_write");
  ASSERT_TRUE(read_write.ok());
  auto rw_worker = (*read_write)->NewWorker({.run_seed = 1, .index = 0, .count = 1});
  FakeSession mysql;
  plans = ExplainQueryTypes(**read_write, *rw_worker, mysql, Dialect::kMySql);
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(mysql.sent.size(), 9u);
  EXPECT_THAT(mysql.sent[0], HasSubstr("EXPLAIN FORMAT=JSON SELECT c FROM sbtest1 WHERE id="));
  EXPECT_THAT(mysql.sent[5], HasSubstr("EXPLAIN FORMAT=JSON UPDATE sbtest1 SET k=k+1 WHERE id="));
  EXPECT_THAT(mysql.sent[8], HasSubstr("EXPLAIN FORMAT=JSON INSERT INTO sbtest1 (id, k, c, pad) VALUES ("));
  EXPECT_THAT(plans[0].plan(), HasSubstr("-- statement 9: INSERT INTO sbtest1"));
  EXPECT_EQ(std::count(plans[0].statement().begin(), plans[0].statement().end(), '\n'), 8);
}

constexpr char kWorkload[] = R"(
name: accounts
tables:
  - name: accounts
    create: CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner VARCHAR(40))
scenarios:
  - name: mix
    query_types:
      - name: transfer
        transaction: true
        statements:
          - sql: SELECT owner FROM accounts WHERE id = ?
            params: [{uniform: {min: 5, max: 5}}]
          - sql: UPDATE accounts SET owner = ? WHERE id = ?
            params: [{constant: "o'neil"}, {uniform: {min: 6, max: 6}}]
          - sql: SET application_name = 'x'
          - sql: CREATE TEMPORARY TABLE scratch (x INT)
      - name: lookup
        statements:
          - sql: SELECT id FROM accounts WHERE owner = ?
            params: [{constant: "a\\b"}]
)";

TEST(ExplainQueryTypes, ATransactionGetsOnePlanWithEachStatementSkippedOrRefusedNamed) {
  absl::StatusOr<v1::WorkloadSpec> spec = ParseWorkload(kWorkload, "accounts.yaml", {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto scenario = MakeDeclarativeWorkload(*spec)->MakeScenario("mix");
  ASSERT_TRUE(scenario.ok()) << scenario.status();
  auto worker = (*scenario)->NewWorker({.run_seed = 1, .index = 0, .count = 1});
  FakeSession session;
  session.refuse = "SET application_name";
  const std::vector<v1::QueryPlan> plans =
      ExplainQueryTypes(**scenario, *worker, session, Dialect::kPostgreSql);
  ASSERT_EQ(plans.size(), 2u);
  const v1::QueryPlan& transfer = plans[0];
  EXPECT_EQ(transfer.query_type(), "transfer");
  EXPECT_EQ(transfer.statement(),
            "SELECT owner FROM accounts WHERE id = 5\n"
            "UPDATE accounts SET owner = 'o''neil' WHERE id = 6\n"
            "SET application_name = 'x'\n"
            "CREATE TEMPORARY TABLE scratch (x INT)");
  // The DDL is not sent; the refused SET is; the others' plans stay.
  EXPECT_THAT(session.sent,
              ElementsAre("EXPLAIN (FORMAT TEXT) SELECT owner FROM accounts WHERE id = 5",
                          "EXPLAIN (FORMAT TEXT) UPDATE accounts SET owner = 'o''neil' WHERE id = 6",
                          "EXPLAIN (FORMAT TEXT) SET application_name = 'x'",
                          "EXPLAIN (FORMAT TEXT) SELECT id FROM accounts WHERE owner = E'a\\\\b'"));
  EXPECT_EQ(transfer.plan(),
            "-- statement 1: SELECT owner FROM accounts WHERE id = 5\n"
            "plan of\nEXPLAIN (FORMAT TEXT) SELECT owner FROM accounts WHERE id = 5\n"
            "-- statement 2: UPDATE accounts SET owner = 'o''neil' WHERE id = 6\n"
            "plan of\nEXPLAIN (FORMAT TEXT) UPDATE accounts SET owner = 'o''neil' WHERE id = 6\n"
            "-- statement 3: SET application_name = 'x'\n"
            "(EXPLAIN failed: see the error)\n"
            "-- statement 4: CREATE TEMPORARY TABLE scratch (x INT)\n"
            "(skipped: EXPLAIN does not take this statement)");
  EXPECT_EQ(transfer.error(), "statement 3: syntax error at or near \"SET\"");
  EXPECT_TRUE(plans[1].error().empty());
  EXPECT_EQ(plans[1].statement(), "SELECT id FROM accounts WHERE owner = E'a\\\\b'");
}

}  // namespace
}  // namespace dbload
