#include "coordinator/plan_changes.h"

#include <map>
#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace dbload {

std::string PlanShape(std::string_view plan) {
  // MySQL and MariaDB write one "name": "value" pair per line, in the order of the plan.
  static const std::regex kJsonPair(
      R"re("(table_name|access_type|key|message)"\s*:\s*"([^"]*)")re");
  std::vector<std::string> shape;
  for (absl::string_view line : absl::StrSplit(absl::string_view(plan.data(), plan.size()), '\n')) {
    if (absl::StartsWith(line, "-- statement ")) {
      shape.emplace_back(line.substr(0, line.find(':')));
      continue;
    }
    if (absl::StartsWith(line, "(EXPLAIN failed")) return "";
    if (absl::StartsWith(line, "(skipped")) {
      shape.emplace_back(line);
      continue;
    }
    if (const size_t cost = line.find("  (cost="); cost != absl::string_view::npos) {
      shape.emplace_back(absl::StripTrailingAsciiWhitespace(line.substr(0, cost)));
      continue;
    }
    const std::string text(line);
    for (std::sregex_iterator pair(text.begin(), text.end(), kJsonPair), end; pair != end; ++pair) {
      const std::string name = (*pair)[1];
      const std::string value = (*pair)[2];
      if (name == "message") {
        if (absl::StrContains(value, "Impossible") || absl::StrContains(value, "no matching row")) {
          return "";
        }
      } else if (name == "table_name") {
        shape.push_back(absl::StrCat("table ", value));
      } else if (!shape.empty()) {
        absl::StrAppend(&shape.back(), " ", name, "=", value);
      }
    }
  }
  return absl::StrJoin(shape, "\n");
}

std::vector<v1::PlanChange> FindPlanChanges(const std::vector<PlanCaptureAt>& captures) {
  struct Last {
    std::string when;
    std::string shape;
  };
  std::map<std::string, Last> last;  // query type → its latest capture that had a shape
  std::vector<v1::PlanChange> changes;
  for (const PlanCaptureAt& capture : captures) {
    if (capture.plans == nullptr) continue;
    for (const v1::QueryPlan& plan : *capture.plans) {
      if (!plan.error().empty()) continue;
      std::string shape = PlanShape(plan.plan());
      if (shape.empty()) continue;
      const auto it = last.find(plan.query_type());
      if (it != last.end() && it->second.shape != shape) {
        v1::PlanChange& change = changes.emplace_back();
        change.set_query_type(plan.query_type());
        change.set_before(it->second.when);
        change.set_after(capture.when);
        change.set_before_shape(it->second.shape);
        change.set_after_shape(shape);
      }
      last[plan.query_type()] = {.when = capture.when, .shape = std::move(shape)};
    }
  }
  return changes;
}

}  // namespace dbload
