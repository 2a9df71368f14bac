#ifndef DBLOAD_REPORT_REPORT_HTML_TABLES_H_
#define DBLOAD_REPORT_REPORT_HTML_TABLES_H_

// The run report page's tables and text sections, each a piece of HTML (report_html.cc lays
// them out). Internal to dbload_report.

#include <string>

#include "absl/strings/string_view.h"
#include "dbload/v1/report.pb.h"

namespace dbload::report_html {

// One row of the page's header table.
std::string MetaRow(absl::string_view name, absl::string_view value);
std::string LostAgentsHtml(const dbload::v1::RunReport& r);
// The database's commit count against the report's (PostgreSQL), when the probe read it.
std::string CommitReconciliationHtml(const dbload::v1::RunReport& r);
std::string ManifestSection(const dbload::v1::RunManifest& m);
std::string SummarySection(const dbload::v1::RunReport& r);
std::string StagesSection(const dbload::v1::RunReport& r);
std::string SaturationTable(const dbload::v1::RunReport& r);
std::string ExplainSection(const dbload::v1::RunReport& r);
std::string AgentsAndRowsSection(const dbload::v1::RunReport& r);

}  // namespace dbload::report_html

#endif  // DBLOAD_REPORT_REPORT_HTML_TABLES_H_
