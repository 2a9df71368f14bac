#include "db/server_session.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace dbload::db {

absl::Status ServerSession::Open() {
  connected_ = false;
  absl::Status status = OpenConnection();
  // A connection's own set-up, not the workload's statements: uncounted, as a reconnect's work.
  const uint64_t sent = statements_sent();
  for (const std::string& sql : session_setup_) {
    if (!status.ok()) break;
    if (ExecOutcome outcome = RunSql(sql); !outcome.ok()) {
      CloseConnection();
      status = StatusOf(*outcome.error, absl::StrCat("session set-up `", sql, "`"));
    }
  }
  UncountStatementsSince(sent);
  connected_ = status.ok();
  if (connected_) CountConnectionOpened();
  return status;
}

absl::Status ServerSession::Prepare(int id, const StatementSpec& statement) {
  if (id < 0) return absl::InvalidArgumentError(absl::StrCat("bad statement id ", id));
  if (static_cast<size_t>(id) >= statements_.size()) statements_.resize(id + 1);
  if (statements_[id].assigned) ForgetStatement(id);
  Registered& registered = statements_[id];
  registered = Registered{.sql = statement.sql, .assigned = true};

  std::optional<DbError> error = EnsureConnected();
  if (!error) error = PrepareOnServer(id, registered.sql, registered.parameters);
  if (!error) {
    CountStatementPrepared();
    registered.registered = true;
    return absl::OkStatus();
  }
  // A statement that failed only because the connection is gone is kept: the reconnect
  // prepares it. A statement the server rejected is not registered.
  registered.registered = error->error_class == ErrorClass::kConnection;
  if (!registered.registered) ForgetStatement(id);
  return StatusOf(*error, statement.where.empty()
                              ? absl::StrCat("prepare statement ", id, " (", statement.name, ")")
                              : absl::StrCat("prepare ", statement.where));
}

ExecOutcome ServerSession::ExecuteSql(std::string_view sql) {
  if (transaction_lost_) return ExecOutcome{.error = LostTransactionError()};
  if (auto error = EnsureConnected()) return ExecOutcome{.error = std::move(error)};
  return RunSql(sql);
}

ExecOutcome ServerSession::Begin() {
  transaction_lost_ = false;
  ExecOutcome outcome;
  if (auto error = EnsureConnected()) {
    outcome.error = std::move(error);
  } else {
    outcome = RunBegin();
  }
  in_transaction_ = outcome.ok();
  return outcome;
}

ExecOutcome ServerSession::Commit() {
  if (transaction_lost_) {
    in_transaction_ = transaction_lost_ = false;
    return ExecOutcome{.error = LostTransactionError()};
  }
  ExecOutcome outcome;
  if (auto error = EnsureConnected()) {
    outcome.error = std::move(error);
  } else {
    outcome = RunCommit();
  }
  in_transaction_ = transaction_lost_ = false;
  if (!outcome.ok() && outcome.error->error_class == ErrorClass::kConnection) {
    ExplainLostCommit(*outcome.error);
  }
  return outcome;
}

ExecOutcome ServerSession::Rollback() {
  if (transaction_lost_) {
    // The server rolled the transaction back when the connection went.
    in_transaction_ = transaction_lost_ = false;
    return ExecOutcome{};
  }
  in_transaction_ = false;
  if (auto error = EnsureConnected()) return ExecOutcome{.error = std::move(error)};
  return RunRollback();
}

absl::Status ServerSession::Reconnect() {
  in_transaction_ = transaction_lost_ = false;
  return OpenAndPrepare();
}

ExecOutcome ServerSession::BulkInsert(std::string_view table, std::span<const std::string> columns,
                                      std::span<const Value> values) {
  if (auto error = CheckBulkShape(table, columns.size(), values.size(), codes_.bad_bulk_shape)) {
    return ExecOutcome{.error = std::move(error)};
  }
  if (values.empty()) return ExecOutcome{};  // nothing to send
  if (transaction_lost_) return ExecOutcome{.error = LostTransactionError()};
  if (auto error = EnsureConnected()) return ExecOutcome{.error = std::move(error)};
  return RunBulkInsert(table, columns, values);
}

absl::StatusOr<std::vector<std::string>> ServerSession::FetchColumn(std::string_view sql,
                                                                    size_t max_rows) {
  constexpr char kContext[] = "fetch column";
  if (transaction_lost_) return StatusOf(LostTransactionError(), kContext);
  if (auto error = EnsureConnected()) return StatusOf(*error, kContext);
  return RunFetchColumn(sql, max_rows);
}

std::optional<DbError> ServerSession::Reopen() {
  absl::Status status = OpenAndPrepare();
  if (status.ok()) return std::nullopt;
  Disconnect();
  return DbError{.error_class = ErrorClass::kConnection,
                 .code = codes_.cannot_reconnect,
                 .message = std::string(status.message())};
}

absl::Status ServerSession::OpenAndPrepare() {
  absl::Status status = Open();
  if (!status.ok()) return status;
  for (size_t id = 0; id < statements_.size(); ++id) {
    Registered& registered = statements_[id];
    if (!registered.registered) continue;
    if (auto error = PrepareOnServer(static_cast<int>(id), registered.sql, registered.parameters)) {
      return StatusOf(*error, absl::StrCat("prepare statement ", id, " again"));
    }
    CountStatementPrepared();
  }
  return absl::OkStatus();
}

DbError ServerSession::LostTransactionError() const {
  return DbError{.error_class = ErrorClass::kConnection,
                 .code = codes_.transaction_lost,
                 .message =
                     "the connection was lost inside a transaction, which the server "
                     "rolled back; end it with Rollback() (or Begin() a new one)"};
}

DbError ServerSession::NotPrepared(int id) const {
  return DbError{.error_class = ErrorClass::kFatal,
                 .code = codes_.not_prepared,
                 .message = absl::StrCat("statement ", id, " is not prepared")};
}

DbError ServerSession::WrongParameterCount(int id, size_t given) const {
  const std::string name = codes_.statement_name_prefix == nullptr
                               ? std::string()
                               : absl::StrCat(" (", codes_.statement_name_prefix, id, ")");
  return DbError{.error_class = ErrorClass::kFatal,
                 .code = codes_.wrong_parameters,
                 .message = absl::StrCat("statement ", id, name, " takes ",
                                         statements_[id].parameters, " parameters, got ", given)};
}

absl::Status StatusOf(const DbError& error, std::string_view context) {
  std::string message = std::string(context) + ": [" + error.code + "] " + error.message;
  switch (error.error_class) {
    case ErrorClass::kRetryable:
    case ErrorClass::kIgnored:  // never a driver's own class; as retryable if one arrives
      return absl::AbortedError(std::move(message));
    case ErrorClass::kConnection:
      return absl::UnavailableError(std::move(message));
    case ErrorClass::kFatal:
      break;
  }
  return absl::InvalidArgumentError(std::move(message));
}

void AppendQuotedIdentifier(std::string& out, std::string_view name, char quote) {
  out.push_back(quote);
  for (char c : name) {
    if (c == quote) out.push_back(quote);
    out.push_back(c);
  }
  out.push_back(quote);
}

}  // namespace dbload::db
