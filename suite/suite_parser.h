#ifndef DBLOAD_SUITE_SUITE_PARSER_H_
#define DBLOAD_SUITE_SUITE_PARSER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/suite.pb.h"
#include "plan/plan_parser.h"

namespace dbload {

// Suite files are YAML, read into dbload.v1.Suite (suite.proto): targets × cases × load points,
// each combination one plan.
//
//   name: shop-small
//   settings: {warmup_runs: 0, repetitions: 1, prepare: once, cleanup: false}
//   targets:
//     - {name: postgresql, target: {driver: postgresql, port: 5432, user: bench, ...}}
//   cases:
//     - name: point-select
//       category: selects
//       plan: {workload: oltp, scenario: point_select, load: {closed: {}}, stop: {duration: 5s}}
//       points: [1, 4, 16]       # clients (closed loop) or rates (open loop)
//
// A case's plan is a plan without a target; the plan parser itself converts and checks it once
// for every target and load point (plan/plan_parser_yaml.h), so that its errors are a plan
// file's errors, at their line and column in the suite file, the field named by its path in the
// suite ("cases.2.plan.stop.duration", "targets.0.target.port", "cases.0.points.1"), with the
// case and target named.
// Names of suites, targets and cases become directory names: letters, digits, '.', '_', '-'.
// What a suite expands to (its runs, each run's plan) is suite_runs.h; its directory's index,
// suite_index.h.

// settings.prepare: `once`, per target, the data of each distinct workload (and options) of its
// cases before its first run; `per_case`, each case's data before its first run on a target,
// dropped after its last (so that cases load different scales into the same tables); `none`.
inline constexpr char kSuitePrepareOnce[] = "once";
inline constexpr char kSuitePreparePerCase[] = "per_case";
inline constexpr char kSuitePrepareNone[] = "none";

struct SuiteOptions {
  // `--set path=value` on the suite's tree before conversion: "settings.repetitions=3",
  // "targets.0.target.port=5433", "cases.1.points=[1, 2]", "cases.0.plan.stop.duration=2s".
  // The value is YAML (a number, a word, a [list] or a {map}); `null` removes the field. `*`
  // for an index sets every element of the list: "cases.*.plan.stop.duration=2s". Setting one
  // of a target's password_file / password_env removes the other there (one source each).
  std::vector<std::string> overrides;
  // `--scale X`: every open-loop rate (a plan's load.open.rate, an open-loop case's points, the
  // rates of its stages and knee searches) and every query count (stop.queries, a stage's
  // queries, rounded, at least 1) times X: rates scaled to the machine with one setting.
  double scale = 1;
  // `--time-scale T` (0 < T <= kMaxSuiteTimeScale): every duration of every case (warmup,
  // stop.duration, a stage's duration, a staircase's and a knee search's every, a closed loop's
  // think_time, abort.for; whole milliseconds, at least 1 ms) and every query count again
  // (stop.queries, a stage's queries: at least 1) times T, so that each case, whether its
  // duration or its count ends it, takes T times as long at the same rates. Latency limits
  // (p99 of a knee search or an abort rule) stay.
  double time_scale = 1;
  // Run on every case's plan (with the suite's first target) after the plan parser's checks,
  // e.g. whether the workload knows the scenario; see PlanCheck.
  PlanCheck check;
};

inline constexpr double kMaxSuiteTimeScale = 1000;
inline constexpr size_t kMaxSuiteBytes = size_t{4} << 20;
inline constexpr uint32_t kMaxSuiteWarmupRuns = 100;
inline constexpr uint32_t kMaxSuiteRepetitions = 1000;
// Bounds the expansion, so that a typo in points cannot make a suite of a million runs.
inline constexpr size_t kMaxSuiteRuns = 100'000;

absl::StatusOr<dbload::v1::Suite> ParseSuite(std::string_view yaml_text,
                                             std::string_view source_name,
                                             const SuiteOptions& options);
// Reads and parses a suite file; read errors name the path.
absl::StatusOr<dbload::v1::Suite> LoadSuiteFile(const std::string& path,
                                                const SuiteOptions& options);

// The built-in suites (suites/*.yaml, compiled in), by name ("sysbench-sweep").
const std::map<std::string, std::string_view>& BuiltinSuiteFiles();

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_PARSER_H_
