#ifndef DBLOAD_WORKLOAD_WORKLOAD_H_
#define DBLOAD_WORKLOAD_WORKLOAD_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "db/driver.h"
#include "db/error_classifier.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// A bound parameter that owns its text (db::Value borrows the worker's buffers).
using ParamValue = std::variant<std::monostate, int64_t, double, std::string>;
inline ParamValue OwnedValue(const db::Value& value) {
  if (const auto* number = std::get_if<int64_t>(&value)) return *number;
  if (const auto* real = std::get_if<double>(&value)) return *real;
  if (const auto* text = std::get_if<std::string_view>(&value)) return std::string(*text);
  return std::monostate();
}

// One statement of a query type with the values one transaction would bind to it.
struct ExplainTarget {
  int statement = 0;  // id: index into Scenario::Statements()
  std::vector<ParamValue> params;
};

// When a query type's failed transaction is tried again (v1::Retry, as pgbench's --max-tries).
struct RetryPolicy {
  uint32_t max_tries = 1;  // the first try included: 1 never retries
  std::vector<db::RetryCause> on;
  bool redraw = false;  // new let: values for each try
  bool Retries(db::RetryCause cause) const {
    return std::find(on.begin(), on.end(), cause) != on.end();
  }
};

// A transaction the workload itself ends with a fatal error (`code` its own, or a SQLSTATE
// that says what it found), not one the server returned: data that is not what the workload
// loaded, a sample never read.
inline db::ExecOutcome WorkloadFailure(std::string code, std::string message) {
  db::ExecOutcome outcome;
  outcome.error = db::DbError{.error_class = db::ErrorClass::kFatal,
                              .code = std::move(code),
                              .message = std::move(message)};
  return outcome;
}

// What a worker owns to run a scenario: its random streams and parameter buffers. One per
// worker thread, so nothing here is shared on the hot path.
class ScenarioWorker {
 public:
  virtual ~ScenarioWorker() = default;
  // The query type (index into Scenario::query_types()) of the next transaction.
  virtual int NextQueryType() = 0;
  // Runs one transaction of that type on `session`; the first error ends it.
  virtual db::ExecOutcome Run(int query_type, db::Session& session) = 0;
  // Runs the transaction that Run (or Retry) just failed again, with the same values where the
  // workload can keep them (a retry policy's "same values"); by default a new transaction.
  virtual db::ExecOutcome Retry(int query_type, db::Session& session) {
    return Run(query_type, session);
  }
  // A closed loop's pause, in ns, before the worker's next transaction, on top of the plan's
  // think time: the workload's own terminal waits (TPC-C's think time after the transaction it
  // ran last and keying time before the one it will run next, clause 5.2.5). Asked before the
  // first transaction too. The next transaction is intended after it, so it is never latency.
  virtual int64_t PauseNs() { return 0; }
  // For EXPLAIN (agent/plan_capture.h), not the timed path: the statements one transaction of
  // `query_type` executes, each distinct statement once, in order, with parameters drawn as
  // Run draws them (so the plan is the server's for real values). A statement whose first
  // value a later one captures is handed to `run_capturing`, which runs it and gives the value
  // (nullopt, or no function: the captured value is NULL).
  // A worker that cannot tell (a test's fake) explains nothing.
  using CaptureRun = std::function<std::optional<int64_t>(const ExplainTarget&)>;
  virtual std::vector<ExplainTarget> ExplainTargets(int query_type,
                                                    const CaptureRun& run_capturing) {
    (void)query_type;
    (void)run_capturing;
    return {};
  }
};

// Which part of the run's key spaces and random streams belongs to one worker. Partitioning
// (rather than sharing) keeps workers and agents from colliding and makes runs reproducible.
struct WorkerSlot {
  uint64_t run_seed = 0;
  uint32_t index = 0;  // 0 … count-1 across the whole run
  uint32_t count = 1;
};

// A set of named transaction types ("query types") with their statements.
class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual const std::vector<std::string>& query_types() const = 0;
  // Prepared on every session, in order: statement id = index.
  virtual std::vector<db::StatementSpec> Statements(db::Dialect dialect) const = 0;
  virtual std::unique_ptr<ScenarioWorker> NewWorker(const WorkerSlot& slot) const = 0;
  // The error codes a transaction of this scenario may end with under contention and that the
  // run goes on after, each counted apart as ignored (db::IgnoredErrors): sysbench's set for
  // oltp, nothing unless a workload says so.
  virtual db::IgnoredErrors ErrorsToIgnore(db::Dialect dialect) const {
    (void)dialect;
    return {};
  }
  // Per query type (same order as query_types()): when to try a failed transaction again.
  virtual std::vector<RetryPolicy> RetryPolicies() const {
    return std::vector<RetryPolicy>(query_types().size());
  }
  // Reads what the scenario needs from the database before the timed part (existing ids and
  // keys to sample from), once per agent and before any NewWorker, on a session of its own
  // that it opens only if it needs one (so that other scenarios cost the server nothing).
  virtual absl::Status Setup(db::Driver& driver) {
    (void)driver;
    return absl::OkStatus();
  }
};

// Schema, data and scenarios of one benchmark.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::vector<std::string> ScenarioNames() const = 0;
  virtual absl::StatusOr<std::unique_ptr<Scenario>> MakeScenario(const std::string& name) const = 0;
  // Its tables, how their data is generated, and the checks of the loaded data: what
  // `dbload prepare` loads and `dbload cleanup` drops (workload/loader.h).
  virtual dbload::v1::WorkloadSpec DataSpec() const = 0;
  // Conditions its data keeps whatever the load does, checked by the coordinator before and
  // after every run (v1::Invariant): a workload file's `invariants`, TPC-C's consistency
  // conditions.
  virtual std::vector<dbload::v1::Invariant> Invariants() const { return {}; }
};

// The signature of MakePlanWorkload, for components that take a workload source as a
// dependency.
using WorkloadFactory =
    std::function<absl::StatusOr<std::unique_ptr<Workload>>(const dbload::v1::Plan& plan)>;

// The plan's workload: from its workload_spec when it has one (workloads written in YAML, read
// into the plan by ResolvePlanWorkload of workload/workload_parser.h), else the one built in
// code of that name (oltp).
absl::StatusOr<std::unique_ptr<Workload>> MakePlanWorkload(const dbload::v1::Plan& plan);

// The workload built in code of that name (oltp), configured by the plan's workload_options.
// Unknown names and unknown or malformed options are errors that say which.
absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(
    const std::string& name, const std::map<std::string, std::string>& options);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_WORKLOAD_H_
