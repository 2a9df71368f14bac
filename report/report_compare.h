#ifndef DBLOAD_REPORT_REPORT_COMPARE_H_
#define DBLOAD_REPORT_REPORT_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// A report and the file it came from (errors and clashing labels name the file).
struct ReportFile {
  std::string path;
  dbload::v1::RunReport report;
};

// Reads and parses one JSON report; every error names the file.
absl::StatusOr<ReportFile> LoadReportFile(const std::string& path);

// What one report measured for one case.
struct CaseNumbers {
  double throughput = 0;  // actual rate, queries/s
  double mean_ms = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double p999_ms = 0;
  uint64_t executed = 0;
  uint64_t errors = 0;
  // The whole summary, for what its percentiles rest on (samples beyond, 95 % intervals).
  dbload::v1::LatencySummary response_time;
};

// Two measurements of one percentile differ by less than they are known: each value lies inside
// the other's 95 % confidence interval (false when either report lacks the intervals).
bool WithinIntervals(const dbload::v1::PercentileBasis& a, const dbload::v1::PercentileBasis& b);

// One row group of a comparison: the whole run or a stage (matched by name), all query types
// or one of them. `numbers[i]` is report i's, absent when that report has no such case.
struct ComparisonCase {
  std::string scope;       // "whole run" or "stage NAME"
  std::string query_type;  // empty: all query types
  std::vector<std::optional<CaseNumbers>> numbers;
  std::string Title() const;
};

struct Comparison {
  std::vector<std::string> labels;  // per report: its plan name, or its file when names clash
  std::vector<std::string> paths;
  std::vector<ComparisonCase> cases;
};

// The first report is the baseline. Refuses fewer than two reports, and a report that shares
// no query type and no stage name with the baseline (naming both files).
absl::StatusOr<Comparison> CompareReports(const std::vector<ReportFile>& reports);

// `value` against `baseline` as the published summaries say it: "4.87× higher throughput",
// "11.23× lower mean latency", "same p99 latency" (equal to two decimals); "WHAT: not
// comparable (0 in …)" when either is 0.
std::string RatioPhrase(double baseline, double value, const std::string& what);

// `value` against `baseline` in words: "4.87× higher", "11.23× lower", "same" (equal to two
// decimals), or "" when either is 0 (no ratio).
std::string RatioWords(double baseline, double value);

// User-written names as Markdown text: the characters that would start markup or end a table
// cell are backslash-escaped, line breaks become spaces.
std::string MarkdownEscape(absl::string_view text);

// Rows of cells as aligned text, each line indented by two spaces: the first column left-aligned,
// the others right-aligned (widths in characters, so "×" and "—" count once).
std::string FormatTextTable(const std::vector<std::vector<std::string>>& table);

// One line per case and compared report: "LABEL vs BASELINE: 4.87× higher throughput, …". A
// percentile whose two values lie inside both 95 % intervals is "within the 95 % confidence
// intervals" instead of a ratio, and one resting on too few samples beyond it carries a "*".
std::string RenderComparisonText(const Comparison& comparison);
std::string RenderComparisonMarkdown(const Comparison& comparison);
// One self-contained page (as RenderReportHtml): the tables and, per report, the achieved rate
// over time and the whole run's percentile spectrum.
std::string RenderComparisonHtml(const Comparison& comparison,
                                 const std::vector<ReportFile>& reports);

}  // namespace dbload

#endif  // DBLOAD_REPORT_REPORT_COMPARE_H_
