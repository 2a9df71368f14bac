#include "common/suite_ramp.h"

// Scaffold for the parallel work of issue 17: the declarations are the contract between the
// suite report and the ramp view; the implementation lands with the ramp view.

namespace dbload {

bool IsRampCase(const dbload::v1::SuiteCase& suite_case) {
  for (const dbload::v1::Stage& stage : suite_case.plan().stages()) {
    if (stage.has_knee()) return true;
  }
  return false;
}

std::string RenderRampText(const dbload::v1::SuiteIndex&, const std::vector<dbload::v1::RunReport>&,
                           const std::vector<bool>&) {
  return "";
}
std::string RenderRampMarkdown(const dbload::v1::SuiteIndex&,
                               const std::vector<dbload::v1::RunReport>&, const std::vector<bool>&) {
  return "";
}
std::string RenderRampHtml(const dbload::v1::SuiteIndex&, const std::vector<dbload::v1::RunReport>&,
                           const std::vector<bool>&, std::string*) {
  return "";
}
std::vector<std::string> RampHeadlines(const dbload::v1::SuiteIndex&,
                                       const std::vector<dbload::v1::RunReport>&,
                                       const std::vector<bool>&) {
  return {};
}

}  // namespace dbload
