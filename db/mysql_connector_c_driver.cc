#include "db/mysql_connector_c_driver.h"

#include <mysql.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/fiber_loop.h"
#include "db/mysql_common.h"
#include "db/server_session.h"

namespace dbload::db {

namespace {

// A statement as prepared on the current connection.
struct PreparedSlot {
  MYSQL_STMT* statement = nullptr;
  bool has_result_set = false;  // SELECT-like: its rows are read in full
};

// The text of a captured first column: an integer's fits, anything longer is not one.
constexpr unsigned long kFirstValueBytes = 32;

class MySqlConnectorCSession final : public ServerSession {
 public:
  MySqlConnectorCSession(const ConnectionOptions& options, const ErrorClassifier& classifier)
      : ServerSession(MySqlErrorCodes(), options.session_setup),
        options_(options),
        classifier_(classifier) {}

  ~MySqlConnectorCSession() override { CloseConnection(); }

  ExecOutcome Execute(int id, std::span<const Value> params, bool capture_first_value) override {
    ExecOutcome outcome;
    if (auto error = CheckExecute(id, params.size())) [[unlikely]] {
      outcome.error = std::move(error);
      return outcome;
    }
    MYSQL_STMT* statement = slots_[id].statement;
    if (!params.empty() && mysql_stmt_bind_param(statement, Bind(params)) != 0) [[unlikely]] {
      outcome.error = StatementError(statement);
      return outcome;
    }
    CountStatementSent();
    int failed =
        Call(mysql_stmt_execute, mysql_stmt_execute_start, mysql_stmt_execute_cont, statement);
    if (failed == 0 && slots_[id].has_result_set) {
      // Every row read from the server (stored client-side), so that its work is complete.
      failed = Call(mysql_stmt_store_result, mysql_stmt_store_result_start,
                    mysql_stmt_store_result_cont, statement);
      if (failed == 0) {
        outcome.rows = static_cast<int64_t>(mysql_stmt_num_rows(statement));
        if (capture_first_value) outcome.first_value = FirstInteger(statement);
        mysql_stmt_free_result(statement);  // client-side only: the rows are all here
      }
    } else if (failed == 0) {
      outcome.rows = static_cast<int64_t>(mysql_stmt_affected_rows(statement));
      if (capture_first_value) {
        const uint64_t generated = mysql_stmt_insert_id(statement);
        if (generated != 0) outcome.first_value = static_cast<int64_t>(generated);
      }
    }
    if (failed != 0) outcome.error = StatementError(statement);
    return outcome;
  }

