#ifndef DBLOAD_TESTS_UNIT_STUB_SESSION_H_
#define DBLOAD_TESTS_UNIT_STUB_SESSION_H_

// A database session that answers every call with success and no rows, for unit tests that
// study one or two calls: they derive from it and override those only.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/driver.h"

namespace dbload {

class StubSession : public db::Session {
 public:
  absl::Status Prepare(int, const db::StatementSpec&) override { return absl::OkStatus(); }
  db::ExecOutcome Execute(int, std::span<const db::Value>, bool) override { return {.rows = 1}; }
  db::ExecOutcome ExecuteSql(std::string_view) override { return {}; }
  db::ExecOutcome Begin() override { return {}; }
  db::ExecOutcome Commit() override { return {}; }
  db::ExecOutcome Rollback() override { return {}; }
  absl::Status Reconnect() override { return absl::OkStatus(); }
  db::ExecOutcome BulkInsert(std::string_view, std::span<const std::string>,
                             std::span<const db::Value>) override {
    return {};
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view, size_t) override {
    return std::vector<std::string>{};
  }
};

}  // namespace dbload

#endif  // DBLOAD_TESTS_UNIT_STUB_SESSION_H_
