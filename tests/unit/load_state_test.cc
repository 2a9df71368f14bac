#include "workload/load_state.h"

#include <gtest/gtest.h>

namespace dbload {
namespace {

using db::Dialect;
using Phase = LoadPosition::Phase;

// The loader's statements on its state table, word for word as the loader wrote them when it
// had its own literal writer: plain names read the same in both dialects.
TEST(LoadStateSqlTest, StatementsKeepTheirText) {
  for (Dialect dialect : {Dialect::kPostgreSql, Dialect::kMySql}) {
    const LoadStateSql sql("shop", dialect);
    EXPECT_EQ(sql.RecordNewLoad("orders", 2),
              "INSERT INTO dbload_load_state (workload, tbl, part, parts, rows_done, phase) "
              "VALUES ('shop', 'orders', -1, 2, 0, 'loading'), ('shop', 'orders', 0, 2, 0, "
              "'loading'), ('shop', 'orders', 1, 2, 0, 'loading')");
    EXPECT_EQ(sql.SelectPhase("orders"),
              "SELECT CONCAT(phase, '|', parts) FROM dbload_load_state WHERE workload = 'shop' "
              "AND tbl = 'orders' AND part = -1");
    EXPECT_EQ(sql.SetPhase("orders", "index:1"),
              "UPDATE dbload_load_state SET phase = 'index:1' WHERE workload = 'shop' AND tbl = "
              "'orders' AND part = -1");
    EXPECT_EQ(sql.SelectParts("orders"),
              "SELECT CONCAT(part, '|', rows_done) FROM dbload_load_state WHERE workload = "
              "'shop' AND tbl = 'orders' AND part >= 0 ORDER BY part");
    EXPECT_EQ(sql.SetRowsDone("orders", 3, 20000),
              "UPDATE dbload_load_state SET rows_done = 20000 WHERE workload = 'shop' AND tbl = "
              "'orders' AND part = 3");
    EXPECT_EQ(sql.SelectTables(),
              "SELECT tbl FROM dbload_load_state WHERE workload = 'shop' AND part = -1");
    EXPECT_EQ(sql.DeleteTable("orders"),
              "DELETE FROM dbload_load_state WHERE workload = 'shop' AND tbl = 'orders'");
  }
  EXPECT_EQ(LoadStateSql::CreateTable(),
            "CREATE TABLE IF NOT EXISTS dbload_load_state (workload VARCHAR(200) NOT NULL, tbl "
            "VARCHAR(200) NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL, rows_done "
            "BIGINT NOT NULL, phase VARCHAR(40) NOT NULL, PRIMARY KEY (workload, tbl, part))");
}

// Names are plain identifiers (the parser checks), but the literals are the dialect's own
// whatever they hold: PostgreSQL doubles a quote, MySQL escapes it with a backslash.
TEST(LoadStateSqlTest, NamesAreLiteralsOfTheDialect) {
  EXPECT_EQ(LoadStateSql("it's", Dialect::kPostgreSql).SelectTables(),
            "SELECT tbl FROM dbload_load_state WHERE workload = 'it''s' AND part = -1");
  EXPECT_EQ(LoadStateSql("it's", Dialect::kMySql).SelectTables(),
            "SELECT tbl FROM dbload_load_state WHERE workload = 'it\\'s' AND part = -1");
  EXPECT_EQ(LoadStateSql("a\\b", Dialect::kPostgreSql).DeleteTable("t"),
            "DELETE FROM dbload_load_state WHERE workload = E'a\\\\b' AND tbl = 't'");
}

TEST(LoadPositionTest, PhasesReadBackAndSkipStepsATableDoesNotHave) {
  v1::Table table;
  table.set_name("orders");
  table.add_indexes()->set_any("CREATE INDEX a ON orders (a)");
  table.add_indexes()->set_any("CREATE INDEX b ON orders (b)");
  for (const LoadPosition at : {LoadPosition{Phase::kLoading, 0}, LoadPosition{Phase::kIndexes, 1},
                                LoadPosition{Phase::kAnalyze, 0}, LoadPosition{Phase::kDone, 0}}) {
    absl::StatusOr<LoadPosition> read = ParsePhase(table, PhaseText(at));
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->phase, at.phase);
    EXPECT_EQ(read->step, at.step);
  }
  // No after_load steps: after the last index comes the analyze.
  EXPECT_EQ(Following(table, {Phase::kIndexes, 1}).phase, Phase::kAnalyze);
  EXPECT_EQ(ParsePhase(table, "after_load:0")->phase, Phase::kAnalyze);
  EXPECT_EQ(PhaseText(Following(table, {Phase::kLoading, 0})), "index:0");
  EXPECT_EQ(Following(table, {Phase::kAnalyze, 0}).phase, Phase::kDone);
  EXPECT_EQ(ParsePhase(table, "index:x").status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace dbload
