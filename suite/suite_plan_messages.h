#ifndef DBLOAD_SUITE_SUITE_PLAN_MESSAGES_H_
#define DBLOAD_SUITE_SUITE_PLAN_MESSAGES_H_

// The plan parser's messages about a case's plan (suite_plan_tree.h), put back into the suite
// file: the field named by its path in the suite ("cases.2.plan.stop.duration",
// "targets.0.target.port", "cases.0.points.1") at its position there, or as the --set that gave
// it. Internal to the suite parser; it exposes yaml-cpp, so only .cc files of suite/ and tests
// include it.

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace dbload::suite_yaml {

// A message of the plan parser ("WHERE: FIELD: what", WHERE being "file:line:column", the file
// alone, or "file: --set"), taken apart so that the field can be named by its path in the suite.
struct PlanMessage {
  std::string where;  // "s.yaml:12:5"; empty when the parser had no position for it
  bool from_set = false;
  std::string field;  // relative to the plan; may be empty
  std::string what;
};

// Takes apart a message of the plan parser about a plan read from `source`; a message that does
// not start with `source` keeps all of its text in `what` (and a leading field path in `field`).
PlanMessage SplitPlanMessage(absl::string_view message, const std::string& source);

// Where a case's plan, on one target at one point, was put together from: to name the suite's
// own path and position of a plan field.
struct PlanOrigin {
  size_t case_index = 0;
  size_t target_index = 0;
  const YAML::Node* case_plan = nullptr;
  const YAML::Node* target = nullptr;  // the target's `target` map
  const YAML::Node* probe = nullptr;   // may be null
  std::optional<size_t> point;         // the index in the case's points
  const YAML::Node* point_node = nullptr;
};

// The plan parser's message with the field named by its path in the suite, at its position in
// the suite file (or as the --set that gave it).
std::string InSuite(absl::string_view message, const std::string& source, const PlanOrigin& origin);

}  // namespace dbload::suite_yaml

#endif  // DBLOAD_SUITE_SUITE_PLAN_MESSAGES_H_
