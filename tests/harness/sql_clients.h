#ifndef DBLOAD_TESTS_HARNESS_SQL_CLIENTS_H_
#define DBLOAD_TESTS_HARNESS_SQL_CLIENTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tests/harness/child_process.h"
#include "tests/harness/test_servers.h"

namespace dbload::testing {

// The databases' own command-line clients, as the superuser over the unix socket: how the
// integration tests read what the database itself says (counts, statistics), independently of
// dbload's drivers. Output is unaligned (psql -At) or tab-separated without headers (mariadb -NB).
std::vector<std::string> PsqlArgs(const TestServers& servers, const std::string& database,
                                  const std::string& sql);
std::vector<std::string> MariadbArgs(const TestServers& servers, const std::string& sql);

// Runs the SQL and returns its output without surrounding white space; a failure is a test
// failure (with the client's output) and returns "".
std::string Psql(const TestServers& servers, const std::string& database, const std::string& sql);
std::string Mariadb(const TestServers& servers, const std::string& sql);

// pg_stat_database's counters of one database.
struct PgDatabaseCounters {
  int64_t xact_commit = -1;
  int64_t xact_rollback = -1;
  int64_t sessions = -1;
  int64_t deadlocks = -1;
  bool operator==(const PgDatabaseCounters&) const = default;
};

// pg_stat_database of `database`, read from database postgres (so that the reading is not
// counted in it) once no backend is left in `database` and two reads 300 ms apart agree:
// backends flush their counts as they exit, shortly after their clients have gone. A failure
// after 10 s (and the last read).
PgDatabaseCounters SettledPgDatabaseCounters(const TestServers& servers,
                                             const std::string& database = "bench");

// MariaDB's global status variables `names`, once two reads 200 ms apart agree (a closing
// connection's counters move from its thread into the global sum as it ends). A name the server
// lacks reads -1. A failure after 10 s (and the last read).
std::map<std::string, int64_t> SettledMariaDbStatus(const TestServers& servers,
                                                    const std::vector<std::string>& names);

// seq_scan + idx_scan of `table` in database bench: the executions of a statement that scans it
// once. Read from bench itself, so call it before SettledPgDatabaseCounters() ahead of a run and
// after it afterwards, so that this session's own transactions fall outside the measured window.
int64_t PgTableScans(const TestServers& servers, const std::string& table);

// A count the clients printed (surrounding white space ignored); anything else is a test failure
// and -1.
int64_t ToInt(absl::string_view text);

// Turns PostgreSQL's autovacuum off for the server, so that tests counting the server's own
// statistics of database bench (commits, scans) count only their runs' work.
void TurnOffAutovacuum(const TestServers& servers);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_SQL_CLIENTS_H_
