#ifndef DBLOAD_SUITE_SUITE_TABLE_H_
#define DBLOAD_SUITE_SUITE_TABLE_H_

// A suite's runs read back (suite.json and each run's report) and grouped by case, load point
// and target, each figure over its repetitions: what every view of the suite report
// (suite_report.h, suite_ramp.h) is computed from.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// A suite's directory as `dbload suite run` leaves it: DIR/suite.json (SuiteIndex) and each run's
// report at SuiteRun.report, relative to DIR.
struct LoadedSuite {
  dbload::v1::SuiteIndex index;
  // In the index's order; an empty report where a run's could not be read.
  std::vector<dbload::v1::RunReport> reports;
  // In the index's order: why a run's report could not be read (naming the file), or "".
  std::vector<std::string> problems;
};

// Fails (naming the file) only when DIR/suite.json cannot be read or parsed; a run whose report
// is missing or broken is kept, with its problem, so that the report shows it.
absl::StatusOr<LoadedSuite> LoadSuite(const std::string& dir);

// One figure over the measured repetitions of a case and point on one target.
struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
  size_t n = 0;
};
// The median of the values (the mean of the middle two for an even count), min and max.
Spread SpreadOf(std::vector<double> values);

// What one target measured for one case and point: each figure over its usable runs.
struct PointFigures {
  Spread throughput;  // actual rate, /s: transactions per second (sysbench's TPS)
  Spread mean_ms;
  Spread p50_ms;
  Spread p95_ms;
  Spread p99_ms;
  // Statements per second (sysbench's QPS): RunReport.statements ÷ queries_duration_s; unknown
  // (has_qps false) when any run counted no statements (a report from before dbload did).
  bool has_qps = false;
  Spread qps;
  // TPC-C's tpmC (report/report.h TpmC), for cases of workload tpcc (has_tpmc).
  bool has_tpmc = false;
  Spread tpmc;
  size_t generator_limited_runs = 0;  // of throughput.n
  size_t database_stalled_runs = 0;   // of throughput.n: the database stopped answering
  // The highest dispatch lag p99 ÷ response p99 of the runs: how much of the p99 the
  // generator's own lateness can be.
  double max_dispatch_lag_share = 0;
  // What the runs' p99 rests on: the fewest samples beyond it in any run, and the union of the
  // runs' 95 % confidence intervals (has_p99_basis false when a report predates them).
  bool has_p99_basis = false;
  uint64_t p99_samples_beyond = 0;
  double p99_ci_low_ms = 0;
  double p99_ci_high_ms = 0;
  bool p99_ci_high_open = false;
  bool P99FewSamples() const;
  // Saturation per query (the probe's common counters, and process/cpu_seconds), by name.
  std::map<std::string, Spread> per_query;
  // The names of per_query whose value rests, in some run, on fewer than kMinProbeReadings
  // probe readings (FewProbeReadings).
  std::set<std::string> few_readings;
};

// One row group of the comparison: a case at one load point, each target's figures (absent
// when the target has no usable run there).
struct SuitePoint {
  std::string case_name;
  std::string category;
  double point = 0;  // 0: the plan's own load
  bool closed_loop = false;
  // The case declares load points (a sweep); false: it runs at its plan's own load.
  bool has_points = false;
  bool ramp = false;  // the case has a knee stage: suite/suite_ramp.h renders it
  std::vector<std::optional<PointFigures>> targets;  // in the suite's target order
};

// Whether a run counts: "measured", or why not ("discarded (warm-up)", "failed (warm-up)",
// "pending", "failed", "report missing: …", "report state aborted", …).
struct RunStatus {
  bool measured = false;
  std::string status;
};

struct SuiteTable {
  std::vector<std::string> targets;  // the first is the baseline
  std::vector<SuitePoint> points;    // cases in the suite's order, points ascending
  std::vector<RunStatus> runs;       // per index run
  uint32_t repetitions = 1;          // the most measured runs behind one figure
  // Per index run: whether it counts (as suite/suite_ramp.h takes it).
  std::vector<bool> Measured() const;
};

// Groups the index's usable runs (finished in the index and in their report, not discarded) by
// case, point and target. `problems` as LoadedSuite's (may be empty).
SuiteTable BuildSuiteTable(const dbload::v1::SuiteIndex& index,
                           const std::vector<dbload::v1::RunReport>& reports,
                           const std::vector<std::string>& problems = {});

// Whether `value` and `baseline` differ by less than the spread of either (max − min over the
// repetitions): no clear winner. Never with a single run on both sides.
bool NoClearWinner(const Spread& baseline, const Spread& value);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_TABLE_H_
