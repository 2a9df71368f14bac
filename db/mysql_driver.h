#ifndef DBLOAD_DB_MYSQL_DRIVER_H_
#define DBLOAD_DB_MYSQL_DRIVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "db/driver.h"
#include "db/error_classifier.h"

namespace sql::mysql {
class MySQL_Driver;
}  // namespace sql::mysql

namespace dbload::db {

// MySQL / MariaDB through Connector/C++ 1.1 (legacy JDBC-like API, libmariadb underneath), over
// TCP (tcp://host:port) or a unix socket file (options.socket, which wins over host): a plan's
// choice (target.mysql_client: connector_cpp) beside the default MySqlConnectorCDriver, which
// costs less client CPU per statement and also runs on event loops.
//
// Statements are server-side prepared statements (errors show at Prepare). SELECT-like
// statements are stored client-side in full, so the server's work is complete, and `rows` is
// the number of rows read; other statements report affected rows. capture_first_value gives the
// first column of the first row, or LAST_INSERT_ID() (one extra prepared round trip) for
// statements without a result set. Autocommit is on; Begin/Commit/Rollback send START
// TRANSACTION / COMMIT / ROLLBACK as plain statements (one round trip each; setAutoCommit would
// cost two more per transaction).
//
// Errors are classified by server/client errno (as text) with the driver's ErrorClassifier; the
// message keeps the SQLSTATE. After a connection error the session reconnects by itself at its
// next call (or on Reconnect()) and prepares its statements again; a transaction that was open
// then is handled as in PostgreSqlDriver (calls fail until Rollback()/Begin()/Reconnect()).
// Execute refuses a parameter count that differs from the statement's (Connector/C++ would
// silently reuse the previous call's values).
//
// Construct the driver before starting threads (it fetches Connector/C++'s driver instance);
// every thread calls ThreadStart() before using a session and ThreadEnd() when done.
class MySqlDriver final : public Driver {
 public:
  explicit MySqlDriver(ConnectionOptions options);
  MySqlDriver(ConnectionOptions options, ErrorClassifier classifier);

  Dialect dialect() const override { return Dialect::kMySql; }
  Capabilities capabilities() const override { return {.returning = false}; }
  // Errors: kUnauthenticated (access denied), kNotFound (unknown database), kUnavailable
  // (refused, unreachable, timed out, too many connections …). The message reads
  // "cannot connect to mysql at HOST:PORT as USER: <the server's words> (errno N, SQLSTATE S)".
  absl::StatusOr<std::unique_ptr<Session>> Connect() override;
  void ThreadStart() override;
  void ThreadEnd() override;

  // "tcp://127.0.0.1:3306" or "unix:///path/mysqld.sock".
  std::string Url() const;

 private:
  ConnectionOptions options_;
  ErrorClassifier classifier_;
  sql::mysql::MySQL_Driver* driver_;  // Connector/C++'s process-wide singleton; not owned
};

}  // namespace dbload::db

#endif  // DBLOAD_DB_MYSQL_DRIVER_H_
