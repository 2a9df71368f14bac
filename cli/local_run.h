#ifndef DBLOAD_CLI_LOCAL_RUN_H_
#define DBLOAD_CLI_LOCAL_RUN_H_

#include <atomic>
#include <functional>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "db/driver.h"
#include "workload/workload.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

struct LocalRunHooks {
  // Called once per interval (every second, and at the end of the warm-up and of the run).
  std::function<void(const dbload::v1::IntervalSample&)> on_interval;
  // Set from a signal handler: the run stops, and its report says "interrupted".
  const std::atomic<bool>* interrupted = nullptr;
};

// Runs a validated plan in this process: warm-up, the measured part until the stop rule, one
// interval per second, and the report built from the merged histograms. Connection problems
// (refused, wrong password, missing table) are returned before any load starts.
absl::StatusOr<dbload::v1::RunReport> RunPlanLocally(const dbload::v1::Plan& plan,
                                                     db::Driver& driver, Scenario& scenario,
                                                     Clock& clock, const LocalRunHooks& hooks);

}  // namespace dbload

#endif  // DBLOAD_CLI_LOCAL_RUN_H_
