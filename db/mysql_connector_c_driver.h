#ifndef DBLOAD_DB_MYSQL_CONNECTOR_C_DRIVER_H_
#define DBLOAD_DB_MYSQL_CONNECTOR_C_DRIVER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "db/driver.h"
#include "db/error_classifier.h"

namespace dbload::db {

// MySQL / MariaDB through MariaDB Connector/C (libmariadb, the library Connector/C++ 1.1 is
// built on here), over TCP or a unix socket file (options.socket, which wins over host). The
// default MySQL driver since bench/RESULTS.md section 29: Connector/C++ builds a result set,
// fetches the statement's metadata again and upper-cases its column names on every execute,
// which cost a point select twice sysbench's user-space CPU (section 28b); this session binds
// and executes as sysbench does. MySqlDriver (Connector/C++) stays a plan's choice
// (target.mysql_client).
//
// On a thread of its own a session blocks in Connector/C's calls, as sysbench's do (one send
// and one receive per statement). A session opened on an event loop's fiber uses Connector/C's
// non-blocking API (MYSQL_OPT_NONBLOCK, the *_start/*_cont calls) and waits on its socket in a
// SocketWatch, so that the loop runs its other connections meanwhile: event_loops drives MySQL
// connections with it, as libpq's asynchronous API does PostgreSQL's.
//
// Statements and their semantics are MySqlDriver's: server-side prepared statements (errors
// show at Prepare); a SELECT-like statement's rows are read in full (`rows` is how many);
// others report affected rows. capture_first_value gives the first column of the first row when
// its text is an integer, or the id the statement generated (the OK packet's, no extra round
// trip; none when it generated none). Autocommit is on; Begin/Commit/Rollback send START
// TRANSACTION / COMMIT / ROLLBACK. Errors are classified by errno with the classifier, the
// message keeps the SQLSTATE; connection errors, lost transactions and reconnects are
// ServerSession's.
class MySqlConnectorCDriver final : public Driver {
 public:
  explicit MySqlConnectorCDriver(ConnectionOptions options);
  MySqlConnectorCDriver(ConnectionOptions options, ErrorClassifier classifier);

  Dialect dialect() const override { return Dialect::kMySql; }
  Capabilities capabilities() const override { return {.returning = false}; }
  // Errors: kUnauthenticated (access denied), kPermissionDenied (no access to the database),
  // kNotFound (unknown database), kUnavailable (refused, unreachable, timed out, too many
  // connections …). The message reads "cannot connect to mysql at HOST:PORT as USER: <the
  // server's words> (errno N, SQLSTATE S)".
  absl::StatusOr<std::unique_ptr<Session>> Connect() override;

 private:
  ConnectionOptions options_;
  ErrorClassifier classifier_;
};

}  // namespace dbload::db

#endif  // DBLOAD_DB_MYSQL_CONNECTOR_C_DRIVER_H_
