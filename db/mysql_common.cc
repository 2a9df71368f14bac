#include "db/mysql_common.h"

#include <array>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "db/error_classifier.h"
#include "db/server_session.h"

namespace dbload::db {

namespace {

// Server errors (ER_*) a failed connect is told apart by.
constexpr unsigned int kAccessDenied = 1045;            // ER_ACCESS_DENIED_ERROR
constexpr unsigned int kDbAccessDenied = 1044;          // ER_DBACCESS_DENIED_ERROR
constexpr unsigned int kAccessDeniedNoPassword = 1698;  // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
constexpr unsigned int kUnknownDatabase = 1049;         // ER_BAD_DB_ERROR

}  // namespace

ServerSession::ErrorCodes MySqlErrorCodes() {
  return {.not_prepared = "1243",      // ER_UNKNOWN_STMT_HANDLER
          .wrong_parameters = "1210",  // ER_WRONG_ARGUMENTS
          .bad_bulk_shape = "1210",
          .cannot_reconnect = CannotConnectCode(Dialect::kMySql),
          .transaction_lost = "2013"};  // CR_SERVER_LOST
}

absl::StatusOr<std::unique_ptr<Session>> OpenMySqlSession(std::unique_ptr<ServerSession> session,
                                                          const ConnectionOptions& options) {
  absl::Status status = session->Open();
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat("cannot connect to mysql at ", MySqlWhere(options), " as ",
                                     options.user, ": ", status.message()));
  }
  return session;
}

std::string MySqlWhere(const ConnectionOptions& options) {
  if (!options.socket.empty()) return options.socket;
  return absl::StrCat(options.host.empty() ? "127.0.0.1" : options.host, ":",
                      options.port != 0 ? options.port : 3306);
}

std::string MySqlMessage(std::string_view text, unsigned int error_number,
                         std::string_view sqlstate) {
  return absl::StrCat(text.empty() ? "error without a message" : std::string(text), " (errno ",
                      error_number, ", SQLSTATE ", std::string(sqlstate), ")");
}

absl::Status MySqlConnectError(unsigned int error_number, std::string message) {
  switch (error_number) {
    case kAccessDenied:
    case kAccessDeniedNoPassword:
      return absl::UnauthenticatedError("authentication failed: " + message);
    case kDbAccessDenied:
      return absl::PermissionDeniedError("no such database, or no access to it: " + message);
    case kUnknownDatabase:
      return absl::NotFoundError(std::move(message));
    default:
      return absl::UnavailableError(std::move(message));
  }
}

std::optional<int64_t> IntegerOfText(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [parsed_end, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || parsed_end != end || text.empty()) return std::nullopt;
  return value;
}

std::optional<DbError> BuildMySqlBulkInsert(std::string_view table,
                                            std::span<const std::string> columns,
                                            std::span<const Value> values,
                                            const MySqlEscape& escape, std::string& sql) {
  sql = "INSERT INTO ";
  AppendQuotedIdentifier(sql, table, '`');
  sql.append(" (");
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql.append(", ");
    AppendQuotedIdentifier(sql, columns[i], '`');
  }
  sql.append(") VALUES ");
  std::array<char, 32> number;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool row_start = i % columns.size() == 0;
    if (row_start) sql.append(i == 0 ? "(" : "),(");
    if (!row_start) sql.push_back(',');
    const Value& value = values[i];
    if (const auto* text = std::get_if<std::string_view>(&value)) {
      sql.push_back('\'');
      escape(sql, *text);
      sql.push_back('\'');
    } else if (const auto* integer = std::get_if<int64_t>(&value)) {
      sql.append(number.data(),
                 std::to_chars(number.data(), number.data() + number.size(), *integer).ptr);
    } else if (const auto* real = std::get_if<double>(&value)) {
      if (!std::isfinite(*real)) {
        return DbError{.error_class = ErrorClass::kFatal,
                       .code = "1367",  // ER_ILLEGAL_VALUE_FOR_TYPE
                       .message = absl::StrCat("bulk insert into ", std::string(table), ": value ",
                                               i, " is infinite or NaN, which MySQL cannot store")};
      }
      // Scientific notation makes the literal a DOUBLE (a plain "0.1" is a DECIMAL), and the
      // shortest digits that read back as the same double lose nothing.
      sql.append(number.data(), std::to_chars(number.data(), number.data() + number.size(), *real,
                                              std::chars_format::scientific)
                                    .ptr);
    } else {
      sql.append("NULL");
    }
  }
  sql.push_back(')');
  return std::nullopt;
}

std::optional<DbError> CheckMySqlPacketSize(std::string_view table, size_t statement_size,
                                            uint64_t max_allowed_packet) {
  // The packet holds the command byte too.
  if (max_allowed_packet == 0 || statement_size + 1 <= max_allowed_packet) return std::nullopt;
  return DbError{.error_class = ErrorClass::kFatal,
                 .code = "1153",  // ER_NET_PACKET_TOO_LARGE
                 .message = absl::StrCat(
                     "bulk insert into ", std::string(table), ": the INSERT is ", statement_size,
                     " bytes, more than the server's ", "max_allowed_packet of ",
                     max_allowed_packet, "; insert fewer rows at a time")};
}

}  // namespace dbload::db
