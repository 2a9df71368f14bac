#ifndef DBLOAD_COMMON_SUITE_RAMP_H_
#define DBLOAD_COMMON_SUITE_RAMP_H_

#include <optional>
#include <string>
#include <vector>

#include "dbload/v1/report.pb.h"
#include "dbload/v1/suite.pb.h"

namespace dbload {

// The ramp view of a suite report (issue 17): for every case whose plan has a knee stage, each
// target's staircase (one row per step the knee search held: clients, throughput, p99, whether
// it met the SLO, the database's saturation counters over the step) and its knee, or "no knee
// up to N". The suite report (common/suite_report.cc) leaves such cases to this file.

// Whether the case's plan has a knee stage: the case belongs to the ramp view.
bool IsRampCase(const dbload::v1::SuiteCase& suite_case);

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

#endif  // DBLOAD_COMMON_SUITE_RAMP_H_
