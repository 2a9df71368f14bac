// The PostgreSQL and MySQL drivers against real servers (PostgreSQL 15 and MariaDB 10.11 started
// by tests/harness/dbenv), directly and through HAProxy. Results are checked against the
// database itself from a second session, not only against what the driver says.
// Its length: one binary is one ctest test, so that the servers it needs start once for all
// its cases (tests/integration/CMakeLists.txt).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/fiber_loop.h"
#include "db/driver.h"
#include "db/driver_factory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/test_servers.h"

namespace dbload::db {
namespace {

using ::dbload::testing::PasswordOf;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    const absl::Status assert_ok_status = (expr);           \
    ASSERT_TRUE(assert_ok_status.ok()) << assert_ok_status; \
  } while (0)

// An outcome that must have succeeded, with the error in the failure message otherwise.
#define ASSERT_EXEC_OK(outcome)                                                       \
  ASSERT_TRUE((outcome).ok()) << "[" << (outcome).error->code << "] "                 \
                              << ErrorClassName((outcome).error->error_class) << ": " \
                              << (outcome).error->message

// MariaDB through each MySQL client library: Connector/C (the default), directly and through
// HAProxy, and Connector/C++ directly.
enum class Backend { kPostgres, kPostgresHaproxy, kMariaDb, kMariaDbHaproxy, kMariaDbConnectorCpp };

std::string BackendName(Backend backend) {
  switch (backend) {
    case Backend::kPostgres:
      return "pg";
    case Backend::kPostgresHaproxy:
      return "pg_haproxy";
    case Backend::kMariaDb:
      return "mariadb";
    case Backend::kMariaDbHaproxy:
      return "mariadb_haproxy";
    case Backend::kMariaDbConnectorCpp:
      return "mariadb_connector_cpp";
  }
  return "unknown";
}

// A loopback TCP port nobody listens on (bound, then released).
uint32_t ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return 1;  // privileged and unused here: refused as well
  }
  close(fd);
  return ntohs(address.sin_port);
}

class DbDriverTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    TestServers& servers = TestServersEnvironment::Servers();
    switch (GetParam()) {
      case Backend::kPostgres:
        target_ = servers.PostgresTarget();
        break;
      case Backend::kPostgresHaproxy:
        target_ = servers.HaproxyPostgresTarget();
        break;
      case Backend::kMariaDb:
        target_ = servers.MariaDbTarget();
        break;
      case Backend::kMariaDbHaproxy:
        target_ = servers.HaproxyMariaDbTarget();
        break;
      case Backend::kMariaDbConnectorCpp:
        target_ = servers.MariaDbTarget();
        target_.set_mysql_client(dbload::v1::MY_SQL_CLIENT_CONNECTOR_CPP);
        break;
    }
    ASSERT_NE(target_.port(), 0u) << "service not started for " << BackendName(GetParam());
    absl::StatusOr<std::string> password = PasswordOf(target_);
    ASSERT_OK(password.status());
    password_ = *password;
    driver_ = MakeDriverFor(target_, password_);
    ASSERT_NE(driver_, nullptr);
    driver_->ThreadStart();

    // Tables are per test and backend (direct and HAProxy share a database), and short enough
    // for both servers' 63/64-character limits with a suffix.
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    test = test.substr(0, test.find('/')).substr(0, 32);
    table_ = "t_";
    for (char c : test + "_" + BackendName(GetParam())) {
      table_.push_back(std::isalnum(static_cast<unsigned char>(c))
                           ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                           : '_');
    }

    observer_ = Connect();
    ASSERT_NE(observer_, nullptr);
    ASSERT_EXEC_OK(observer_->ExecuteSql(Sql("DROP TABLE IF EXISTS {t}")));
  }

  void TearDown() override {
    if (observer_ != nullptr) observer_->ExecuteSql(Sql("DROP TABLE IF EXISTS {t}"));
    observer_.reset();
    if (driver_ != nullptr) driver_->ThreadEnd();
  }

  std::unique_ptr<Driver> MakeDriverFor(const dbload::v1::Target& target,
                                        const std::string& password) {
    absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, password, clock_);
    EXPECT_TRUE(driver.ok()) << driver.status();
    return driver.ok() ? *std::move(driver) : nullptr;
  }

  std::unique_ptr<Session> Connect() {
    absl::StatusOr<std::unique_ptr<Session>> session = driver_->Connect();
    EXPECT_TRUE(session.ok()) << session.status();
    return session.ok() ? *std::move(session) : nullptr;
  }

  bool postgres() const {
    return GetParam() == Backend::kPostgres || GetParam() == Backend::kPostgresHaproxy;
  }

  // Statements are written PostgreSQL-style ($1, $2 …; {t} for the test's table) and turned into
  // MySQL's ? placeholders when needed.
  std::string Sql(std::string_view text) const {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text.substr(i, 3) == "{t}") {
        out += table_;
        i += 2;
      } else if (!postgres() && text[i] == '$' && i + 1 < text.size() &&
                 std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
        out.push_back('?');
        while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
      } else {
        out.push_back(text[i]);
      }
    }
    return out;
  }

  // Statement 0 of `session`: one row of CreateTable's table with k = $1.
  void PrepareInsert(Session& session) {
    ASSERT_OK(session.Prepare(
        0,
        {.name = "insert", .sql = Sql("INSERT INTO {t} (k, d, s, n) VALUES ($1, 0, 'x', NULL)")}));
  }

  void CreateTable() {
    ASSERT_EXEC_OK(observer_->ExecuteSql(Sql(
        postgres() ? "CREATE TABLE {t} (id BIGSERIAL PRIMARY KEY, k BIGINT, d DOUBLE PRECISION, "
                     "s TEXT, n TEXT)"
                   : "CREATE TABLE {t} (id BIGINT AUTO_INCREMENT PRIMARY KEY, k BIGINT, d DOUBLE, "
                     "s VARCHAR(200), n VARCHAR(200)) ENGINE=InnoDB")));
  }

  // SELECT count(*) on the observer session (its own connection), with parameters.
  int64_t Count(std::string_view where, std::vector<Value> params = {}) {
    const int id = next_observer_id_++;
    const absl::Status prepared = observer_->Prepare(
        id, {.name = "count", .sql = Sql("SELECT count(*) FROM {t} WHERE " + std::string(where))});
    EXPECT_TRUE(prepared.ok()) << prepared;
    const ExecOutcome outcome = observer_->Execute(id, params, /*capture_first_value=*/true);
    EXPECT_TRUE(outcome.ok()) << outcome.error->message;
    EXPECT_TRUE(outcome.first_value.has_value());
    return outcome.first_value.value_or(-1);
  }

  // The server-side id of a session's connection (backend PID / CONNECTION_ID()).
  int64_t ConnectionId(Session& session, int id) {
    const absl::Status prepared = session.Prepare(
        id, {.name = "whoami",
             .sql = postgres() ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()"});
    EXPECT_TRUE(prepared.ok()) << prepared;
    const ExecOutcome outcome = session.Execute(id, {}, true);
    EXPECT_TRUE(outcome.ok()) << outcome.error->message;
    return outcome.first_value.value_or(-1);
  }

  // Kills a session's connection from the observer, the way an administrator would.
  void KillFromObserver(int64_t connection_id) {
    const std::string sql =
        postgres() ? "SELECT pg_terminate_backend(" + std::to_string(connection_id) + ", 5000)"
                   : "KILL CONNECTION " + std::to_string(connection_id);
    ASSERT_EXEC_OK(observer_->ExecuteSql(sql));
  }

  // A name quoted the server's way (the bulk tables' columns need it: a reserved word, and
  // both quote characters).
  std::string Quoted(std::string_view name) const {
    const char quote = postgres() ? '"' : '`';
    std::string out(1, quote);
    for (char c : name) {
      if (c == quote) out.push_back(quote);
      out.push_back(c);
    }
    out.push_back(quote);
    return out;
  }

  // The bulk insert tests' table: an explicit key (to order by and to violate), a column named
  // by a reserved word and one whose name holds both quote characters. Text is compared byte
  // for byte on MariaDB too (utf8mb4_bin), whatever the server's default character set.
  void CreateBulkTable() {
    ASSERT_EXEC_OK(observer_->ExecuteSql(
        "CREATE TABLE " + table_ + " (id BIGINT PRIMARY KEY, " + Quoted(kBulkColumns[1]) +
        " BIGINT, " + (postgres() ? "d DOUBLE PRECISION, " : "d DOUBLE, ") +
        Quoted(kBulkColumns[3]) +
        (postgres() ? " TEXT)"
                    : " TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin) ENGINE=InnoDB")));
  }

  // Rows first..last of the bulk table: id, then NULL "order", d = id / 4, s = "s<id>".
  static void BulkRows(int64_t first, int64_t last, std::vector<std::string>& texts,
                       std::vector<Value>& values) {
    texts.clear();
    values.clear();
    texts.reserve(last - first + 1);  // values point into texts: no reallocation below
    for (int64_t id = first; id <= last; ++id) {
      texts.push_back("s" + std::to_string(id));
      values.insert(values.end(), {id, std::monostate{}, static_cast<double>(id) / 4,
                                   std::string_view(texts.back())});
    }
  }

  // FetchColumn on the observer, which must succeed.
  std::vector<std::string> Fetch(std::string_view sql, size_t max_rows) {
    absl::StatusOr<std::vector<std::string>> rows = observer_->FetchColumn(Sql(sql), max_rows);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *std::move(rows) : std::vector<std::string>{};
  }

  static inline const std::string kBulkColumns[] = {"id", "order", "d", "s\"`q"};

  SteadyClock clock_;
  dbload::v1::Target target_;
  std::string password_;
  std::unique_ptr<Driver> driver_;
  std::unique_ptr<Session> observer_;
  std::string table_;
  int next_observer_id_ = 100;
};

TEST_P(DbDriverTest, ConnectsAndAnswers) {
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  const ExecOutcome outcome = session->ExecuteSql("SELECT 1");
  ASSERT_EXEC_OK(outcome);
  EXPECT_EQ(outcome.rows, 1);
  EXPECT_EQ(outcome.first_value, 1);
  EXPECT_EQ(driver_->dialect(), postgres() ? Dialect::kPostgreSql : Dialect::kMySql);
  EXPECT_EQ(driver_->capabilities().returning, postgres());
}

TEST_P(DbDriverTest, WrongPasswordIsAnAuthenticationErrorThatDoesNotShowIt) {
  const std::string wrong = "Wr0ng-Pa55word-" + std::to_string(getpid());
  std::unique_ptr<Driver> driver = MakeDriverFor(target_, wrong);
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<std::unique_ptr<Session>> session = driver->Connect();
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kUnauthenticated) << session.status();
  const std::string message(session.status().message());
  EXPECT_THAT(message, HasSubstr("authentication"));
  EXPECT_THAT(message,
              HasSubstr("cannot connect to " + std::string(postgres() ? "postgresql" : "mysql")));
  EXPECT_THAT(message, HasSubstr(" as bench: "));
  EXPECT_THAT(message, Not(HasSubstr(wrong)));
  EXPECT_THAT(message, Not(HasSubstr("Pa55word")));
  EXPECT_THAT(message, Not(HasSubstr(password_)));
}

