#ifndef DBLOAD_REPORT_REPORT_CSV_H_
#define DBLOAD_REPORT_REPORT_CSV_H_

#include <string>

#include "absl/strings/string_view.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// One field of RFC 4180 CSV: quoted (with quotes doubled) when it holds a comma, a quote, CR
// or LF, as is otherwise.
std::string CsvField(absl::string_view text);

// The report as CSV for spreadsheets: a header row, then per scope (the run, then each stage
// as "stage N: NAME") an "all" row and one row per query type, with the scope's counts, rates,
// duration and response-time summary (ms). Rows end with CRLF (RFC 4180).
std::string RenderReportCsv(const dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_REPORT_REPORT_CSV_H_
