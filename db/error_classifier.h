#ifndef DBLOAD_DB_ERROR_CLASSIFIER_H_
#define DBLOAD_DB_ERROR_CLASSIFIER_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "db/driver.h"

namespace dbload::db {

// Maps a server's error code (SQLSTATE or errno, as text) to an ErrorClass. A rule is either one
// exact code ("40001", "1213") or a prefix ending in '*' ("08*" covers every PostgreSQL
// connection exception); exact rules win, then the longest prefix. Exact by default, because a
// MySQL errno that merely starts with 1213 is not a deadlock. Plans may override any code.
class ErrorClassifier {
 public:
  static ErrorClassifier Defaults(Dialect dialect);

  void Set(std::string code_or_prefix, ErrorClass error_class);
  // Unknown codes are fatal: an error nobody expected must not be retried silently.
  ErrorClass Classify(std::string_view code) const;

 private:
  std::map<std::string, ErrorClass, std::less<>> rules_;
};

// Why a transaction may be worth trying again: it lost to what ran beside it, not to what it
// asked (a workload's retry policy names the causes it retries).
enum class RetryCause { kSerialization, kDeadlock, kLockTimeout };
inline constexpr RetryCause kRetryCauses[] = {RetryCause::kSerialization, RetryCause::kDeadlock,
                                              RetryCause::kLockTimeout};
std::string_view RetryCauseName(RetryCause cause);  // "serialization", "deadlock", "lock_timeout"
// The cause an error code stands for, if any: PostgreSQL 40001 (serialization_failure), 40P01
// (deadlock_detected), 55P03 (lock_not_available: lock_timeout); MySQL and MariaDB 1020
// (ER_CHECKREAD: a snapshot-isolation conflict), 1213 (ER_LOCK_DEADLOCK), 1205
// (ER_LOCK_WAIT_TIMEOUT).
std::optional<RetryCause> RetryCauseOf(Dialect dialect, std::string_view code);

// The code of a connect that failed (the server gave none, or never answered), in the
// dialect's terms: PostgreSQL 08006 (connection_failure), MySQL 2006 (CR_SERVER_GONE_ERROR);
// the noop driver's take PostgreSQL's.
const char* CannotConnectCode(Dialect dialect);

// The error codes a workload ignores, as sysbench ignores some under contention (its PostgreSQL
// driver's pgsql_check_status, its --mysql-ignore-errors): a transaction that ends with one of
// them was rolled back, is neither a success nor a failure of the run, and is counted apart as
// an ErrorClass::kIgnored error of its code. Exact codes only: a pattern would ignore errors
// nobody named. A connection error is never ignored, whatever the list says: the session is
// unusable and must reconnect, so it keeps its class (and is counted as such).
class IgnoredErrors {
 public:
  IgnoredErrors() = default;  // ignores nothing
  explicit IgnoredErrors(std::vector<std::string> codes);

  // sysbench 1.0.20's: 23505 (unique_violation), 40P01 (deadlock_detected) and 40001
  // (serialization_failure) on PostgreSQL, which its driver always ignores; on MySQL the
  // default of --mysql-ignore-errors, 1213 (ER_LOCK_DEADLOCK), 1020 (ER_CHECKREAD) and 1205
  // (ER_LOCK_WAIT_TIMEOUT). Nothing for the noop driver.
  static IgnoredErrors SysbenchDefaults(Dialect dialect);

  bool Ignores(const DbError& error) const;
  // The error as the load runner records it: of class kIgnored when Ignores(error).
  DbError Apply(DbError error) const;
  bool empty() const { return codes_.empty(); }
  const std::set<std::string, std::less<>>& codes() const { return codes_; }

 private:
  std::set<std::string, std::less<>> codes_;
};

}  // namespace dbload::db

#endif  // DBLOAD_DB_ERROR_CLASSIFIER_H_
