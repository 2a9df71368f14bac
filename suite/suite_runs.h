#ifndef DBLOAD_SUITE_SUITE_RUNS_H_
#define DBLOAD_SUITE_SUITE_RUNS_H_

// What a suite (read by suite_parser.h) expands to: its runs in order, each run's plan, and how
// long they are planned to take. On the Suite proto alone.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// Every run of the suite in the order they run: per target, its cases in file order, each
// case's points in order, for each point the warm-up runs then the repetitions. State
// "pending"; report paths relative to the suite's directory:
// runs/<target>/<case>/<point>-r<repetition>.json, warm-ups <point>-w<k>.json, and "plan" for
// the point of a case without points.
std::vector<dbload::v1::SuiteRun> ExpandSuite(const dbload::v1::Suite& suite);

// A point as it appears in file names and progress lines: "16", "2500", "0.5", "plan" (none).
std::string FormatSuitePoint(const dbload::v1::SuiteCase& suite_case, double point);

// The plan of one run: the case's plan with the target (and its probe options) and the load
// point filled in, defaults applied, validated. Its name, if the case's plan had none, is
// "SUITE/TARGET/CASE/POINT".
absl::StatusOr<dbload::v1::Plan> PlanOfRun(const dbload::v1::Suite& suite,
                                           const dbload::v1::SuiteRun& run);
// PlanOfRun, its validation's messages naming `source` (the suite file, while it is parsed)
// instead of the suite.
absl::StatusOr<dbload::v1::Plan> PlanOfRunFrom(const dbload::v1::Suite& suite,
                                               const dbload::v1::SuiteRun& run,
                                               const std::string& source);

// How long a run is planned to take (warm-up + stop.duration, or its stages' lengths, or an
// open loop's stop.queries / rate); 0 when it cannot be told (a closed loop bounded only by a
// query count). `bound`: the run may end sooner, so the length is only its longest: a knee
// search ends at its knee (its length counts every step it could take, each `every` plus the
// judgement's slack), and a closed loop's query count may come before its duration.
struct PlannedLength {
  int64_t nanos = 0;
  bool bound = false;
};
PlannedLength PlannedRunLength(const dbload::v1::Plan& plan);
int64_t PlannedRunNanos(const dbload::v1::Plan& plan);  // PlannedRunLength(plan).nanos

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_RUNS_H_
