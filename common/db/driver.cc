#include "common/db/driver.h"

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
  }
  return "unknown";
}

std::string Redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos;
       at = text.find(secret, at + 10)) {
    text.replace(at, secret.size(), "**********");
  }
  return text;
}

}  // namespace dbload::db
