#include "report/report_html.h"

#include "absl/strings/str_cat.h"
#include "report/report.h"
#include "report/report_html_charts.h"
#include "report/report_html_tables.h"

namespace dbload {

using report_html::AgentsAndRowsSection;
using report_html::CommitReconciliationHtml;
using report_html::ExplainSection;
using report_html::LostAgentsHtml;
using report_html::ManifestSection;
using report_html::MetaRow;
using report_html::ReportDataJson;
using report_html::SaturationTable;
using report_html::StagesSection;
using report_html::SummarySection;

std::string RenderReportHtml(const v1::RunReport& r) {
  const std::string title = absl::StrCat("dbload report: ", r.plan().name());
  std::string out = html::PageStart(title);
  absl::StrAppend(&out, "<h1>", HtmlEscape(title), "</h1>\n<table class=\"meta\">\n");
  if (!r.run_id().empty()) absl::StrAppend(&out, MetaRow("Run", r.run_id()));
  if (!r.state().empty()) absl::StrAppend(&out, MetaRow("State", r.state()));
  absl::StrAppend(&out, MetaRow("Ended by", r.end_reason()));
  absl::StrAppend(&out, MetaRow("Started", r.started_at()));
  absl::StrAppend(&out, MetaRow("Target", DescribeTarget(r.plan().target())));
  absl::StrAppend(
      &out, MetaRow("Workload", absl::StrCat(r.plan().workload(), " / ", r.plan().scenario())));
  absl::StrAppend(&out, MetaRow("dbload", r.dbload_version()));
  absl::StrAppend(&out, "</table>\n");
  absl::StrAppend(&out, LostAgentsHtml(r), CommitReconciliationHtml(r));
  if (r.has_manifest()) absl::StrAppend(&out, ManifestSection(r.manifest()));
  absl::StrAppend(&out, SummarySection(r), StagesSection(r));
  absl::StrAppend(&out, "<h2>Charts</h2>\n", html::ChartDiv("rate", "No intervals in this report."),
                  html::ChartDiv("latency", "No intervals in this report."),
                  html::ChartDiv("spectrum", "No response-time histogram in this report."));
  absl::StrAppend(&out, "<h2>Database saturation</h2>\n");
  if (!r.probe_error().empty()) {
    absl::StrAppend(&out, "<p class=\"warn\">Probe: ", HtmlEscape(r.probe_error()), "</p>\n");
  }
  absl::StrAppend(&out,
                  html::ChartDiv("saturation",
                                 "No database probe data in this report (the probe was "
                                 "off or read nothing)."),
                  SaturationTable(r), ExplainSection(r), AgentsAndRowsSection(r));
  absl::StrAppend(&out, html::PageEnd(ReportDataJson(r)));
  return out;
}

}  // namespace dbload
