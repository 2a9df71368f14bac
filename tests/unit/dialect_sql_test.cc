#include "db/dialect_sql.h"

#include <gtest/gtest.h>

#include "db/probe_sql.h"

namespace dbload::db {
namespace {

// Literals themselves are tested through SqlLiteral (plan_capture_test) and against real
// servers (explain_test); these tests pin what only the SQL text shows.

TEST(DialectSqlTest, SessionLockWaitsOnPostgresWithoutARowAndOnMysqlWithOne) {
  const std::optional<SessionLockSql> pg =
      SessionLock(Dialect::kPostgreSql, "dbload prepare", "shop");
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ(pg->try_lock,
            "SELECT pg_try_advisory_lock(hashtextextended('dbload prepare shop', 0))");
  EXPECT_FALSE(pg->wait_returns_row);
  const std::optional<SessionLockSql> my = SessionLock(Dialect::kMySql, "dbload prepare", "shop");
  ASSERT_TRUE(my.has_value());
  // Server-wide user locks: the name carries the database.
  EXPECT_EQ(my->wait_lock,
            "SELECT GET_LOCK(CONCAT('dbload prepare ', SHA1(CONCAT(DATABASE(), '/', 'shop'))), "
            "31536000)");
  EXPECT_TRUE(my->wait_returns_row);
  EXPECT_FALSE(SessionLock(Dialect::kNoop, "dbload prepare", "shop").has_value());
}

TEST(DialectSqlTest, NamesInCatalogQueriesAreQuotedForTheirDialect) {
  EXPECT_EQ(TableExistsQuery(Dialect::kPostgreSql, "o'k"),
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND "
            "tablename = 'o''k'");
  EXPECT_NE(TableExistsQuery(Dialect::kMySql, "o'k").find("table_name = 'o\\'k'"),
            std::string::npos);
  EXPECT_EQ(AnalyzeTableSql(Dialect::kPostgreSql, "t"), "VACUUM (ANALYZE) t");
  EXPECT_EQ(AnalyzeTableSql(Dialect::kMySql, "t"), "ANALYZE TABLE t");
  EXPECT_EQ(AnalyzeTableSql(Dialect::kNoop, "t"), "");
}

TEST(ProbeSqlTest, TheTargetDatabaseIsALiteralOfEachDialect) {
  const std::string pg = PostgresStatisticsQuery("it's");
  EXPECT_NE(pg.find("WHERE d.datname = 'it''s'"), std::string::npos) << pg;
  EXPECT_EQ(pg.find("%DB%"), std::string::npos);
  const std::string sessions = PostgresSessionsQuery("it's");
  EXPECT_NE(sessions.find("WHERE d.datname = 'it''s'"), std::string::npos) << sessions;
  EXPECT_EQ(sessions.find("%DB%"), std::string::npos);
  const std::string my = MySqlStatisticsQuery("a\\b", MySqlStatusTable::kPerformanceSchema);
  EXPECT_NE(my.find("FROM performance_schema.global_status"), std::string::npos) << my;
  EXPECT_NE(my.find("TABLE_SCHEMA = 'a\\\\b'"), std::string::npos) << my;
  EXPECT_NE(MySqlStatisticsQuery("x", MySqlStatusTable::kInformationSchema)
                .find("FROM information_schema.GLOBAL_STATUS"),
            std::string::npos);
}

TEST(ProbeSqlTest, GaugesAndMysqlSpellings) {
  EXPECT_TRUE(IsStatusGauge(Dialect::kPostgreSql, "connections_active"));
  EXPECT_FALSE(IsStatusGauge(Dialect::kPostgreSql, "xact_commit"));
  EXPECT_TRUE(IsStatusGauge(Dialect::kMySql, "Threads_running"));
  EXPECT_FALSE(IsStatusGauge(Dialect::kMySql, "Com_commit"));
  EXPECT_EQ(CanonicalMySqlStatusName("COM_COMMIT"), "Com_commit");
  EXPECT_EQ(CanonicalMySqlStatusName("SOMETHING_ELSE"), "SOMETHING_ELSE");
}

}  // namespace
}  // namespace dbload::db