TEST_P(DbDriverTest, UnreachablePortIsAConnectionError) {
  dbload::v1::Target target = target_;
  target.set_port(ClosedPort());
  std::unique_ptr<Driver> driver = MakeDriverFor(target, password_);
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<std::unique_ptr<Session>> session = driver->Connect();
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), absl::StatusCode::kUnavailable) << session.status();
  EXPECT_THAT(std::string(session.status().message()),
              HasSubstr("127.0.0.1:" + std::to_string(target.port())));
  EXPECT_THAT(std::string(session.status().message()), Not(HasSubstr(password_)));
}

TEST_P(DbDriverTest, UnknownDatabaseIsAClearError) {
  dbload::v1::Target target = target_;
  target.set_database("no_such_db_here");
  std::unique_ptr<Driver> driver = MakeDriverFor(target, password_);
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<std::unique_ptr<Session>> session = driver->Connect();
  ASSERT_FALSE(session.ok());
  const std::string message(session.status().message());
  EXPECT_THAT(message, HasSubstr("no_such_db_here"));
  EXPECT_THAT(message, Not(HasSubstr(password_)));
  if (postgres()) {
    EXPECT_EQ(session.status().code(), absl::StatusCode::kNotFound) << session.status();
    EXPECT_THAT(message, HasSubstr("does not exist"));
  } else {
    // MariaDB checks privileges first: bench may use only its own database.
    EXPECT_THAT(session.status().code(),
                AnyOf(absl::StatusCode::kNotFound, absl::StatusCode::kPermissionDenied))
        << session.status();
  }
}

TEST_P(DbDriverTest, PreparedCrudWithEveryValueType) {
  CreateTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Prepare(0, {.name = "insert",
                                 .sql = Sql(postgres() ? "INSERT INTO {t} (k, d, s, n) VALUES "
                                                         "($1, $2, $3, $4) RETURNING id"
                                                       : "INSERT INTO {t} (k, d, s, n) VALUES "
                                                         "($1, $2, $3, $4)")}));
  ASSERT_OK(session->Prepare(
      1, {.name = "select", .sql = Sql("SELECT id, k, d, s, n FROM {t} WHERE k = $1")}));
  ASSERT_OK(session->Prepare(
      2, {.name = "update", .sql = Sql("UPDATE {t} SET d = $1, s = $2, n = $3 WHERE k = $4")}));
  ASSERT_OK(session->Prepare(3, {.name = "delete", .sql = Sql("DELETE FROM {t} WHERE k = $1")}));
  ASSERT_OK(session->Prepare(4, {.name = "select_all", .sql = Sql("SELECT id FROM {t}")}));

  // Every Value type, and text that would break naive quoting.
  const std::string tricky = "it's a \"quoted\" \\ backslash, ünïcödé; DROP TABLE x; --";
  const double pi = 3.141592653589793;
  const Value first[] = {int64_t{7}, pi, std::string_view(tricky), std::monostate{}};
  ExecOutcome inserted = session->Execute(0, first, /*capture_first_value=*/true);
  ASSERT_EXEC_OK(inserted);
  EXPECT_EQ(inserted.rows, 1);
  ASSERT_TRUE(inserted.first_value.has_value());
  const int64_t first_id = *inserted.first_value;
  EXPECT_GT(first_id, 0);

  const std::string long_text(150, 'x');  // beyond any small-string buffer
  const Value second[] = {int64_t{-9'000'000'000'000}, -0.5, std::string_view(long_text),
                          std::string_view("")};
  inserted = session->Execute(0, second, true);
  ASSERT_EXEC_OK(inserted);
  EXPECT_EQ(inserted.first_value, first_id + 1);
  const Value third[] = {int64_t{7}, 1e300, std::string_view("z"), std::string_view("n")};
  inserted = session->Execute(0, third, false);
  ASSERT_EXEC_OK(inserted);
  EXPECT_FALSE(inserted.first_value.has_value());

  // The database holds exactly what was bound.
  EXPECT_EQ(Count("1 = 1"), 3);
  EXPECT_EQ(Count("k = $1 AND d = $2 AND s = $3 AND n IS NULL",
                  {int64_t{7}, pi, std::string_view(tricky)}),
            1);
  EXPECT_EQ(Count("k = $1 AND d = $2 AND s = $3 AND n = ''",
                  {int64_t{-9'000'000'000'000}, -0.5, std::string_view(long_text)}),
            1);
  EXPECT_EQ(Count("id = $1 AND k = 7", {first_id}), 1);

  // SELECT: every row is read and counted; the first column comes back as first_value.
  const Value minus_nine[] = {int64_t{-9'000'000'000'000}};
  ExecOutcome selected = session->Execute(1, minus_nine, true);
  ASSERT_EXEC_OK(selected);
  EXPECT_EQ(selected.rows, 1);
  EXPECT_EQ(selected.first_value, first_id + 1);
  const Value seven[] = {int64_t{7}};
  selected = session->Execute(1, seven, false);
  ASSERT_EXEC_OK(selected);
  EXPECT_EQ(selected.rows, 2);
  selected = session->Execute(4, {}, false);
  ASSERT_EXEC_OK(selected);
  EXPECT_EQ(selected.rows, 3);
  const Value nobody[] = {int64_t{12345}};
  selected = session->Execute(1, nobody, true);
  ASSERT_EXEC_OK(selected);
  EXPECT_EQ(selected.rows, 0);
  EXPECT_FALSE(selected.first_value.has_value());

  // UPDATE: rows affected, and the new values (NULL included) are in the table.
  const Value update[] = {2.5, std::string_view("updated"), std::monostate{}, int64_t{7}};
  ExecOutcome updated = session->Execute(2, update, false);
  ASSERT_EXEC_OK(updated);
  EXPECT_EQ(updated.rows, 2);
  EXPECT_EQ(Count("k = 7 AND d = 2.5 AND s = 'updated' AND n IS NULL"), 2);

  // DELETE.
  ExecOutcome deleted = session->Execute(3, seven, false);
  ASSERT_EXEC_OK(deleted);
  EXPECT_EQ(deleted.rows, 2);
  EXPECT_EQ(Count("k = 7"), 0);
  deleted = session->Execute(3, seven, false);
  ASSERT_EXEC_OK(deleted);
  EXPECT_EQ(deleted.rows, 0);
  EXPECT_EQ(Count("1 = 1"), 1);
}

