#include "coordinator/plan_admission.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/field_error.h"
#include "net/target_allow_list.h"
#include "plan/plan_limits.h"
#include "plan/stage_program.h"

namespace dbload {

PlanPeak PeakOf(const v1::Plan& plan, bool rate) {
  PlanPeak peak;
  if (plan.stages_size() == 0) {
    if (rate && plan.load().has_open()) return {plan.load().open().rate(), "load.open.rate"};
    if (!rate && plan.load().has_closed()) {
      return {static_cast<double>(plan.load().closed().clients()), "load.closed.clients"};
    }
    return peak;
  }
  if (rate != plan.load().has_open()) return peak;
  for (int i = 0; i < plan.stages_size(); ++i) {
    const v1::Stage& stage = plan.stages(i);
    const std::string name = rate ? "rate" : "clients";
    const double value =
        stage.has_knee() ? stage.knee().max() : MaxLevel(rate ? stage.rate() : stage.clients());
    if (value > peak.value) {
      peak = {value, absl::StrCat("stages.", i, ".", stage.has_knee() ? "knee.max" : name)};
    }
  }
  return peak;
}

absl::Status WithinCoordinatorLimits(const v1::Plan& plan, const std::string& source,
                                     double max_rate, uint32_t max_clients) {
  const PlanPeak rate = PeakOf(plan, /*rate=*/true);
  if (max_rate > 0 && rate.value > max_rate) {
    return absl::FailedPreconditionError(absl::StrCat(
        source, ": ", rate.field, ": ", rate.value,
        " transactions/s is above this coordinator's limit of ", max_rate, " (--max-rate)"));
  }
  const PlanPeak clients = PeakOf(plan, /*rate=*/false);
  if (max_clients > 0 && clients.value > max_clients) {
    return absl::FailedPreconditionError(absl::StrCat(
        source, ": ", clients.field, ": ", clients.value,
        " clients is above this coordinator's limit of ", max_clients, " (--max-clients)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> AdmitShares(const v1::Plan& plan, const std::vector<AgentShare>& shares,
                                     const std::vector<const v1::AgentHello*>& hellos,
                                     const std::vector<std::string>& names,
                                     std::string& refusal_log) {
  uint64_t connections = 0;
  for (const AgentShare& share : shares) {
    const bool explain = share.agent_index == 0 && !plan.explain().disabled();
    connections += share.connections + (explain && share.connections > 0 ? 1 : 0);
    const v1::AgentResources& room = hellos[share.agent]->resources();
    const AgentResources resources{.threads = room.threads(),
                                   .threads_bound = room.threads_bound(),
                                   .files = room.files(),
                                   .files_bound = room.files_bound(),
                                   .cores = hellos[share.agent]->cores()};
    if (absl::Status fits =
            CheckAgentResources(plan, share.connections, explain, resources, names[share.agent]);
        !fits.ok()) {
      refusal_log = std::string(fits.message());
      return absl::FailedPreconditionError(
          absl::StrCat(FieldOf(fits).value_or(""), ": ", fits.message()));
    }
  }
  std::vector<std::string> refusals;
  for (const AgentShare& share : shares) {
    const v1::AgentHello& hello = *hellos[share.agent];
    if (hello.allow_target().empty()) continue;
    absl::StatusOr<TargetAllowList> allow = TargetAllowList::Parse(
        std::vector<std::string>(hello.allow_target().begin(), hello.allow_target().end()));
    if (!allow.ok()) continue;  // the agent parsed its own flag; it will judge for itself
    const absl::Status allowed = allow->PreCheck(
        plan.target(),
        {.subject = absl::StrCat("agent '", names[share.agent], "'"), .remedy = "the agent"});
    if (!allowed.ok()) refusals.emplace_back(allowed.message());
  }
  if (!refusals.empty()) {
    refusal_log = absl::StrJoin(refusals, "; ");
    return absl::FailedPreconditionError(absl::StrCat("target: ", refusal_log));
  }
  return connections;
}

}  // namespace dbload
