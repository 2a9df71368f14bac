#ifndef DBLOAD_SUITE_SUITE_PLAN_TREE_H_
#define DBLOAD_SUITE_SUITE_PLAN_TREE_H_

// A case's plan on one target at one load point, put together as a plan file's YAML tree, for
// the plan parser to convert and check as it would a plan file. Internal to the suite parser;
// it exposes yaml-cpp, so only .cc files of suite/ and tests include it.

#include <cstddef>
#include <optional>
#include <string>

#include "suite/suite_reader.h"
#include "yaml-cpp/yaml.h"

namespace dbload::suite_yaml {

// A target of the suite file as read: its name and the nodes of its target and probe maps.
struct RawTarget {
  std::string name;
  YAML::Node name_node;
  std::optional<YAML::Node> target;
  std::optional<YAML::Node> probe;
  bool has_pool = false;
};

// node[key] is a map.
bool HasMap(const YAML::Node& node, const char* key);

// The case's plan as a plan file's tree: with the target (and its probe, when `with_probe`), and
// the load point, when not null, put where the plan's load wants it (load.closed.clients or
// load.open.rate).
YAML::Node PlanTree(const YAML::Node& case_plan, const RawTarget& target, bool with_probe,
                    const YAML::Node* point);

// The plan parser's paths among the suite's --set paths, for case `c` on target `t`:
// "cases.C.plan.stop.duration" is the plan's "stop.duration", "targets.T.target.port" its
// "target.port".
Paths PlanPaths(const Paths& overridden, size_t c, size_t t);

}  // namespace dbload::suite_yaml

#endif  // DBLOAD_SUITE_SUITE_PLAN_TREE_H_