TEST_P(DbDriverTest, SyntaxErrorIsFatalWithTheServersCode) {
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  const std::string code = postgres() ? "42601" : "1064";
  const absl::Status prepared = session->Prepare(0, {.name = "bad", .sql = "SELEC 1"});
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.code(), absl::StatusCode::kInvalidArgument) << prepared;
  EXPECT_THAT(std::string(prepared.message()), HasSubstr(code));

  // A statement the server rejected is not registered.
  const ExecOutcome unprepared = session->Execute(0, {}, false);
  ASSERT_FALSE(unprepared.ok());
  EXPECT_EQ(unprepared.error->error_class, ErrorClass::kFatal);

  const ExecOutcome outcome = session->ExecuteSql("SELEC 1");
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kFatal);
  EXPECT_EQ(outcome.error->code, code);
  EXPECT_THAT(outcome.error->message, HasSubstr("SELEC"));

  // The session is still usable.
  ASSERT_EXEC_OK(session->ExecuteSql("SELECT 1"));
}

TEST_P(DbDriverTest, MissingTableIsFatalAtPrepare) {
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  const std::string code = postgres() ? "42P01" : "1146";
  const absl::Status prepared = session->Prepare(
      0, {.name = "missing", .sql = Sql("SELECT * FROM {t}_missing WHERE 1 = $1")});
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.code(), absl::StatusCode::kInvalidArgument) << prepared;
  EXPECT_THAT(std::string(prepared.message()), HasSubstr(code));
  EXPECT_THAT(std::string(prepared.message()), HasSubstr(table_ + "_missing"));

  const ExecOutcome outcome = session->ExecuteSql(Sql("SELECT * FROM {t}_missing"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kFatal);
  EXPECT_EQ(outcome.error->code, code);
  ASSERT_EXEC_OK(session->ExecuteSql("SELECT 1"));
}

TEST_P(DbDriverTest, DeadlockBetweenTwoSessionsIsRetryable) {
  ASSERT_EXEC_OK(observer_->ExecuteSql(Sql(
      postgres() ? "CREATE TABLE {t} (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)"
                 : "CREATE TABLE {t} (id BIGINT PRIMARY KEY, v BIGINT NOT NULL) ENGINE=InnoDB")));
  ASSERT_EXEC_OK(observer_->ExecuteSql(Sql("INSERT INTO {t} (id, v) VALUES (1, 0), (2, 0)")));

  std::unique_ptr<Session> sessions[2] = {Connect(), Connect()};
  for (auto& session : sessions) {
    ASSERT_NE(session, nullptr);
    // A missed deadlock must fail the test, not hang it.
    ASSERT_EXEC_OK(session->ExecuteSql(postgres() ? "SET lock_timeout = '20s'"
                                                  : "SET SESSION innodb_lock_wait_timeout = 20"));
    ASSERT_OK(session->Prepare(
        0, {.name = "bump", .sql = Sql("UPDATE {t} SET v = v + 1 WHERE id = $1")}));
  }

  struct Result {
    std::optional<DbError> error;
    bool committed = false;
  };
  Result results[2];
  std::barrier both_hold_one_lock(2);
  auto run = [&](int index, int64_t first, int64_t second) {
    driver_->ThreadStart();
    Session& session = *sessions[index];
    Result& result = results[index];
    ExecOutcome outcome = session.Begin();
    if (outcome.ok()) {
      const Value first_id[] = {first};
      outcome = session.Execute(0, first_id, false);
    }
    both_hold_one_lock.arrive_and_wait();
    if (outcome.ok()) {
      const Value second_id[] = {second};
      outcome = session.Execute(0, second_id, false);
    }
    if (outcome.ok()) {
      result.committed = session.Commit().ok();
    } else {
      result.error = outcome.error;
      session.Rollback();
    }
    driver_->ThreadEnd();
  };
  std::thread a(run, 0, 1, 2);
  std::thread b(run, 1, 2, 1);
  a.join();
  b.join();

  const std::string code = postgres() ? "40P01" : "1213";
  int deadlocks = 0;
  for (const Result& result : results) {
    if (result.error.has_value()) {
      ++deadlocks;
      EXPECT_EQ(result.error->code, code) << result.error->message;
      EXPECT_EQ(result.error->error_class, ErrorClass::kRetryable) << result.error->message;
      EXPECT_THAT(result.error->message, HasSubstr("eadlock"));
    } else {
      EXPECT_TRUE(result.committed);
    }
  }
  EXPECT_EQ(deadlocks, 1);
  // Only the survivor's two increments are in the table.
  EXPECT_EQ(Count("id = 1 AND v = 1"), 1);
  EXPECT_EQ(Count("id = 2 AND v = 1"), 1);
}

TEST_P(DbDriverTest, ExplicitTransactionsCommitAndRollBack) {
  CreateTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_NO_FATAL_FAILURE(PrepareInsert(*session));
  const Value one[] = {int64_t{1}};
  const Value two[] = {int64_t{2}};

  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->Execute(0, one, false));
  ASSERT_EXEC_OK(session->Execute(0, one, false));
  EXPECT_EQ(Count("k = 1"), 0) << "uncommitted rows are visible to another session";
  ASSERT_EXEC_OK(session->Commit());
  EXPECT_EQ(Count("k = 1"), 2);

  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->Execute(0, two, false));
  EXPECT_EQ(Count("k = 2"), 0);
  ASSERT_EXEC_OK(session->Rollback());
  EXPECT_EQ(Count("k = 2"), 0);

  // Autocommit again after the transaction.
  ASSERT_EXEC_OK(session->Execute(0, two, false));
  EXPECT_EQ(Count("k = 2"), 1);
}

