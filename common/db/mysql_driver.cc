#include "common/db/mysql_driver.h"

#include <cppconn/connection.h>
#include <cppconn/datatype.h>
#include <cppconn/exception.h>
#include <cppconn/parameter_metadata.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_driver.h>

#include <charconv>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dbload::db {

namespace {

// Server errors (ER_*) and client errors (CR_*) we name when turning Connect() failures into
// statuses.
constexpr int kAccessDenied = 1045;            // ER_ACCESS_DENIED_ERROR
constexpr int kDbAccessDenied = 1044;          // ER_DBACCESS_DENIED_ERROR
constexpr int kAccessDeniedNoPassword = 1698;  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
constexpr int kUnknownDatabase = 1049;         // ER_BAD_DB_ERROR

absl::Status StatusOf(const DbError& error, std::string_view context) {
  std::string message = std::string(context) + ": [" + error.code + "] " + error.message;
  switch (error.error_class) {
    case ErrorClass::kRetryable:
      return absl::AbortedError(std::move(message));
    case ErrorClass::kConnection:
      return absl::UnavailableError(std::move(message));
    case ErrorClass::kFatal:
      break;
  }
  return absl::InvalidArgumentError(std::move(message));
}

std::string MessageOf(const sql::SQLException& e) {
  std::string message = e.what();
  if (message.empty()) message = "error without a message";
  absl::StrAppend(&message, " (errno ", e.getErrorCode(), ", SQLSTATE ", e.getSQLState(), ")");
  return message;
}

// The first column of the first row when its text is an integer (prepared-statement metadata
// types expressions such as "? + 1" as DOUBLE or DECIMAL, so the value decides, not the type).
std::optional<int64_t> FirstInteger(sql::ResultSet& result) {
  if (!result.next() || result.isNull(1)) return std::nullopt;
  const sql::SQLString text = result.getString(1);
  int64_t value = 0;
  const char* end = text.c_str() + text.length();
  const auto [parsed_end, ec] = std::from_chars(text.c_str(), end, value);
  if (ec != std::errc() || parsed_end != end) return std::nullopt;
  return value;
}

struct PreparedSlot {
  std::string sql;
  std::unique_ptr<sql::PreparedStatement> statement;
  bool registered = false;      // Prepare() succeeded (or failed only for want of a connection)
  bool has_result_set = false;  // SELECT-like: executeQuery; otherwise executeUpdate
  unsigned int parameters = 0;  // as the server counted them
};

class MySqlSession final : public Session {
 public:
  MySqlSession(sql::mysql::MySQL_Driver* driver, const ConnectionOptions& options,
               const ErrorClassifier& classifier, std::string url)
      : driver_(driver), options_(options), classifier_(classifier), url_(std::move(url)) {}

  ~MySqlSession() override { Close(); }

