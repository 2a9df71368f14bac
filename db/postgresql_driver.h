#ifndef DBLOAD_DB_POSTGRESQL_DRIVER_H_
#define DBLOAD_DB_POSTGRESQL_DRIVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "db/driver.h"
#include "db/error_classifier.h"

namespace dbload::db {

// PostgreSQL through libpqxx 6.4 (libpq underneath), over TCP (host, port) or a unix socket
// (options.socket names the socket directory; port still picks the socket file).
//
// libpqxx opens connections and prepares statements; statements then run through libpq on the
// same connection, with text parameters formatted into buffers the session keeps (see the .cc
// for why: libpqxx's exec path cost ~50 % more client CPU per point select than pgbench).
//
// Statements are prepared on the server at Prepare() time (prepare_now, then a describe for the
// parameter count), so a syntax error or a missing table fails Prepare, not the first Execute.
// Sessions run in autocommit; Begin/Commit/Rollback send BEGIN/COMMIT/ROLLBACK. COMMIT of a
// transaction in which a statement failed reports 25P02 (the server rolled it back).
//
// Errors are classified by SQLSTATE with the driver's ErrorClassifier; a lost connection is
// kConnection with code "08006" ("08007" when it went during COMMIT). After a connection error
// the session reconnects by itself at its next call, or on Reconnect(), and prepares its
// statements again. If the connection was lost inside Begin()…Commit(), every call but
// Rollback(), Begin() and Reconnect() keeps failing with kConnection until the caller ends the
// transaction: its remaining statements must not run in autocommit on a new connection.
class PostgreSqlDriver final : public Driver {
 public:
  explicit PostgreSqlDriver(ConnectionOptions options);
  PostgreSqlDriver(ConnectionOptions options, ErrorClassifier classifier);

  Dialect dialect() const override { return Dialect::kPostgreSql; }
  Capabilities capabilities() const override { return {.returning = true}; }
  // Errors: kUnauthenticated (password or user rejected), kNotFound (no such database),
  // kUnavailable (refused, unreachable, timed out, too many connections …). The message reads
  // "cannot connect to postgresql at HOST:PORT as USER: <the server's words>".
  absl::StatusOr<std::unique_ptr<Session>> Connect() override;

  // Where sessions connect, for messages: "127.0.0.1:5432" or "/run/pg/.s.PGSQL.5432".
  std::string Endpoint() const;

 private:
  ConnectionOptions options_;
  ErrorClassifier classifier_;
  std::string conninfo_;  // libpq keyword=value string; contains the password
};

}  // namespace dbload::db

#endif  // DBLOAD_DB_POSTGRESQL_DRIVER_H_
