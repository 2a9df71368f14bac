#include "suite/suite_plan_tree.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace dbload::suite_yaml {
namespace {

// A copy of a map (its keys and values shared, with their positions) without the keys in
// `drop`.
YAML::Node MapWithout(const YAML::Node& map, const std::set<std::string>& drop) {
  YAML::Node copy(YAML::NodeType::Map);
  for (const auto& entry : map) {
    if (entry.first.IsScalar() && drop.contains(entry.first.Scalar())) continue;
    copy.force_insert(entry.first, entry.second);
  }
  return copy;
}

}  // namespace

// node[key] is a map. (A missing key of a const node is an invalid node, which throws when its
// type is asked.)
bool HasMap(const YAML::Node& node, const char* key) {
  if (!node.IsDefined() || !node.IsMap()) return false;
  const YAML::Node child = node[key];
  return child.IsDefined() && child.IsMap();
}

// The case's plan as a plan file's tree: with the target (and its probe), and the load point
// put where the plan's load wants it (load.closed.clients or load.open.rate).
YAML::Node PlanTree(const YAML::Node& case_plan, const RawTarget& target, bool with_probe,
                    const YAML::Node* point) {
  std::set<std::string> replaced = {"target"};
  if (with_probe && target.probe) replaced.insert("probe");
  if (point != nullptr) replaced.insert("load");
  YAML::Node tree = MapWithout(case_plan, replaced);
  if (target.target) tree.force_insert(YAML::Node("target"), *target.target);
  if (with_probe && target.probe) tree.force_insert(YAML::Node("probe"), *target.probe);
  if (point != nullptr) {
    const YAML::Node load = case_plan["load"];
    const bool open = HasMap(load, "open");
    const std::string shape = open ? "open" : "closed";
    YAML::Node inner = MapWithout(load[shape], {open ? "rate" : "clients"});
    inner.force_insert(YAML::Node(open ? "rate" : "clients"), *point);
    YAML::Node new_load = MapWithout(load, {shape});
    new_load.force_insert(YAML::Node(shape), inner);
    tree.force_insert(YAML::Node("load"), new_load);
  }
  return tree;
}

// The plan parser's paths among the suite's --set paths, for case `c` on target `t`.
Paths PlanPaths(const Paths& overridden, size_t c, size_t t) {
  Paths paths;
  const std::string plan_prefix = absl::StrCat("cases.", c, ".plan.");
  const std::string target_prefix = absl::StrCat("targets.", t, ".");
  for (const std::string& path : overridden) {
    if (absl::StartsWith(path, plan_prefix)) paths.insert(path.substr(plan_prefix.size()));
    if (absl::StartsWith(path, target_prefix)) paths.insert(path.substr(target_prefix.size()));
  }
  return paths;
}

}  // namespace dbload::suite_yaml
