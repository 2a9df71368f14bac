#ifndef DBLOAD_DB_SERVER_SESSION_H_
#define DBLOAD_DB_SERVER_SESSION_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/driver.h"

namespace dbload::db {

// What the sessions of a real server (PostgreSQL, MySQL) share, whatever their client library:
//   - prepared statements by id, kept across connections: a statement that failed only for want
//     of a connection stays registered, and every (re)connect prepares the registered ones again;
//   - lazy reconnection: after a connection error the next call opens a new connection;
//   - a connection lost inside Begin()…Commit() took the transaction with it: every call but
//     Rollback(), Begin() and Reconnect() then fails with kConnection until the caller ends the
//     transaction, so that its remaining statements never run in autocommit on a new connection;
//   - the checks every call makes before it sends anything (statement prepared, parameter
//     count, whole rows for a bulk insert), with the dialect's error codes.
// A driver's session derives from it and supplies what its client library does through the
// hooks below; Execute, the hot path, stays the driver's, and begins with CheckExecute().
class ServerSession : public Session {
 public:
  // The dialect's codes for the errors this class makes itself.
  struct ErrorCodes {
    const char* not_prepared;      // Execute of an id with no prepared statement
    const char* wrong_parameters;  // Execute with another number of values than the statement's
    const char* bad_bulk_shape;    // BulkInsert whose values are not whole rows
    const char* cannot_reconnect;  // a lazy reconnect failed
    const char* transaction_lost;  // a call inside a transaction whose connection went
    // Server-side statement names "<prefix><id>" are shown in messages when set (PostgreSQL's).
    const char* statement_name_prefix = nullptr;
  };

  // Opens the connection (closing any earlier one) and runs the session set-up on it; the status
  // carries the server's words, and the set-up statement that failed.
  absl::Status Open();

  absl::Status Prepare(int id, const StatementSpec& statement) final;
  ExecOutcome ExecuteSql(std::string_view sql) final;
  ExecOutcome Begin() final;
  ExecOutcome Commit() final;
  ExecOutcome Rollback() final;
  absl::Status Reconnect() final;
  ExecOutcome BulkInsert(std::string_view table, std::span<const std::string> columns,
                         std::span<const Value> values) final;
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql, size_t max_rows) final;

 protected:
  // `session_setup`: ConnectionOptions::session_setup, run by every Open.
  explicit ServerSession(ErrorCodes codes, std::vector<std::string> session_setup = {})
      : codes_(codes), session_setup_(std::move(session_setup)) {}

  // --- What the client library does. Every hook but OpenConnection and CloseConnection runs
  // on an open connection.
  // Opens a new connection, closing any earlier one first.
  virtual absl::Status OpenConnection() = 0;
  // Frees the connection and everything that belongs to it (statements, result sets).
  virtual void CloseConnection() = 0;
  // Prepares `sql` as statement `id` on the server; on success sets `parameters` to the number
  // of placeholders the server counted.
  virtual std::optional<DbError> PrepareOnServer(int id, const std::string& sql,
                                                 int& parameters) = 0;
  // Statement `id`, prepared before, is replaced or failed: drop what the library holds for it.
  virtual void ForgetStatement(int id) = 0;
  virtual ExecOutcome RunSql(std::string_view sql) = 0;
  virtual ExecOutcome RunBegin() = 0;
  virtual ExecOutcome RunCommit() = 0;
  virtual ExecOutcome RunRollback() = 0;
  // `values` are whole rows, at least one.
  virtual ExecOutcome RunBulkInsert(std::string_view table, std::span<const std::string> columns,
                                    std::span<const Value> values) = 0;
  virtual absl::StatusOr<std::vector<std::string>> RunFetchColumn(std::string_view sql,
                                                                  size_t max_rows) = 0;
  // A COMMIT that failed with a connection error, before or after it was sent: the dialect may
  // say more about what that means for the transaction.
  virtual void ExplainLostCommit(DbError&) {}

  // --- For the hooks and Execute.
  // Nothing when statement `id` may run with `given` values now (reconnecting first if an
  // earlier call lost the connection); else the error to return.
  std::optional<DbError> CheckExecute(int id, size_t given) {
    if (id < 0 || static_cast<size_t>(id) >= statements_.size() || !statements_[id].registered)
        [[unlikely]] {
      return NotPrepared(id);
    }
    if (transaction_lost_) [[unlikely]] {
      return LostTransactionError();
    }
    if (auto error = EnsureConnected()) return error;
    if (static_cast<size_t>(statements_[id].parameters) != given) [[unlikely]] {
      return WrongParameterCount(id, given);
    }
    return std::nullopt;
  }

  // Reconnects (and prepares again) when an earlier call lost the connection.
  std::optional<DbError> EnsureConnected() {
    if (connected_) [[likely]] {
      return std::nullopt;
    }
    return Reopen();
  }

  // The client library reported the connection gone: closes it, and a transaction in progress
  // is lost with it.
  void ConnectionLost() {
    Disconnect();
    transaction_lost_ = in_transaction_;
  }

 private:
  struct Registered {
    std::string sql;
    bool assigned = false;    // Prepare() was called for this id
    bool registered = false;  // Prepare() succeeded (or failed only for want of a connection)
    int parameters = 0;       // as the server counted them
  };

  void Disconnect() {
    CloseConnection();
    connected_ = false;
  }
  std::optional<DbError> Reopen();
  absl::Status OpenAndPrepare();
  DbError LostTransactionError() const;
  DbError NotPrepared(int id) const;
  DbError WrongParameterCount(int id, size_t given) const;

  const ErrorCodes codes_;
  const std::vector<std::string> session_setup_;
  std::vector<Registered> statements_;
  bool connected_ = false;
  // A connection lost between Begin() and Commit()/Rollback() took the transaction with it.
  // Until the caller ends it, nothing runs: reconnecting lazily would run the rest of the
  // transaction's statements in autocommit, and a COMMIT would "succeed".
  bool in_transaction_ = false;
  bool transaction_lost_ = false;
};

// A failed DbError as a status: kRetryable → Aborted, kConnection → Unavailable, kFatal →
// InvalidArgument; the message is "<context>: [<code>] <message>".
absl::Status StatusOf(const DbError& error, std::string_view context);

// `name` as a quoted identifier, kept as written whatever its characters: `quote` ('"' or '`')
// around it and doubled inside.
void AppendQuotedIdentifier(std::string& out, std::string_view name, char quote);

}  // namespace dbload::db

#endif  // DBLOAD_DB_SERVER_SESSION_H_
