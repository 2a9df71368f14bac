#include "db/mysql_driver.h"

#include <cppconn/connection.h>
#include <cppconn/datatype.h>
#include <cppconn/exception.h>
#include <cppconn/parameter_metadata.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "db/mysql_common.h"
#include "db/server_session.h"

namespace dbload::db {

namespace {

std::string MessageOf(const sql::SQLException& e) {
  return MySqlMessage(e.what(), static_cast<unsigned int>(e.getErrorCode()), e.getSQLState());
}

// The first column of the first row when its text is an integer (prepared-statement metadata
// types expressions such as "? + 1" as DOUBLE or DECIMAL, so the value decides, not the type).
std::optional<int64_t> FirstInteger(sql::ResultSet& result) {
  if (!result.next() || result.isNull(1)) return std::nullopt;
  const sql::SQLString text = result.getString(1);
  return IntegerOfText(std::string_view(text.c_str(), text.length()));
}

// A statement as prepared on the current connection.
struct PreparedSlot {
  std::unique_ptr<sql::PreparedStatement> statement;
  bool has_result_set = false;  // SELECT-like: executeQuery; otherwise executeUpdate
};

class MySqlSession final : public ServerSession {
 public:
  MySqlSession(sql::mysql::MySQL_Driver* driver, const ConnectionOptions& options,
               const ErrorClassifier& classifier, std::string url)
      : ServerSession(MySqlErrorCodes(), options.session_setup),
        driver_(driver),
        options_(options),
        classifier_(classifier),
        url_(std::move(url)) {}

  ~MySqlSession() override { CloseConnection(); }

  ExecOutcome Execute(int id, std::span<const Value> params, bool capture_first_value) override {
    ExecOutcome outcome;
    // A wrong parameter count is refused there: Connector/C++ would reuse the previous call's
    // values for parameters not set now.
    if (auto error = CheckExecute(id, params.size())) [[unlikely]] {
      outcome.error = std::move(error);
      return outcome;
    }
    PreparedSlot& slot = slots_[id];
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
      CountStatementSent();
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

 private:
  // Opens the connection; on failure the status carries the server's words and errno.
  absl::Status OpenConnection() override {
    CloseConnection();
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
      CloseConnection();
      return MySqlConnectError(static_cast<unsigned int>(e.getErrorCode()),
                               Redact(MessageOf(e), options_.password));
    } catch (const std::exception& e) {
      CloseConnection();
      return absl::UnavailableError(Redact(e.what(), options_.password));
    }
    return absl::OkStatus();
  }

  std::optional<DbError> PrepareOnServer(int id, const std::string& sql, int& parameters) override {
    if (static_cast<size_t>(id) >= slots_.size()) slots_.resize(id + 1);
    PreparedSlot& slot = slots_[id];
    try {
      slot.statement.reset(connection_->prepareStatement(sql));
      slot.has_result_set = slot.statement->getMetaData()->getColumnCount() > 0;
      parameters = static_cast<int>(slot.statement->getParameterMetaData()->getParameterCount());
    } catch (...) {
      slot.statement.reset();
      return Classify(std::current_exception());
    }
    return std::nullopt;
  }

  void ForgetStatement(int id) override {
    if (static_cast<size_t>(id) < slots_.size()) slots_[id] = PreparedSlot{};
  }

  ExecOutcome RunSql(std::string_view sql) override {
    return Simple(sql::SQLString(sql.data(), sql.size()));
  }
  ExecOutcome RunBegin() override { return Simple(kBegin); }
  ExecOutcome RunCommit() override { return Simple(kCommit); }
  ExecOutcome RunRollback() override { return Simple(kRollback); }

  void ExplainLostCommit(DbError& error) override {
    error.message =
        "connection lost during COMMIT (it may or may not have happened): " + error.message;
  }

  // One multi-row INSERT: a single round trip and a single statement for the server to parse,
  // which is what MySQL loads fastest short of LOAD DATA (disabled on most servers).
  ExecOutcome RunBulkInsert(std::string_view table, std::span<const std::string> columns,
                            std::span<const Value> values) override {
    ExecOutcome outcome;
    // escapeString escapes for the connection's character set (and its NO_BACKSLASH_ESCAPES
    // mode), which only the concrete connection knows.
    auto* connection = dynamic_cast<sql::mysql::MySQL_Connection*>(connection_.get());
    if (connection == nullptr) {
      outcome.error = DbError{.error_class = ErrorClass::kFatal,
                              .code = "",
                              .message = "bulk insert: not a Connector/C++ MySQL connection"};
      return outcome;
    }
    std::string sql;
    try {
      const MySqlEscape escape = [connection](std::string& out, std::string_view text) {
        out.append(
            connection->escapeString(sql::SQLString(text.data(), text.size())).asStdString());
      };
      std::optional<DbError> error = BuildMySqlBulkInsert(table, columns, values, escape, sql);
      if (!error) error = CheckPacketSize(table, sql.size());
      if (error) {
        outcome.error = std::move(error);
        return outcome;
      }
    } catch (...) {
      outcome.error = Classify(std::current_exception());
      return outcome;
    }
    return Simple(sql::SQLString(sql));
  }

