#ifndef DBLOAD_TESTS_HARNESS_TEST_REPORTS_H_
#define DBLOAD_TESTS_HARNESS_TEST_REPORTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "dbload/v1/report.pb.h"

namespace dbload::testing {

// The JSON run report a run wrote (`--report FILE`), read and parsed; the error names the file.
absl::StatusOr<dbload::v1::RunReport> LoadReport(const std::string& path);

// LoadReport where a report that cannot be read or parsed is a test failure (naming the file):
// the report, or an empty one.
dbload::v1::RunReport ReadReport(const std::string& path);

// The probe's readings of `report`, one line each: their time and the PostgreSQL values that
// reconcile its counts (xact_commit, xact_rollback, the database's sessions and dbload's among
// them, which the run's end waits for), for a failure's message.
std::string PgProbeTrail(const dbload::v1::RunReport& report);

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_TEST_REPORTS_H_
