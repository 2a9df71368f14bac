#include "plan/session_settings.h"

#include <string>
#include <vector>

namespace dbload {

v1::Target TargetForRun(const v1::Plan& plan) {
  v1::Target target = plan.target();
  for (const v1::Scenario& scenario : plan.workload_spec().scenarios()) {
    if (scenario.name() != plan.scenario()) continue;
    if (target.isolation() == v1::ISOLATION_UNSPECIFIED) target.set_isolation(scenario.isolation());
    std::vector<std::string> statements;
    for (const v1::DialectSql& sql : scenario.session()) {
      const std::string& own = target.driver() == "postgresql" ? sql.postgresql()
                               : target.driver() == "mysql"    ? sql.mysql()
                                                               : sql.any();
      const std::string& text = own.empty() ? sql.any() : own;
      if (!text.empty()) statements.push_back(text);
    }
    statements.insert(statements.end(), target.session().begin(), target.session().end());
    target.mutable_session()->Assign(statements.begin(), statements.end());
  }
  return target;
}

}  // namespace dbload
