#ifndef DBLOAD_SUITE_SUITE_SCALING_H_
#define DBLOAD_SUITE_SUITE_SCALING_H_

// `dbload suite run --scale X --time-scale T` (SuiteOptions): a case's plan made faster or
// longer with one setting each, for the suite parser.

#include "dbload/v1/plan.pb.h"

namespace dbload {

// --scale (`scale`: rates and query counts) and --time-scale (`time_scale`: durations, and query
// counts again, so that a case bounded by its count lasts time_scale times as long too). Rates
// are a plan's load.open.rate and, for an open loop, its stages' levels and knee searches;
// clients are not scaled. Durations become whole milliseconds, at least 1 ms (never 0, which
// means "unset"); query counts are rounded, at least 1. Latency limits (a knee's or an abort
// rule's p99) are not times of the case: they stay.
void ScalePlan(dbload::v1::Plan& plan, double scale, double time_scale);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_SCALING_H_
