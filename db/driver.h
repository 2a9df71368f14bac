#ifndef DBLOAD_DB_DRIVER_H_
#define DBLOAD_DB_DRIVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace dbload::db {

// The narrow waist between workloads and databases, as narrow as sysbench's drv_ops: connect,
// prepare, execute with bound parameters, transactions. Driver libraries (libpqxx,
// Connector/C++) are included only in this folder's .cc files; their exceptions never leave it.

enum class Dialect { kPostgreSql, kMySql, kNoop };
std::string_view DialectName(Dialect dialect);

// How an error is handled, decided the same way for every database (see ErrorClassifier).
enum class ErrorClass {
  kRetryable,   // serialization failure, deadlock, lock timeout: the transaction may be retried
  kConnection,  // the session is unusable: reconnect with backoff
  kFatal,       // syntax, permission, missing table: retrying cannot help
  // An error the workload expects under contention and ignores, as sysbench does (a duplicate
  // key, a deadlock; see IgnoredErrors): the transaction was rolled back, the error is counted
  // apart from both successes and errors, and the client goes on with its next transaction.
  // Drivers never classify an error so; the load runner does, from the scenario's list.
  kIgnored,
};
std::string_view ErrorClassName(ErrorClass error_class);

struct DbError {
  ErrorClass error_class = ErrorClass::kFatal;
  std::string code;     // SQLSTATE (PostgreSQL) or server/client errno (MySQL), as text
  std::string message;  // the server's words; never contains the password
};

// A bound parameter, borrowed for the duration of one Execute call (no copies on the hot path).
using Value = std::variant<std::monostate, int64_t, double, std::string_view>;

struct ExecOutcome {
  int64_t rows = 0;  // rows returned, or rows affected for statements that return none
  // The first column of the first row when it is an integer (an INSERT … RETURNING id) and the
  // caller asked for it.
  std::optional<int64_t> first_value;
  std::optional<DbError> error;
  // Set by a workload, never by a driver: the workload ended the transaction with ROLLBACK as
  // its specification asks (TPC-C's New-Order on an unused item). A success, counted apart
  // (v1::QueryTypeReport.rolled_back).
  bool rolled_back = false;
  bool ok() const { return !error.has_value(); }
};

// A server-side prepared statement. `sql` is in the driver's own dialect and placeholder style:
// $1, $2 … for PostgreSQL, ? for MySQL.
struct StatementSpec {
  std::string name;
  std::string sql;
  // Where the workload writes it, for messages ("bank.yaml:17:16: scenario transfer, query type
  // transfer, statement 2 of 4"); empty: the name says enough.
  std::string where;
};

struct Capabilities {
  bool prepared_statements = true;
  bool transactions = true;
  bool returning = false;  // INSERT … RETURNING
};

// One connection, used by one thread at a time.
class Session {
 public:
  virtual ~Session() = default;
  // Registers a statement under `id` (0, 1, 2 … in order) and prepares it on the server. After a
  // reconnect the session prepares its statements again by itself.
  virtual absl::Status Prepare(int id, const StatementSpec& statement) = 0;
  virtual ExecOutcome Execute(int id, std::span<const Value> params,
                              bool capture_first_value = false) = 0;
  // Plain SQL without parameters, for schema and data set-up (not for the timed path).
  virtual ExecOutcome ExecuteSql(std::string_view sql) = 0;
  virtual ExecOutcome Begin() = 0;
  virtual ExecOutcome Commit() = 0;
  virtual ExecOutcome Rollback() = 0;
  // Drops the connection and opens a new one with the same settings.
  virtual absl::Status Reconnect() = 0;

  // Pipelining, as pgbench's \startpipeline … \endpipeline around a transaction (PostgreSQL's
  // pipeline mode): after StartPipeline, Execute, Begin, Commit and Rollback send their statement
  // and return at once, ok with no rows (an error only when it could not be sent, and no first
  // value); EndPipeline sends a sync, reads every answer and returns the first error (the
  // statements after it did not run, and a transaction it left open is rolled back) or else
  // the rows of them all. A whole transaction costs one round trip. Without Begin, the
  // statements up to the sync are one implicit transaction at the server: an error undoes them
  // all. BulkInsert and FetchColumn fail in a pipeline.
  // A session that cannot pipeline refuses StartPipeline (kFatal); EndPipeline outside a
  // pipeline does nothing.
  virtual std::optional<DbError> StartPipeline();
  virtual ExecOutcome EndPipeline() { return {}; }