  absl::StatusOr<std::vector<std::string>> RunFetchColumn(std::string_view sql,
                                                          size_t max_rows) override {
    constexpr char kContext[] = "fetch column";
    std::vector<std::string> column;
    try {
      CountStatementSent();
      if (!plain_->execute(sql::SQLString(sql.data(), sql.size()))) {
        return absl::InvalidArgumentError(
            absl::StrCat(kContext, ": the statement returned no column: ", std::string(sql)));
      }
      // A stored result: every row is in memory when the count is known.
      const std::unique_ptr<sql::ResultSet> result(plain_->getResultSet());
      const size_t rows = result->rowsCount();
      if (rows > max_rows) {
        return absl::ResourceExhaustedError(absl::StrCat(kContext, ": the statement returned ",
                                                         rows, " rows, more than the limit of ",
                                                         max_rows));
      }
      column.reserve(rows);
      while (result->next()) {
        column.push_back(result->isNull(1) ? std::string() : result->getString(1).asStdString());
      }
    } catch (...) {
      return StatusOf(Classify(std::current_exception()), kContext);
    }
    return column;
  }

  // CheckMySqlPacketSize with the server's max_allowed_packet, read once per connection, by the
  // first bulk insert.
  std::optional<DbError> CheckPacketSize(std::string_view table, size_t statement_size) {
    if (max_allowed_packet_ == 0) {
      CountStatementSent();
      const std::unique_ptr<sql::ResultSet> result(
          plain_->executeQuery("SELECT @@max_allowed_packet"));
      max_allowed_packet_ = result->next() ? result->getUInt64(1) : 0;
    }
    return CheckMySqlPacketSize(table, statement_size, max_allowed_packet_);
  }

  static inline const sql::SQLString kBegin = "START TRANSACTION";
  static inline const sql::SQLString kCommit = "COMMIT";
  static inline const sql::SQLString kRollback = "ROLLBACK";

  // Statements and result sets belong to the connection: free them first.
  void CloseConnection() override {
    max_allowed_packet_ = 0;
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

  // LAST_INSERT_ID() of this connection, through a statement prepared on first use. One more
  // statement for the server, counted as such.
  std::optional<int64_t> LastInsertId() {
    if (last_insert_id_ == nullptr) {
      last_insert_id_.reset(connection_->prepareStatement("SELECT LAST_INSERT_ID()"));
    }
    CountStatementSent();
    const std::unique_ptr<sql::ResultSet> result(last_insert_id_->executeQuery());
    if (!result->next() || result->isNull(1)) return std::nullopt;
    return result->getInt64(1);
  }

  ExecOutcome Simple(const sql::SQLString& sql) {
    ExecOutcome outcome;
    try {
      CountStatementSent();
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
    if (error.error_class == ErrorClass::kConnection) ConnectionLost();
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
  std::vector<PreparedSlot> slots_;  // by statement id
  uint64_t max_allowed_packet_ = 0;  // the server's, once a bulk insert asked; 0: not known
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
  // The checked address when there is one: the connector must not resolve the name again.
  std::string host = !options_.host_address.empty() ? options_.host_address
                     : options_.host.empty()        ? std::string("127.0.0.1")
                                                    : options_.host;
  if (host.find(':') != std::string::npos) host = absl::StrCat("[", host, "]");
  return absl::StrCat("tcp://", host, ":", options_.port != 0 ? options_.port : 3306);
}

void MySqlDriver::ThreadStart() { driver_->threadInit(); }
void MySqlDriver::ThreadEnd() { driver_->threadEnd(); }

absl::StatusOr<std::unique_ptr<Session>> MySqlDriver::Connect() {
  return OpenMySqlSession(std::make_unique<MySqlSession>(driver_, options_, classifier_, Url()),
                          options_);
}

}  // namespace dbload::db
