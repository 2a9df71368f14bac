#include "db/noop_driver.h"

#include <random>

#include "absl/strings/str_cat.h"

namespace dbload::db {

namespace {

class NoopSession final : public Session {
 public:
  NoopSession(const NoopOptions& options, Clock& clock, uint64_t seed)
      : options_(options), clock_(clock), random_(seed) {
    CountConnectionOpened();
  }

  absl::Status Prepare(int, const StatementSpec&) override { return absl::OkStatus(); }

  // Every call is "sent": the noop server runs them all.
  ExecOutcome Execute(int, std::span<const Value>, bool capture_first_value) override {
    CountStatementSent();
    Wait();
    ExecOutcome outcome;
    if (options_.fail_every > 0 && ++executed_ % options_.fail_every == 0) {
      outcome.error = options_.injected_error;
      return outcome;
    }
    outcome.rows = 1;
    if (capture_first_value) outcome.first_value = ++last_id_;
    return outcome;
  }
  ExecOutcome ExecuteSql(std::string_view) override { return Sent(); }
  ExecOutcome Begin() override { return Sent(); }
  ExecOutcome Commit() override { return Sent(); }
  ExecOutcome Rollback() override { return Sent(); }
  absl::Status Reconnect() override {
    CountConnectionOpened();
    return absl::OkStatus();
  }

  // Refuses what the real drivers refuse, so that a loader tried against noop fails the same way.
  ExecOutcome BulkInsert(std::string_view table, std::span<const std::string> columns,
                         std::span<const Value> values) override {
    ExecOutcome outcome;
    outcome.error = CheckBulkShape(table, columns.size(), values.size(), "");
    if (outcome.ok() && !values.empty()) CountStatementSent();
    if (outcome.ok()) outcome.rows = static_cast<int64_t>(values.size() / columns.size());
    return outcome;
  }
  absl::StatusOr<std::vector<std::string>> FetchColumn(std::string_view, size_t) override {
    CountStatementSent();
    return std::vector<std::string>{};
  }

 private:
  ExecOutcome Sent() {
    CountStatementSent();
    return {};
  }

  void Wait() {
    Nanos latency = options_.fixed_latency;
    if (options_.exponential_mean > 0) {
      latency += static_cast<Nanos>(
          std::exponential_distribution<double>(1.0 / options_.exponential_mean)(random_));
    }
    if (latency > 0) clock_.SleepUntil(clock_.Now() + latency);
  }

  const NoopOptions& options_;
  Clock& clock_;
  std::mt19937_64 random_;
  int64_t executed_ = 0;
  int64_t last_id_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Session>> NoopDriver::Connect() {
  return std::make_unique<NoopSession>(options_, clock_, options_.seed + ++sessions_);
}

}  // namespace dbload::db
