#ifndef DBLOAD_REPORT_ROW_CHANGES_H_
#define DBLOAD_REPORT_ROW_CHANGES_H_

#include "absl/status/status.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// What a report's row changes (RunReport.row_changes, counted by the coordinator) say of the
// run: OK when every table changed by what the executed transactions declare, otherwise
// DataLoss naming each table that did not and both changes. The one wording of a disagreement,
// for the coordinator's log and the exit code of `dbload`.
absl::Status RowChangesDisagreement(const dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_REPORT_ROW_CHANGES_H_
