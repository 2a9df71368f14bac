#ifndef DBLOAD_YAML_YAML_TEXT_H_
#define DBLOAD_YAML_YAML_TEXT_H_

// How the YAML readers (plans, workloads, suites) show the user's text in their error messages:
// quoted as everywhere (base/quote.h), and what a node is. For the .cc files of targets that
// link yaml-cpp privately; no public header includes this.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/quote.h"
#include "yaml-cpp/yaml.h"

namespace dbload {

// "file:line:column" (1-based, as editors and compilers count; yaml-cpp counts from 0) of a
// node, or just the file for a node made in code.
inline std::string YamlPosition(absl::string_view source_name, const YAML::Mark& mark) {
  if (mark.is_null()) return std::string(source_name);
  return absl::StrCat(source_name, ":", mark.line + 1, ":", mark.column + 1);
}

// What a node is, for "expected …, got …".
inline std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return Quote(node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
  }
  return "an unknown kind of YAML node";
}

}  // namespace dbload

#endif  // DBLOAD_YAML_YAML_TEXT_H_
