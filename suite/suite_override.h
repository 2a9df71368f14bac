#ifndef DBLOAD_SUITE_SUITE_OVERRIDE_H_
#define DBLOAD_SUITE_SUITE_OVERRIDE_H_

// `--set path=value` on a suite file's tree, before anything is read from it, so that a value
// given on the command line goes through the checks (and messages) a value in the file would.
// Internal to the suite parser; it exposes yaml-cpp, so only .cc files of suite/ and tests
// include it.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "suite/suite_reader.h"
#include "yaml-cpp/yaml.h"

namespace dbload::suite_yaml {

// Applies one "path=value" (see SuiteOptions::overrides) to `root`, walking the suite's fields
// (and refusing unknown ones) down to a plan, target or probe, whose fields the plan parser
// checks later. Adds the dotted paths it set or created to `overridden`: their messages then
// name the --set instead of a file position. Errors start with "SOURCE: --set PATH: ".
absl::Status ApplySuiteOverride(YAML::Node& root, absl::string_view text, const std::string& source,
                                Paths& overridden);

}  // namespace dbload::suite_yaml

#endif  // DBLOAD_SUITE_SUITE_OVERRIDE_H_
