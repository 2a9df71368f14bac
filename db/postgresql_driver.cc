#include "db/postgresql_driver.h"

#include <libpq-fe.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <pqxx/pqxx>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/fiber_loop.h"
#include "db/probe_sql.h"
#include "db/server_session.h"

namespace dbload::db {

namespace {

// A libpq conninfo value, single-quoted so that spaces, quotes and backslashes survive.
void AppendConninfo(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  if (!out.empty()) out.push_back(' ');
  out.append(key);
  out.append("='");
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('\'');
}

// libpq's words on one line, without the framing: 'connection to server at "h", port 5 failed:
// FATAL:  x' becomes 'x'; further lines (DETAIL, LINE …) follow after "; ", libpq's
// tab-indented hints go in parentheses, and the caret line under a syntax error is dropped.
std::string CleanLibpqMessage(std::string_view text) {
  constexpr std::string_view kFailed = " failed: ";
  if (text.starts_with("connection to server")) {
    const size_t at = text.find(kFailed);
    if (at != std::string_view::npos) text.remove_prefix(at + kFailed.size());
  }
  std::string out;
  out.reserve(text.size());
  bool in_hint = false;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const bool hint = line.starts_with('\t');
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    line.remove_prefix(first);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (line == "^") continue;
    for (std::string_view severity : {"FATAL:  ", "ERROR:  "}) {
      if (line.starts_with(severity)) line.remove_prefix(severity.size());
    }
    if (hint && !in_hint) {
      out.append(out.empty() ? "(" : " (");
    } else if (hint) {
      out.push_back(' ');
    } else {
      if (in_hint) out.push_back(')');
      if (!out.empty()) out.append("; ");
    }
    in_hint = hint;
    for (char c : line) {  // "DETAIL:  x" → "DETAIL: x"
      if (c != ' ' || out.empty() || out.back() != ' ') out.push_back(c);
    }
  }
  if (in_hint) out.push_back(')');
  return out;
}

absl::Status ConnectStatus(std::string message) {
  if (absl::StrContains(message, "password authentication failed") ||
      absl::StrContains(message, "authentication failed for user") ||
      absl::StrContains(message, "no password supplied") ||
      (absl::StrContains(message, "role \"") && absl::StrContains(message, "does not exist"))) {
    return absl::UnauthenticatedError(std::move(message));
  }
  if (absl::StrContains(message, "database \"") && absl::StrContains(message, "does not exist")) {
    return absl::NotFoundError(std::move(message));
  }
  return absl::UnavailableError(std::move(message));
}

// A digit string as an int64; nothing when the field is not an integer.
std::optional<int64_t> ParseInt64(const char* text, size_t size) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text, text + size, value);
  if (ec != std::errc() || end != text + size) return std::nullopt;
  return value;
}

// One field of COPY's text format: backslash starts an escape, tab separates fields and newline
// ends the row, so those (and carriage return, which would end a row too) are escaped; \N is
// NULL. Numbers are written so that they read back as the same value.
void AppendCopyField(std::string& out, const Value& value) {
  if (const auto* text = std::get_if<std::string_view>(&value)) {
    for (char c : *text) {
      switch (c) {
        case '\\':
          out.append("\\\\");
          break;
        case '\t':
          out.append("\\t");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        default:
          out.push_back(c);
      }
    }
    return;
  }
  std::array<char, 32> number;
  char* end = number.data();
  if (const auto* integer = std::get_if<int64_t>(&value)) {
    end = std::to_chars(number.data(), number.data() + number.size(), *integer).ptr;
  } else if (const auto* real = std::get_if<double>(&value)) {
    // Shortest text that reads back as the same double ("inf", "-inf" and "nan" included, which
    // PostgreSQL accepts).
    end = std::to_chars(number.data(), number.data() + number.size(), *real).ptr;
  } else {
    out.append("\\N");
    return;
  }
  out.append(number.data(), end);
}

