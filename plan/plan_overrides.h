#ifndef DBLOAD_PLAN_PLAN_OVERRIDES_H_
#define DBLOAD_PLAN_PLAN_OVERRIDES_H_

// --set overrides: edits of the YAML tree, made before conversion so that an overridden value
// goes through exactly the checks (and messages) a value in the file would. Internal to the plan
// parser.

#include <functional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace dbload::plan_yaml {

// Applies one "path=value" to `root`; adds the dotted paths it set (or created) to
// `overridden_paths`, whose messages then name the --set instead of a file position.
absl::Status ApplyOverride(YAML::Node& root, absl::string_view override_text,
                           absl::string_view source_name,
                           std::set<std::string, std::less<>>& overridden_paths);

}  // namespace dbload::plan_yaml

#endif  // DBLOAD_PLAN_PLAN_OVERRIDES_H_
