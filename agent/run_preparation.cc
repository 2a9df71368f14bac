#include "agent/run_preparation.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/agent_resources.h"
#include "base/field_error.h"
#include "plan/plan_validation.h"
#include "plan/session_settings.h"
#include "plan/stage_program.h"
#include "plan/target_secrets.h"
#include "workload/loader.h"

namespace dbload {

namespace {

namespace v1 = dbload::v1;

// Rates are split across agents in floating point; a share may exceed the plan's rate by
// rounding, never by more.
constexpr double kRateSplitSlack = 1e-9;

// Errors from code that names a field (workload options, scenario) read like the plan parser's.
absl::Status InPlan(const absl::Status& status, const std::string& source) {
  if (const std::optional<std::string> field = FieldOf(status)) {
    return absl::Status(status.code(), absl::StrCat(source, ": ", *field, ": ", status.message()));
  }
  return absl::Status(status.code(), absl::StrCat(source, ": ", status.message()));
}

}  // namespace

RunPreparer::RunPreparer(const AgentLinkOptions& options, const DriverFactory& driver_factory,
                         Clock& clock)
    : options_(options), driver_factory_(driver_factory), clock_(clock) {}

AgentResources RunPreparer::Resources() const {
  return options_.resources ? options_.resources() : ReadAgentResources();
}

absl::StatusOr<std::unique_ptr<ActiveRun>> RunPreparer::PrepareRun(const v1::Assignment& assignment,
                                                                   bool& target_refused) const {
  if (assignment.run_id().empty()) return absl::InvalidArgumentError("assignment without run_id");
  const std::string& id = assignment.run_id();
  const std::string source = absl::StrCat("run ", id, " plan");
  const v1::Plan& plan = assignment.plan();
  if (absl::Status valid = ValidatePlan(plan, source); !valid.ok()) return valid;

  auto run = std::make_unique<ActiveRun>();
  run->run_id = id;
  run->plan = plan;
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(plan);
  if (!workload.ok()) return InPlan(workload.status(), source);
  run->workload = *std::move(workload);
  absl::StatusOr<std::unique_ptr<Scenario>> scenario = run->workload->MakeScenario(plan.scenario());
  if (!scenario.ok()) return InPlan(scenario.status(), source);
  run->scenario = *std::move(scenario);

  // The share: never more than the plan asks for, whatever the coordinator computed.
  const std::string where = absl::StrCat("run ", id, " assignment: ");
  RunShare& share = run->share;
  share.first_slot = assignment.first_slot();
  share.total_slots = assignment.total_slots();
  share.phase = assignment.phase();
  // One agent explains, so that the run has one plan per query type and stage.
  share.explain = assignment.agent_index() == 0 && !plan.explain().disabled();
  uint32_t workers = 0;
  if (plan.stages_size() > 0) {
    // The stages give the load; the assignment gives this agent's part of each.
    share.rate_fraction = assignment.rate_fraction();
    share.agent_index = assignment.agent_index();
    share.agent_count = assignment.agent_count();
    if (!std::isfinite(share.rate_fraction) || share.rate_fraction < 0 ||
        share.rate_fraction > 1 + kRateSplitSlack) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "rate_fraction: expected a fraction from 0 to 1, got ", share.rate_fraction));
    }
    if (share.agent_index >= share.agent_count) {
      return absl::InvalidArgumentError(absl::StrCat(where, "agent_index ", share.agent_index,
                                                     " is not below agent_count ",
                                                     share.agent_count));
    }
    const StageProgram program(plan, share.rate_fraction, share.agent_index, share.agent_count);
    workers = plan.load().has_open() ? (program.AnyRate() ? plan.target().pool() : 0)
                                     : program.ClientStarts();
  } else if (plan.load().has_open()) {
    const double plan_rate = plan.load().open().rate();
    if (assignment.load().kind_case() != v1::LoadShare::kRate) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "load.rate: missing; an open-loop plan needs a rate share"));
    }
    const double rate = assignment.load().rate();
    if (!std::isfinite(rate) || rate < 0 || rate > plan_rate * (1 + kRateSplitSlack)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "load.rate: expected 0 to the plan's rate ", plan_rate, ", got ", rate));
    }
    share.rate = rate;
    workers = rate > 0 ? plan.target().pool() : 0;
  } else {
    const uint32_t plan_clients = plan.load().closed().clients();
    if (assignment.load().kind_case() != v1::LoadShare::kClients) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "load.clients: missing; a closed-loop plan needs a clients share"));
    }
    const uint32_t clients = assignment.load().clients();
    if (clients > plan_clients) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, "load.clients: expected 0 to the plan's ", plan_clients, ", got ", clients));
    }
    share.clients = clients;
    workers = clients;
  }
  if (!std::isfinite(share.phase) || share.phase < 0 || share.phase >= 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "phase: expected a fraction in [0, 1), got ", share.phase));
  }
  if (share.total_slots > 0 && uint64_t{share.first_slot} + workers > uint64_t{share.total_slots}) {
    // Slots beyond total_slots would overlap another agent's key space.
    return absl::InvalidArgumentError(absl::StrCat(where, "slots ", share.first_slot, " + ",
                                                   workers, " workers exceed total_slots ",
                                                   share.total_slots));
  }
  // One thread and one connection per worker: refused here, before any is started, rather
  // than crash the agent past its limits.
  if (absl::Status fits =
          CheckAgentResources(plan, workers, share.explain, Resources(), options_.name);
      !fits.ok()) {
    return InPlan(fits, source);
  }
  run->slot_capacity = workers;
  run->own_slots_end = share.first_slot + workers;
  const uint64_t plan_queries = plan.stop().queries();
  if (assignment.stage_queries_size() > plan.stages_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "stage_queries: ", assignment.stage_queries_size(), " shares for ",
                     plan.stages_size(), " stages"));
  }
  for (int i = 0; i < assignment.stage_queries_size(); ++i) {
    if (assignment.stage_queries(i) > plan.stages(i).queries()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "stage_queries[", i, "]: expected at most the stage's queries ",
                       plan.stages(i).queries(), ", got ", assignment.stage_queries(i)));
    }
  }
  share.stage_queries.assign(assignment.stage_queries().begin(), assignment.stage_queries().end());
  if (assignment.queries() > plan_queries) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "queries: expected at most the plan's stop.queries ", plan_queries,
                     ", got ", assignment.queries()));
  }
  share.queries = assignment.queries();
  // In RunShare 0 means "no count limit": a zero share of a count-limited plan means "none".
  run->nothing_to_run = plan.stages_size() == 0 && plan_queries > 0 && assignment.queries() == 0;

  absl::StatusOr<std::string> password = ReadTargetPassword(plan.target());
  if (!password.ok()) {
    // The message names the file or variable, never the content.
    return absl::Status(password.status().code(),
                        absl::StrCat("run ", id, ": ", password.status().message()));
  }
  run->password = *password;
  // The agent is the authority on where its load may go, whatever the coordinator checked:
  // before any connection, the target is checked and a host name resolved, once, to the
  // address that every connection of the run dials.
  absl::StatusOr<std::string> endpoint = ApplyAllowTarget(
      options_.allow_target, *options_.resolver,
      {.subject = absl::StrCat("agent '", options_.name, "'"), .remedy = "the agent"},
      *run->plan.mutable_target());
  if (!endpoint.ok()) {
    target_refused = endpoint.status().code() == absl::StatusCode::kPermissionDenied;
    return absl::Status(endpoint.status().code(),
                        absl::StrCat("run ", id, ": ", endpoint.status().message()));
  }
  run->target_address = *endpoint;
  absl::StatusOr<std::unique_ptr<db::Driver>> driver =
      driver_factory_(TargetForRun(run->plan), *std::move(password), clock_);
  if (!driver.ok()) {
    return absl::Status(
        driver.status().code(),
        db::Redact(absl::StrCat("run ", id, ": target: ", driver.status().message()),
                   run->password));
  }
  run->driver = *std::move(driver);
  return run;
}

}  // namespace dbload
