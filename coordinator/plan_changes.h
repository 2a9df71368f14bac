#ifndef DBLOAD_COORDINATOR_PLAN_CHANGES_H_
#define DBLOAD_COORDINATOR_PLAN_CHANGES_H_

// A query type whose plan changed during a run: the load itself can change it (rows inserted
// into a table analyzed empty, autovacuum's new statistics), and then the same query costs
// something else from one stage to the next with nothing in the figures to say why.

#include <string>
#include <string_view>
#include <vector>

#include "dbload/v1/report.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace dbload {

// What a plan is made of, apart from what differs between two captures of the same plan
// (costs, row estimates, the values one draw bound): PostgreSQL's text plan keeps each node's
// line up to its costs, indented as it is; MySQL/MariaDB's JSON plan keeps each table with its
// access type and key. One line per node or table, and per `-- statement N` of a query type
// of several statements. Empty when the plan tells no shape that may be compared: EXPLAIN
// failed, or the server decided on the values themselves (MySQL's "Impossible WHERE noticed
// after reading const tables": a point lookup of a row that is not there).
std::string PlanShape(std::string_view plan);

// One capture of every query type's plan, and when it was taken ("the start", "stage 2 (x)",
// "after the load"). `plans` must outlive the call.
struct PlanCaptureAt {
  std::string when;
  const google::protobuf::RepeatedPtrField<dbload::v1::QueryPlan>* plans = nullptr;
};

// Each query type whose shape differs between a capture and the one before it that had a
// shape for it, in the captures' order.
std::vector<dbload::v1::PlanChange> FindPlanChanges(const std::vector<PlanCaptureAt>& captures);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_PLAN_CHANGES_H_
