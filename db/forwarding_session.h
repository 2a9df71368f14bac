#ifndef DBLOAD_DB_FORWARDING_SESSION_H_
#define DBLOAD_DB_FORWARDING_SESSION_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/driver.h"

namespace dbload::db {

// A session that passes every call on to another, for a decorator to override only what it
// watches (the agent's side sessions, tests' counting sessions). Its own statements_sent() and
// counts stay 0: read the inner session's.
class ForwardingSession : public Session {
 public:
  explicit ForwardingSession(std::unique_ptr<Session> inner) : inner_(std::move(inner)) {}

  absl::Status Prepare(int id, const StatementSpec& statement) override {
    return inner_->Prepare(id, statement);
  }
  ExecOutcome Execute(int id, std::span<const Value> params, bool capture_first_value) override {
    return inner_->Execute(id, params, capture_first_value);
  }
  ExecOutcome ExecuteSql(std::string_view sql) override { return inner_->ExecuteSql(sql); }
  ExecOutcome Begin() override { return inner_->Begin(); }
  ExecOutcome Commit() override { return inner_->Commit(); }
  ExecOutcome Rollback() override { return inner_->Rollback(); }
  absl::Status Reconnect() override { return inner_->Reconnect(); }
  std::optional<DbError> StartPipeline() override { return inner_->StartPipeline(); }
  ExecOutcome EndPipeline() override { return inner_->EndPipeline(); }
  ExecOutcome BulkInsert(std::string_view table, std::span<const std::string> columns,
                         std::span<const Value> values) override {
    return inner_->BulkInsert(table, columns, values);
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql,
                                                       size_t max_rows) override {
    return inner_->FetchColumn(sql, max_rows);
  }

 protected:
  const Session& inner() const { return *inner_; }

 private:
  const std::unique_ptr<Session> inner_;
};

}  // namespace dbload::db

#endif  // DBLOAD_DB_FORWARDING_SESSION_H_
