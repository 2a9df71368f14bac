#ifndef DBLOAD_REPORT_REPORT_HTML_H_
#define DBLOAD_REPORT_REPORT_HTML_H_

#include <string>

#include "dbload/v1/report.pb.h"
#include "report/html_kit.h"  // the kit the page is built with, shared with the other pages

namespace dbload {

// The report as one self-contained HTML page to share: no network (inline CSS, an inline
// script that draws SVG charts from the report's data embedded as JSON, and a Content Security
// Policy that forbids loading anything). Every string from the report is escaped: names and
// SQL are user-written.
std::string RenderReportHtml(const dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_REPORT_REPORT_HTML_H_
