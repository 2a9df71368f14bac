#ifndef DBLOAD_SUITE_SUITE_RUNNER_H_
#define DBLOAD_SUITE_SUITE_RUNNER_H_

#include <atomic>
#include <functional>
#include <ostream>
#include <string>

#include <vector>

#include "absl/status/status.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// What `dbload suite run` needs from the rest of dbload, for one plan at a time: the same code
// as `dbload prepare`, `dbload run` / `submit --wait` and `dbload cleanup` (cli/command_suite.cc);
// fakes in unit tests.
class SuiteExecutor {
 public:
  virtual ~SuiteExecutor() = default;
  // Creates, loads and validates the plan's workload data on its target.
  virtual absl::Status Prepare(const dbload::v1::Plan& plan) = 0;
  // Drops what Prepare created.
  virtual absl::Status Cleanup(const dbload::v1::Plan& plan) = 0;
  // Each per-second sample of a run as it comes (those `dbload run` prints), on the thread that
  // called Run.
  using IntervalSink = std::function<void(const dbload::v1::IntervalSample&)>;
  // Runs the plan to its end, feeding `on_interval`, and saves its report as JSON at
  // `report_path` (atomically; no file when the run never started). Returns dbload's exit code
  // for the run (kExitOk …).
  virtual int Run(const dbload::v1::Plan& plan, const std::string& report_path,
                  const IntervalSink& on_interval) = 0;
};

struct SuiteRunOptions {
  std::string directory;  // DIR: suite.json and runs/
  // DIR/suite.json exists: continue it (the suite must be the one recorded there), skipping the
  // runs that are done. Without it DIR must not hold a suite yet.
  bool resume = false;
  const std::atomic<bool>* interrupted = nullptr;  // Ctrl-C
  // Progress: a line per run as it starts, inside it one every kSuiteProgressEvery of the run's
  // time at most (and its last second's), one as it ends.
  std::ostream* out = nullptr;
  // RFC 3339 UTC "now", for the index's started_at / finished_at (injected for tests).
  std::function<std::string()> now;
  // How the suite was read, recorded in DIR/suite.json (--resume refuses another way): --scale,
  // --time-scale, every --set in order.
  double scale = 1;
  double time_scale = 1;
  std::vector<std::string> overrides;
};

inline constexpr double kSuiteProgressEvery = 10;  // seconds of a run between its lines

// Whether RunSuite would start in DIR, writing nothing: DIR holds no suite yet (without
// --resume), or, with --resume, the same suite read the same way (scale, time scale, --set) and
// its runs. The error names DIR and what differs.
absl::Status CheckSuiteDirectory(const dbload::v1::Suite& suite, const SuiteRunOptions& options);

// The suite's runs and planned load in words: "12 runs, about 40 s of load planned", "2 runs,
// at most 145 min of load planned (a knee search ends at its knee, ...)".
std::string DescribePlannedLoad(const dbload::v1::Suite& suite);

// A run that is done (skipped by --resume): it finished (degraded or not), or the plan's abort
// rules ended it. Failed and interrupted runs are run again.
bool SuiteRunDone(const dbload::v1::SuiteRun& run);

// Runs the suite's runs in ExpandSuite's order: per target, Prepare of each distinct workload
// (and options) of its cases when settings.prepare is "once" (not for a target with a run
// already done, on --resume), then its runs, then Cleanup when settings.cleanup. With
// "per_case", the same per case on each target: Cleanup (another case's data may be left) and
// Prepare of its workload before its first run, Cleanup after its last run unless it is the
// target's last case and settings.cleanup is false. Writes
// DIR/suite.json before the first run and after each, and each run's report where the index
// says. A failed run is recorded and the suite goes on; Ctrl-C records the current run as
// interrupted and stops. A target whose prepare fails has its runs recorded as failed, and the
// suite goes on with the next target. A degraded run (it lost an agent: exit code 4) is
// recorded as "degraded" and the suite goes on. Returns the exit code: 0 every run finished; 1
// some failed or were aborted; 4 none did but some were degraded; 2 set-up failure (DIR,
// --resume of another suite: refused as CheckSuiteDirectory says, with nothing written);
// 130 interrupted.
int RunSuite(const dbload::v1::Suite& suite, const SuiteRunOptions& options,
             SuiteExecutor& executor);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_RUNNER_H_
