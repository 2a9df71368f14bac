#include "interval/interval_snapshot.h"

#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "plan/plan_limits.h"

namespace dbload {

uint64_t QueryTypeInterval::ErrorCount() const {
  uint64_t total = 0;
  for (const auto& [key, count] : errors) {
    if (key.first != db::ErrorClass::kIgnored) total += count;
  }
  return total;
}

uint64_t QueryTypeInterval::IgnoredCount() const {
  uint64_t total = 0;
  for (const auto& [key, count] : errors) {
    if (key.first == db::ErrorClass::kIgnored) total += count;
  }
  return total;
}

uint64_t RetryTally::Retries() const {
  uint64_t total = 0;
  for (const auto& [cause, count] : retries) total += count;
  return total;
}

void RetryTally::Add(const RetryTally& other) {
  for (const auto& [cause, count] : other.retries) retries[cause] += count;
  failed_after_retries += other.failed_after_retries;
  for (const auto& [tries, count] : other.committed_by_tries) committed_by_tries[tries] += count;
}

uint64_t IntervalSnapshot::Retries() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.retry.Retries();
  return total;
}

uint64_t IntervalSnapshot::Executed() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.response_time.TotalCount();
  return total;
}

uint64_t IntervalSnapshot::Errors() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.ErrorCount();
  return total;
}

uint64_t IntervalSnapshot::Ignored() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.IgnoredCount();
  return total;
}

uint64_t IntervalSnapshot::Statements() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.statements;
  return total;
}

void ConnectionTime::Add(const ConnectionTime& other) {
  in_db_call += other.in_db_call;
  connecting += other.connecting;
  idle += other.idle;
  in_agent += other.in_agent;
}

void IntervalSnapshot::Add(const IntervalSnapshot& other) {
  if (query_types.size() < other.query_types.size()) query_types.resize(other.query_types.size());
  for (size_t i = 0; i < other.query_types.size(); ++i) {
    query_types[i].response_time.Add(other.query_types[i].response_time);
    query_types[i].service_time.Add(other.query_types[i].service_time);
    for (const auto& [key, count] : other.query_types[i].errors) query_types[i].errors[key] += count;
    query_types[i].statements += other.query_types[i].statements;
    query_types[i].retry.Add(other.query_types[i].retry);
    query_types[i].rolled_back += other.query_types[i].rolled_back;
  }
  schedule_lag.Add(other.schedule_lag);
  dispatch_lag.Add(other.dispatch_lag);
  connect_time.Add(other.connect_time);
  connection_time.Add(other.connection_time);
  connections_opened += other.connections_opened;
  statements_prepared += other.statements_prepared;
}

void SnapshotToReport(const IntervalSnapshot& snapshot, v1::AgentReport* report) {
  report->clear_query_types();
  for (size_t i = 0; i < snapshot.query_types.size(); ++i) {
    const QueryTypeInterval& q = snapshot.query_types[i];
    if (q.response_time.Empty() && q.service_time.Empty() && q.errors.empty() &&
        q.statements == 0 && q.retry.empty() && q.rolled_back == 0) {
      continue;
    }
    v1::QueryTypeDelta* delta = report->add_query_types();
    delta->set_query_type(static_cast<uint32_t>(i));
    delta->set_statements(q.statements);
    q.response_time.ToProto(delta->mutable_response_time());
    q.service_time.ToProto(delta->mutable_service_time());
    for (const auto& [key, count] : q.errors) {
      v1::ErrorCount* error = delta->add_errors();
      error->set_error_class(std::string(db::ErrorClassName(key.first)));
      error->set_code(key.second);
      error->set_count(count);
    }
    RetryTallyToProto(q.retry, *delta);
    delta->set_rolled_back(q.rolled_back);
  }
  snapshot.schedule_lag.ToProto(report->mutable_schedule_lag());
  snapshot.dispatch_lag.ToProto(report->mutable_dispatch_lag());
  if (snapshot.connect_time.Empty()) {
    report->clear_connect_time();
  } else {
    snapshot.connect_time.ToProto(report->mutable_connect_time());
  }
  report->set_connections_opened(snapshot.connections_opened);
  report->set_statements_prepared(snapshot.statements_prepared);
  if (snapshot.connection_time.Total() > 0) {
    ConnectionTimeToProto(snapshot.connection_time, report->mutable_connection_time());
  } else {
    report->clear_connection_time();
  }
}

