// `dbload workloads` (the built-in ones) and `dbload workload check FILE`.
#include <iostream>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/field_error.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "process/exit_codes.h"
#include "workload/loader.h"
#include "workload/workload.h"
#include "workload/workload_parser.h"

namespace dbload::cli {

int WorkloadsCommand() {
  for (const std::string& name : BuiltinWorkloadNames()) {
    v1::Plan plan;
    plan.set_workload(name);
    absl::Status resolved = ResolvePlanWorkload(plan);
    absl::StatusOr<std::unique_ptr<Workload>> workload =
        resolved.ok() ? MakePlanWorkload(plan) : resolved;
    if (!workload.ok()) {
      std::cout << name << ": " << workload.status().message() << "\n";
      continue;
    }
    std::cout << name << ":";
    for (const std::string& scenario : (*workload)->ScenarioNames()) std::cout << " " << scenario;
    std::cout << "\n";
  }
  return kExitOk;
}

// `dbload workload check FILE [--set option=value …]`: parses and checks a workload file.
int WorkloadCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "check") {
    return Fail(absl::InvalidArgumentError(
        "dbload workload: expected `dbload workload check FILE [--set option=value ...]`"));
  }
  absl::StatusOr<Flags> flags =
      ParseFlags("workload check", {args.begin() + 1, args.end()}, {"--set"}, {});
  if (!flags.ok()) return Fail(flags.status());
  if (flags->positional.size() != 1) {
    return Fail(absl::InvalidArgumentError("dbload workload check: expected one workload file"));
  }
  std::map<std::string, std::string> options;
  for (const std::string& set : flags->All("--set")) {
    const size_t equals = set.find('=');
    if (equals == std::string::npos) {
      return Fail(absl::InvalidArgumentError(
          absl::StrCat("dbload workload check: --set ", set, ": expected option=value")));
    }
    options[set.substr(0, equals)] = set.substr(equals + 1);
  }
  const std::string& path = flags->positional[0];
  absl::StatusOr<v1::WorkloadSpec> spec = BuiltinWorkloadFiles().contains(path)
                                              ? ResolveWorkload(path, options)
                                              : LoadWorkloadFile(path, options);
  if (!spec.ok()) {
    const std::optional<std::string> field = FieldOf(spec.status());
    return Fail(absl::Status(
        spec.status().code(),
        field ? absl::StrCat(path, ": --set ", field->substr(17), ": ", spec.status().message())
              : std::string(spec.status().message())));
  }
  std::cout << path << ": workload " << spec->name() << ", " << spec->tables_size() << " tables, "
            << spec->scenarios_size() << " scenarios:";
  for (const v1::Scenario& scenario : spec->scenarios()) std::cout << " " << scenario.name();
  std::cout << "\n";
  return kExitOk;
}

}  // namespace dbload::cli