TEST_P(DbDriverTest, CommitAfterAFailedStatementIsReported) {
  if (!postgres()) GTEST_SKIP() << "MySQL rolls back the statement only; COMMIT commits the rest";
  CreateTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->ExecuteSql(Sql("INSERT INTO {t} (k) VALUES (5)")));
  ASSERT_FALSE(session->ExecuteSql("SELEC 1").ok());
  const ExecOutcome committed = session->Commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error->code, "25P02");
  EXPECT_EQ(Count("k = 5"), 0);
  // Back in autocommit, and a following transaction commits normally.
  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->ExecuteSql(Sql("INSERT INTO {t} (k) VALUES (6)")));
  ASSERT_EXEC_OK(session->Commit());
  EXPECT_EQ(Count("k = 6"), 1);
}

// pgbench's \startpipeline: the statements go out without waiting and are answered at the end,
// the first error there ending the transaction, which the session rolls back.
TEST_P(DbDriverTest, PipelinedStatementsAreAnsweredAtTheEndAndTheFirstErrorEndsThem) {
  CreateTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_NO_FATAL_FAILURE(PrepareInsert(*session));
  ASSERT_OK(session->Prepare(1, {.name = "count", .sql = Sql("SELECT count(*) FROM {t}")}));
  if (!postgres()) {
    const std::optional<DbError> refused = session->StartPipeline();
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->error_class, ErrorClass::kFatal);
    EXPECT_THAT(refused->message, HasSubstr("cannot pipeline"));
    ASSERT_EXEC_OK(session->Execute(1, {}, true));  // the session goes on as before
    return;
  }
  ASSERT_OK(session->Prepare(2, {.name = "divide", .sql = "SELECT 1 / $1::int"}));
  const Value one[] = {int64_t{1}};
  const Value two[] = {int64_t{2}};
  const Value zero[] = {int64_t{0}};
  const uint64_t sent_before = session->statements_sent();

  // BEGIN, 3 inserts, a count, COMMIT: each call returns at once, without its answer.
  ASSERT_EQ(session->StartPipeline(), std::nullopt);
  ASSERT_EXEC_OK(session->Begin());
  for (int i = 0; i < 3; ++i) {
    const ExecOutcome inserted = session->Execute(0, one, false);
    ASSERT_EXEC_OK(inserted);
    EXPECT_EQ(inserted.rows, 0) << "answered before the pipeline's end";
  }
  const ExecOutcome counted = session->Execute(1, {}, true);
  ASSERT_EXEC_OK(counted);
  EXPECT_FALSE(counted.first_value.has_value());
  ASSERT_EXEC_OK(session->Commit());
  const ExecOutcome answered = session->EndPipeline();
  ASSERT_EXEC_OK(answered);
  EXPECT_EQ(answered.rows, 3 + 1) << "3 inserted, 1 row counted";
  EXPECT_EQ(Count("k = 1"), 3);
  EXPECT_EQ(session->statements_sent() - sent_before, 6u);

  // A division by zero between two inserts: the error is the pipeline's, the second insert and
  // the COMMIT never ran, and the failed transaction was rolled back (the session is usable).
  ASSERT_EQ(session->StartPipeline(), std::nullopt);
  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->Execute(0, two, false));
  ASSERT_EXEC_OK(session->Execute(2, zero, false));
  ASSERT_EXEC_OK(session->Execute(0, two, false));
  ASSERT_EXEC_OK(session->Commit());
  const ExecOutcome failed = session->EndPipeline();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error->code, "22012");  // division_by_zero
  EXPECT_EQ(failed.error->error_class, ErrorClass::kFatal);
  EXPECT_EQ(Count("k = 2"), 0);
  ASSERT_EXEC_OK(session->Execute(0, two, false));
  EXPECT_EQ(Count("k = 2"), 1) << "autocommit again, outside any pipeline";

  // Without BEGIN the statements up to the sync are one implicit transaction: the insert before
  // the error is undone with it.
  const Value three[] = {int64_t{3}};
  ASSERT_EQ(session->StartPipeline(), std::nullopt);
  ASSERT_EXEC_OK(session->Execute(0, three, false));
  ASSERT_EXEC_OK(session->Execute(2, zero, false));
  EXPECT_FALSE(session->EndPipeline().ok());
  EXPECT_EQ(Count("k = 3"), 0);
  EXPECT_TRUE(session->EndPipeline().ok()) << "outside a pipeline it does nothing";
}

// A pipeline of 20 MB each way, more than the sockets' buffers hold: the server stops reading
// while its answers wait unread, so they must be read while the rest is still being sent. On a
// thread and on a fiber (whose waits go through its loop).
TEST_P(DbDriverTest, APipelineLargerThanTheSocketBuffersEnds) {
  if (!postgres()) GTEST_SKIP() << "PostgreSQL only";
  const auto pipeline = [&] {
    std::unique_ptr<Session> session = Connect();
    ASSERT_NE(session, nullptr);
    ASSERT_OK(session->Prepare(0, {.name = "echo", .sql = "SELECT $1::text"}));
    const std::string kilobyte(1000, 'x');
    const Value echoed[] = {std::string_view(kilobyte)};
    constexpr int kStatements = 20'000;
    ASSERT_EQ(session->StartPipeline(), std::nullopt);
    for (int i = 0; i < kStatements; ++i) ASSERT_EXEC_OK(session->Execute(0, echoed, false));
    const ExecOutcome answered = session->EndPipeline();
    ASSERT_EXEC_OK(answered);
    EXPECT_EQ(answered.rows, kStatements);
    ASSERT_EXEC_OK(session->Execute(0, echoed, false));
  };
  pipeline();
  bool done = false;
  {
    FiberLoop loop(clock_);
    loop.Spawn([&] {
      pipeline();
      done = true;
    });
  }
  EXPECT_TRUE(done);
}

// A connection killed between two pipelines fails the next one with a connection error (found
// at its end: sending to a closed connection is not an error yet); the pipeline after that
// reconnects, prepares again, and commits.
TEST_P(DbDriverTest, PipelineOnAKilledConnectionIsAConnectionErrorAndTheNextReconnects) {
  if (!postgres()) GTEST_SKIP() << "PostgreSQL only";
  CreateTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_NO_FATAL_FAILURE(PrepareInsert(*session));
  const int64_t pid = ConnectionId(*session, 1);
  KillFromObserver(pid);
  const Value four[] = {int64_t{4}};
  ASSERT_EQ(session->StartPipeline(), std::nullopt);
  session->Begin();
  session->Execute(0, four, false);
  session->Commit();
  const ExecOutcome lost = session->EndPipeline();
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error->error_class, ErrorClass::kConnection) << lost.error->message;
  EXPECT_EQ(Count("k = 4"), 0);

  ASSERT_EQ(session->StartPipeline(), std::nullopt);
  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->Execute(0, four, false));
  ASSERT_EXEC_OK(session->Commit());
  ASSERT_EXEC_OK(session->EndPipeline());
  EXPECT_EQ(Count("k = 4"), 1);
  EXPECT_NE(ConnectionId(*session, 1), pid);
}

