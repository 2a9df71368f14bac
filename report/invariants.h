#ifndef DBLOAD_REPORT_INVARIANTS_H_
#define DBLOAD_REPORT_INVARIANTS_H_

#include "absl/status/status.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// What a report's invariants (RunReport.invariants, read by the coordinator) say of the run: OK
// when each holds, otherwise FailedPrecondition naming each broken one with what it read. The one
// wording of a violation, for the coordinator's log, the exit code of `dbload` and the suites.
absl::Status InvariantViolations(const dbload::v1::RunReport& report);

// "total: SUM(balance) was 4000 before the load and 4010 after (must not change)".
std::string DescribeInvariant(const dbload::v1::InvariantResult& invariant);

}  // namespace dbload

#endif  // DBLOAD_REPORT_INVARIANTS_H_