// Keeps server notices (e.g. "table does not exist, skipping") off stderr under load.
class QuietNotices final : public pqxx::errorhandler {
 public:
  explicit QuietNotices(pqxx::connection_base& connection) : pqxx::errorhandler(connection) {}
  bool operator()(const char[]) noexcept override { return false; }
};

// Opens a connection with libpq's non-blocking calls, waiting on its socket through the fiber's
// loop: the loop's other connections go on meanwhile, where a blocking connect would stop them
// all for as long as the server takes to answer (up to the timeout, for a server that drops
// the connection request). libpq ignores connect_timeout here, so the wait gives up by itself
// after `timeout` (≤ 0: never), with libpq's words for it. Throws as libpqxx's connect does.
PGconn* ConnectOnFiber(const std::string& conninfo, Nanos timeout) {
  PGconn* connection = PQconnectStart(conninfo.c_str());
  if (connection == nullptr) throw std::bad_alloc();
  const auto give_up = std::chrono::steady_clock::now() +
                       std::chrono::nanoseconds(timeout > 0 ? timeout : kSecond * 3600 * 24 * 365);
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;  // what PQconnectStart's state means
  bool timed_out = false;
  while (PQstatus(connection) != CONNECTION_BAD && state != PGRES_POLLING_OK &&
         state != PGRES_POLLING_FAILED) {
    const Nanos left = (give_up - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (PQsocket(connection) < 0) break;  // no socket: PQstatus says why
    {
      // Watched anew at each step: libpq may close the socket and open another (the next
      // address of a host), whose number may be the same.
      SocketWatch watch(PQsocket(connection));
      if (!watch.Wait(
              state == PGRES_POLLING_READING ? SocketEvent::kReadable : SocketEvent::kWritable,
              left)) {
        continue;  // the time ran out, or a stop interrupted the wait: the deadline decides
      }
    }
    state = PQconnectPoll(connection);
  }
  if (timed_out || PQstatus(connection) != CONNECTION_OK) {
    const std::string message = timed_out ? "timeout expired" : PQerrorMessage(connection);
    PQfinish(connection);
    throw pqxx::broken_connection(message);
  }
  return connection;
}

// libpqxx 6.4 keeps its PGconn to itself; its connection policies are the extension point that
// sees it. This one opens the connection (on a fiber without blocking its loop, see
// ConnectOnFiber) and records its handle, so that the session can run statements with libpq
// directly (see PostgreSqlSession). The thread-locals are set and read with no fiber switch in
// between: just before the connection object is made, and just after.
thread_local PGconn* opened_handle = nullptr;
thread_local Nanos connect_timeout = 0;

class HandleCapturingConnect final : public pqxx::connect_direct {
 public:
  explicit HandleCapturingConnect(const std::string& options) : pqxx::connect_direct(options) {}
  handle do_startconnect(handle original) override {
    handle connection = original;
    if (connection == nullptr && OnFiber()) {
      connection = ConnectOnFiber(options(), connect_timeout);
    } else {
      connection = pqxx::connect_direct::do_startconnect(original);
    }
    opened_handle = connection;
    return connection;
  }
};
using Connection = pqxx::basic_connection_base<HandleCapturingConnect>;

// Whether a read of `fd` would not wait: data, the peer's close, or an error to report.
bool MoreToRead(int fd) {
  char byte;
  const ssize_t got = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

// Frees a PGresult at scope exit.
struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// libpqxx opens the connection (conninfo, errors, notice handling). Statements are prepared
// (Parse, then Describe for the parameter count) and run through libpq on the same connection,
// every wait in the session's SocketWatch, so that on an event loop nothing blocks the loop.
// libpqxx 6.4's exec_prepared adds a recv() per query (PQconsumeInput, for notifications, after
// every result) and several allocations (parameter strings, pointer vectors, a shared copy of the
// statement name in every result), and reports SQLSTATEs of class 40 only as exception types:
// through it a point select cost 9.5 us of client CPU against ~6 us this way (4 connections, same
// server). Here a point select is sendto + poll + recvfrom and one PGresult; parameters are
// formatted into buffers the session keeps.
class PostgreSqlSession final : public ServerSession {
 public:
  PostgreSqlSession(const ConnectionOptions& options, const ErrorClassifier& classifier,
                    const std::string& conninfo)
      : ServerSession({.not_prepared = "26000",      // invalid_sql_statement_name
                       .wrong_parameters = "07001",  // using_clause_does_not_match_dynamic_…
                       .bad_bulk_shape = "22023",    // invalid_parameter_value
                       .cannot_reconnect = CannotConnectCode(Dialect::kPostgreSql),
                       .transaction_lost = "08006",
                       .statement_name_prefix = "s"},
                      options.session_setup),
        options_(options),
        classifier_(classifier),
        conninfo_(conninfo) {}

  ~PostgreSqlSession() override { CloseConnection(); }

  ExecOutcome Execute(int id, std::span<const Value> params, bool capture_first_value) override {
    ExecOutcome outcome;
    if (auto error = CheckExecute(id, params.size())) [[unlikely]] {
      outcome.error = std::move(error);
      return outcome;
    }
    BindParams(params);
    CountStatementSent();
    const int sent =
        PQsendQueryPrepared(handle_, names_[id].c_str(), static_cast<int>(params.size()),
                            pointers_.data(), nullptr, nullptr, /*resultFormat=*/0);
    if (pipelining_) return Queued(sent, PipelinedStatement::kStatement);
    Result result(Await(sent));
    Fill(result.get(), capture_first_value, outcome);
    return outcome;
  }

  std::optional<DbError> StartPipeline() override {
    if (auto error = EnsureConnected()) return error;
    // Non-blocking while the pipeline lasts: a long one must not block in a send while the
    // server, its answers unread, has stopped reading (see FlushPipeline).
    if (pipelining_ || PQenterPipelineMode(handle_) != 1 || PQsetnonblocking(handle_, 1) != 0) {
      return MakeError("", absl::StrCat("cannot start a pipeline: ", PQerrorMessage(handle_)));
    }
    pipelining_ = true;
    pipeline_.clear();
    return std::nullopt;
  }

  ExecOutcome EndPipeline() override {
    ExecOutcome outcome;
    if (!pipelining_) return outcome;
    bool read_since_sent = false;
    if (PQpipelineSync(handle_) != 1 || !FlushPipeline(read_since_sent)) {
      outcome.error = PipelineBroken(PQerrorMessage(handle_));
      return outcome;
    }
    // Each statement's results end with a null; after the first error the server skips the
    // rest (PGRES_PIPELINE_ABORTED) up to the sync, whose own result comes last.
    for (size_t i = 0; i < pipeline_.size(); ++i) {
      const bool commit = pipeline_[i] == PipelinedStatement::kCommit;
      while (PGresult* next = NextResult(read_since_sent)) {
        Result result(next);
        if (PQresultStatus(next) == PGRES_PIPELINE_ABORTED) continue;
        ExecOutcome answered;
        Fill(next, false, answered);  // closes the connection if it went
        if (commit) CheckCommitted(next, answered);
        if (!answered.ok() && !outcome.error) outcome.error = std::move(answered.error);
        outcome.rows += answered.rows;
        if (handle_ == nullptr) return outcome;  // the connection went: nothing more comes
      }
      if (PQstatus(handle_) != CONNECTION_OK) break;
    }
    Result sync(NextResult(read_since_sent));
    if (sync == nullptr || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC ||
        PQexitPipelineMode(handle_) != 1 || PQsetnonblocking(handle_, 0) != 0) {
      DbError lost =
          PipelineBroken(absl::StrCat("the pipeline did not end: ", PQerrorMessage(handle_)));
      if (!outcome.error || outcome.error->error_class != ErrorClass::kConnection) {
        outcome.error = std::move(lost);
      }
      return outcome;
    }
    pipelining_ = false;
    pipeline_.clear();
    // An error inside BEGIN … COMMIT left the transaction open and failed (the COMMIT was
    // skipped): end it, as the caller would have had it seen the error in time.
    if (PQtransactionStatus(handle_) == PQTRANS_INERROR) RunRollback();
    return outcome;
  }

 private:
  // Opens the connection; returns libpq's cleaned message on failure.
  absl::Status OpenConnection() override {
    CloseConnection();
    try {
      opened_handle = nullptr;
      connect_timeout = options_.connect_timeout_ns;
      connection_ = std::make_unique<Connection>(conninfo_);
      handle_ = opened_handle;
      if (handle_ == nullptr || PQstatus(handle_) != CONNECTION_OK) {
        CloseConnection();
        return absl::UnavailableError("libpq connection handle not available");
      }
      // A broken connection must surface as an error, not be reopened behind our back (with
      // its prepared statements and transaction gone, and a new PGconn we would not know).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      connection_->inhibit_reactivation(true);
#pragma GCC diagnostic pop
      notices_ = std::make_unique<QuietNotices>(*connection_);
    } catch (const std::exception& e) {
      CloseConnection();
      return ConnectStatus(Redact(CleanLibpqMessage(e.what()), options_.password));
    }
    return absl::OkStatus();
  }

  std::optional<DbError> PrepareOnServer(int id, const std::string& sql, int& parameters) override {
    if (static_cast<size_t>(id) >= names_.size()) names_.resize(id + 1);
    if (names_[id].empty()) names_[id] = absl::StrCat("s", id);
    const std::string& name = names_[id];
    // Through libpq, waiting as statements do (on a fiber, the loop goes on meanwhile).
    ExecOutcome prepared;
    Result preparation(Await(PQsendPrepare(handle_, name.c_str(), sql.c_str(), 0, nullptr)));
    Fill(preparation.get(), false, prepared);
    if (!prepared.ok()) return prepared.error;
    if (static_cast<size_t>(id) >= prepared_.size()) prepared_.resize(id + 1);
    prepared_[id] = true;
    // One more round trip, at prepare time only: the parameter count, so that Execute can refuse
    // a wrong number of values itself (the server would answer with a protocol-violation code
    // that reads like a lost connection).
    ExecOutcome described;
    Result description(Await(PQsendDescribePrepared(handle_, name.c_str())));
    Fill(description.get(), false, described);
    if (!described.ok()) return described.error;
    parameters = PQnparams(description.get());
    return std::nullopt;
  }

  void ForgetStatement(int id) override {
    if (handle_ == nullptr || static_cast<size_t>(id) >= prepared_.size() || !prepared_[id]) {
      return;
    }
    prepared_[id] = false;
    // A lost connection shows at the next call.
    Result gone(Await(PQsendQuery(handle_, absl::StrCat("DEALLOCATE ", names_[id]).c_str())));
  }

  ExecOutcome RunSql(std::string_view sql) override { return Simple(std::string(sql).c_str()); }
  ExecOutcome RunBegin() override { return Simple("BEGIN"); }
  ExecOutcome RunRollback() override { return Simple("ROLLBACK"); }

  ExecOutcome RunCommit() override {
    CountStatementSent();
    if (pipelining_) return Queued(SendInPipeline("COMMIT"), PipelinedStatement::kCommit);
    ExecOutcome outcome;
    Result result(Await(PQsendQuery(handle_, "COMMIT")));
    Fill(result.get(), false, outcome);
    CheckCommitted(result.get(), outcome);
    return outcome;
  }

  // PostgreSQL answers COMMIT of a failed transaction with ROLLBACK and no error: that is not a
  // commit. A COMMIT whose connection went may have happened.
  void CheckCommitted(const PGresult* result, ExecOutcome& outcome) {
    if (outcome.ok() && std::strcmp(PQcmdStatus(const_cast<PGresult*>(result)), "ROLLBACK") == 0) {
      outcome.error =
          DbError{.error_class = classifier_.Classify("25P02"),
                  .code = "25P02",  // in_failed_sql_transaction
                  .message = "COMMIT rolled back: a statement of the transaction failed"};
    } else if (!outcome.ok() && outcome.error->code == "08006") {
      outcome.error->code = "08007";  // transaction_resolution_unknown: COMMIT may have happened
      outcome.error->message = "connection lost during COMMIT: " + outcome.error->message;
    }
  }

  // COPY in text format: one statement and a stream of rows, the fastest way into PostgreSQL
  // short of the binary format (which would need each column's type here).
  // Nothing is sent for no values, not even the COPY.
  ExecOutcome RunBulkInsert(std::string_view table, std::span<const std::string> columns,
                            std::span<const Value> values) override {
    ExecOutcome outcome;
    std::string copy = "COPY ";
    AppendQuotedIdentifier(copy, table, '"');
    copy.append(" (");
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i > 0) copy.append(", ");
      AppendQuotedIdentifier(copy, columns[i], '"');
    }
    copy.append(") FROM STDIN");
    {
      CountStatementSent();
      Result started(PQexec(handle_, copy.c_str()));
      if (started == nullptr || PQresultStatus(started.get()) != PGRES_COPY_IN) {
        Fill(started.get(), false, outcome);  // the server's refusal: no table, no column …
        if (outcome.ok()) outcome.error = MakeError("", "COPY did not start");
        return outcome;
      }
    }

    // Rows go out in chunks: one PQputCopyData per field would cost a call (and, when libpq's
    // buffer fills, a send) per value.
    constexpr size_t kChunk = 256 * 1024;
    copy_buffer_.clear();
    copy_buffer_.reserve(kChunk + 4096);
    bool sent = true;
    for (size_t i = 0; i < values.size() && sent; ++i) {
      AppendCopyField(copy_buffer_, values[i]);
      const bool row_end = (i + 1) % columns.size() == 0;
      copy_buffer_.push_back(row_end ? '\n' : '\t');
      if (row_end && copy_buffer_.size() >= kChunk) sent = FlushCopyBuffer();
    }
    if (sent) sent = FlushCopyBuffer();
    // Ending the COPY with an error message makes the server abort it (and so not load a
    // partial batch) when sending failed half-way.
    if (PQputCopyEnd(handle_, sent ? nullptr : "dbload: sending COPY data failed") != 1) {
      sent = false;
    }

    // The COPY's result, then a null result; the connection is free for the next statement only
    // when all of them have been read.
    Result finished;
    bool stuck_in_copy = false;
    while (PGresult* next = PQgetResult(handle_)) {
      Result result(next);
      const ExecStatusType status = PQresultStatus(next);
      if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH) {
        stuck_in_copy = true;  // PQputCopyEnd did not get through: nothing more will come
        break;
      }
      if (finished == nullptr) finished = std::move(result);
    }
    if (stuck_in_copy) {
      // Still in COPY mode, which no later statement could get out of: the connection is lost
      // whatever the classifier's rules say.
      outcome.error =
          MakeError("08006", absl::StrCat("COPY could not be ended: ", PQerrorMessage(handle_)));
      outcome.error->error_class = ErrorClass::kConnection;
      ConnectionLost();
      return outcome;
    }
    Fill(finished.get(), false, outcome);
    if (outcome.ok() && !sent) outcome.error = MakeError("", PQerrorMessage(handle_));
    return outcome;
  }

  absl::StatusOr<std::vector<std::string>> RunFetchColumn(std::string_view sql,
                                                          size_t max_rows) override {
    constexpr char kContext[] = "fetch column";
    CountStatementSent();
    Result result(PQexec(handle_, std::string(sql).c_str()));
    ExecOutcome outcome;
    Fill(result.get(), false, outcome);
    if (!outcome.ok()) return StatusOf(*outcome.error, kContext);
    if (PQresultStatus(result.get()) != PGRES_TUPLES_OK || PQnfields(result.get()) < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(kContext, ": the statement returned no column: ", std::string(sql)));
    }
    const int rows = PQntuples(result.get());
    if (static_cast<size_t>(rows) > max_rows) {
      return absl::ResourceExhaustedError(absl::StrCat(kContext, ": the statement returned ", rows,
                                                       " rows, more than the limit of ", max_rows));
    }
    std::vector<std::string> column;
    column.reserve(rows);
    for (int row = 0; row < rows; ++row) {
      // NULL reads as "", which is what PQgetvalue gives for it.
      column.emplace_back(PQgetvalue(result.get(), row, 0), PQgetlength(result.get(), row, 0));
    }
    return column;
  }

  bool FlushCopyBuffer() {
    if (copy_buffer_.empty()) return true;
    const int put =
        PQputCopyData(handle_, copy_buffer_.data(), static_cast<int>(copy_buffer_.size()));
    copy_buffer_.clear();
    return put == 1;
  }

  // The connection's socket, watched from its first wait until the connection closes.
  SocketWatch& Watch() {
    const int fd = PQsocket(handle_);
    if (watch_ == nullptr || watch_->fd() != fd) {
      watch_.reset();
      watch_ = std::make_unique<SocketWatch>(fd);
    }
    return *watch_;
  }

  void CloseConnection() override {
    pipelining_ = false;
    pipeline_.clear();
    watch_.reset();  // before its socket closes
    notices_.reset();
    connection_.reset();
    handle_ = nullptr;
    prepared_.clear();
  }

  // Text-format parameters for libpq (text needs no type OIDs: the server infers them from the
  // statement, as for pgbench and sysbench). Numbers are written into per-parameter slots of
  // `numbers_` and strings are copied, NUL-terminated, into `text_`; both buffers live as long
  // as the session, so steady state allocates nothing here.
  void BindParams(std::span<const Value> params) {
    if (pointers_.size() < params.size()) {
      pointers_.resize(params.size());
      numbers_.resize(params.size());
      text_offsets_.resize(params.size());
    }
    text_.clear();
    for (size_t i = 0; i < params.size(); ++i) {
      const Value& value = params[i];
      if (const auto* integer = std::get_if<int64_t>(&value)) {
        char* begin = numbers_[i].data();
        *std::to_chars(begin, begin + numbers_[i].size() - 1, *integer).ptr = '\0';
        pointers_[i] = begin;
      } else if (const auto* real = std::get_if<double>(&value)) {
        // Shortest text that reads back as the same double.
        char* begin = numbers_[i].data();
        *std::to_chars(begin, begin + numbers_[i].size() - 1, *real).ptr = '\0';
        pointers_[i] = begin;
      } else if (const auto* text = std::get_if<std::string_view>(&value)) {
        text_offsets_[i] = text_.size();  // pointed to below: text_ may move while it grows
        text_.append(*text);
        text_.push_back('\0');
      } else {
        pointers_[i] = nullptr;  // NULL
      }
    }
    if (text_.empty()) return;
    for (size_t i = 0; i < params.size(); ++i) {
      if (std::holds_alternative<std::string_view>(params[i])) {
        pointers_[i] = text_.data() + text_offsets_[i];
      }
    }
  }

  // What PQexec does, with the wait for the answer in a SocketWatch: on an event loop's fiber,
  // the loop runs other connections meanwhile; on a thread of its own, the thread polls as
  // libpq's would. `sent`: what PQsend* returned. The last result, as PQexec's (a statement
  // gives one); null when nothing could be sent, and then PQerrorMessage says why.
  PGresult* Await(int sent) {
    if (sent != 1) return nullptr;
    // A blocking connection has sent everything by now (PQsend* flushes), unless the socket's
    // buffer was full: then PQgetResult below finishes the sending, blocking.
    PGresult* last = nullptr;
    bool read_since_sent = false;
    while (PGresult* next = NextResult(read_since_sent)) {
      PQclear(last);
      last = next;
    }
    return last;
  }

  // PQgetResult once it would not block: the next result of the statement being answered, or
  // null at its end. `read_since_sent`: whether a read came since the statement went out.
  PGresult* NextResult(bool& read_since_sent) {
    while (PQisBusy(handle_) != 0) {
      const int fd = PQsocket(handle_);
      if (fd < 0) break;  // gone: PQgetResult says why
      // The watch is edge-triggered, and PQconsumeInput reads what one read gives: the rest
      // of that edge (the server's close after its FATAL error, as a restart sends them) may
      // be waiting still, and no new edge would come for it. So after a read, look first.
      if (!read_since_sent || !MoreToRead(fd)) Watch().WaitReadable();
      read_since_sent = true;
      // A failed read (the connection went) leaves the error for PQgetResult to report.
      if (PQconsumeInput(handle_) == 0) break;
    }
    return PQgetResult(handle_);
  }

  // Sends what the pipeline still holds. Whenever the socket takes no more, libpq reads the
  // answers that came (the server stops reading while they wait unread); the wait between tries
  // is for the socket to take more, or a millisecond at most, since more answers to read may be
  // what the server waits for. Only a pipeline of more than the socket buffers' worth waits.
  bool FlushPipeline(bool& read_since_sent) {
    for (int flushed; (flushed = PQflush(handle_)) != 0;) {
      if (flushed < 0) return false;
      read_since_sent = true;
      Watch().Wait(SocketEvent::kWritable, kMillisecond);
    }
    return true;
  }

  // A pipeline whose sending or ending failed: its connection, in a state no statement can
  // follow, is closed whatever the classifier's rules say.
  DbError PipelineBroken(std::string_view message) {
    DbError error = MakeError("08006", message);
    error.error_class = ErrorClass::kConnection;
    if (handle_ != nullptr) ConnectionLost();
    return error;
  }

  enum class PipelinedStatement : uint8_t { kStatement, kCommit };
  // A statement sent in the pipeline (`sent`: what PQsend* returned), answered at its end.
  ExecOutcome Queued(int sent, PipelinedStatement statement) {
    ExecOutcome outcome;
    if (sent != 1) {
      Fill(nullptr, false, outcome);  // libpq's words, and a connection it reports bad is gone
      return outcome;
    }
    pipeline_.push_back(statement);
    return outcome;
  }

  // The extended protocol's way to send a statement with no parameters: pipeline mode has no
  // simple queries.
  int SendInPipeline(const char* sql) {
    return PQsendQueryParams(handle_, sql, 0, nullptr, nullptr, nullptr, nullptr, 0);
  }

  ExecOutcome Simple(const char* sql) {
    CountStatementSent();
    if (pipelining_) return Queued(SendInPipeline(sql), PipelinedStatement::kStatement);
    ExecOutcome outcome;
    Result result(Await(PQsendQuery(handle_, sql)));
    Fill(result.get(), true, outcome);
    return outcome;
  }

  void Fill(const PGresult* result, bool capture_first_value, ExecOutcome& outcome) {
    switch (result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result)) {
      case PGRES_TUPLES_OK:
        outcome.rows = PQntuples(result);
        if (capture_first_value && outcome.rows > 0 && !PQgetisnull(result, 0, 0)) {
          outcome.first_value = ParseInt64(PQgetvalue(result, 0, 0), PQgetlength(result, 0, 0));
        }
        return;
      case PGRES_COMMAND_OK: {
        const char* affected = PQcmdTuples(const_cast<PGresult*>(result));
        outcome.rows = ParseInt64(affected, std::strlen(affected)).value_or(0);
        return;
      }
      case PGRES_EMPTY_QUERY:
        return;
      default:
        break;
    }
    const char* sqlstate =
        result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const char* message = result != nullptr ? PQresultErrorMessage(result) : "";
    if (message == nullptr || *message == '\0') message = PQerrorMessage(handle_);
    outcome.error = MakeError(sqlstate != nullptr ? sqlstate : "", message);
  }

  DbError MakeError(std::string code, std::string_view message) {
    DbError error{.error_class = code.empty() ? ErrorClass::kFatal : classifier_.Classify(code),
                  .code = std::move(code),
                  .message = Redact(CleanLibpqMessage(message), options_.password)};
    // Whatever the error said, a connection libpq reports as bad is gone.
    if (handle_ == nullptr || PQstatus(handle_) != CONNECTION_OK) {
      error.error_class = ErrorClass::kConnection;
      if (error.code.empty()) error.code = "08006";  // connection_failure
    }
    if (error.error_class == ErrorClass::kConnection) ConnectionLost();
    if (error.message.empty()) error.message = "no message from libpq";
    return error;
  }

  // Copies: a session may outlive nothing of its driver.
  const ConnectionOptions options_;
  const ErrorClassifier classifier_;
  const std::string conninfo_;

  std::unique_ptr<Connection> connection_;
  std::unique_ptr<QuietNotices> notices_;
  PGconn* handle_ = nullptr;  // connection_'s libpq connection; null when there is none
  std::unique_ptr<SocketWatch> watch_;  // handle_'s socket, once waited on
  // Between StartPipeline and EndPipeline: what was sent, in order, to be answered at the end.
  bool pipelining_ = false;
  std::vector<PipelinedStatement> pipeline_;
  std::vector<std::string> names_;  // statement id → its name on the server, "s<id>"
  std::vector<bool> prepared_;      // statement id → prepared on the open connection

  std::vector<const char*> pointers_;
  std::vector<std::array<char, 32>> numbers_;
  std::vector<size_t> text_offsets_;
  std::string text_;
  std::string copy_buffer_;  // BulkInsert's rows, between two PQputCopyData calls
};

}  // namespace