  // Data loading, not the timed path. Appends rows to `table` as fast as the database takes
  // them: COPY … FROM STDIN (PostgreSQL), one multi-row INSERT (MySQL); inside the open
  // transaction if there is one. `table` and `columns` are plain names, quoted here.
  // `values` holds the rows one after another, columns.size() values each (monostate is
  // NULL). ExecOutcome::rows is the number of rows loaded. MySQL sends the batch as one
  // statement: it must fit the server's max_allowed_packet (a kFatal error says so if not).
  virtual ExecOutcome BulkInsert(std::string_view table, std::span<const std::string> columns,
                                 std::span<const Value> values) = 0;
  // The first column of every row `sql` returns, as text (NULL as ""): keys read once before
  // the timed part. Fails (naming the limit) rather than return more than `max_rows` rows, and
  // for a statement that returns no result set.
  virtual absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql,
                                                               size_t max_rows) = 0;

  // Statements this session has handed to the server for execution since it was opened: every
  // Execute, ExecuteSql, Begin, Commit, Rollback, FetchColumn and BulkInsert that got as far as
  // sending, whether the server then ran it or answered with an error. Not preparations, not
  // what a reconnect does by itself, and not a call refused before anything went out (a
  // transaction already lost with its connection, a wrong parameter count). The load runner
  // reads it before and after each transaction: what sysbench counts as queries, the same for
  // every workload, since workloads reach the server only through their session.
  // Plain, not atomic: a session is used by one thread at a time, and so is its count.
  uint64_t statements_sent() const { return statements_sent_; }
  // The session's own work on the server, which a database's counters include (the commit
  // reconciliation counts it from these): connections opened and set up, the first one and
  // every reconnect; statements prepared on the server, again after each reconnect.
  uint64_t connections_opened() const { return connections_opened_; }
  uint64_t statements_prepared() const { return statements_prepared_; }

 protected:
  // Each implementation calls this once per statement, where it hands it to its client library.
  void CountStatementSent() { ++statements_sent_; }
  // Takes back what was counted since statements_sent() read `mark`: a connection's own set-up.
  void UncountStatementsSince(uint64_t mark) { statements_sent_ = mark; }
  // Each implementation calls these when a connection is open and set up, and when a statement
  // is prepared on the server.
  void CountConnectionOpened() { ++connections_opened_; }
  void CountStatementPrepared() { ++statements_prepared_; }

 private:
  uint64_t statements_sent_ = 0;
  uint64_t connections_opened_ = 0;
  uint64_t statements_prepared_ = 0;
};

struct ConnectionOptions {
  std::string host;
  // The IP address to connect to for `host` (resolved once and checked by --allow-target);
  // empty: the driver dials `host` itself.
  std::string host_address;
  uint32_t port = 0;
  std::string socket;  // PostgreSQL: socket directory; MySQL: socket file. Wins over host.
  std::string user;
  std::string password;
  std::string database;
  int64_t connect_timeout_ns = 10'000'000'000;
  // Run on every new connection, and again after a reconnect, before any statement is
  // prepared: the isolation level and the plan's session statements (SET …). Not counted in
  // Session::statements_sent, as a reconnect's own work is not.
  std::vector<std::string> session_setup;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual Dialect dialect() const = 0;
  virtual Capabilities capabilities() const = 0;
  // Errors name the server's answer (refused, authentication failed, unknown database …) and
  // never the password.
  virtual absl::StatusOr<std::unique_ptr<Session>> Connect() = 0;
  // Called once by each thread before it uses sessions, and once when it is done (MySQL's
  // Connector/C++ needs per-thread set-up).
  virtual void ThreadStart() {}
  virtual void ThreadEnd() {}
};

// Runs `reads` on `session` inside a transaction that is then rolled back, whatever they return:
// a side session's reads (a workload's set-up checks and samples, the coordinator's row counts)
// see one snapshot and commit nothing that the database's commit counter would add to the load's
// (coordinator/loss_bound.h). A BEGIN that fails is returned as kUnavailable, `what` naming it.
absl::Status ReadRolledBack(Session& session, std::string_view what,
                            const std::function<absl::Status()>& reads);

// Replaces every occurrence of `secret` in `text` (error messages that echo connection strings).
std::string Redact(std::string text, std::string_view secret);

// Session::BulkInsert's refusal of a shape that is not whole rows (a caller's bug), the same for
// every driver; `code` is the driver's own for a bad argument.
std::optional<DbError> CheckBulkShape(std::string_view table, size_t columns, size_t values,
                                      std::string_view code);

}  // namespace dbload::db

#endif  // DBLOAD_DB_DRIVER_H_
