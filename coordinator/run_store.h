#ifndef DBLOAD_COORDINATOR_RUN_STORE_H_
#define DBLOAD_COORDINATOR_RUN_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// The coordinator's --state-dir: every run's report as DIR/runs/RUN_ID.json, written atomically
// (and flushed) whenever it changes, so that a restarted coordinator still serves the reports of
// finished runs and reports a run it was cut off from as interrupted, not lost.
class RunStore {
 public:
  // Opens DIR, creating DIR/runs if needed; errors name the directory.
  static absl::StatusOr<std::unique_ptr<RunStore>> Open(const std::string& dir);

  // Saves a report that names its run (report.run_id).
  absl::Status Save(const dbload::v1::RunReport& report) const;

  // Every saved report. A file that does not parse, or whose run_id does not match its name,
  // is an error naming the file: nothing is skipped silently. Leftover temporary files of a
  // write that never finished are ignored (the previous version is still in place).
  absl::StatusOr<std::vector<dbload::v1::RunReport>> LoadAll() const;

 private:
  explicit RunStore(std::string runs_dir) : runs_dir_(std::move(runs_dir)) {}
  std::string runs_dir_;
};

// What a report saved while its run was running says after a restart: the run was interrupted,
// and its numbers are those of the last save.
void MarkInterruptedByRestart(dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_RUN_STORE_H_
