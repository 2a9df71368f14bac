// The workloads a plan can name in a process that reads no YAML (the agent, the coordinator):
// oltp and tpcc, built in code (sysbench's scenarios, TPC-C), and the plan's own workload_spec. The
// YAML files, user's and built-in (workloads/), are read into that spec by the CLI
// (ResolvePlanWorkload, workload/workload_parser.h), so that they travel inside the plan.

#include "absl/strings/str_cat.h"
#include "base/code_workloads.h"
#include "base/field_error.h"
#include "workload/declarative.h"
#include "workload/oltp.h"
#include "workload/tpcc.h"
#include "workload/workload.h"

namespace dbload {

absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(
    const std::string& name, const std::map<std::string, std::string>& options) {
  if (name == kOltpWorkloadName) {
    absl::StatusOr<OltpOptions> parsed = ParseOltpOptions(options);
    if (!parsed.ok()) return parsed.status();
    return MakeOltpWorkload(*std::move(parsed));
  }
  if (name == kTpccWorkloadName) {
    absl::StatusOr<tpcc::TpccOptions> parsed = tpcc::ParseTpccOptions(options);
    if (!parsed.ok()) return parsed.status();
    return tpcc::MakeTpccWorkload(*parsed);
  }
  return FieldError(
      "workload", absl::StrCat("unknown workload '", name, "' (in code: ", kOltpWorkloadName, ", ",
                               kTpccWorkloadName,
                               "; a workload written in YAML, a file or a "
                               "built-in such as shop, travels in the plan as its "
                               "workload_spec, which dbload fills in from the file)"));
}

absl::StatusOr<std::unique_ptr<Workload>> MakePlanWorkload(const v1::Plan& plan) {
  if (plan.has_workload_spec()) return MakeDeclarativeWorkload(plan.workload_spec());
  return MakeWorkload(plan.workload(),
                      {plan.workload_options().begin(), plan.workload_options().end()});
}

}  // namespace dbload
