#include "tests/harness/sql_clients.h"

#include "absl/strings/ascii.h"
#include "gtest/gtest.h"

namespace dbload::testing {

std::vector<std::string> PsqlArgs(const TestServers& servers, const std::string& database,
                                  const std::string& sql) {
  return {servers.Get("PG_BINDIR") + "/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
          "-h", servers.Get("PG_SOCKET_DIR"), "-p", servers.Get("PG_PORT"), "-U",
          servers.Get("PG_SUPERUSER"), "-d", database, "-c", sql};
}

std::vector<std::string> MariadbArgs(const TestServers& servers, const std::string& sql) {
  return {"/usr/bin/env", "mariadb", "--no-defaults", "-N", "-B", "--socket",
          servers.Get("MARIADB_SOCKET"), "-u", servers.Get("MARIADB_SUPERUSER"), "-e", sql};
}

namespace {
std::string Output(const std::vector<std::string>& args, const std::string& sql) {
  const ProcessResult result = RunProcess(args);
  if (result.exit_code != 0) {
    ADD_FAILURE() << sql << "\n" << result.Describe();
    return "";
  }
  return std::string(absl::StripAsciiWhitespace(result.out));
}
}  // namespace

std::string Psql(const TestServers& servers, const std::string& database, const std::string& sql) {
  return Output(PsqlArgs(servers, database, sql), sql);
}

std::string Mariadb(const TestServers& servers, const std::string& sql) {
  return Output(MariadbArgs(servers, sql), sql);
}

void TurnOffAutovacuum(const TestServers& servers) {
  Psql(servers, "postgres", "ALTER SYSTEM SET autovacuum = off");
  Psql(servers, "postgres", "SELECT pg_reload_conf()");
}

}  // namespace dbload::testing
