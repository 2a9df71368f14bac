// Throwaway probe (not built by CMake), kept as the raw source of the figures in
// 2026-11-30-client-cpu-perf.txt. Build: g++ -O2 -g -std=c++20 2026-11-30-cppconn_probe.cc -lmysqlcppconn
// Run: MYSQL_PWD=... valgrind --tool=callgrind ./a.out tcp://127.0.0.1:PORT 5000 (sbtest1 prepared).
// Throwaway experiment: client instructions per point select through Connector/C++ 1.1,
// prepared statement vs text protocol (stored and forward-only).
#include <cppconn/connection.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

static long rows_total = 0;

__attribute__((noinline)) void RunPs(sql::Connection& c, int n) {
  std::unique_ptr<sql::PreparedStatement> ps(c.prepareStatement("SELECT c FROM sbtest1 WHERE id=?"));
  for (int i = 0; i < n; ++i) {
    ps->setInt64(1, 1 + (i * 7919) % 100000);
    std::unique_ptr<sql::ResultSet> r(ps->executeQuery());
    rows_total += r->rowsCount();
  }
}

__attribute__((noinline)) void RunTextStored(sql::Connection& c, int n) {
  std::unique_ptr<sql::Statement> st(c.createStatement());
  std::string q;
  for (int i = 0; i < n; ++i) {
    q = "SELECT c FROM sbtest1 WHERE id=";
    q += std::to_string(1 + (i * 7919) % 100000);
    std::unique_ptr<sql::ResultSet> r(st->executeQuery(sql::SQLString(q)));
    rows_total += r->rowsCount();
  }
}

__attribute__((noinline)) void RunTextForward(sql::Connection& c, int n) {
  std::unique_ptr<sql::Statement> st(c.createStatement());
  st->setResultSetType(sql::ResultSet::TYPE_FORWARD_ONLY);
  std::string q;
  for (int i = 0; i < n; ++i) {
    q = "SELECT c FROM sbtest1 WHERE id=";
    q += std::to_string(1 + (i * 7919) % 100000);
    std::unique_ptr<sql::ResultSet> r(st->executeQuery(sql::SQLString(q)));
    while (r->next()) ++rows_total;
  }
}

int main(int argc, char** argv) {
  const int n = atoi(argv[2]);
  sql::mysql::MySQL_Driver* d = sql::mysql::get_mysql_driver_instance();
  std::unique_ptr<sql::Connection> c(d->connect(argv[1], "bench", getenv("MYSQL_PWD")));
  c->setSchema("bench");
  RunPs(*c, n);
  RunTextStored(*c, n);
  RunTextForward(*c, n);
  printf("rows %ld\n", rows_total);
}
