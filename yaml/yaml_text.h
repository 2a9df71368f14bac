#ifndef DBLOAD_YAML_YAML_TEXT_H_
#define DBLOAD_YAML_YAML_TEXT_H_

// How the YAML readers (plans, workloads) show the user's text in their error messages. For
// the .cc files of targets that link yaml-cpp privately; no public header includes this.

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace dbload {

// User text in a message: quoted, escaped and shortened, so that a stray binary blob or a
// megabyte-long line cannot make the message unreadable.
inline std::string Quote(absl::string_view text) {
  constexpr size_t kShown = 64;
  if (text.size() <= kShown) return absl::StrCat("\"", absl::Utf8SafeCHexEscape(text), "\"");
  return absl::StrCat("\"", absl::Utf8SafeCHexEscape(text.substr(0, kShown)), "\"...");
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
