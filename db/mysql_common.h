#ifndef DBLOAD_DB_MYSQL_COMMON_H_
#define DBLOAD_DB_MYSQL_COMMON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/driver.h"
#include "db/server_session.h"

namespace dbload::db {

// What both MySQL drivers (Connector/C++: mysql_driver.h; Connector/C:
// mysql_connector_c_driver.h) say and write the same way, whatever their client library.

// The codes of the errors ServerSession makes itself, as MySQL's errnos.
ServerSession::ErrorCodes MySqlErrorCodes();

// A driver's Connect(): opens `session`; on failure the status says where it went and as whom:
// "cannot connect to mysql at HOST:PORT as USER: <why>".
absl::StatusOr<std::unique_ptr<Session>> OpenMySqlSession(std::unique_ptr<ServerSession> session,
                                                          const ConnectionOptions& options);

// "HOST:PORT" (127.0.0.1:3306 when not set) or the socket file: where a connection goes, for
// messages.
std::string MySqlWhere(const ConnectionOptions& options);

// "<text> (errno N, SQLSTATE S)": the server's or client's words with the codes that name them.
std::string MySqlMessage(std::string_view text, unsigned int error_number,
                         std::string_view sqlstate);

// A failed connect as a status by its errno: kUnauthenticated (access denied),
// kPermissionDenied (no access to the database, which is also how a missing one looks to a user
// without global privileges), kNotFound (unknown database), else kUnavailable. `message`:
// MySqlMessage's, the password already taken out.
absl::Status MySqlConnectError(unsigned int error_number, std::string message);

// The integer a text holds in full ("42", "-7"), else none: a first column captured as text.
std::optional<int64_t> IntegerOfText(std::string_view text);

// Escapes `text` for a string literal of the connection (its character set and SQL mode):
// appends it to `out`.
using MySqlEscape = std::function<void(std::string& out, std::string_view text)>;

// Session::BulkInsert's one multi-row INSERT into `table`, `values` being whole rows: a single
// round trip and a single statement for the server to parse, which is what MySQL loads fastest
// short of LOAD DATA (disabled on most servers). An infinite or NaN real, which MySQL cannot
// store, is a kFatal error naming the value.
std::optional<DbError> BuildMySqlBulkInsert(std::string_view table,
                                            std::span<const std::string> columns,
                                            std::span<const Value> values,
                                            const MySqlEscape& escape, std::string& sql);

// A bulk INSERT longer than the server's max_allowed_packet makes it drop the connection, which
// would read as a lost server: this error names the cure (fewer rows at a time) instead. None
// when it fits, or when the limit is not known (0).
std::optional<DbError> CheckMySqlPacketSize(std::string_view table, size_t statement_size,
                                            uint64_t max_allowed_packet);

}  // namespace dbload::db

#endif  // DBLOAD_DB_MYSQL_COMMON_H_
