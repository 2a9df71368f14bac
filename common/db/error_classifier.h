#ifndef DBLOAD_COMMON_DB_ERROR_CLASSIFIER_H_
#define DBLOAD_COMMON_DB_ERROR_CLASSIFIER_H_

#include <map>
#include <string>
#include <string_view>

#include "common/db/driver.h"

namespace dbload::db {

// Maps a server's error code (SQLSTATE or errno, as text) to an ErrorClass by longest matching
// prefix, so that "08" can cover every PostgreSQL connection exception while "40001" names one
// code. Defaults per dialect follow sysbench's choices; plans may override any code.
class ErrorClassifier {
 public:
  static ErrorClassifier Defaults(Dialect dialect);

  void Set(std::string code_prefix, ErrorClass error_class);
  // Unknown codes are fatal: an error nobody expected must not be retried silently.
  ErrorClass Classify(std::string_view code) const;

 private:
  std::map<std::string, ErrorClass, std::less<>> rules_;
};

}  // namespace dbload::db

#endif  // DBLOAD_COMMON_DB_ERROR_CLASSIFIER_H_
