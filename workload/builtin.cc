// The built-in workloads by name: oltp in code (sysbench's scenarios), the others from their
// YAML files in workloads/ (compiled in), and the plan's own workload file.

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/field_error.h"
#include "workload/workload.h"
#include "workload/workload_parser.h"
#include "workload/declarative.h"
#include "workload/oltp.h"

namespace dbload {

absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(
    const std::string& name, const std::map<std::string, std::string>& options) {
  if (name == "oltp") {
    absl::StatusOr<OltpOptions> parsed = ParseOltpOptions(options);
    if (!parsed.ok()) return parsed.status();
    return MakeOltpWorkload(*std::move(parsed));
  }
  if (IsYamlWorkload(name)) {
    absl::StatusOr<v1::WorkloadSpec> spec = ResolveWorkload(name, options);
    if (!spec.ok()) return spec.status();
    return MakeDeclarativeWorkload(*std::move(spec));
  }
  return FieldError("workload", absl::StrCat("unknown workload '", name, "' (built-in: ",
                                             absl::StrJoin(BuiltinWorkloadNames(), ", "),
                                             "; or the path of a workload file)"));
}

std::vector<std::string> BuiltinWorkloadNames() {
  std::vector<std::string> names = {"oltp"};
  for (const auto& [name, text] : BuiltinWorkloadFiles()) names.push_back(name);
  return names;
}

absl::StatusOr<std::unique_ptr<Workload>> MakePlanWorkload(const v1::Plan& plan) {
  if (plan.has_workload_spec()) return MakeDeclarativeWorkload(plan.workload_spec());
  return MakeWorkload(plan.workload(),
                      {plan.workload_options().begin(), plan.workload_options().end()});
}

absl::Status ResolvePlanWorkload(v1::Plan& plan) {
  if (plan.has_workload_spec() || !IsYamlWorkload(plan.workload())) return absl::OkStatus();
  absl::StatusOr<v1::WorkloadSpec> spec = ResolveWorkload(
      plan.workload(), {plan.workload_options().begin(), plan.workload_options().end()});
  if (!spec.ok()) return spec.status();
  *plan.mutable_workload_spec() = *std::move(spec);
  return absl::OkStatus();
}

}  // namespace dbload
