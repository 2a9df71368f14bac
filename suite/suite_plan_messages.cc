#include "suite/suite_plan_messages.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "yaml/yaml_text.h"

namespace dbload::suite_yaml {
namespace {

// The node at a dotted path under `node` (map keys, list indexes), or the deepest one on the
// way that exists: where a message about that field points.
YAML::Node NearestNode(const YAML::Node& node, absl::string_view path) {
  YAML::Node current = node;
  for (absl::string_view key : absl::StrSplit(path, '.', absl::SkipEmpty())) {
    // const: lookups never add keys (and a missing key is an invalid node, never reset from).
    const YAML::Node& here = current;
    const YAML::Node child = [&]() -> YAML::Node {
      if (here.IsMap()) return here[std::string(key)];
      size_t index = 0;
      if (here.IsSequence() && absl::SimpleAtoi(key, &index) && index < here.size()) {
        return here[index];
      }
      return YAML::Node(YAML::NodeType::Undefined);
    }();
    if (!child.IsDefined() || child.IsNull()) break;
    current.reset(child);
  }
  return current;
}

bool IsFieldPath(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  });
}

// A plan field's path in the suite, and the node it was written at (or the nearest one there).
std::pair<std::string, YAML::Node> SuiteFieldOf(const PlanOrigin& origin,
                                                const std::string& field) {
  auto under = [](const std::string& prefix, absl::string_view rest) {
    return rest.empty() ? prefix : absl::StrCat(prefix, ".", rest);
  };
  const std::string target_path = absl::StrCat("targets.", origin.target_index);
  for (const char* part : {"target", "probe"}) {
    absl::string_view rest = field;
    if (!absl::ConsumePrefix(&rest, part) || !(rest.empty() || rest.front() == '.')) continue;
    absl::ConsumePrefix(&rest, ".");
    const YAML::Node* node = part == std::string("target") ? origin.target : origin.probe;
    return {under(absl::StrCat(target_path, ".", part), rest),
            node == nullptr ? YAML::Node() : NearestNode(*node, rest)};
  }
  if (origin.point && (field == "load.closed.clients" || field == "load.open.rate")) {
    return {absl::StrCat("cases.", origin.case_index, ".points.", *origin.point),
            *origin.point_node};
  }
  return {under(absl::StrCat("cases.", origin.case_index, ".plan"), field),
          NearestNode(*origin.case_plan, field)};
}

}  // namespace

PlanMessage SplitPlanMessage(absl::string_view message, const std::string& source) {
  PlanMessage split;
  absl::string_view rest = message;
  if (absl::StartsWith(rest, source)) {
    rest.remove_prefix(source.size());
    if (absl::ConsumePrefix(&rest, ": --set ")) {
      split.from_set = true;
    } else if (absl::StartsWith(rest, ":") && rest.size() > 1 &&
               absl::ascii_isdigit(static_cast<unsigned char>(rest[1]))) {
      const size_t end = rest.find(": ");
      split.where = absl::StrCat(source, rest.substr(0, end));
      rest.remove_prefix(end == absl::string_view::npos ? rest.size() : end + 2);
    } else {
      absl::ConsumePrefix(&rest, ": ");
    }
  }
  if (const size_t colon = rest.find(": ");
      colon != absl::string_view::npos && IsFieldPath(rest.substr(0, colon))) {
    split.field = std::string(rest.substr(0, colon));
    rest.remove_prefix(colon + 2);
  }
  split.what = std::string(rest);
  return split;
}

std::string InSuite(absl::string_view message, const std::string& source,
                    const PlanOrigin& origin) {
  const PlanMessage split = SplitPlanMessage(message, source);
  auto [path, node] = SuiteFieldOf(origin, split.field);
  if (split.from_set || (split.where.empty() && node.Mark().is_null())) {
    return absl::StrCat(source, ": --set ", path, ": ", split.what);
  }
  const std::string where = split.where.empty() ? YamlPosition(source, node.Mark()) : split.where;
  return absl::StrCat(where, ": ", path, ": ", split.what);
}

}  // namespace dbload::suite_yaml
