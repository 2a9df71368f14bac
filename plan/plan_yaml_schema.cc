#include "plan/plan_yaml_schema.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/nearest_name.h"

namespace dbload::plan_yaml {

const FieldSpec* FindField(FieldList fields, absl::string_view name) {
  for (const FieldSpec& spec : fields) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const FieldSpec& MapSpec(FieldList fields, absl::string_view name) {
  return *FindField(fields, name);
}

std::vector<absl::string_view> NamesOf(FieldList fields) {
  std::vector<absl::string_view> names;
  for (const FieldSpec& spec : fields) names.push_back(spec.name);
  return names;
}

std::string UnknownFieldMessage(absl::string_view key, absl::string_view parent_path,
                                FieldList fields) {
  if (absl::AsciiStrToLower(key) == "password") {
    return "passwords are never written in a plan; use password_file or password_env";
  }
  const std::vector<absl::string_view> names = NamesOf(fields);
  if (std::optional<absl::string_view> nearest = Nearest(key, names)) {
    return absl::StrCat("unknown field; did you mean '", *nearest, "'?");
  }
  return absl::StrCat("unknown field; ", parent_path.empty() ? "a plan" : parent_path,
                      " has: ", absl::StrJoin(names, ", "));
}

}  // namespace dbload::plan_yaml
