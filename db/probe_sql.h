#ifndef DBLOAD_DB_PROBE_SQL_H_
#define DBLOAD_DB_PROBE_SQL_H_

#include <string>

#include "absl/strings/string_view.h"
#include "db/driver.h"

namespace dbload::db {

// The statements the coordinator's probe (coordinator/db_probe.h) reads a server's own
// statistics with, and what their names mean. Each returns rows of one text column
// "name=value"; everything comes from the server's statistics views, nothing scans user tables
// except the size functions.

// The target database's counters and gauges: pg_stat_database, pg_stat_bgwriter, pg_stat_wal
// and pg_stat_activity. `database` is the target's name: the probe connects to the maintenance
// database "postgres" where it can, so that its own transactions never count in the target's.
std::string PostgresStatisticsQuery(absl::string_view database);
// The sessions open in the target database (its client backends), as "connections=N", and
// those of them named as dbload's drivers name theirs (application_name 'dbload': the agents'
// and the coordinator's row checks; not the probe's, nor a session that renamed itself), as
// "dbload_sessions=N"; read just before PostgresStatisticsQuery, in a statement of its own. A
// backend publishes its last counts as it exits, before it leaves pg_stat_activity, so the sessions
// gone by this count are all in the counters read after it (within one statement, which view is
// read first is the planner's choice: a reading that listed no session had missed the last counts
// of backends that exited in between).
std::string PostgresSessionsQuery(absl::string_view database);

// MySQL/MariaDB global status (the counters and gauges below, by name) and the target
// database's data and index bytes. MariaDB and MySQL 5.7 keep global status in
// information_schema; MySQL 8 only in performance_schema (the probe falls back to it).
enum class MySqlStatusTable { kInformationSchema, kPerformanceSchema };
std::string MySqlStatisticsQuery(absl::string_view database, MySqlStatusTable table);

// The application_name of every PostgreSQL session dbload's driver opens (the agents', the row
// checks'); PostgresSessionsQuery counts the run's sessions by it.
inline constexpr char kPostgresApplicationName[] = "dbload";

// Tells the probe's session apart from the load's in pg_stat_activity.
inline constexpr char kPostgresNameProbeSession[] = "SET application_name = 'dbload probe'";

// Version and the settings that decide performance (buffer sizes, durability, checkpoints).
extern const char kPostgresIdentityQuery[];
extern const char kMySqlIdentityQuery[];
// The server's default isolation level, as `name=value`: its variable's name differs.
extern const char kMariaDbIsolationQuery[];
extern const char kMySqlIsolationQuery[];

// Whether a name the statistics queries return is a gauge (a level such as connections) rather
// than a counter that only grows.
bool IsStatusGauge(Dialect dialect, absl::string_view name);

// information_schema spells status names in capitals; reports use the server's documented
// spelling (Com_commit). A name not asked for comes back as it is.
std::string CanonicalMySqlStatusName(absl::string_view name);

}  // namespace dbload::db

#endif  // DBLOAD_DB_PROBE_SQL_H_
