#ifndef DBLOAD_INTERVAL_INTERVAL_SNAPSHOT_H_
#define DBLOAD_INTERVAL_INTERVAL_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/histogram.h"
#include "db/driver.h"
#include "db/error_classifier.h"
#include "dbload/v1/agent.pb.h"

namespace dbload {

// What a retry policy (workload Retry) did: see v1::QueryTypeReport.retries.
struct RetryTally {
  std::map<db::RetryCause, uint64_t> retries;       // tries again, by the error that caused them
  uint64_t failed_after_retries = 0;                // transactions that failed their last try
  std::map<uint32_t, uint64_t> committed_by_tries;  // tries (> 1) → committed transactions
  bool empty() const {
    return retries.empty() && failed_after_retries == 0 && committed_by_tries.empty();
  }
  uint64_t Retries() const;
  void Add(const RetryTally& other);
};

// What one query type did in one interval.
struct QueryTypeInterval {
  Histogram response_time;  // end − intended start: includes queueing
  Histogram service_time;   // end − actual start: the database's share
  // (error class, code) -> count, ignored ones (ErrorClass::kIgnored) included
  std::map<std::pair<db::ErrorClass, std::string>, uint64_t> errors;
  // Statements the type's transactions sent, whatever their outcome (see
  // v1::QueryTypeReport.statements).
  uint64_t statements = 0;
  // Like statements, each retry lands in the interval it happened in, which may come before the
  // one of its transaction's outcome; totals over intervals are exact.
  RetryTally retry;
  // Of the executed transactions, those the workload ended with ROLLBACK by design (see
  // v1::QueryTypeReport.rolled_back); recorded after their success, so possibly an interval
  // later.
  uint64_t rolled_back = 0;
  // Errors that failed a transaction: every class but kIgnored. Ignored errors are neither
  // transactions nor errors (sysbench's "ignored errors"): stop rules, SLOs and error rates do
  // not count them, reports show them apart.
  uint64_t ErrorCount() const;
  uint64_t IgnoredCount() const;
};

// Where the connections' time went in an interval, in nanoseconds summed over connections (see
// v1::ConnectionTime).
struct ConnectionTime {
  int64_t in_db_call = 0;
  int64_t connecting = 0;
  int64_t idle = 0;
  int64_t in_agent = 0;
  int64_t Total() const { return in_db_call + connecting + idle + in_agent; }
  void Add(const ConnectionTime& other);
};

struct IntervalSnapshot {
  std::vector<QueryTypeInterval> query_types;
  Histogram schedule_lag;  // actual start − intended start, every transaction
  // The part of schedule_lag whose transaction had a free connection waiting for it: the
  // agent's own lateness, without queueing for a busy connection.
  Histogram dispatch_lag;
  // Connects timed for one transaction each (see v1::AgentReport.connect_time); empty in runs
  // that connect once.
  Histogram connect_time;
  ConnectionTime connection_time;
  // The sessions' own work, which the database's counters include (see
  // db::Session::connections_opened): connections opened (first connects and reconnects) and
  // statements prepared on the server.
  uint64_t connections_opened = 0;
  uint64_t statements_prepared = 0;
  uint64_t Executed() const;
  uint64_t Errors() const;
  uint64_t Ignored() const;
  uint64_t Statements() const;
  uint64_t Retries() const;
  // Every transaction that ended, whatever its outcome: what a start limit counts.
  uint64_t Completed() const { return Executed() + Errors() + Ignored(); }
  // Adds another snapshot's counts (same query types).
  void Add(const IntervalSnapshot& other);
};

dbload::v1::RetryCause RetryCauseToProto(db::RetryCause cause);

// Into a message with the fields retries, failed_after_retries and committed_by_tries (an
// agent's QueryTypeDelta, a report's QueryTypeReport).
template <typename Message>
void RetryTallyToProto(const RetryTally& tally, Message& out) {
  for (const auto& [cause, count] : tally.retries) {
    dbload::v1::RetryCount& retry = *out.add_retries();
    retry.set_cause(RetryCauseToProto(cause));
    retry.set_count(count);
  }
  out.set_failed_after_retries(tally.failed_after_retries);
  for (const auto& [tries, count] : tally.committed_by_tries) {
    dbload::v1::TriesCount& committed = *out.add_committed_by_tries();
    committed.set_tries(tries);
    committed.set_count(count);
  }
}

// In seconds, as reports carry it.
void ConnectionTimeToProto(const ConnectionTime& time, dbload::v1::ConnectionTime* out);

// The wire form of a snapshot, in an agent's report: only non-empty query types travel.
void SnapshotToReport(const IntervalSnapshot& snapshot, dbload::v1::AgentReport* report);
// An agent's report checked against its scenario, ready to be merged: its small counts decoded
// (errors, statements, retries, connection time) and its histograms checked but left encoded
// in the report, to be added straight from there. The coordinator merges hundreds of reports a
// second this way; decoding each histogram first zeroed, filled and walked its whole span.
struct CheckedReport {
  IntervalSnapshot counts;  // everything but the histograms, which are empty here
  uint64_t executed = 0;    // the response-time histograms' totals
  const dbload::v1::AgentReport* report = nullptr;  // must outlive this
  uint64_t Completed() const { return executed + counts.Errors() + counts.Ignored(); }
  // Adds everything the report holds to `into` (sized for the scenario's query types).
  void AddTo(IntervalSnapshot& into) const;
  // Every query type's response times, into one histogram.
  void AddResponseTimesTo(Histogram& into) const;
};
// Rejects a report that does not fit a scenario of `query_type_count` query types (an index out
// of range, a repeated query type, an unknown error class, a malformed histogram).
absl::StatusOr<CheckedReport> CheckReport(const dbload::v1::AgentReport& report,
                                          int query_type_count);
// CheckReport, then the report decoded into a snapshot of its own.
absl::StatusOr<IntervalSnapshot> SnapshotFromReport(const dbload::v1::AgentReport& report,
                                                    int query_type_count);

}  // namespace dbload

#endif  // DBLOAD_INTERVAL_INTERVAL_SNAPSHOT_H_
