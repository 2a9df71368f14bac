#include "suite/suite_reader.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/nearest_name.h"
#include "yaml/yaml_text.h"

namespace dbload::suite_yaml {

const std::vector<std::string> kSuiteFields = {"name", "settings", "targets", "cases"};
const std::vector<std::string> kSettingsFields = {"warmup_runs", "repetitions", "prepare",
                                                  "cleanup"};
const std::vector<std::string> kTargetFields = {"name", "target", "probe"};
const std::vector<std::string> kCaseFields = {"name", "category", "plan", "points"};

absl::Status SuiteReader::Error(const YAML::Node& node, absl::string_view path,
                                absl::string_view message) const {
  if (node.Mark().is_null() && FromOverride(path)) {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": --set ", path, ": ", message));
  }
  const std::string where = YamlPosition(source_, node.Mark());
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", message));
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", path, ": ", message));
}

absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> SuiteReader::ReadMap(
    const YAML::Node& node, const std::string& path, const std::vector<std::string>& fields) const {
  if (!node.IsMap()) {
    return Error(node, path,
                 absl::StrCat("expected a map with fields ", absl::StrJoin(fields, ", "), ", got ",
                              Describe(node)));
  }
  std::vector<std::pair<std::string, YAML::Node>> entries;
  std::map<std::string, int> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) {
      return Error(entry.first, path,
                   absl::StrCat("expected field names as keys, got ", Describe(entry.first)));
    }
    const std::string& name = entry.first.Scalar();
    const std::string field_path = path.empty() ? name : absl::StrCat(path, ".", name);
    if (auto [it, inserted] = seen.emplace(name, entry.first.Mark().line + 1); !inserted) {
      return Error(entry.first, field_path,
                   absl::StrCat("duplicate field; it is already set at line ", it->second));
    }
    if (std::find(fields.begin(), fields.end(), name) == fields.end()) {
      return Error(entry.first, field_path, UnknownField(name, path, fields));
    }
    entries.emplace_back(name, entry.second);
  }
  return entries;
}

absl::StatusOr<std::string> SuiteReader::ReadName(const YAML::Node& node,
                                                  const std::string& path) const {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return Error(node, path, absl::StrCat("expected a name, got ", Describe(node)));
  }
  const std::string& name = node.Scalar();
  const bool plain = name.size() <= kMaxName && name.front() != '.' &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                              c == '_' || c == '-';
                     });
  if (!plain) {
    return Error(node, path,
                 absl::StrCat("expected a name of at most ", kMaxName,
                              " letters, digits, '.', '_' or '-' (not starting with '.'; it "
                              "names a directory), got ",
                              Quote(name)));
  }
  return name;
}

absl::StatusOr<std::string> SuiteReader::ReadText(const YAML::Node& node,
                                                  const std::string& path) const {
  if (!node.IsScalar())
    return Error(node, path, absl::StrCat("expected text, got ", Describe(node)));
  return node.Scalar();
}

absl::StatusOr<uint32_t> SuiteReader::ReadCount(const YAML::Node& node, const std::string& path,
                                                uint32_t min, uint32_t max) const {
  uint32_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) || value < min || value > max) {
    return Error(
        node, path,
        absl::StrCat("expected an integer from ", min, " to ", max, ", got ", Describe(node)));
  }
  return value;
}

absl::StatusOr<bool> SuiteReader::ReadBool(const YAML::Node& node, const std::string& path) const {
  if (node.IsScalar()) {
    const std::string text = absl::AsciiStrToLower(node.Scalar());
    if (text == "true" || text == "yes") return true;
    if (text == "false" || text == "no") return false;
  }
  return Error(node, path, absl::StrCat("expected true or false, got ", Describe(node)));
}

absl::StatusOr<double> SuiteReader::ReadPoint(const YAML::Node& node,
                                              const std::string& path) const {
  double value = 0;
  if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &value) || !std::isfinite(value) ||
      value <= 0) {
    return Error(node, path,
                 absl::StrCat("expected a number > 0 (clients of a closed loop, a rate of an "
                              "open one), got ",
                              Describe(node)));
  }
  return value;
}

std::string SuiteReader::UnknownField(absl::string_view key, absl::string_view parent,
                                      const std::vector<std::string>& fields) {
  if (std::optional<std::string> nearest =
          NearestName(std::string_view(key.data(), key.size()), fields)) {
    return absl::StrCat("unknown field; did you mean '", *nearest, "'?");
  }
  return absl::StrCat("unknown field; ", parent.empty() ? "a suite" : parent,
                      " has: ", absl::StrJoin(fields, ", "));
}

bool SuiteReader::FromOverride(absl::string_view path) const {
  for (absl::string_view current = path; !current.empty();) {
    if (overridden_.contains(current)) return true;
    const size_t dot = current.rfind('.');
    if (dot == absl::string_view::npos) break;
    current = current.substr(0, dot);
  }
  return false;
}

}  // namespace dbload::suite_yaml
