// `dbload run` (a coordinator and agents in this process) and `dbload submit` (to a running
// coordinator): both go through RunPlanVia.
#include <iostream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/clock.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/local_cluster.h"
#include "cli/run_via.h"
#include "process/exit_codes.h"
#include "process/stop_signal.h"

namespace dbload::cli {

int RunCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags =
      ParseFlags("run", args, {"--set", "--report", "--agents", "--allow-target"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<TargetAllowList> allow = AllowTargetOf("run", *flags);
  if (!allow.ok()) return Fail(allow.status());
  absl::StatusOr<PlanArgs> parsed = PlanArgsOf("run", *flags);
  if (!parsed.ok()) return Fail(parsed.status());
  absl::StatusOr<uint32_t> agents =
      PositiveCount("run", "--agents", flags->Get("--agents", "1"), kMaxLocalAgents);
  if (!agents.ok()) return Fail(agents.status());
  SteadyClock clock;
  // Everything that can be checked here is, before any load: the plan, the password, the
  // target against --allow-target, the driver.
  absl::StatusOr<LoadedPlan> loaded = LoadPlan(*parsed, clock, *allow, RefuserOf("run"));
  if (!loaded.ok()) return Fail(loaded.status());
  InstallStopSignalHandlers();
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Start(*agents, clock, *allow);
  if (!cluster.ok()) return Fail(cluster.status());
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub =
      DialControl((*cluster)->address(), (*cluster)->security());
  if (!stub.ok()) return Fail(stub.status());
  const RunVia via{.stub = stub->get(),
                   .address = (*cluster)->address(),
                   .min_agents = *agents,
                   .wait_for_agents = kLocalAgentWait,
                   .cluster = cluster->get()};
  return RunPlanVia(via, loaded->plan, parsed->plan_path, {.report_path = parsed->report_path});
}

int SubmitCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags(
      "submit", args, {"--set", "--report", "--coordinator", "--min-agents", "--wait-for-agents"},
      {"--wait"});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<PlanArgs> parsed = PlanArgsOf("submit", *flags);
  if (!parsed.ok()) return Fail(parsed.status());
  const std::string coordinator = flags->Get("--coordinator");
  if (coordinator.empty())
    return Fail(absl::InvalidArgumentError("dbload submit: --coordinator ADDR is required"));
  const bool wait = flags->switches.contains("--wait");
  if (!parsed->report_path.empty() && !wait) {
    return Fail(absl::InvalidArgumentError("dbload submit: --report needs --wait"));
  }
  absl::StatusOr<uint32_t> min_agents =
      PositiveCount("submit", "--min-agents", flags->Get("--min-agents", "1"), 100000);
  if (!min_agents.ok()) return Fail(min_agents.status());
  absl::StatusOr<Nanos> wait_for_agents = WaitForAgentsOf("submit", *flags);
  if (!wait_for_agents.ok()) return Fail(wait_for_agents.status());
  absl::StatusOr<TransportSecurity> security = SecurityOf("submit", *flags);
  if (!security.ok()) return Fail(security.status());
  absl::StatusOr<std::unique_ptr<v1::Control::Stub>> stub = DialControl(coordinator, *security);
  if (!stub.ok()) return Fail(stub.status());
  absl::StatusOr<v1::Plan> plan = ParsePlan(*parsed);
  if (!plan.ok()) return Fail(plan.status());

  if (!wait) {
    absl::StatusOr<v1::SubmitResponse> submitted =
        Submit(**stub, coordinator, *plan, parsed->plan_path, *min_agents, *wait_for_agents);
    if (!submitted.ok()) {
      return Fail(
          absl::Status(submitted.status().code(),
                       absl::StrCat(parsed->plan_path, ": ", submitted.status().message())));
    }
    std::cout << submitted->run_id() << "\n";
    return kExitOk;
  }
  InstallStopSignalHandlers();
  // The path of `dbload run` and `dbload suite run --coordinator`: Ctrl-C stops the run.
  const RunVia via{.stub = stub->get(),
                   .address = coordinator,
                   .min_agents = *min_agents,
                   .wait_for_agents = *wait_for_agents,
                   .on_submitted = [](const v1::SubmitResponse& submitted) {
                     std::cout << "run " << submitted.run_id() << " across "
                               << submitted.agents_size() << " agent"
                               << (submitted.agents_size() == 1 ? "" : "s") << ": "
                               << absl::StrJoin(submitted.agents(), ", ") << std::endl;
                   }};
  return RunPlanVia(via, *plan, parsed->plan_path, {.report_path = parsed->report_path});
}

}  // namespace dbload::cli
