#include "db/probe_sql.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "db/dialect_sql.h"

namespace dbload::db {
namespace {

// %DB% is the target database's name as a literal.
constexpr char kPostgresReading[] = R"sql(
SELECT x.n || '=' || x.v FROM pg_stat_database d, pg_stat_bgwriter b, pg_stat_wal w,
LATERAL (VALUES
  ('xact_commit', d.xact_commit::text), ('xact_rollback', d.xact_rollback::text),
  ('blks_read', d.blks_read::text), ('blks_hit', d.blks_hit::text),
  ('tup_returned', d.tup_returned::text), ('tup_fetched', d.tup_fetched::text),
  ('tup_inserted', d.tup_inserted::text), ('tup_updated', d.tup_updated::text),
  ('tup_deleted', d.tup_deleted::text), ('temp_files', d.temp_files::text),
  ('temp_bytes', d.temp_bytes::text), ('deadlocks', d.deadlocks::text),
  ('conflicts', d.conflicts::text),
  ('wal_bytes', w.wal_bytes::text), ('wal_records', w.wal_records::text),
  ('checkpoints_timed', b.checkpoints_timed::text), ('checkpoints_req', b.checkpoints_req::text),
  ('buffers_checkpoint', b.buffers_checkpoint::text), ('buffers_clean', b.buffers_clean::text),
  ('buffers_backend', b.buffers_backend::text),
  ('database_size_bytes', pg_database_size(d.datid)::text),
  ('connections_active', (SELECT count(*) FROM pg_stat_activity a
                          WHERE a.datid = d.datid AND a.state = 'active')::text),
  ('connections_idle', (SELECT count(*) FROM pg_stat_activity a
                        WHERE a.datid = d.datid AND a.state = 'idle')::text),
  ('connections_idle_in_transaction', (SELECT count(*) FROM pg_stat_activity a
      WHERE a.datid = d.datid AND a.state LIKE 'idle in transaction%')::text),
  ('lock_waiting', (SELECT count(*) FROM pg_stat_activity a
                    WHERE a.datid = d.datid AND a.wait_event_type = 'Lock')::text)
) AS x(n, v)
WHERE d.datname = %DB%)sql";

constexpr char kPostgresSessions[] = R"sql(
SELECT x.n || '=' || x.v FROM (
  SELECT count(*) AS all_sessions,
         count(*) FILTER (WHERE a.application_name = %APP%) AS dbload_sessions
  FROM pg_stat_activity a JOIN pg_database d ON d.oid = a.datid
  WHERE d.datname = %DB% AND a.backend_type = 'client backend') c,
LATERAL (VALUES ('connections', c.all_sessions::text),
                ('dbload_sessions', c.dbload_sessions::text)) AS x(n, v))sql";

// The counters and gauges read from MySQL's / MariaDB's global status, by their canonical
// names (information_schema spells them in capitals).
constexpr const char* kMySqlCounters[] = {"Questions",
                                          "Com_select",
                                          "Com_insert",
                                          "Com_update",
                                          "Com_delete",
                                          "Com_commit",
                                          "Com_rollback",
                                          "Handler_commit",
                                          "Handler_rollback",
                                          "Handler_write",
                                          "Handler_update",
                                          "Handler_delete",
                                          "Handler_read_key",
                                          "Handler_read_next",
                                          "Handler_read_rnd_next",
                                          "Innodb_rows_read",
                                          "Innodb_rows_inserted",
                                          "Innodb_rows_updated",
                                          "Innodb_rows_deleted",
                                          "Innodb_data_read",
                                          "Innodb_data_written",
                                          "Innodb_buffer_pool_reads",
                                          "Innodb_buffer_pool_read_requests",
                                          "Innodb_os_log_written",
                                          "Innodb_row_lock_waits",
                                          "Innodb_row_lock_time",
                                          "Innodb_deadlocks",
                                          "Created_tmp_disk_tables",
                                          "Bytes_received",
                                          "Bytes_sent"};
constexpr const char* kMySqlGauges[] = {"Threads_connected",
                                        "Threads_running",
                                        "Innodb_row_lock_current_waits",
                                        "Innodb_buffer_pool_pages_dirty",
                                        "data_bytes",
                                        "index_bytes"};

}  // namespace

