#ifndef DBLOAD_COORDINATOR_RUN_SAVER_H_
#define DBLOAD_COORDINATOR_RUN_SAVER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "base/clock.h"
#include "dbload/v1/control.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// How often a running run's report so far is written to the --state-dir, i.e. the most a
// coordinator that dies mid-run can lose of it.
inline constexpr Nanos kSaveEvery = 5 * kSecond;

// Publishes runs' reports to the --state-dir (RunStore): when a run starts, every kSaveEvery
// while it runs and when it ends. A failed save is logged and the run goes on: losing the state
// dir must not stop the load, but it must be said.
//
// The writing (JSON, write, fsync, rename) happens on a thread of the saver's own. Save is
// called under the coordinator's mutex, which heartbeats and reports also need: an fsync there
// that took 5 s on a busy disk once silenced the coordinator long enough for both agents of a
// run to be declared lost (and to stop their load) in CI.
class RunSaver {
 public:
  // Stores one report under its run id (RunStore::Save in the coordinator).
  using Write = std::function<absl::Status(const dbload::v1::RunReport&)>;
  using Log = std::function<void(const std::string&)>;

  // `write` is empty without --state-dir (then nothing is saved). `log` may be empty; it is
  // called on the writer thread.
  RunSaver(Write write, Log log);
  // Writes what is queued, then stops.
  ~RunSaver();
  RunSaver(const RunSaver&) = delete;
  RunSaver& operator=(const RunSaver&) = delete;

  bool enabled() const { return static_cast<bool>(write_); }
  // Whether a running run last saved at `last_saved` is to be saved again at `now`.
  bool Due(Nanos last_saved, Nanos now) const {
    return enabled() && now - last_saved >= kSaveEvery;
  }
  // Queues `report` as the report of `run_id` (a report so far need not name its run yet) and
  // returns without waiting for the disk. A run's newer report replaces its one still queued.
  void Save(dbload::v1::RunReport report, const std::string& run_id);
  // Returns once every report queued before the call is written, or logged as not written.
  void Flush();

 private:
  void WriterMain();

  const Write write_;
  const Log log_;
  std::mutex mu_;
  std::condition_variable changed_;
  // In the order their runs were first queued; one report per run.
  std::vector<dbload::v1::RunReport> queued_;
  bool writing_ = false;
  bool stopping_ = false;
  std::thread writer_;
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
