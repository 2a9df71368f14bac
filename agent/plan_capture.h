#ifndef DBLOAD_AGENT_PLAN_CAPTURE_H_
#define DBLOAD_AGENT_PLAN_CAPTURE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "db/driver.h"
#include "workload/workload.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// `value` as a literal of `dialect`'s SQL: NULL, or as db/dialect_sql.h writes integers, reals
// and strings (the capture's MySQL session turns NO_BACKSLASH_ESCAPES off for them).
std::string SqlLiteral(const ParamValue& value, db::Dialect dialect);

// `sql` (in its dialect's placeholder style, as Scenario::Statements gives it) with each
// placeholder replaced by its value as a literal; a placeholder without a value becomes NULL.
std::string InlineParams(std::string_view sql, std::span<const ParamValue> params,
                         db::Dialect dialect);

// The database's plan of every query type of the scenario, explained on `session` with the
// values `worker` draws (ScenarioWorker::ExplainTargets): PostgreSQL `EXPLAIN (FORMAT TEXT)`;
// MySQL/MariaDB `EXPLAIN FORMAT=JSON`, whose one column carries what the traditional table
// does (access type, key, rows) and is read by Session::FetchColumn like PostgreSQL's lines.
// A query type of several statements gets one QueryPlan: `statement` holds them one per line,
// `plan` each statement's plan after a `-- statement N: …` line; a statement EXPLAIN cannot
// take (transaction control, DDL) is named there as skipped; one the server refuses to explain
// goes into `error` (with its number), the others' plans stay. Never fails as a whole.
// Each query type is explained inside a transaction that is rolled back, so that a capture
// commits nothing (the commit reconciliation counts the load's commits). A statement whose
// result a later one captures is run first, in that transaction, so that the later statements
// are explained with the value they would really get (and see the rows the earlier ones
// wrote); the rollback takes what it wrote.
std::vector<v1::QueryPlan> ExplainQueryTypes(const Scenario& scenario, ScenarioWorker& worker,
                                             db::Session& session, db::Dialect dialect);

// When a capture is taken: at the start of a stage (1-based; 0 without stages: the measured
// part's start), or after the load ended.
struct PlanMoment {
  uint32_t stage = 0;
  bool after_load = false;
};

// Captures the plans on a thread and a connection of its own, so that no load worker's
// session or thread waits for EXPLAIN and the run's control loop only queues a request.
// Measured here (2 cores shared with the servers, loopback, 3 stages of 2 clients): the first
// capture includes connecting, 14-19 ms on PostgreSQL 15 (SCRAM authentication) and 4-6 ms on
// MariaDB 10.11; later ones 0.3-0.9 ms for point_select and ~1 ms for read_write's nine
// statements on MariaDB. The connection is opened at the first request and kept until the run
// ends; the load's workers never wait for any of it.
class PlanCapture {
 public:
  // Called on the capture's thread with the plans of one request.
  using Sink = std::function<void(PlanMoment moment, std::vector<v1::QueryPlan> plans)>;

  // `driver` and `scenario` must outlive this; `slot` gives the worker whose draws are bound.
  PlanCapture(db::Driver& driver, const Scenario& scenario, const WorkerSlot& slot, Sink sink);
  // Finishes the requests already made (their plans reach the sink), then closes the session.
  ~PlanCapture();
  PlanCapture(const PlanCapture&) = delete;
  PlanCapture& operator=(const PlanCapture&) = delete;

  // Queues a capture and returns at once.
  void Capture(PlanMoment moment);

 private:
  void Main();

  db::Driver& driver_;
  const Scenario& scenario_;
  const WorkerSlot slot_;
  const Sink sink_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<PlanMoment> requests_;
  bool closing_ = false;
  std::thread thread_;  // last: starts after everything it uses exists
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_PLAN_CAPTURE_H_
