#ifndef DBLOAD_DB_DIALECT_SQL_H_
#define DBLOAD_DB_DIALECT_SQL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "db/driver.h"

namespace dbload::db {

// Every piece of SQL that dbload itself writes (not a workload's own statements) and that is
// spelled differently on PostgreSQL and on MySQL/MariaDB: literals, EXPLAIN, the prepare lock,
// catalog look-ups and statistics. Kept in one place so that supporting a third server, or a
// server version that spells one of them differently, is a change to this file alone. The
// probe's statistics queries are in probe_sql.h. kNoop is answered as PostgreSQL unless said.

// `text` as a string literal. PostgreSQL: '' doubles a quote; a string with a backslash is
// written E'…' with \\, which reads the same whatever standard_conforming_strings says.
// MySQL: \\ and \' escapes, \0 for NUL, \n \r \Z for the characters the mysql client escapes
// (the session must not have NO_BACKSLASH_ESCAPES: see kEnableBackslashEscapes).
std::string QuoteText(absl::string_view text, Dialect dialect);

// Numbers as literals; negative ones in parentheses, so that `x -?` cannot become a `--`
// comment. A non-finite real is PostgreSQL's 'NaN' / 'Infinity' / '-Infinity' (float8 reads
// them); MySQL has no such values and gets NULL.
std::string IntegerLiteral(int64_t value);
std::string RealLiteral(double value, Dialect dialect);

// Turns NO_BACKSLASH_ESCAPES off for the session, so that QuoteText's MySQL literals read as
// written. MySQL only.
inline constexpr char kEnableBackslashEscapes[] =
    "SET SESSION sql_mode = REPLACE(@@SESSION.sql_mode, 'NO_BACKSLASH_ESCAPES', '')";

// What goes before a statement to have its plan back as rows of one text column: PostgreSQL's
// text format; MySQL/MariaDB's JSON, whose one column carries what the traditional table does
// (access type, key, rows).
const char* ExplainPrefix(Dialect dialect);

// A lock held by the server session until it ends (PostgreSQL advisory lock, MySQL user lock),
// named `scope` and `name` within the current database (advisory locks are per database; MySQL's
// user locks are server-wide, so their name carries the database, hashed to fit 64 characters
// with `scope` before it). `try_lock` returns one row, 't' or '1' when it was
// taken; `wait_lock` blocks until it is, and on MySQL (whose GET_LOCK needs a timeout: one
// year) returns '1' when taken, on PostgreSQL nothing worth reading (`wait_returns_row` false).
struct SessionLockSql {
  std::string try_lock;
  std::string wait_lock;
  bool wait_returns_row = false;
};
std::optional<SessionLockSql> SessionLock(Dialect dialect, absl::string_view scope,
                                          absl::string_view name);  // none: noop

// One row: the directory where the server keeps its data. PostgreSQL shows it only to
// privileged users (then no row or an empty one).
const char* DataDirectoryQuery(Dialect dialect);

// A row when `table` exists in the session's current schema (PostgreSQL) or database (MySQL),
// whoever owns it: PostgreSQL's information_schema hides tables the user may not read and
// pg_tables does not.
std::string TableExistsQuery(Dialect dialect, absl::string_view table);

// Refreshes `table`'s statistics (and on PostgreSQL sets its visibility map and hint bits, as
// pgbench -i does); empty for noop.
// The statement that makes a session's transactions run at an isolation level: PostgreSQL's
// SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL …, MySQL's SET SESSION
// TRANSACTION ISOLATION LEVEL …. `level` is written as in plans: read_uncommitted,
// read_committed, repeatable_read or serializable; empty for anything else.
std::string IsolationSql(Dialect dialect, absl::string_view level);

std::string AnalyzeTableSql(Dialect dialect, absl::string_view table);

}  // namespace dbload::db

#endif  // DBLOAD_DB_DIALECT_SQL_H_