  // Opens the connection; on failure the status carries the server's words and errno.
  absl::Status Open() {
    Close();
    sql::ConnectOptionsMap connect_options;
    connect_options["hostName"] = sql::SQLString(url_);
    connect_options["userName"] = sql::SQLString(options_.user);
    connect_options["password"] = sql::SQLString(options_.password);
    if (!options_.database.empty()) connect_options["schema"] = sql::SQLString(options_.database);
    if (options_.connect_timeout_ns > 0) {
      const int seconds =
          static_cast<int>((options_.connect_timeout_ns + 999'999'999) / 1'000'000'000);
      connect_options["OPT_CONNECT_TIMEOUT"] = seconds;
    }
    // Reconnecting behind our back would lose prepared statements and transactions silently.
    connect_options["OPT_RECONNECT"] = false;
    try {
      connection_.reset(driver_->connect(connect_options));
      plain_.reset(connection_->createStatement());
    } catch (const sql::SQLException& e) {
      Close();
      std::string message = Redact(MessageOf(e), options_.password);
      switch (e.getErrorCode()) {
        case kAccessDenied:
        case kAccessDeniedNoPassword:
          return absl::UnauthenticatedError("authentication failed: " + message);
        case kDbAccessDenied:
          // Also what a missing database looks like to a user without global privileges.
          return absl::PermissionDeniedError("no such database, or no access to it: " + message);
        case kUnknownDatabase:
          return absl::NotFoundError(std::move(message));
        default:
          return absl::UnavailableError(std::move(message));
      }
    } catch (const std::exception& e) {
      Close();
      return absl::UnavailableError(Redact(e.what(), options_.password));
    }
    return absl::OkStatus();
  }

  absl::Status Prepare(int id, const StatementSpec& statement) override {
    if (id < 0) return absl::InvalidArgumentError(absl::StrCat("bad statement id ", id));
    if (static_cast<size_t>(id) >= slots_.size()) slots_.resize(id + 1);
    PreparedSlot& slot = slots_[id];
    slot = PreparedSlot{};
    slot.sql = statement.sql;

    std::optional<DbError> error = EnsureConnected();
    if (!error) error = PrepareOnServer(slot);
    if (!error) {
      slot.registered = true;
      return absl::OkStatus();
    }
    // Kept when only the connection failed: the reconnect prepares it.
    slot.registered = error->error_class == ErrorClass::kConnection;
    return StatusOf(*error, absl::StrCat("prepare statement ", id, " (", statement.name, ")"));
  }

  ExecOutcome Execute(int id, std::span<const Value> params, bool capture_first_value) override {
    ExecOutcome outcome;
    if (static_cast<size_t>(id) >= slots_.size() || id < 0 || !slots_[id].registered) {
      outcome.error = DbError{.error_class = ErrorClass::kFatal,
                              .code = "1243",  // ER_UNKNOWN_STMT_HANDLER
                              .message = absl::StrCat("statement ", id, " is not prepared")};
      return outcome;
    }
    if (transaction_lost_) [[unlikely]] {
      outcome.error = LostTransactionError();
      return outcome;
    }
    if (auto error = EnsureConnected()) {
      outcome.error = std::move(error);
      return outcome;
    }
    PreparedSlot& slot = slots_[id];
    if (params.size() != slot.parameters) [[unlikely]] {
      // Connector/C++ would reuse the previous call's values for parameters not set now.
      outcome.error = DbError{.error_class = ErrorClass::kFatal,
                              .code = "1210",  // ER_WRONG_ARGUMENTS
                              .message = absl::StrCat("statement ", id, " takes ", slot.parameters,
                                                      " parameters, got ", params.size())};
      return outcome;
    }
    try {
      sql::PreparedStatement& statement = *slot.statement;
      for (size_t i = 0; i < params.size(); ++i) {
        const unsigned int index = static_cast<unsigned int>(i + 1);
        const Value& value = params[i];
        if (const auto* integer = std::get_if<int64_t>(&value)) {
          statement.setInt64(index, *integer);
        } else if (const auto* real = std::get_if<double>(&value)) {
          statement.setDouble(index, *real);
        } else if (const auto* text = std::get_if<std::string_view>(&value)) {
          statement.setString(index, sql::SQLString(text->data(), text->size()));
        } else {
          statement.setNull(index, sql::DataType::SQLNULL);
        }
      }
      if (slot.has_result_set) {
        // Buffered (stored) result: every row has been read from the server when this returns.
        const std::unique_ptr<sql::ResultSet> result(statement.executeQuery());
        outcome.rows = static_cast<int64_t>(result->rowsCount());
        if (capture_first_value) outcome.first_value = FirstInteger(*result);
      } else {
        outcome.rows = statement.executeUpdate();
        if (capture_first_value) outcome.first_value = LastInsertId();
      }
    } catch (...) {
      outcome.error = Classify(std::current_exception());
    }
    return outcome;
  }

  ExecOutcome ExecuteSql(std::string_view sql) override {
    if (transaction_lost_) return ExecOutcome{.error = LostTransactionError()};
    return Simple(sql::SQLString(sql.data(), sql.size()));
  }

  ExecOutcome Begin() override {
    transaction_lost_ = false;
    ExecOutcome outcome = Simple(kBegin);
    in_transaction_ = outcome.ok();
    return outcome;
  }

  ExecOutcome Commit() override {
    if (transaction_lost_) {
      in_transaction_ = transaction_lost_ = false;
      return ExecOutcome{.error = LostTransactionError()};
    }
    ExecOutcome outcome = Simple(kCommit);
    in_transaction_ = transaction_lost_ = false;
    if (!outcome.ok() && outcome.error->error_class == ErrorClass::kConnection) {
      outcome.error->message = "connection lost during COMMIT (it may or may not have happened): " +
                               outcome.error->message;
    }
    return outcome;
  }

  ExecOutcome Rollback() override {
    if (transaction_lost_) {
      // The server rolled the transaction back when the connection went.
      in_transaction_ = transaction_lost_ = false;
      return ExecOutcome{};
    }
    in_transaction_ = false;
    return Simple(kRollback);
  }

  absl::Status Reconnect() override {
    in_transaction_ = transaction_lost_ = false;
    return OpenAndPrepare();
  }

 private:
  absl::Status OpenAndPrepare() {
    absl::Status status = Open();
    if (!status.ok()) return status;
    for (size_t id = 0; id < slots_.size(); ++id) {
      PreparedSlot& slot = slots_[id];
      if (!slot.registered) continue;
      if (auto error = PrepareOnServer(slot)) {
        return StatusOf(*error, absl::StrCat("prepare statement ", id, " again"));
      }
    }
    return absl::OkStatus();
  }

  static DbError LostTransactionError() {
    return DbError{.error_class = ErrorClass::kConnection,
                   .code = "2013",  // CR_SERVER_LOST
                   .message =
                       "the connection was lost inside a transaction, which the server "
                       "rolled back; end it with Rollback() (or Begin() a new one)"};
  }

  static inline const sql::SQLString kBegin = "START TRANSACTION";
  static inline const sql::SQLString kCommit = "COMMIT";
  static inline const sql::SQLString kRollback = "ROLLBACK";

  // Statements and result sets belong to the connection: free them first.
  void Close() {
    last_insert_id_.reset();
    for (PreparedSlot& slot : slots_) slot.statement.reset();
    plain_.reset();
    if (connection_ != nullptr) {
      try {
        connection_->close();
      } catch (const std::exception&) {
        // Closing a dead connection may complain; it is going away either way.
      }
    }
    connection_.reset();
  }

  std::optional<DbError> EnsureConnected() {
    if (connection_ != nullptr) return std::nullopt;
    absl::Status status = OpenAndPrepare();
    if (status.ok()) return std::nullopt;
    Close();
    return DbError{.error_class = ErrorClass::kConnection,
                   .code = "2006",  // CR_SERVER_GONE_ERROR
                   .message = std::string(status.message())};
  }

  std::optional<DbError> PrepareOnServer(PreparedSlot& slot) {
    try {
      slot.statement.reset(connection_->prepareStatement(slot.sql));
      slot.has_result_set = slot.statement->getMetaData()->getColumnCount() > 0;
      slot.parameters =
          static_cast<unsigned int>(slot.statement->getParameterMetaData()->getParameterCount());
    } catch (...) {
      slot.statement.reset();
      return Classify(std::current_exception());
    }
    return std::nullopt;
  }

  // LAST_INSERT_ID() of this connection, through a statement prepared on first use.
  std::optional<int64_t> LastInsertId() {
    if (last_insert_id_ == nullptr) {
      last_insert_id_.reset(connection_->prepareStatement("SELECT LAST_INSERT_ID()"));
    }
    const std::unique_ptr<sql::ResultSet> result(last_insert_id_->executeQuery());
    if (!result->next() || result->isNull(1)) return std::nullopt;
    return result->getInt64(1);
  }

  ExecOutcome Simple(const sql::SQLString& sql) {
    ExecOutcome outcome;
    if (auto error = EnsureConnected()) {
      outcome.error = std::move(error);
      return outcome;
    }
    try {
      if (plain_->execute(sql)) {
        const std::unique_ptr<sql::ResultSet> result(plain_->getResultSet());
        outcome.rows = static_cast<int64_t>(result->rowsCount());
        outcome.first_value = FirstInteger(*result);
      } else {
        outcome.rows = static_cast<int64_t>(plain_->getUpdateCount());
      }
    } catch (...) {
      outcome.error = Classify(std::current_exception());
    }
    return outcome;
  }

  DbError Classify(std::exception_ptr exception) {
    DbError error;
    try {
      std::rethrow_exception(exception);
    } catch (const sql::SQLException& e) {
      error.code = absl::StrCat(e.getErrorCode());
      error.error_class = classifier_.Classify(error.code);
      error.message = MessageOf(e);
    } catch (const std::exception& e) {
      error = {ErrorClass::kFatal, "", e.what()};
    } catch (...) {
      error = {ErrorClass::kFatal, "", "unknown exception"};
    }
    if (error.error_class == ErrorClass::kConnection) {
      Close();
      transaction_lost_ = in_transaction_;
    }
    error.message = Redact(std::move(error.message), options_.password);
    return error;
  }

  sql::mysql::MySQL_Driver* driver_;
  // Copies: a session depends on nothing of its driver but Connector/C++'s singleton.
  const ConnectionOptions options_;
  const ErrorClassifier classifier_;
  const std::string url_;

  std::unique_ptr<sql::Connection> connection_;
  std::unique_ptr<sql::Statement> plain_;
  std::unique_ptr<sql::PreparedStatement> last_insert_id_;
  std::vector<PreparedSlot> slots_;
  // A connection lost between Begin() and Commit()/Rollback() took the transaction with it.
  // Until the caller ends it, nothing runs: reconnecting lazily would run the rest of the
  // transaction's statements in autocommit, and a COMMIT would "succeed".
  bool in_transaction_ = false;
  bool transaction_lost_ = false;
};

}  // namespace

MySqlDriver::MySqlDriver(ConnectionOptions options)
    : MySqlDriver(std::move(options), ErrorClassifier::Defaults(Dialect::kMySql)) {}

MySqlDriver::MySqlDriver(ConnectionOptions options, ErrorClassifier classifier)
    : options_(std::move(options)),
      classifier_(std::move(classifier)),
      driver_(sql::mysql::get_mysql_driver_instance()) {}

std::string MySqlDriver::Url() const {
  if (!options_.socket.empty()) return absl::StrCat("unix://", options_.socket);
  return absl::StrCat("tcp://", options_.host.empty() ? "127.0.0.1" : options_.host, ":",
                      options_.port != 0 ? options_.port : 3306);
}

void MySqlDriver::ThreadStart() { driver_->threadInit(); }
void MySqlDriver::ThreadEnd() { driver_->threadEnd(); }

absl::StatusOr<std::unique_ptr<Session>> MySqlDriver::Connect() {
  auto session = std::make_unique<MySqlSession>(driver_, options_, classifier_, Url());
  absl::Status status = session->Open();
  if (!status.ok()) {
    const std::string where =
        options_.socket.empty() ? absl::StrCat(options_.host.empty() ? "127.0.0.1" : options_.host,
                                               ":", options_.port != 0 ? options_.port : 3306)
                                : options_.socket;
    return absl::Status(status.code(), absl::StrCat("cannot connect to mysql at ", where, " as ",
                                                    options_.user, ": ", status.message()));
  }
  return session;
}

}  // namespace dbload::db
