#include "db/error_classifier.h"

#include <iterator>

namespace dbload::db {

ErrorClassifier ErrorClassifier::Defaults(Dialect dialect) {
  ErrorClassifier classifier;
  switch (dialect) {
    case Dialect::kPostgreSql:
      classifier.Set("40001", ErrorClass::kRetryable);  // serialization_failure
      classifier.Set("40P01", ErrorClass::kRetryable);  // deadlock_detected
      classifier.Set("55P03", ErrorClass::kRetryable);  // lock_not_available
      classifier.Set("08*", ErrorClass::kConnection);  // connection_exception, all of them
      classifier.Set("57P01", ErrorClass::kConnection);  // admin_shutdown
      classifier.Set("57P02", ErrorClass::kConnection);  // crash_shutdown
      classifier.Set("57P03", ErrorClass::kConnection);  // cannot_connect_now
      classifier.Set("53300", ErrorClass::kConnection);  // too_many_connections
      break;
    case Dialect::kMySql:
      classifier.Set("1213", ErrorClass::kRetryable);  // ER_LOCK_DEADLOCK
      classifier.Set("1205", ErrorClass::kRetryable);  // ER_LOCK_WAIT_TIMEOUT
      classifier.Set("1020", ErrorClass::kRetryable);  // ER_CHECKREAD (record changed)
      classifier.Set("1040", ErrorClass::kConnection);  // ER_CON_COUNT_ERROR
      classifier.Set("1053", ErrorClass::kConnection);  // ER_SERVER_SHUTDOWN
      classifier.Set("1927", ErrorClass::kConnection);  // ER_CONNECTION_KILLED
      classifier.Set("2002", ErrorClass::kConnection);  // CR_CONNECTION_ERROR
      classifier.Set("2003", ErrorClass::kConnection);  // CR_CONN_HOST_ERROR
      classifier.Set("2006", ErrorClass::kConnection);  // CR_SERVER_GONE_ERROR
      classifier.Set("2013", ErrorClass::kConnection);  // CR_SERVER_LOST
      classifier.Set("2055", ErrorClass::kConnection);  // CR_SERVER_LOST_EXTENDED
      break;
    case Dialect::kNoop:
      break;
  }
  return classifier;
}

void ErrorClassifier::Set(std::string code_or_prefix, ErrorClass error_class) {
  rules_[std::move(code_or_prefix)] = error_class;
}

ErrorClass ErrorClassifier::Classify(std::string_view code) const {
  if (auto exact = rules_.find(code); exact != rules_.end()) return exact->second;
  std::string prefix_rule;
  for (size_t length = code.size(); length > 0; --length) {
    prefix_rule.assign(code.substr(0, length)).push_back('*');
    if (auto it = rules_.find(prefix_rule); it != rules_.end()) return it->second;
  }
  return ErrorClass::kFatal;
}

IgnoredErrors::IgnoredErrors(std::vector<std::string> codes)
    : codes_(std::make_move_iterator(codes.begin()), std::make_move_iterator(codes.end())) {}

std::string_view RetryCauseName(RetryCause cause) {
  switch (cause) {
    case RetryCause::kSerialization:
      return "serialization";
    case RetryCause::kDeadlock:
      return "deadlock";
    case RetryCause::kLockTimeout:
      return "lock_timeout";
  }
  return "unknown";
}

std::optional<RetryCause> RetryCauseOf(Dialect dialect, std::string_view code) {
  switch (dialect) {
    case Dialect::kPostgreSql:
    case Dialect::kNoop:  // its injected errors (NoopOptions) take PostgreSQL's codes
      if (code == "40001") return RetryCause::kSerialization;
      if (code == "40P01") return RetryCause::kDeadlock;
      if (code == "55P03") return RetryCause::kLockTimeout;
      break;
    case Dialect::kMySql:
      if (code == "1020") return RetryCause::kSerialization;
      if (code == "1213") return RetryCause::kDeadlock;
      if (code == "1205") return RetryCause::kLockTimeout;
      break;
  }
  return std::nullopt;
}

const char* CannotConnectCode(Dialect dialect) {
  return dialect == Dialect::kMySql ? "2006" : "08006";
}

IgnoredErrors IgnoredErrors::SysbenchDefaults(Dialect dialect) {
  switch (dialect) {
    case Dialect::kPostgreSql:
      return IgnoredErrors({"23505", "40P01", "40001"});
    case Dialect::kMySql:
      return IgnoredErrors({"1213", "1020", "1205"});
    case Dialect::kNoop:
      break;
  }
  return IgnoredErrors();
}

bool IgnoredErrors::Ignores(const DbError& error) const {
  return error.error_class != ErrorClass::kConnection && codes_.contains(error.code);
}

DbError IgnoredErrors::Apply(DbError error) const {
  if (Ignores(error)) error.error_class = ErrorClass::kIgnored;
  return error;
}

}  // namespace dbload::db
