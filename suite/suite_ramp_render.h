#ifndef DBLOAD_SUITE_SUITE_RAMP_RENDER_H_
#define DBLOAD_SUITE_SUITE_RAMP_RENDER_H_

// The ramp view of a suite report (suite_ramp.h) as text, Markdown and HTML, and its headlines
// for the report's first screen.

#include <string>
#include <vector>

#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// `measured[i]`: whether index run i counts (finished, not discarded), as the suite report
// decided. Renders every ramp case of the index; "" when the suite has none.
std::string RenderRampText(const dbload::v1::SuiteIndex& index,
                           const std::vector<dbload::v1::RunReport>& reports,
                           const std::vector<bool>& measured);
std::string RenderRampMarkdown(const dbload::v1::SuiteIndex& index,
                               const std::vector<dbload::v1::RunReport>& reports,
                               const std::vector<bool>& measured);
// HTML sections; appends each chart as `"name":{chart json}` to *charts (comma-separated, as
// html::PageEnd's {"charts":{…}} expects).
std::string RenderRampHtml(const dbload::v1::SuiteIndex& index,
                           const std::vector<dbload::v1::RunReport>& reports,
                           const std::vector<bool>& measured, std::string* charts);
// One line per ramp case and compared target for the report's first screen, e.g.
// "insert-events: knee at 12 clients (mariadb) and 24 clients (postgresql); at the knees
// mariadb 1.52× lower throughput, 1.10× higher p99"; "no knee up to 64 clients" where the
// search never missed its SLO.
std::vector<std::string> RampHeadlines(const dbload::v1::SuiteIndex& index,
                                       const std::vector<dbload::v1::RunReport>& reports,
                                       const std::vector<bool>& measured);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_RAMP_RENDER_H_
