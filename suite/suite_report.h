#ifndef DBLOAD_SUITE_SUITE_REPORT_H_
#define DBLOAD_SUITE_SUITE_REPORT_H_

#include <string>
#include <vector>

#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"
#include "suite/suite_table.h"

namespace dbload {

enum class SuiteFormat { kText, kMarkdown, kHtml };

// The report a benchmarker publishes, the same sections in every format (README, "Suite
// reports"): the headlines per category (ratios only between figures at the same load point),
// the machine and servers, how the suite ran; a table per sweep (a case with points: TPS, QPS,
// p95, p99 per target and point), one table of the cases without points (throughput, mean,
// p99, the ratios in words), the summary by category, the ramp cases (suite/suite_ramp.h), the
// probe's counters per transaction, and the runs. Markdown pastes into a blog post or an issue
// as it is; HTML (self-contained, as RenderReportHtml) adds TPS and p95 against clients on a
// log-2 axis per sweep, bars per category, and prints (a page per section).
std::string RenderSuiteReport(const dbload::v1::SuiteIndex& index,
                              const std::vector<dbload::v1::RunReport>& reports, SuiteFormat format,
                              const std::vector<std::string>& problems = {});

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_REPORT_H_