TEST_P(DbDriverTest, KilledConnectionIsAConnectionErrorAndReconnectPreparesAgain) {
  CreateTable();
  ASSERT_EXEC_OK(observer_->ExecuteSql(Sql("INSERT INTO {t} (k) VALUES (1), (1), (2)")));
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Prepare(
      0, {.name = "count_k", .sql = Sql("SELECT count(*) FROM {t} WHERE k = $1")}));
  ASSERT_OK(session->Prepare(1, {.name = "insert", .sql = Sql("INSERT INTO {t} (k) VALUES ($1)")}));
  const int64_t first_connection = ConnectionId(*session, 2);
  ASSERT_GT(first_connection, 0);
  const Value one[] = {int64_t{1}};
  ASSERT_EQ(session->Execute(0, one, true).first_value, 2);

  // Killed while idle: the next statement fails as a connection error …
  KillFromObserver(first_connection);
  ExecOutcome outcome = session->Execute(0, one, true);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kConnection)
      << "[" << outcome.error->code << "] " << outcome.error->message;
  if (postgres()) {
    EXPECT_THAT(outcome.error->code, AnyOf("08006", "57P01"));
  } else {
    EXPECT_THAT(outcome.error->code, AnyOf("2006", "2013", "1927"));
  }
  EXPECT_THAT(outcome.error->message, Not(HasSubstr(password_)));

  // … and after Reconnect() every statement is prepared again, on a new server connection.
  ASSERT_OK(session->Reconnect());
  outcome = session->Execute(0, one, true);
  ASSERT_EXEC_OK(outcome);
  EXPECT_EQ(outcome.first_value, 2);
  const Value three[] = {int64_t{3}};
  ASSERT_EXEC_OK(session->Execute(1, three, false));
  EXPECT_EQ(Count("k = 3"), 1);
  const int64_t second_connection = ConnectionId(*session, 2);
  EXPECT_NE(second_connection, first_connection);

  // Without an explicit Reconnect() the session reconnects at its next call.
  KillFromObserver(second_connection);
  outcome = session->Execute(1, three, false);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kConnection);
  outcome = session->Execute(1, three, false);
  ASSERT_EXEC_OK(outcome);
  EXPECT_EQ(Count("k = 3"), 2);
}

// A target's isolation level and session statements start every connection, a reconnected one
// too, and are not counted as the load's statements; a wrong one fails the connection, naming
// the statement.
TEST_P(DbDriverTest, SessionSettingsStartEveryConnectionAndAWrongOneIsNamed) {
  dbload::v1::Target target = target_;
  target.set_isolation(dbload::v1::SERIALIZABLE);
  target.add_session(postgres() ? "SET lock_timeout = '1234ms'"
                                : "SET SESSION innodb_lock_wait_timeout = 17");
  std::unique_ptr<Driver> driver = MakeDriverFor(target, password_);
  ASSERT_NE(driver, nullptr);
  absl::StatusOr<std::unique_ptr<Session>> opened = driver->Connect();
  ASSERT_OK(opened.status());
  Session& session = **opened;
  EXPECT_EQ(session.statements_sent(), 0u);
  const std::string settings =
      postgres() ? "SELECT current_setting('transaction_isolation') || ' ' || "
                   "current_setting('lock_timeout')"
                 : "SELECT CONCAT(@@tx_isolation, ' ', @@innodb_lock_wait_timeout)";
  const std::string expected = postgres() ? "serializable 1234ms" : "SERIALIZABLE 17";
  absl::StatusOr<std::vector<std::string>> read = session.FetchColumn(settings, 1);
  ASSERT_OK(read.status());
  EXPECT_THAT(*read, ElementsAre(expected));
  const uint64_t sent = session.statements_sent();
  ASSERT_OK(session.Reconnect());
  EXPECT_EQ(session.statements_sent(), sent);
  read = session.FetchColumn(settings, 1);
  ASSERT_OK(read.status());
  EXPECT_THAT(*read, ElementsAre(expected));

  target.add_session("SET no_such_setting_here = 1");
  std::unique_ptr<Driver> wrong = MakeDriverFor(target, password_);
  ASSERT_NE(wrong, nullptr);
  const absl::Status refused = wrong->Connect().status();
  EXPECT_THAT(refused.message(), HasSubstr("session set-up `SET no_such_setting_here = 1`"));
}

TEST_P(DbDriverTest, ConnectionLostInsideATransactionIsNotPaperedOver) {
  CreateTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ASSERT_OK(session->Prepare(0, {.name = "insert", .sql = Sql("INSERT INTO {t} (k) VALUES ($1)")}));
  const int64_t connection = ConnectionId(*session, 1);
  const Value one[] = {int64_t{1}};

  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->Execute(0, one, false));
  KillFromObserver(connection);
  ExecOutcome outcome = session->Execute(0, one, false);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kConnection);
  // The rest of the transaction must not run in autocommit on a new connection …
  outcome = session->Execute(0, one, false);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kConnection);
  EXPECT_THAT(outcome.error->message, HasSubstr("inside a transaction"));
  // … nor COMMIT "succeed".
  const ExecOutcome committed = session->Commit();
  ASSERT_FALSE(committed.ok());
  EXPECT_EQ(committed.error->error_class, ErrorClass::kConnection);
  EXPECT_EQ(Count("k = 1"), 0);

  // The same with Rollback() ending the lost transaction; then the session goes on.
  const int64_t second_connection = ConnectionId(*session, 1);
  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->Execute(0, one, false));
  KillFromObserver(second_connection);
  EXPECT_FALSE(session->Execute(0, one, false).ok());
  ASSERT_EXEC_OK(session->Rollback());
  ASSERT_EXEC_OK(session->Execute(0, one, false));
  EXPECT_EQ(Count("k = 1"), 1);
}

TEST_P(DbDriverTest, UnknownStatementOrWrongParameterCountIsFatal) {
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  ExecOutcome outcome = session->Execute(42, {}, false);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kFatal);

  ASSERT_OK(session->Prepare(0, {.name = "add", .sql = Sql("SELECT $1 + 1")}));
  const Value two[] = {int64_t{2}};
  outcome = session->Execute(0, two, true);
  ASSERT_EXEC_OK(outcome);
  EXPECT_EQ(outcome.first_value, 3);
  outcome = session->Execute(0, {}, true);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kFatal);
  EXPECT_THAT(outcome.error->message, HasSubstr("takes 1 parameters, got 0"));
  const Value too_many[] = {int64_t{2}, int64_t{3}};
  outcome = session->Execute(0, too_many, true);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error->error_class, ErrorClass::kFatal);
  // Nothing was sent: the session is fine.
  const Value four[] = {int64_t{4}};
  outcome = session->Execute(0, four, true);
  ASSERT_EXEC_OK(outcome);
  EXPECT_EQ(outcome.first_value, 5);
}