PostgreSqlDriver::PostgreSqlDriver(ConnectionOptions options)
    : PostgreSqlDriver(std::move(options), ErrorClassifier::Defaults(Dialect::kPostgreSql)) {}

PostgreSqlDriver::PostgreSqlDriver(ConnectionOptions options, ErrorClassifier classifier)
    : options_(std::move(options)), classifier_(std::move(classifier)) {
  AppendConninfo(conninfo_, "host", options_.socket.empty() ? options_.host : options_.socket);
  // host stays for TLS and the server's view of us; hostaddr is what libpq connects to, so that
  // it does not resolve the name again.
  if (options_.socket.empty()) AppendConninfo(conninfo_, "hostaddr", options_.host_address);
  if (options_.port != 0) AppendConninfo(conninfo_, "port", absl::StrCat(options_.port));
  AppendConninfo(conninfo_, "user", options_.user);
  AppendConninfo(conninfo_, "password", options_.password);
  AppendConninfo(conninfo_, "dbname", options_.database);
  if (options_.connect_timeout_ns > 0) {
    // libpq counts whole seconds (and treats 1 as 2); round up so that a short timeout is not 0
    // (which would mean "wait forever").
    const int64_t seconds = (options_.connect_timeout_ns + 999'999'999) / 1'000'000'000;
    AppendConninfo(conninfo_, "connect_timeout", absl::StrCat(seconds));
  }
  AppendConninfo(conninfo_, "application_name", kPostgresApplicationName);
}

std::string PostgreSqlDriver::Endpoint() const {
  const uint32_t port = options_.port != 0 ? options_.port : 5432;
  if (!options_.socket.empty()) return absl::StrCat(options_.socket, "/.s.PGSQL.", port);
  return absl::StrCat(options_.host.empty() ? "localhost" : options_.host, ":", port);
}

absl::StatusOr<std::unique_ptr<Session>> PostgreSqlDriver::Connect() {
  auto session = std::make_unique<PostgreSqlSession>(options_, classifier_, conninfo_);
  absl::Status status = session->Open();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("cannot connect to postgresql at ", Endpoint(),
                                                    " as ", options_.user, ": ", status.message()));
  }
  return session;
}

}  // namespace dbload::db
