#ifndef DBLOAD_CLI_ROW_CHANGES_H_
#define DBLOAD_CLI_ROW_CHANGES_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/driver.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

// The check of `dbload run` that a write scenario changed the tables by exactly what its
// executed transactions declare (the workload's `changes`), against the database's own counts.
namespace dbload::cli {

// Rows per table that each query type of the plan's scenario adds (+) or removes (-), by query
// type; empty for workloads that declare none.
std::map<std::string, std::map<std::string, int64_t>> DeclaredChanges(const v1::Plan& plan);

// COUNT(*) of each table, on a session of its own.
absl::StatusOr<std::map<std::string, int64_t>> CountRows(db::Driver& driver,
                                                         const std::set<std::string>& tables);

// Adds one RowChange per declared table to `report`; DataLoss naming every table whose change
// differs from the report's executed transactions times their declared rows.
absl::Status CheckRowChanges(const std::map<std::string, std::map<std::string, int64_t>>& declared,
                             const std::map<std::string, int64_t>& before,
                             const std::map<std::string, int64_t>& after, v1::RunReport& report);

}  // namespace dbload::cli

#endif  // DBLOAD_CLI_ROW_CHANGES_H_