TEST_P(DbDriverTest, BulkInsertLoadsEveryValueByteExact) {
  CreateBulkTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);

  // Rows 1..12 hold each awkward string alone (a lone "\N" is not NULL, a lone "\." is not
  // COPY's end marker), later rows hold it after their id; every 11th later row is NULL.
  const std::string specials[] = {
      "tab\there",     "new\nline", "cr\rreturn\r\n", "back\\slash",
      "\\N",           "\\.",       "it's",           "back`tick",
      "double\"quote", "",          "plain",          "ünïcödé ✓ 日本語"};
  constexpr int64_t kSpecials = std::size(specials);
  const double special_doubles[] = {1e300, -2.5e-300, 0.1, std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::denorm_min()};
  constexpr int64_t kRows = 10'000;
  std::vector<std::optional<std::string>> strings(kRows + 1);
  std::vector<std::string> expected_s, expected_k;
  int64_t null_k = 0, null_d = 0, null_s = 0;
  for (int64_t id = 1; id <= kRows; ++id) {
    if (id <= kSpecials) {
      strings[id] = specials[id - 1];
    } else if (id % 11 != 0) {
      strings[id] = std::to_string(id) + specials[id % kSpecials];
    }
  }
  std::vector<Value> values;
  values.reserve(kRows * 4);
  for (int64_t id = 1; id <= kRows; ++id) {
    Value k = std::monostate{};
    if (id == 1) {
      k = std::numeric_limits<int64_t>::min();
    } else if (id == 2) {
      k = std::numeric_limits<int64_t>::max();
    } else if (id % 13 != 0) {
      k = (id % 2 == 0 ? 1 : -1) * id * int64_t{922'337'203'685'477};
    }
    Value d = std::monostate{};
    if (id <= static_cast<int64_t>(std::size(special_doubles))) {
      d = special_doubles[id - 1];
    } else if (id % 7 != 0) {
      d = static_cast<double>(id) / 7;  // 17 significant digits to survive
    }
    const Value s = strings[id] ? Value(std::string_view(*strings[id])) : Value(std::monostate{});
    values.insert(values.end(), {id, k, d, s});
    expected_k.push_back(std::holds_alternative<int64_t>(k) ? std::to_string(std::get<int64_t>(k))
                                                            : "");
    expected_s.push_back(strings[id] ? "=" + *strings[id] : "null");
    null_k += std::holds_alternative<std::monostate>(k);
    null_d += std::holds_alternative<std::monostate>(d);
    null_s += !strings[id].has_value();
  }

  const Nanos start = clock_.Now();
  const ExecOutcome loaded = session->BulkInsert(table_, kBulkColumns, values);
  const Nanos took = clock_.Now() - start;
  ASSERT_EXEC_OK(loaded);
  EXPECT_EQ(loaded.rows, kRows);
  std::cout << "[ bulk     ] " << BackendName(GetParam()) << ": " << kRows << " rows in "
            << took / 1'000'000 << " ms, " << kRows * 1'000'000'000 / std::max<Nanos>(took, 1)
            << " rows/s\n";

  // What the database holds, seen from another session: every string byte for byte (and NULL
  // apart from ""), every integer, every double to the last bit.
  EXPECT_EQ(Count("1 = 1"), kRows);
  const std::string s = Quoted(kBulkColumns[3]);
  const std::vector<std::string> got_s =
      Fetch("SELECT CASE WHEN " + s + " IS NULL THEN 'null' ELSE CONCAT('=', " + s +
                ") END FROM {t} " + "ORDER BY id",
            kRows);
  ASSERT_EQ(got_s.size(), expected_s.size());
  for (size_t i = 0; i < got_s.size(); ++i) {
    ASSERT_EQ(got_s[i], expected_s[i]) << "string of id " << i + 1;
  }
  const std::vector<std::string> got_k =
      Fetch("SELECT " + Quoted(kBulkColumns[1]) + " FROM {t} ORDER BY id", kRows);
  ASSERT_EQ(got_k.size(), expected_k.size());
  for (size_t i = 0; i < got_k.size(); ++i) {
    ASSERT_EQ(got_k[i], expected_k[i]) << "integer of id " << i + 1;
  }
  EXPECT_EQ(Count(Quoted(kBulkColumns[1]) + " IS NULL"), null_k);
  EXPECT_EQ(Count(s + " IS NULL"), null_s);
  EXPECT_EQ(Count("d IS NULL"), null_d);
  // The server divides in double precision as we did: equal means the same bits.
  EXPECT_EQ(Count(postgres() ? "id > 5 AND d <> CAST(id AS DOUBLE PRECISION) / 7"
                             : "id > 5 AND d <> CAST(id AS DOUBLE) / 7"),
            0);
  for (int64_t id = 1; id <= static_cast<int64_t>(std::size(special_doubles)); ++id) {
    EXPECT_EQ(Count("id = $1 AND d = $2", {id, special_doubles[id - 1]}), 1) << "double of " << id;
  }
  // Bound parameters (not text read back) agree on the awkward strings.
  EXPECT_EQ(Count(s + " = $1", {std::string_view("\\N")}), 1);
  EXPECT_EQ(Count(s + " = $1", {std::string_view("")}), 1);
  EXPECT_EQ(Count(s + " = $1", {std::string_view(specials[kSpecials - 1])}), 1);
}

TEST_P(DbDriverTest, BulkInsertFollowsTheTransaction) {
  CreateBulkTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  std::vector<std::string> texts;
  std::vector<Value> values;
  BulkRows(1, 100, texts, values);

  ASSERT_EXEC_OK(session->Begin());
  ExecOutcome loaded = session->BulkInsert(table_, kBulkColumns, values);
  ASSERT_EXEC_OK(loaded);
  EXPECT_EQ(loaded.rows, 100);
  EXPECT_EQ(Count("1 = 1"), 0) << "uncommitted rows are visible to another session";
  ASSERT_EXEC_OK(session->Rollback());
  EXPECT_EQ(Count("1 = 1"), 0);

  ASSERT_EXEC_OK(session->Begin());
  ASSERT_EXEC_OK(session->BulkInsert(table_, kBulkColumns, values));
  ASSERT_EXEC_OK(session->Commit());
  EXPECT_EQ(Count("1 = 1"), 100);

  // Autocommit: the rows are there as soon as the call returns.
  BulkRows(101, 150, texts, values);
  loaded = session->BulkInsert(table_, kBulkColumns, values);
  ASSERT_EXEC_OK(loaded);
  EXPECT_EQ(loaded.rows, 50);
  EXPECT_EQ(Count("1 = 1"), 150);
  EXPECT_EQ(Count("id = 150 AND d = 37.5 AND " + Quoted(kBulkColumns[3]) + " = 's150'"), 1);

  // No rows: nothing is sent (the table does not even exist).
  loaded = session->BulkInsert(table_ + "_missing", kBulkColumns, {});
  ASSERT_EXEC_OK(loaded);
  EXPECT_EQ(loaded.rows, 0);

  // A shape that is not whole rows is refused before anything is sent.
  loaded = session->BulkInsert(table_, {}, values);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error->error_class, ErrorClass::kFatal);
  EXPECT_THAT(loaded.error->message, HasSubstr("no columns"));
  loaded = session->BulkInsert(table_, kBulkColumns, std::span(values).first(6));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error->error_class, ErrorClass::kFatal);
  EXPECT_THAT(loaded.error->message, HasSubstr("6 values are not whole rows of 4 columns"));
  EXPECT_EQ(Count("1 = 1"), 150);
}

TEST_P(DbDriverTest, BulkInsertErrorsAreClassifiedAndLeaveTheSessionUsable) {
  CreateBulkTable();
  ASSERT_EXEC_OK(observer_->ExecuteSql(Sql("INSERT INTO {t} (id) VALUES (50)")));
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  std::vector<std::string> texts;
  std::vector<Value> values;
  BulkRows(1, 100, texts, values);

  ExecOutcome loaded = session->BulkInsert(table_, kBulkColumns, values);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error->code, postgres() ? "23505" : "1062") << loaded.error->message;
  EXPECT_EQ(loaded.error->error_class, ErrorClass::kFatal);
  EXPECT_THAT(loaded.error->message, Not(HasSubstr(password_)));
  EXPECT_EQ(Count("1 = 1"), 1) << "a failed bulk insert loaded part of its rows";

  loaded = session->BulkInsert(table_ + "_missing", kBulkColumns, values);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error->code, postgres() ? "42P01" : "1146") << loaded.error->message;
  EXPECT_EQ(loaded.error->error_class, ErrorClass::kFatal);

  // The same connection goes on: plain SQL, and a bulk insert that fits.
  const int64_t connection = ConnectionId(*session, 0);
  ASSERT_EXEC_OK(session->ExecuteSql("SELECT 1"));
  BulkRows(45, 55, texts, values);
  ASSERT_FALSE(session->BulkInsert(table_, kBulkColumns, values).ok());
  BulkRows(101, 110, texts, values);
  loaded = session->BulkInsert(table_, kBulkColumns, values);
  ASSERT_EXEC_OK(loaded);
  EXPECT_EQ(loaded.rows, 10);
  EXPECT_EQ(Count("1 = 1"), 11);
  EXPECT_EQ(ConnectionId(*session, 1), connection);
}

