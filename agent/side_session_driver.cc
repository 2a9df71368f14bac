#include "agent/side_session_driver.h"

#include <utility>

namespace dbload {
namespace {

class SideSession final : public db::Session {
 public:
  SideSession(std::unique_ptr<db::Session> inner, IntervalRecorder& recorder)
      : inner_(std::move(inner)), recorder_(recorder) {}
  ~SideSession() override {
    IntervalRecorder::SessionWorkSeen seen;
    recorder_.RecordSessionWork(*inner_, seen);
  }

  absl::Status Prepare(int id, const db::StatementSpec& statement) override {
    return inner_->Prepare(id, statement);
  }
  db::ExecOutcome Execute(int id, std::span<const db::Value> params,
                          bool capture_first_value) override {
    return inner_->Execute(id, params, capture_first_value);
  }
  db::ExecOutcome ExecuteSql(std::string_view sql) override { return inner_->ExecuteSql(sql); }
  db::ExecOutcome Begin() override { return inner_->Begin(); }
  db::ExecOutcome Commit() override { return inner_->Commit(); }
  db::ExecOutcome Rollback() override { return inner_->Rollback(); }
  absl::Status Reconnect() override { return inner_->Reconnect(); }
  db::ExecOutcome BulkInsert(std::string_view table, std::span<const std::string> columns,
                             std::span<const db::Value> values) override {
    return inner_->BulkInsert(table, columns, values);
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view sql,
                                                       size_t max_rows) override {
    return inner_->FetchColumn(sql, max_rows);
  }

 private:
  const std::unique_ptr<db::Session> inner_;
  IntervalRecorder& recorder_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<db::Session>> SideSessionDriver::Connect() {
  absl::StatusOr<std::unique_ptr<db::Session>> connected = inner_.Connect();
  if (!connected.ok()) return connected.status();
  return std::make_unique<SideSession>(*std::move(connected), recorder_);
}

}  // namespace dbload
