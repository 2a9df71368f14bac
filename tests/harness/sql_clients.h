#ifndef DBLOAD_TESTS_HARNESS_SQL_CLIENTS_H_
#define DBLOAD_TESTS_HARNESS_SQL_CLIENTS_H_

#include <string>
#include <vector>

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

// Turns PostgreSQL's autovacuum off for the server, so that tests counting the server's own
// statistics of database bench (commits, scans) count only their runs' work.
void TurnOffAutovacuum(const TestServers& servers);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_SQL_CLIENTS_H_