TEST_P(DbDriverTest, FetchColumnReturnsTheRowsInOrderWithNullAsEmpty) {
  CreateBulkTable();
  std::unique_ptr<Session> session = Connect();
  ASSERT_NE(session, nullptr);
  const Value values[] = {int64_t{1}, std::monostate{}, 1.0, std::string_view("c"),
                          int64_t{2}, std::monostate{}, 2.0, std::monostate{},
                          int64_t{3}, std::monostate{}, 3.0, std::string_view("a\tb"),
                          int64_t{4}, std::monostate{}, 4.0, std::string_view("")};
  ASSERT_EXEC_OK(session->BulkInsert(table_, kBulkColumns, values));
  const std::string select = Sql("SELECT " + Quoted(kBulkColumns[3]) + " FROM {t} ORDER BY d DESC");

  absl::StatusOr<std::vector<std::string>> rows = session->FetchColumn(select, 4);
  ASSERT_OK(rows.status());
  EXPECT_THAT(*rows, ::testing::ElementsAre("", "a\tb", "", "c"));
  rows = session->FetchColumn(Sql("SELECT id FROM {t} WHERE id > 100"), 0);
  ASSERT_OK(rows.status());
  EXPECT_TRUE(rows->empty());

  rows = session->FetchColumn(select, 3);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr("limit of 3"));

  rows = session->FetchColumn(Sql("SELECT nothing FROM {t}"), 10);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr(postgres() ? "42703" : "1054"));
  // The session is still usable.
  rows = session->FetchColumn("SELECT 42", 1);
  ASSERT_OK(rows.status());
  EXPECT_THAT(*rows, ::testing::ElementsAre("42"));
}

INSTANTIATE_TEST_SUITE_P(AllBackends, DbDriverTest,
                         ::testing::Values(Backend::kPostgres, Backend::kPostgresHaproxy,
                                           Backend::kMariaDb, Backend::kMariaDbHaproxy,
                                           Backend::kMariaDbConnectorCpp),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return BackendName(info.param);
                         });

// Unix sockets (no HAProxy there).
TEST(DbDriverSocketTest, PostgresOverUnixSocket) {
  TestServers& servers = TestServersEnvironment::Servers();
  const dbload::v1::Target target = servers.PostgresSocketTarget();
  absl::StatusOr<std::string> password = PasswordOf(target);
  ASSERT_OK(password.status());
  SteadyClock clock;
  absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, *password, clock);
  ASSERT_OK(driver.status());
  absl::StatusOr<std::unique_ptr<Session>> session = (*driver)->Connect();
  ASSERT_OK(session.status());
  const ExecOutcome outcome = (*session)->ExecuteSql("SELECT count(*) FROM pg_stat_activity");
  ASSERT_EXEC_OK(outcome);
  EXPECT_GT(outcome.first_value.value_or(0), 0);
}

// The event loops' sessions of both servers: PostgreSQL through libpq's asynchronous API,
// MariaDB through Connector/C's non-blocking one.
class DbDriverFiberTest : public ::testing::TestWithParam<Backend> {
 protected:
  bool postgres() const { return GetParam() == Backend::kPostgres; }
  dbload::v1::Target Target() const {
    TestServers& servers = TestServersEnvironment::Servers();
    return postgres() ? servers.PostgresTarget() : servers.MariaDbTarget();
  }
};

// On an event loop a connection is opened without blocking the loop: while one fiber waits for
// a server that accepts the connection and never answers (as one behind a dropped link would),
// another connects to the real server, prepares and runs its statements; the first gives up at
// its connect timeout, which dbload keeps itself over the whole connect (libpq's non-blocking
// calls ignore it).
TEST_P(DbDriverFiberTest, ConnectOnAFiberLetsTheLoopGoOnAndGivesUpInTime) {
  const dbload::v1::Target healthy = Target();
  absl::StatusOr<std::string> password = PasswordOf(healthy);
  ASSERT_OK(password.status());
  // Listens (the kernel completes connections into its backlog) and never reads or writes.
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(silent, 8), 0);
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&address), &length), 0);
  dbload::v1::Target stuck = healthy;
  stuck.set_port(ntohs(address.sin_port));
  stuck.set_connect_timeout_ns(kSecond);

  SteadyClock clock;
  absl::StatusOr<std::unique_ptr<Driver>> stuck_driver = MakeDriver(stuck, *password, clock);
  absl::StatusOr<std::unique_ptr<Driver>> healthy_driver = MakeDriver(healthy, *password, clock);
  ASSERT_OK(stuck_driver.status());
  ASSERT_OK(healthy_driver.status());
  absl::Status gave_up;
  Nanos gave_up_after = 0, healthy_done_after = -1;
  int64_t answers = 0;
  const Nanos start = clock.Now();
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      gave_up = (*stuck_driver)->Connect().status();
      gave_up_after = clock.Now() - start;
    });
    loop.Spawn([&] {
      absl::StatusOr<std::unique_ptr<Session>> session = (*healthy_driver)->Connect();
      ASSERT_OK(session.status());
      ASSERT_OK((*session)->Prepare(
          0, {.name = "one",
              .sql = postgres() ? "SELECT $1::int + 1" : "SELECT CAST(? AS SIGNED) + 1"}));
      for (int i = 0; i < 20; ++i) {
        const std::vector<Value> values{int64_t{i}};
        const ExecOutcome outcome = (*session)->Execute(0, values, true);
        ASSERT_EXEC_OK(outcome);
        answers += outcome.first_value.value_or(0);
      }
      healthy_done_after = clock.Now() - start;
    });
  }
  close(silent);
  EXPECT_EQ(gave_up.code(), absl::StatusCode::kUnavailable) << gave_up;
  if (postgres()) {
    EXPECT_THAT(std::string(gave_up.message()), HasSubstr("timeout expired"));
  }
  EXPECT_GE(gave_up_after, kSecond);
  EXPECT_LT(gave_up_after, 3 * kSecond);
  EXPECT_EQ(answers, 20 * 21 / 2);
  EXPECT_GE(healthy_done_after, 0);
  EXPECT_LT(healthy_done_after, gave_up_after) << "the stuck connect held the loop";
}