v1::RetryCause RetryCauseToProto(db::RetryCause cause) {
  switch (cause) {
    case db::RetryCause::kSerialization:
      return v1::SERIALIZATION;
    case db::RetryCause::kDeadlock:
      return v1::DEADLOCK;
    case db::RetryCause::kLockTimeout:
      return v1::LOCK_TIMEOUT;
  }
  return v1::RETRY_CAUSE_UNSPECIFIED;
}

void ConnectionTimeToProto(const ConnectionTime& time, v1::ConnectionTime* out) {
  out->set_in_db_call_s(static_cast<double>(time.in_db_call) / 1e9);
  out->set_connecting_s(static_cast<double>(time.connecting) / 1e9);
  out->set_idle_s(static_cast<double>(time.idle) / 1e9);
  out->set_in_agent_s(static_cast<double>(time.in_agent) / 1e9);
}

namespace {
constexpr uint64_t kMaxStatementsPerReport = 1'000'000'000'000;

absl::StatusOr<db::ErrorClass> ErrorClassFromName(const std::string& name) {
  for (db::ErrorClass c : {db::ErrorClass::kRetryable, db::ErrorClass::kConnection,
                           db::ErrorClass::kFatal, db::ErrorClass::kIgnored}) {
    if (db::ErrorClassName(c) == name) return c;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown error class '", name, "'"));
}

std::optional<db::RetryCause> RetryCauseFromProto(int cause) {
  for (db::RetryCause known : db::kRetryCauses) {
    if (RetryCauseToProto(known) == cause) return known;
  }
  return std::nullopt;
}

// The total count of an encoded histogram, or what is wrong with it.
absl::StatusOr<uint64_t> CheckHistogram(const v1::Histogram& proto) {
  // An empty histogram may arrive without a layout (nothing set at all).
  if (proto.layout() == 0 && proto.counts_size() == 0 && proto.index_gaps_size() == 0) {
    return 0;
  }
  return Histogram::CheckProto(proto);
}

// `status` with what it is about in front (built only for an error: the good path of a report
// of twenty query types would otherwise build forty strings).
absl::Status About(const absl::Status& status, absl::string_view what, int index = -1) {
  return absl::InvalidArgumentError(
      index < 0 ? absl::StrCat(what, ": ", status.message())
                : absl::StrCat("query type ", index, " ", what, ": ", status.message()));
}
}  // namespace

absl::StatusOr<CheckedReport> CheckReport(const v1::AgentReport& report, int query_type_count) {
  CheckedReport checked;
  checked.report = &report;
  IntervalSnapshot& snapshot = checked.counts;
  snapshot.query_types.resize(query_type_count);
  std::vector<bool> seen(query_type_count, false);
  for (const v1::QueryTypeDelta& delta : report.query_types()) {
    const uint32_t index = delta.query_type();
    if (index >= static_cast<uint32_t>(query_type_count)) {
      return absl::InvalidArgumentError(absl::StrCat("report names query type ", index,
                                                     " but the scenario has ", query_type_count));
    }
    if (seen[index]) {
      return absl::InvalidArgumentError(absl::StrCat("report repeats query type ", index));
    }
    seen[index] = true;
    QueryTypeInterval& q = snapshot.query_types[index];
    const int named = static_cast<int>(index);
    absl::StatusOr<uint64_t> response = CheckHistogram(delta.response_time());
    if (!response.ok()) return About(response.status(), "response time", named);
    absl::StatusOr<uint64_t> service = CheckHistogram(delta.service_time());
    if (!service.ok()) return About(service.status(), "service time", named);
    // Each report's count is bounded (a uint64 total), but the sum of twenty must not wrap.
    if (*response > std::numeric_limits<uint64_t>::max() - checked.executed) {
      return absl::InvalidArgumentError("the report's executed transactions overflow 64 bits");
    }
    checked.executed += *response;
    // A trillion statements in one interval is garbage, and sums of such would wrap.
    if (delta.statements() > kMaxStatementsPerReport) {
      return absl::InvalidArgumentError(absl::StrCat("query type ", index, ": ",
                                                     delta.statements(), " statements"));
    }
    q.statements = delta.statements();
    for (const v1::ErrorCount& error : delta.errors()) {
      absl::StatusOr<db::ErrorClass> error_class = ErrorClassFromName(error.error_class());
      if (!error_class.ok()) return error_class.status();
      q.errors[{*error_class, error.code()}] += error.count();
    }
    // Counts past what an interval can hold are garbage, and sums of such would wrap.
    const auto too_many = [&](uint64_t count, absl::string_view what) {
      return absl::InvalidArgumentError(
          absl::StrCat("query type ", index, ": ", count, " ", what, " in one interval"));
    };
    for (const v1::RetryCount& retry : delta.retries()) {
      const std::optional<db::RetryCause> cause = RetryCauseFromProto(retry.cause());
      if (!cause) {
        return absl::InvalidArgumentError(
            absl::StrCat("query type ", index, ": unknown retry cause ", retry.cause()));
      }
      if (retry.count() > kMaxStatementsPerReport) return too_many(retry.count(), "retries");
      q.retry.retries[*cause] += retry.count();
    }
    if (delta.failed_after_retries() > kMaxStatementsPerReport) {
      return too_many(delta.failed_after_retries(), "failures after retries");
    }
    q.retry.failed_after_retries = delta.failed_after_retries();
    for (const v1::TriesCount& committed : delta.committed_by_tries()) {
      if (committed.tries() < 2 || committed.tries() > kMaxTries) {
        return absl::InvalidArgumentError(
            absl::StrCat("query type ", index, ": committed after ", committed.tries(),
                         " tries (a retry policy allows 2 to ", kMaxTries, ")"));
      }
      if (committed.count() > kMaxStatementsPerReport) {
        return too_many(committed.count(), "retried commits");
      }
      q.retry.committed_by_tries[committed.tries()] += committed.count();
    }
    if (delta.rolled_back() > kMaxStatementsPerReport) {
      return too_many(delta.rolled_back(), "rollbacks by the workload");
    }
    q.rolled_back = delta.rolled_back();
  }
  if (absl::StatusOr<uint64_t> lag = CheckHistogram(report.schedule_lag()); !lag.ok()) {
    return About(lag.status(), "schedule lag");
  }
  if (absl::StatusOr<uint64_t> dispatch = CheckHistogram(report.dispatch_lag()); !dispatch.ok()) {
    return About(dispatch.status(), "dispatch lag");
  }
  if (absl::StatusOr<uint64_t> connect = CheckHistogram(report.connect_time()); !connect.ok()) {
    return About(connect.status(), "connect time");
  }
  for (const auto& [count, what] :
       {std::pair{report.connections_opened(), "connections opened"},
        std::pair{report.statements_prepared(), "statements prepared"}}) {
    if (count > kMaxStatementsPerReport) {
      return absl::InvalidArgumentError(absl::StrCat(count, " ", what, " in one interval"));
    }
  }
  checked.counts.connections_opened = report.connections_opened();
  checked.counts.statements_prepared = report.statements_prepared();
  const v1::ConnectionTime& time = report.connection_time();
  for (double seconds :
       {time.in_db_call_s(), time.connecting_s(), time.idle_s(), time.in_agent_s()}) {
    // An interval of a million connections holds about 1e6 s; 1e9 s is garbage (and would
    // overflow the nanoseconds).
    if (!(seconds >= 0 && seconds < 1e9)) {
      return absl::InvalidArgumentError(absl::StrCat("connection time ", seconds, " s"));
    }
  }
  auto nanos = [](double seconds) { return static_cast<int64_t>(seconds * 1e9); };
  snapshot.connection_time = {.in_db_call = nanos(time.in_db_call_s()),
                              .connecting = nanos(time.connecting_s()),
                              .idle = nanos(time.idle_s()),
                              .in_agent = nanos(time.in_agent_s())};
  return checked;
}

void CheckedReport::AddResponseTimesTo(Histogram& into) const {
  for (const v1::QueryTypeDelta& delta : report->query_types()) {
    into.AddProto(delta.response_time());
  }
}

void CheckedReport::AddTo(IntervalSnapshot& into) const {
  into.Add(counts);
  for (const v1::QueryTypeDelta& delta : report->query_types()) {
    QueryTypeInterval& q = into.query_types[delta.query_type()];
    q.response_time.AddProto(delta.response_time());
    q.service_time.AddProto(delta.service_time());
  }
  into.schedule_lag.AddProto(report->schedule_lag());
  into.dispatch_lag.AddProto(report->dispatch_lag());
  into.connect_time.AddProto(report->connect_time());
}

absl::StatusOr<IntervalSnapshot> SnapshotFromReport(const v1::AgentReport& report,
                                                    int query_type_count) {
  absl::StatusOr<CheckedReport> checked = CheckReport(report, query_type_count);
  if (!checked.ok()) return checked.status();
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(static_cast<size_t>(query_type_count));
  checked->AddTo(snapshot);
  return snapshot;
}

}  // namespace dbload
