#ifndef DBLOAD_COORDINATOR_RUN_SAVER_H_
#define DBLOAD_COORDINATOR_RUN_SAVER_H_

#include <functional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "coordinator/run_store.h"
#include "dbload/v1/control.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// How often a running run's report so far is written to the --state-dir, i.e. the most a
// coordinator that dies mid-run can lose of it.
inline constexpr Nanos kSaveEvery = 5 * kSecond;

// Publishes runs' reports to the --state-dir (RunStore): when a run starts, every kSaveEvery
// while it runs and when it ends. A failed save is logged and the run goes on: losing the state
// dir must not stop the load, but it must be said.
class RunSaver {
 public:
  using Log = std::function<void(const std::string&)>;

  // `store`: not owned, null without --state-dir (then nothing is saved). `log` may be empty.
  RunSaver(RunStore* store, Log log) : store_(store), log_(std::move(log)) {}

  bool enabled() const { return store_ != nullptr; }
  // Whether a running run last saved at `last_saved` is to be saved again at `now`.
  bool Due(Nanos last_saved, Nanos now) const {
    return enabled() && now - last_saved >= kSaveEvery;
  }
  // Saves `report` as the report of `run_id` (a report so far need not name its run yet).
  void Save(const dbload::v1::RunReport& report, const std::string& run_id) const;

 private:
  RunStore* store_;
  Log log_;
};

// A run of an earlier life of the coordinator (RunStore::LoadAll), served like a finished one.
struct RestoredRun {
  // The saved state, in words and as code reads it; finished when the report has none.
  std::string state;
  dbload::v1::RunState run_state = dbload::v1::RUN_STATE_UNSPECIFIED;
  // What a watcher of the restored run sees: how it ended, as it would have then.
  dbload::v1::RunProgress progress;
};
RestoredRun Restore(const dbload::v1::RunReport& report);

// The id of the restored run that started last (ties: the later one in `reports`), which an
// empty run id names; empty for no reports.
std::string LatestRestored(const std::vector<dbload::v1::RunReport>& reports);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_RUN_SAVER_H_