// A connection killed while its fiber waits for an answer gets its error and is closed at
// once. Arriving before the loop looks (another fiber holds it), both make one edge of the
// edge-triggered watch: the session must see the close after reading the error, not wait for an
// edge that never comes (which hung a PostgreSQL restart test one time in five).
TEST_P(DbDriverFiberTest, ConnectionKilledMidQueryEndsTheWaitWithAConnectionError) {
  const dbload::v1::Target target = Target();
  absl::StatusOr<std::string> password = PasswordOf(target);
  ASSERT_OK(password.status());
  SteadyClock clock;
  absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, *password, clock);
  ASSERT_OK(driver.status());
  absl::StatusOr<std::unique_ptr<Session>> killer = (*driver)->Connect();  // on this thread
  ASSERT_OK(killer.status());

  std::atomic<int64_t> backend{0};
  std::atomic<bool> holding = false, terminated = false, ended = false;
  ExecOutcome sleep_outcome;
  std::thread watchdog;
  {
    FiberLoop loop(clock);
    loop.Spawn([&] {
      absl::StatusOr<std::unique_ptr<Session>> session = (*driver)->Connect();
      ASSERT_OK(session.status());
      const ExecOutcome pid =
          (*session)->ExecuteSql(postgres() ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()");
      ASSERT_EXEC_OK(pid);
      backend = pid.first_value.value_or(0);
      sleep_outcome =
          (*session)->ExecuteSql(postgres() ? "SELECT pg_sleep(30)" : "SELECT SLEEP(30)");
      ended = true;
    });
    loop.Spawn([&] {
      while (backend == 0) FiberSleepUntil(clock.Now() + kMillisecond);
      FiberSleepUntil(clock.Now() + 100 * kMillisecond);  // the other fiber is in its wait
      // Holds the loop, without a wait, until the error and the close have both arrived.
      holding = true;
      while (!terminated) {
      }
      for (const Nanos until = clock.Now() + 100 * kMillisecond; clock.Now() < until;) {
      }
    });
    while (!holding) clock.SleepUntil(clock.Now() + kMillisecond);
    ASSERT_EXEC_OK((*killer)->ExecuteSql(
        postgres() ? absl::StrCat("SELECT pg_terminate_backend(", backend.load(), ")")
                   : absl::StrCat("KILL CONNECTION ", backend.load())));
    terminated = true;
    // A lost wake-up would hang the loop's destructor for good: fail instead, loudly.
    watchdog = std::thread([&] {
      for (int i = 0; i < 100 && !ended; ++i) clock.SleepUntil(clock.Now() + 100 * kMillisecond);
      if (!ended) {
        std::fprintf(stderr, "FAILED: the fiber never woke after its connection was killed\n");
        std::_Exit(1);
      }
    });
  }
  watchdog.join();
  ASSERT_FALSE(sleep_outcome.ok());
  EXPECT_EQ(sleep_outcome.error->error_class, ErrorClass::kConnection)
      << sleep_outcome.error->message;
}

// Many MariaDB connections on one loop, each running its statements while the others wait:
// every answer is its own session's (a mix-up of sockets or of the library's suspended calls
// would show as another connection's id or a wrong sum).
TEST(DbDriverFiberMariaDbTest, ManyConnectionsOnOneLoopEachGetTheirOwnAnswers) {
  TestServers& servers = TestServersEnvironment::Servers();
  const dbload::v1::Target target = servers.MariaDbTarget();
  absl::StatusOr<std::string> password = PasswordOf(target);
  ASSERT_OK(password.status());
  SteadyClock clock;
  absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, *password, clock);
  ASSERT_OK(driver.status());
  constexpr int kConnections = 16, kStatements = 50;
  std::vector<int64_t> ids(kConnections, 0), sums(kConnections, 0);
  std::vector<int> mismatches(kConnections, 0);
  {
    FiberLoop loop(clock);
    for (int c = 0; c < kConnections; ++c) {
      loop.Spawn([&, c] {
        absl::StatusOr<std::unique_ptr<Session>> session = (*driver)->Connect();
        ASSERT_OK(session.status());
        ASSERT_OK((*session)->Prepare(
            0, {.name = "id", .sql = "SELECT CONNECTION_ID() + 0 * CAST(? AS SIGNED)"}));
        ASSERT_OK((*session)->Prepare(1, {.name = "add", .sql = "SELECT CAST(? AS SIGNED) + 1"}));
        const ExecOutcome id = (*session)->ExecuteSql("SELECT CONNECTION_ID()");
        ASSERT_EXEC_OK(id);
        ids[c] = id.first_value.value_or(-1);
        for (int i = 0; i < kStatements; ++i) {
          const std::vector<Value> values{int64_t{i}};
          const ExecOutcome mine = (*session)->Execute(0, values, true);
          ASSERT_EXEC_OK(mine);
          if (mine.first_value != ids[c]) ++mismatches[c];
          const ExecOutcome added = (*session)->Execute(1, values, true);
          ASSERT_EXEC_OK(added);
          sums[c] += added.first_value.value_or(0);
        }
      });
    }
  }
  for (int c = 0; c < kConnections; ++c) {
    EXPECT_GT(ids[c], 0) << "connection " << c;
    EXPECT_EQ(mismatches[c], 0) << "connection " << c << " read another connection's answer";
    EXPECT_EQ(sums[c], kStatements * (kStatements + 1) / 2) << "connection " << c;
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "two fibers, one connection";
}

INSTANTIATE_TEST_SUITE_P(BothServers, DbDriverFiberTest,
                         ::testing::Values(Backend::kPostgres, Backend::kMariaDb),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return BackendName(info.param);
                         });

TEST(DbDriverSocketTest, MariaDbOverUnixSocket) {
  TestServers& servers = TestServersEnvironment::Servers();
  const dbload::v1::Target target = servers.MariaDbSocketTarget();
  absl::StatusOr<std::string> password = PasswordOf(target);
  ASSERT_OK(password.status());
  SteadyClock clock;
  absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, *password, clock);
  ASSERT_OK(driver.status());
  (*driver)->ThreadStart();
  absl::StatusOr<std::unique_ptr<Session>> session = (*driver)->Connect();
  ASSERT_OK(session.status());
  const ExecOutcome outcome = (*session)->ExecuteSql("SELECT 7");
  ASSERT_EXEC_OK(outcome);
  EXPECT_EQ(outcome.first_value, 7);
  session->reset();
  (*driver)->ThreadEnd();
}

TEST(DriverFactoryTest, UnknownDriverNamesTheValueAndTheChoices) {
  SteadyClock clock;
  dbload::v1::Target target;
  target.set_driver("oracle");
  absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, "", clock);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(driver.status().message()), HasSubstr("\"oracle\""));
  EXPECT_THAT(std::string(driver.status().message()), HasSubstr("postgresql, mysql, noop"));
}

TEST(DriverFactoryTest, NoopDriverFromTarget) {
  SimulatedClock clock;
  dbload::v1::Target target;
  target.set_driver("noop");
  target.mutable_noop()->set_fixed_ns(1000);
  absl::StatusOr<std::unique_ptr<Driver>> driver = MakeDriver(target, "", clock);
  ASSERT_OK(driver.status());
  EXPECT_EQ((*driver)->dialect(), Dialect::kNoop);
  absl::StatusOr<std::unique_ptr<Session>> session = (*driver)->Connect();
  ASSERT_OK(session.status());
  const ExecOutcome outcome = (*session)->Execute(0, {}, true);
  EXPECT_TRUE(outcome.ok());
  EXPECT_EQ(clock.Now(), 1000);  // the fixed latency was waited on the given clock
}

TEST(DriverFactoryTest, ConnectionOptionsComeFromTheTarget) {
  dbload::v1::Target target;
  target.set_driver("postgresql");
  target.set_host("db.example");
  target.set_port(6543);
  target.set_socket("/run/pg");
  target.set_user("u");
  target.set_database("d");
  target.set_connect_timeout_ns(3'000'000'000);
  const ConnectionOptions options = ConnectionOptionsOf(target);
  EXPECT_EQ(options.host, "db.example");
  EXPECT_EQ(options.port, 6543u);
  EXPECT_EQ(options.socket, "/run/pg");
  EXPECT_EQ(options.user, "u");
  EXPECT_EQ(options.database, "d");
  EXPECT_EQ(options.connect_timeout_ns, 3'000'000'000);
  EXPECT_TRUE(options.password.empty());
}

}  // namespace
}  // namespace dbload::db

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb", "haproxy"});
}
