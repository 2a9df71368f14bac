#ifndef DBLOAD_COMMON_REPORT_H_
#define DBLOAD_COMMON_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/histogram.h"
#include "common/interval_snapshot.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

inline constexpr uint32_t kReportFormatVersion = 1;

// Every summary statistic of one histogram, in milliseconds.
dbload::v1::LatencySummary Summarize(const Histogram& histogram);

// Collects a run's intervals and turns them into its report. Totals and percentiles come from
// the merged histograms of the measured intervals, never from per-interval figures.
class RunReportBuilder {
 public:
  RunReportBuilder(const dbload::v1::Plan& plan, std::vector<std::string> query_types);

  // One interval of `length_s` seconds ending `elapsed_s` after the start. Warm-up intervals
  // appear in the time series but not in the totals.
  dbload::v1::IntervalSample AddInterval(double elapsed_s, double length_s, double target_rate,
                                         bool warmup, const IntervalSnapshot& snapshot);
  // `measured_s`: from the end of the warm-up to the end of the run.
  dbload::v1::RunReport Finish(double measured_s, double outside_queries_s, uint64_t not_started,
                               std::string end_reason, std::string started_at) const;

 private:
  dbload::v1::Plan plan_;
  std::vector<std::string> query_types_;
  IntervalSnapshot measured_;
  std::vector<dbload::v1::IntervalSample> samples_;
};

// The report as the published comparisons print it (Total test duration, Queries duration,
// Executed queries, Wanted/Actual rate, Min/Max/Mean, percentiles in ms).
std::string RenderReportText(const dbload::v1::RunReport& report);
// One line of progress: elapsed, target and achieved rate, p50, p99, errors, schedule lag.
std::string RenderIntervalLine(const dbload::v1::IntervalSample& sample);
// Versioned JSON (proto field names).
std::string RenderReportJson(const dbload::v1::RunReport& report);
absl::StatusOr<dbload::v1::RunReport> ParseReportJson(const std::string& json);

}  // namespace dbload

#endif  // DBLOAD_COMMON_REPORT_H_
