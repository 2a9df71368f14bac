#include "db/dialect_sql.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace dbload::db {

std::string QuoteText(absl::string_view text, Dialect dialect) {
  std::string out;
  out.reserve(text.size() + 3);
  if (dialect != Dialect::kMySql) {
    const bool backslash = text.find('\\') != absl::string_view::npos;
    out.append(backslash ? "E'" : "'");
    for (char c : text) {
      if (c == '\'') out.push_back('\'');
      if (c == '\\') out.push_back('\\');
      out.push_back(c);
    }
  } else {
    out.push_back('\'');
    for (char c : text) {
      switch (c) {
        case '\\':
          out.append("\\\\");
          break;
        case '\'':
          out.append("\\'");
          break;
        case '\0':
          out.append("\\0");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\x1a':
          out.append("\\Z");
          break;
        default:
          out.push_back(c);
      }
    }
  }
  out.push_back('\'');
  return out;
}

std::string IntegerLiteral(int64_t value) {
  return value < 0 ? absl::StrCat("(", value, ")") : absl::StrCat(value);
}

std::string RealLiteral(double value, Dialect dialect) {
  if (!std::isfinite(value)) {
    if (dialect == Dialect::kMySql) return "NULL";
    return std::isnan(value) ? "'NaN'" : value > 0 ? "'Infinity'" : "'-Infinity'";
  }
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  return value < 0 ? absl::StrCat("(", text, ")") : text;
}

const char* ExplainPrefix(Dialect dialect) {
  return dialect == Dialect::kMySql ? "EXPLAIN FORMAT=JSON " : "EXPLAIN (FORMAT TEXT) ";
}

std::optional<SessionLockSql> SessionLock(Dialect dialect, absl::string_view scope,
                                          absl::string_view name) {
  switch (dialect) {
    case Dialect::kPostgreSql: {
      const std::string key = absl::StrCat(
          "hashtextextended(", QuoteText(absl::StrCat(scope, " ", name), dialect), ", 0)");
      return SessionLockSql{.try_lock = absl::StrCat("SELECT pg_try_advisory_lock(", key, ")"),
                            .wait_lock = absl::StrCat("SELECT pg_advisory_lock(", key, ")"),
                            .wait_returns_row = false};
    }
    case Dialect::kMySql: {
      const std::string lock_name =
          absl::StrCat("CONCAT(", QuoteText(absl::StrCat(scope, " "), dialect),
                       ", SHA1(CONCAT(DATABASE(), '/', ", QuoteText(name, dialect), ")))");
      return SessionLockSql{.try_lock = absl::StrCat("SELECT GET_LOCK(", lock_name, ", 0)"),
                            .wait_lock = absl::StrCat("SELECT GET_LOCK(", lock_name, ", 31536000)"),
                            .wait_returns_row = true};
    }
    case Dialect::kNoop:
      break;
  }
  return std::nullopt;
}

const char* DataDirectoryQuery(Dialect dialect) {
  return dialect == Dialect::kMySql
             ? "SELECT @@datadir"
             : "SELECT setting FROM pg_settings WHERE name = 'data_directory'";
}

std::string TableExistsQuery(Dialect dialect, absl::string_view table) {
  if (dialect == Dialect::kMySql) {
    return absl::StrCat(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND "
        "table_name = ",
        QuoteText(table, dialect));
  }
  return absl::StrCat(
      "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND "
      "tablename = ",
      QuoteText(table, dialect));
}

std::string IsolationSql(Dialect dialect, absl::string_view level) {
  const char* words = level == "read_uncommitted"  ? "READ UNCOMMITTED"
                      : level == "read_committed"  ? "READ COMMITTED"
                      : level == "repeatable_read" ? "REPEATABLE READ"
                      : level == "serializable"    ? "SERIALIZABLE"
                                                   : nullptr;
  if (words == nullptr) return "";
  switch (dialect) {
    case Dialect::kPostgreSql:
      return absl::StrCat("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ", words);
    case Dialect::kMySql:
      return absl::StrCat("SET SESSION TRANSACTION ISOLATION LEVEL ", words);
    case Dialect::kNoop:
      break;
  }
  return "";
}

std::string AnalyzeTableSql(Dialect dialect, absl::string_view table) {
  switch (dialect) {
    case Dialect::kPostgreSql:
      return absl::StrCat("VACUUM (ANALYZE) ", table);
    case Dialect::kMySql:
      return absl::StrCat("ANALYZE TABLE ", table);
    case Dialect::kNoop:
      break;
  }
  return "";
}

}  // namespace dbload::db
