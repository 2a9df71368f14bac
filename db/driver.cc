#include "db/driver.h"

#include "absl/strings/str_cat.h"

namespace dbload::db {

std::string_view DialectName(Dialect dialect) {
  switch (dialect) {
    case Dialect::kPostgreSql:
      return "postgresql";
    case Dialect::kMySql:
      return "mysql";
    case Dialect::kNoop:
      return "noop";
  }
  return "unknown";
}

std::string_view ErrorClassName(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::kRetryable:
      return "retryable";
    case ErrorClass::kConnection:
      return "connection";
    case ErrorClass::kFatal:
      return "fatal";
    case ErrorClass::kIgnored:
      return "ignored";
  }
  return "unknown";
}

std::optional<DbError> Session::StartPipeline() {
  return DbError{.error_class = ErrorClass::kFatal,
                 .code = "",
                 .message = "this session cannot pipeline statements (PostgreSQL's can)"};
}

absl::Status ReadRolledBack(Session& session, std::string_view what,
                            const std::function<absl::Status()>& reads) {
  if (const ExecOutcome begun = session.Begin(); !begun.ok()) {
    return absl::UnavailableError(
        absl::StrCat(std::string(what), ": BEGIN: ", begun.error->message));
  }
  absl::Status status = reads();
  session.Rollback();
  return status;
}

std::string Redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos;
       at = text.find(secret, at + 10)) {
    text.replace(at, secret.size(), "**********");
  }
  return text;
}

std::optional<DbError> CheckBulkShape(std::string_view table, size_t columns, size_t values,
                                      std::string_view code) {
  std::string problem;
  if (columns == 0) {
    problem = "no columns given";
  } else if (values % columns != 0) {
    problem = absl::StrCat(values, " values are not whole rows of ", columns, " columns");
  } else {
    return std::nullopt;
  }
  return DbError{.error_class = ErrorClass::kFatal,
                 .code = std::string(code),
                 .message = absl::StrCat("bulk insert into ", std::string(table), ": ", problem)};
}

}  // namespace dbload::db
