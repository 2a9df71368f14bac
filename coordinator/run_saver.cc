#include "coordinator/run_saver.h"

#include <malloc.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/background_thread.h"
#include "base/thread_name.h"
#include "proto/run_outcome.h"

namespace dbload {

RunSaver::RunSaver(Write write, Log log) : write_(std::move(write)), log_(std::move(log)) {
  if (enabled()) {
    writer_ = std::thread([this] {
      NameThisThread("dbload-saver");
      MakeThisThreadBackground();
      WriterMain();
    });
  }
}

RunSaver::~RunSaver() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  writer_.join();
}

void RunSaver::Save(v1::RunReport report, const std::string& run_id) {
  if (!enabled()) return;
  report.set_run_id(run_id);
  {
    std::lock_guard lock(mu_);
    auto same_run = std::find_if(queued_.begin(), queued_.end(), [&](const v1::RunReport& queued) {
      return queued.run_id() == run_id;
    });
    if (same_run != queued_.end()) {
      *same_run = std::move(report);
    } else {
      queued_.push_back(std::move(report));
    }
  }
  changed_.notify_all();
}

void RunSaver::Flush() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return queued_.empty() && !writing_; });
}

void RunSaver::WriterMain() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stopping, with everything written
    v1::RunReport report = std::move(queued_.front());
    queued_.erase(queued_.begin());
    writing_ = true;
    lock.unlock();
    if (absl::Status saved = write_(report); !saved.ok() && log_) {
      log_(absl::StrCat("run ", report.run_id(), ": ", saved.message()));
    }
    report = v1::RunReport();
#if defined(__GLIBC__)
    // Every save builds the whole report so far and its JSON: transient, and growing with the
    // run. glibc kept the freed pages in its arenas, so the coordinator's RSS grew with each
    // save (measured with 3 agents on the noop driver: 22.4 to 28.2 MiB over the run's second
    // to twelfth 10-s sample without this; 20.3 to 20.8 MiB with it).
    malloc_trim(0);
#endif
    lock.lock();
    writing_ = false;
    changed_.notify_all();
  }
}

RestoredRun Restore(const v1::RunReport& report) {
  RestoredRun restored;
  restored.run_state = RunStateOf(report);
  if (restored.run_state == v1::RUN_STATE_UNSPECIFIED) restored.run_state = v1::RUN_STATE_FINISHED;
  restored.state = report.state().empty() ? RunStateText(restored.run_state) : report.state();
  restored.progress.set_run_id(report.run_id());
  restored.progress.set_run_state(restored.run_state);
  restored.progress.set_state(restored.state);
  restored.progress.set_end_reason(report.end_reason());
  restored.progress.set_end_reason_kind(EndReasonKindOf(report));
  restored.progress.set_degraded(report.degraded());
  return restored;
}

std::string LatestRestored(const std::vector<v1::RunReport>& reports) {
  std::string latest, latest_started_at;
  for (const v1::RunReport& report : reports) {
    if (report.started_at() >= latest_started_at) {
      latest_started_at = report.started_at();
      latest = report.run_id();
    }
  }
  return latest;
}

}  // namespace dbload
