#ifndef DBLOAD_PLAN_PLAN_PARSER_YAML_H_
#define DBLOAD_PLAN_PLAN_PARSER_YAML_H_

// The plan parser's YAML-level entry points, for readers of files that embed plans (suites:
// suite/suite_parser.cc), so that a plan inside another file is checked by the same code, with
// the same messages and positions, as a plan file. It exposes yaml-cpp: include it only from
// .cc files of targets that link yaml-cpp (privately); no public header includes it.

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "plan/plan_parser.h"
#include "dbload/v1/plan.pb.h"
#include "yaml-cpp/yaml.h"

namespace dbload {

// A YAML map of plan fields whose nodes carry their marks in `source_name`, converted, with
// defaults applied, validated and then `check`ed (may be null), exactly as ParsePlan does with a
// file's tree. `overridden_paths`: plan fields a --set gave, whose messages name the --set
// instead of a position. yaml-cpp may throw while reading nodes; the caller catches.
absl::StatusOr<dbload::v1::Plan> ConvertPlanNode(
    const YAML::Node& root, std::string_view source_name,
    const std::set<std::string, std::less<>>& overridden_paths, const PlanCheck& check);

// One YAML document, nested at most kMaxPlanNesting levels (before any node is built).
absl::Status CheckYamlStructure(const std::string& yaml_text, std::string_view source_name);

}  // namespace dbload

#endif  // DBLOAD_PLAN_PLAN_PARSER_YAML_H_
