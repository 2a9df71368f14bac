#ifndef DBLOAD_COMMON_DB_ERROR_CLASSIFIER_H_
#define DBLOAD_COMMON_DB_ERROR_CLASSIFIER_H_

#include <map>
#include <string>
#include <string_view>

#include "common/db/driver.h"

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

}  // namespace dbload::db

#endif  // DBLOAD_COMMON_DB_ERROR_CLASSIFIER_H_
