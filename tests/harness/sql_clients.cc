#include "tests/harness/sql_clients.h"

#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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

int64_t ToInt(absl::string_view text) {
  int64_t value = -1;
  EXPECT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) << "'" << text << "'";
  return value;
}

PgDatabaseCounters SettledPgDatabaseCounters(const TestServers& servers,
                                             const std::string& database) {
  const std::string sql = absl::StrCat(
      "SELECT pg_stat_clear_snapshot(); "
      "SELECT d.xact_commit, d.xact_rollback, d.sessions, d.deadlocks, "
      "(SELECT count(*) FROM pg_stat_activity a WHERE a.datname = d.datname) "
      "FROM pg_stat_database d WHERE d.datname = '",
      database, "'");
  std::optional<PgDatabaseCounters> previous;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    const std::string text = Psql(servers, "postgres", sql);
    const std::vector<std::string> fields = absl::StrSplit(text, '|');
    if (fields.size() != 5) {
      ADD_FAILURE() << "unexpected pg_stat_database output: " << text;
      return {};
    }
    const PgDatabaseCounters now{ToInt(fields[0]), ToInt(fields[1]), ToInt(fields[2]),
                                 ToInt(fields[3])};
    const bool idle = ToInt(fields[4]) == 0;
    if (idle && previous == now) return now;
    if (std::chrono::steady_clock::now() > give_up) {
      ADD_FAILURE() << "pg_stat_database of " << database << " did not settle within 10 s";
      return now;
    }
    previous = idle ? std::optional(now) : std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

std::map<std::string, int64_t> SettledMariaDbStatus(const TestServers& servers,
                                                    const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const std::string& name : names) quoted.push_back(absl::StrCat("'", name, "'"));
  const std::string sql =
      absl::StrCat("SHOW GLOBAL STATUS WHERE Variable_name IN (", absl::StrJoin(quoted, ", "), ")");
  std::optional<std::map<std::string, int64_t>> previous;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    std::map<std::string, int64_t> now;
    for (const std::string& name : names) now[name] = -1;
    for (absl::string_view line : absl::StrSplit(Mariadb(servers, sql), '\n', absl::SkipEmpty())) {
      const std::vector<std::string> fields = absl::StrSplit(line, '\t');
      if (fields.size() == 2) now[fields[0]] = ToInt(fields[1]);
    }
    if (previous == now) return now;
    if (std::chrono::steady_clock::now() > give_up) {
      ADD_FAILURE() << "MariaDB global status did not settle within 10 s";
      return now;
    }
    previous = std::move(now);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int64_t PgTableScans(const TestServers& servers, const std::string& table) {
  return ToInt(Psql(servers, "bench",
                    absl::StrCat("SELECT pg_stat_clear_snapshot(); SELECT coalesce(seq_scan, 0) + "
                                 "coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = '",
                                 table, "'")));
}

void TurnOffAutovacuum(const TestServers& servers) {
  Psql(servers, "postgres", "ALTER SYSTEM SET autovacuum = off");
  Psql(servers, "postgres", "SELECT pg_reload_conf()");
}

}  // namespace dbload::testing