 private:
  absl::Status OpenConnection() override {
    CloseConnection();
    mysql_ = mysql_init(nullptr);
    if (mysql_ == nullptr) return absl::ResourceExhaustedError("mysql_init: out of memory");
    // On a fiber, the non-blocking API: the loop's other connections go on while this one waits.
    async_ = OnFiber();
    if (async_) mysql_options(mysql_, MYSQL_OPT_NONBLOCK, nullptr);
    if (options_.connect_timeout_ns > 0) {
      const unsigned int seconds =
          static_cast<unsigned int>((options_.connect_timeout_ns + 999'999'999) / 1'000'000'000);
      mysql_options(mysql_, MYSQL_OPT_CONNECT_TIMEOUT, &seconds);
    }
    // Reconnecting behind our back would lose prepared statements and transactions silently.
    const my_bool no = 0;
    mysql_options(mysql_, MYSQL_OPT_RECONNECT, &no);
    mysql_options(mysql_, MYSQL_SET_CHARSET_NAME, "utf8mb4");

    const bool socket = !options_.socket.empty();
    // The checked address when there is one: the library must not resolve the name again.
    const std::string host = socket                           ? std::string("localhost")
                             : !options_.host_address.empty() ? options_.host_address
                             : options_.host.empty()          ? std::string("127.0.0.1")
                                                              : options_.host;
    const char* database = options_.database.empty() ? nullptr : options_.database.c_str();
    const unsigned int port = socket ? 0 : (options_.port != 0 ? options_.port : 3306);
    const char* socket_file = socket ? options_.socket.c_str() : nullptr;
    connect_deadline_ =
        std::chrono::steady_clock::now() + std::chrono::nanoseconds(options_.connect_timeout_ns);
    connecting_ = true;
    const MYSQL* connected = Call(
        mysql_real_connect, mysql_real_connect_start, mysql_real_connect_cont, mysql_, host.c_str(),
        options_.user.c_str(), options_.password.c_str(), database, port, socket_file, 0);
    connecting_ = false;
    if (connected == nullptr) {
      const unsigned int error_number = mysql_errno(mysql_);
      std::string message =
          Redact(MySqlMessage(mysql_error(mysql_), error_number, mysql_sqlstate(mysql_)),
                 options_.password);
      CloseConnection();
      return MySqlConnectError(error_number, std::move(message));
    }
    return absl::OkStatus();
  }

  std::optional<DbError> PrepareOnServer(int id, const std::string& sql, int& parameters) override {
    if (static_cast<size_t>(id) >= slots_.size()) slots_.resize(id + 1);
    PreparedSlot& slot = slots_[id];
    slot.statement = mysql_stmt_init(mysql_);
    if (slot.statement == nullptr) return LastError();
    if (Call(mysql_stmt_prepare, mysql_stmt_prepare_start, mysql_stmt_prepare_cont, slot.statement,
             sql.data(), sql.size()) != 0) {
      DbError error = StatementError(slot.statement);
      ForgetStatement(id);
      return error;
    }
    slot.has_result_set = mysql_stmt_field_count(slot.statement) > 0;
    parameters = static_cast<int>(mysql_stmt_param_count(slot.statement));
    return std::nullopt;
  }

  void ForgetStatement(int id) override {
    if (static_cast<size_t>(id) >= slots_.size() || slots_[id].statement == nullptr) return;
    // Sends COM_STMT_CLOSE, which has no answer to wait for.
    mysql_stmt_close(slots_[id].statement);
    slots_[id] = PreparedSlot{};
  }

  ExecOutcome RunSql(std::string_view sql) override { return Simple(sql); }
  ExecOutcome RunBegin() override { return Simple("START TRANSACTION"); }
  ExecOutcome RunCommit() override { return Simple("COMMIT"); }
  ExecOutcome RunRollback() override { return Simple("ROLLBACK"); }

  void ExplainLostCommit(DbError& error) override {
    error.message =
        "connection lost during COMMIT (it may or may not have happened): " + error.message;
  }

  ExecOutcome RunBulkInsert(std::string_view table, std::span<const std::string> columns,
                            std::span<const Value> values) override {
    // Escaped for the connection's character set and its NO_BACKSLASH_ESCAPES mode.
    const MySqlEscape escape = [this](std::string& out, std::string_view text) {
      const size_t at = out.size();
      out.resize(at + 2 * text.size() + 1);
      out.resize(at + mysql_real_escape_string(mysql_, out.data() + at, text.data(),
                                               static_cast<unsigned long>(text.size())));
    };
    std::string sql;
    std::optional<DbError> error = BuildMySqlBulkInsert(table, columns, values, escape, sql);
    if (!error && max_allowed_packet_ == 0) {
      const ExecOutcome limit = Simple("SELECT @@max_allowed_packet");
      if (!limit.ok()) return limit;
      max_allowed_packet_ = static_cast<uint64_t>(limit.first_value.value_or(0));
    }
    if (!error) error = CheckMySqlPacketSize(table, sql.size(), max_allowed_packet_);
    if (error) return ExecOutcome{.error = std::move(error)};
    return Simple(sql);
  }

  absl::StatusOr<std::vector<std::string>> RunFetchColumn(std::string_view sql,
                                                          size_t max_rows) override {
    constexpr char kContext[] = "fetch column";
    CountStatementSent();
    std::vector<std::string> column;
    if (!Query(sql)) return StatusOf(LastError(), kContext);
    std::unique_ptr<MYSQL_RES, decltype(&mysql_free_result)> result(StoreResult(),
                                                                    &mysql_free_result);
    if (result == nullptr) {
      if (mysql_errno(mysql_) != 0) return StatusOf(LastError(), kContext);
      return absl::InvalidArgumentError(
          absl::StrCat(kContext, ": the statement returned no column: ", std::string(sql)));
    }
    const uint64_t rows = mysql_num_rows(result.get());
    if (rows > max_rows) {
      return absl::ResourceExhaustedError(absl::StrCat(kContext, ": the statement returned ", rows,
                                                       " rows, more than the limit of ", max_rows));
    }
    column.reserve(rows);
    while (MYSQL_ROW row = mysql_fetch_row(result.get())) {
      const unsigned long* lengths = mysql_fetch_lengths(result.get());
      column.emplace_back(row[0] == nullptr ? std::string() : std::string(row[0], lengths[0]));
    }
    result.reset();  // before a lost connection's close, which a result must not outlive
    if (std::optional<DbError> error = DrainResults()) return StatusOf(*error, kContext);
    return column;
  }

  // Statements belong to the connection: closed first, as is the socket's watch.
  void CloseConnection() override {
    max_allowed_packet_ = 0;
    for (size_t id = 0; id < slots_.size(); ++id) ForgetStatement(static_cast<int>(id));
    watch_.reset();
    if (mysql_ != nullptr) mysql_close(mysql_);
    mysql_ = nullptr;
  }

  // A plain statement; a result set is read in full, its first column's integer captured.
  ExecOutcome Simple(std::string_view sql) {
    ExecOutcome outcome;
    CountStatementSent();
    if (!Query(sql)) {
      outcome.error = LastError();
      return outcome;
    }
    if (MYSQL_RES* result = StoreResult()) {
      outcome.rows = static_cast<int64_t>(mysql_num_rows(result));
      MYSQL_ROW row = mysql_fetch_row(result);
      if (row != nullptr && row[0] != nullptr) {
        outcome.first_value =
            IntegerOfText(std::string_view(row[0], mysql_fetch_lengths(result)[0]));
      }
      mysql_free_result(result);
    } else if (mysql_errno(mysql_) != 0) {
      outcome.error = LastError();
      return outcome;
    } else {
      outcome.rows = static_cast<int64_t>(mysql_affected_rows(mysql_));
    }
    outcome.error = DrainResults();
    return outcome;
  }

  // mysql_real_query, false on an error (mysql_errno says which).
  bool Query(std::string_view sql) {
    return Call(mysql_real_query, mysql_real_query_start, mysql_real_query_cont, mysql_, sql.data(),
                sql.size()) == 0;
  }

  // mysql_store_result: null for a statement without a result set, or on an error.
  MYSQL_RES* StoreResult() {
    return Call(mysql_store_result, mysql_store_result_start, mysql_store_result_cont, mysql_);
  }

  // The further results a statement may have (a procedure's CALL), read and dropped so that the
  // connection can take the next statement; the error that stopped it, if one did.
  std::optional<DbError> DrainResults() {
    while (mysql_more_results(mysql_)) {
      const int status =
          Call(mysql_next_result, mysql_next_result_start, mysql_next_result_cont, mysql_);
      if (status > 0) return LastError();
      if (MYSQL_RES* result = StoreResult()) mysql_free_result(result);
      if (status < 0) break;
    }
    return std::nullopt;
  }

  // One call of Connector/C: on a thread `blocking`; on a fiber its non-blocking pair, `start`
  // and then `resume` (its *_cont) each time what it waits for (MYSQL_WAIT_*) has come, the
  // fiber waiting on the socket in between.
  template <typename Result, typename Handle, typename... Rest>
  Result Call(Result (*blocking)(Handle, Rest...), int (*start)(Result*, Handle, Rest...),
              int (*resume)(Result*, Handle, int), Handle handle,
              std::type_identity_t<Rest>... rest) {
    if (!async_) return blocking(handle, rest...);
    Result result{};
    for (int wanted = start(&result, handle, rest...); wanted != 0;) {
      wanted = resume(&result, handle, WaitFor(wanted));
    }
    return result;
  }

  // What the library waits for (MYSQL_WAIT_*), waited for: the events that came, or
  // MYSQL_WAIT_TIMEOUT. A connect gives up at connect_timeout whatever step it is at (reaching
  // the server or waiting for its greeting), by dbload's deadline rather than by what the
  // library limits in its non-blocking mode. A wait that returns early is reported as the event,
  // which the library then tries, and waits again for if it has not come.
  int WaitFor(int wanted) {
    const SocketEvent event =
        (wanted & MYSQL_WAIT_READ) != 0 ? SocketEvent::kReadable : SocketEvent::kWritable;
    Nanos timeout = -1;
    if (connecting_ && options_.connect_timeout_ns > 0) {
      timeout = (connect_deadline_ - std::chrono::steady_clock::now()).count();
      if (timeout <= 0) return MYSQL_WAIT_TIMEOUT;
    }
    if (!Watch().Wait(event, timeout) && timeout >= 0 &&
        std::chrono::steady_clock::now() >= connect_deadline_) {
      return MYSQL_WAIT_TIMEOUT;
    }
    return wanted & (MYSQL_WAIT_READ | MYSQL_WAIT_WRITE);
  }

  // The connection's socket, watched from its first wait until the connection closes (a
  // connect may open another socket, whose number may be the same: watched anew then).
  SocketWatch& Watch() {
    const int fd = static_cast<int>(mysql_get_socket(mysql_));
    if (watch_ == nullptr || watch_->fd() != fd) {
      watch_.reset();
      watch_ = std::make_unique<SocketWatch>(fd);
    }
    return *watch_;
  }

  // Binds `params` for the next execute: numbers are copied into per-parameter slots that live
  // as long as the session, strings point at the caller's bytes (borrowed for the call).
  MYSQL_BIND* Bind(std::span<const Value> params) {
    if (binds_.size() < params.size()) {
      binds_.resize(params.size());
      numbers_.resize(params.size());
      lengths_.resize(params.size());
    }
    for (size_t i = 0; i < params.size(); ++i) {
      MYSQL_BIND& bind = binds_[i];
      bind = MYSQL_BIND{};
      const Value& value = params[i];
      if (const auto* integer = std::get_if<int64_t>(&value)) {
        numbers_[i].integer = *integer;
        bind.buffer_type = MYSQL_TYPE_LONGLONG;
        bind.buffer = &numbers_[i].integer;
      } else if (const auto* real = std::get_if<double>(&value)) {
        numbers_[i].real = *real;
        bind.buffer_type = MYSQL_TYPE_DOUBLE;
        bind.buffer = &numbers_[i].real;
      } else if (const auto* text = std::get_if<std::string_view>(&value)) {
        lengths_[i] = static_cast<unsigned long>(text->size());
        bind.buffer_type = MYSQL_TYPE_STRING;
        bind.buffer = const_cast<char*>(text->data());
        bind.buffer_length = lengths_[i];
        bind.length = &lengths_[i];
      } else {
        bind.buffer_type = MYSQL_TYPE_NULL;
      }
    }
    return binds_.data();
  }

  // The first column of the first stored row, when its text is an integer (prepared-statement
  // metadata types expressions such as "? + 1" as DOUBLE or DECIMAL, so the value decides, not
  // the type). The other columns are bound to no bytes: only the first is converted.
  std::optional<int64_t> FirstInteger(MYSQL_STMT* statement) {
    const unsigned int columns = mysql_stmt_field_count(statement);
    std::vector<MYSQL_BIND> binds(columns);
    std::array<char, kFirstValueBytes> text{};
    char nothing = 0;
    unsigned long length = 0;
    my_bool is_null = 0;
    my_bool truncated = 0;
    for (MYSQL_BIND& bind : binds) {
      bind.buffer_type = MYSQL_TYPE_STRING;
      bind.buffer = &nothing;
    }
    binds[0].buffer = text.data();
    binds[0].buffer_length = kFirstValueBytes;
    binds[0].length = &length;
    binds[0].is_null = &is_null;
    binds[0].error = &truncated;
    if (mysql_stmt_bind_result(statement, binds.data()) != 0) return std::nullopt;
    const int fetched = mysql_stmt_fetch(statement);
    if ((fetched != 0 && fetched != MYSQL_DATA_TRUNCATED) || is_null || truncated) {
      return std::nullopt;
    }
    return IntegerOfText(std::string_view(text.data(), std::min(length, kFirstValueBytes)));
  }

  DbError StatementError(MYSQL_STMT* statement) {
    return Classified(mysql_stmt_errno(statement), mysql_stmt_error(statement),
                      mysql_stmt_sqlstate(statement));
  }
  // The connection's last error (a plain statement's, or the connection's own).
  DbError LastError() {
    return Classified(mysql_errno(mysql_), mysql_error(mysql_), mysql_sqlstate(mysql_));
  }
  DbError Classified(unsigned int error_number, const char* text, const char* sqlstate) {
    DbError error;
    error.code = absl::StrCat(error_number);
    error.error_class = classifier_.Classify(error.code);
    error.message = Redact(MySqlMessage(text, error_number, sqlstate), options_.password);
    if (error.error_class == ErrorClass::kConnection) ConnectionLost();
    return error;
  }

  // Copies: a session depends on nothing of its driver.
  const ConnectionOptions options_;
  const ErrorClassifier classifier_;

  MYSQL* mysql_ = nullptr;
  bool async_ = false;  // opened on a fiber: the non-blocking API, waits in watch_
  std::unique_ptr<SocketWatch> watch_;
  bool connecting_ = false;  // in an async connect, which gives up at connect_deadline_
  std::chrono::steady_clock::time_point connect_deadline_;
  std::vector<PreparedSlot> slots_;  // by statement id
  uint64_t max_allowed_packet_ = 0;  // the server's, once a bulk insert asked; 0: not known
  // Execute's parameters, reused call after call.
  union Number {
    int64_t integer;
    double real;
  };
  std::vector<MYSQL_BIND> binds_;
  std::vector<Number> numbers_;
  std::vector<unsigned long> lengths_;
};

}  // namespace

MySqlConnectorCDriver::MySqlConnectorCDriver(ConnectionOptions options)
    : MySqlConnectorCDriver(std::move(options), ErrorClassifier::Defaults(Dialect::kMySql)) {}

MySqlConnectorCDriver::MySqlConnectorCDriver(ConnectionOptions options, ErrorClassifier classifier)
    : options_(std::move(options)), classifier_(std::move(classifier)) {
  // mysql_init would do it on first use, but not safely from several threads at once.
  static std::once_flag library;
  std::call_once(library, [] { mysql_library_init(0, nullptr, nullptr); });
}

absl::StatusOr<std::unique_ptr<Session>> MySqlConnectorCDriver::Connect() {
  return OpenMySqlSession(std::make_unique<MySqlConnectorCSession>(options_, classifier_),
                          options_);
}

}  // namespace dbload::db
