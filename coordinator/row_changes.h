#ifndef DBLOAD_COORDINATOR_ROW_CHANGES_H_
#define DBLOAD_COORDINATOR_ROW_CHANGES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/driver.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

// The check that a write scenario changed the tables by exactly what its executed transactions
// declare (the workload's `changes`), against the database's own counts. The coordinator takes
// the counts (row_check.h) and puts the result in the run's report.
namespace dbload {

// Rows per table that each query type of the plan's scenario adds (+) or removes (-), by query
// type; empty for workloads that declare none.
std::map<std::string, std::map<std::string, int64_t>> DeclaredChanges(const v1::Plan& plan);

// COUNT(*) of each table, on a session of its own.
absl::StatusOr<std::map<std::string, int64_t>> CountRows(db::Driver& driver,
                                                         const std::set<std::string>& tables);

// COUNT(*) of each of `tables` on a run's target (CountRows on a driver of its own), or why
// not: what the coordinator's row check (row_check.h) counts with.
using RowCounter = std::function<absl::StatusOr<std::map<std::string, int64_t>>(
    const std::set<std::string>& tables)>;

// The first column of the first row each query returns, in order, on a session of its own: what
// the workload's invariants read (NULL reads as "").
absl::StatusOr<std::vector<std::string>> ReadValues(db::Driver& driver,
                                                    const std::vector<std::string>& queries);
using ValueReader = std::function<absl::StatusOr<std::vector<std::string>>(
    const std::vector<std::string>& queries)>;

// The invariants (v1::Invariant) of a plan's workload, with their SQL in the target's dialect.
std::vector<v1::InvariantResult> PlannedInvariants(const v1::Plan& plan);
// Judges each invariant by what its query returned before and after the load (same order), into
// `report`; FailedPrecondition naming each broken one (InvariantViolations, report/invariants.h).
absl::Status CheckInvariants(std::vector<v1::InvariantResult> invariants,
                             const std::vector<std::string>& before,
                             const std::vector<std::string>& after, v1::RunReport& report);

// Adds one RowChange per declared table to `report`; DataLoss naming every table whose change
// differs from the report's executed transactions times their declared rows
// (RowChangesDisagreement, report/row_changes.h).
absl::Status CheckRowChanges(const std::map<std::string, std::map<std::string, int64_t>>& declared,
                             const std::map<std::string, int64_t>& before,
                             const std::map<std::string, int64_t>& after, v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_ROW_CHANGES_H_
