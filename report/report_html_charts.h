#ifndef DBLOAD_REPORT_REPORT_HTML_CHARTS_H_
#define DBLOAD_REPORT_REPORT_HTML_CHARTS_H_

// The run report page's charts: rate, latency, the percentile spectrum and the probe's panels,
// as the JSON data the page's chart script draws. Internal to dbload_report.

#include <string>

#include "dbload/v1/report.pb.h"

namespace dbload::report_html {

// {"charts":{"rate":…,"latency":…,"spectrum":…,"saturation":[…]}} for html::PageEnd.
std::string ReportDataJson(const dbload::v1::RunReport& r);

}  // namespace dbload::report_html

#endif  // DBLOAD_REPORT_REPORT_HTML_CHARTS_H_