const char kPostgresIdentityQuery[] = R"sql(
SELECT 'version=' || version()
UNION ALL SELECT 'pid=' || pg_backend_pid()
UNION ALL SELECT name || '=' || current_setting(name) FROM pg_settings WHERE name IN
  ('server_version', 'block_size', 'shared_buffers', 'max_connections', 'work_mem',
   'effective_cache_size', 'synchronous_commit', 'fsync', 'full_page_writes', 'wal_level',
   'checkpoint_timeout', 'max_wal_size', 'random_page_cost', 'default_transaction_isolation',
   'deadlock_timeout', 'lock_timeout', 'autovacuum', 'autovacuum_naptime'))sql";

const char kMySqlIdentityQuery[] =
    "SELECT CONCAT('version=', VERSION()) UNION ALL "
    "SELECT CONCAT('version_comment=', @@version_comment) UNION ALL "
    "SELECT CONCAT('pid_file=', @@pid_file) UNION ALL "
    "SELECT CONCAT('innodb_buffer_pool_size=', @@innodb_buffer_pool_size) UNION ALL "
    "SELECT CONCAT('innodb_flush_log_at_trx_commit=', @@innodb_flush_log_at_trx_commit) "
    "UNION ALL SELECT CONCAT('innodb_log_file_size=', @@innodb_log_file_size) UNION ALL "
    "SELECT CONCAT('innodb_doublewrite=', @@innodb_doublewrite) UNION ALL "
    "SELECT CONCAT('sync_binlog=', @@sync_binlog) UNION ALL "
    "SELECT CONCAT('log_bin=', @@log_bin) UNION ALL "
    "SELECT CONCAT('max_connections=', @@max_connections) UNION ALL "
    "SELECT CONCAT('innodb_lock_wait_timeout=', @@global.innodb_lock_wait_timeout)";

// MariaDB before 11.1 has only tx_isolation, MySQL 8 only transaction_isolation.
const char kMariaDbIsolationQuery[] = "SELECT CONCAT('tx_isolation=', @@global.tx_isolation)";
const char kMySqlIsolationQuery[] =
    "SELECT CONCAT('transaction_isolation=', @@global.transaction_isolation)";

std::string PostgresStatisticsQuery(absl::string_view database) {
  return absl::StrReplaceAll(kPostgresReading,
                             {{"%DB%", QuoteText(database, Dialect::kPostgreSql)}});
}

std::string PostgresSessionsQuery(absl::string_view database) {
  return absl::StrReplaceAll(
      kPostgresSessions, {{"%DB%", QuoteText(database, Dialect::kPostgreSql)},
                          {"%APP%", QuoteText(kPostgresApplicationName, Dialect::kPostgreSql)}});
}

std::string MySqlStatisticsQuery(absl::string_view database, MySqlStatusTable table) {
  const absl::string_view status_table = table == MySqlStatusTable::kInformationSchema
                                            ? "information_schema.GLOBAL_STATUS"
                                            : "performance_schema.global_status";
  const std::string database_literal = QuoteText(database, Dialect::kMySql);
  std::vector<std::string> names;
  for (const char* name : kMySqlCounters) names.push_back(absl::StrCat("'", name, "'"));
  for (const char* name : kMySqlGauges) names.push_back(absl::StrCat("'", name, "'"));
  return absl::StrCat(
      "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM ", status_table,
      " WHERE UPPER(VARIABLE_NAME) IN (", absl::AsciiStrToUpper(absl::StrJoin(names, ",")),
      ") UNION ALL SELECT CONCAT('data_bytes=', COALESCE(SUM(DATA_LENGTH), 0)) FROM "
      "information_schema.TABLES WHERE TABLE_SCHEMA = ",
      database_literal,
      " UNION ALL SELECT CONCAT('index_bytes=', COALESCE(SUM(INDEX_LENGTH), 0)) FROM "
      "information_schema.TABLES WHERE TABLE_SCHEMA = ",
      database_literal);
}

bool IsStatusGauge(Dialect dialect, absl::string_view name) {
  if (dialect == Dialect::kMySql) {
    for (const char* gauge : kMySqlGauges) {
      if (name == gauge) return true;
    }
    return false;
  }
  return name == "database_size_bytes" || absl::StartsWith(name, "connections") ||
         name == "dbload_sessions" || name == "lock_waiting";
}

std::string CanonicalMySqlStatusName(absl::string_view name) {
  for (const char* known : kMySqlCounters) {
    if (absl::EqualsIgnoreCase(name, known)) return known;
  }
  for (const char* known : kMySqlGauges) {
    if (absl::EqualsIgnoreCase(name, known)) return known;
  }
  return std::string(name);
}

}  // namespace dbload::db
