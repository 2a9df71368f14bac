#include "cli/run_via.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "cli/cli_common.h"
#include "cli/row_changes.h"
#include "process/exit_codes.h"
#include "process/stop_signal.h"

namespace dbload::cli {

// Sends the plan through the Control API; the coordinator waits up to `wait_for_agents` for
// `min_agents` idle agents.
// `in_process`: the coordinator is this process's own (dbload run): it is known to be up, so a
// first connection attempt that fails (rarely, on a loaded machine) is retried until the
// deadline rather than reported as an unreachable coordinator.
absl::StatusOr<v1::SubmitResponse> Submit(v1::Control::Stub& stub, const std::string& coordinator,
                                          const v1::Plan& plan, const std::string& plan_path,
                                          uint32_t min_agents, Nanos wait_for_agents,
                                          bool in_process) {
  v1::SubmitRequest request;
  *request.mutable_plan() = plan;
  request.set_source_name(plan_path);
  request.set_min_agents(min_agents);
  request.set_wait_for_agents_ns(wait_for_agents);
  grpc::ClientContext context;
  const Nanos wait = std::max(wait_for_agents, plan.agents().wait_ns());  // as the coordinator
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(wait) +
                       std::chrono::seconds(30));
  context.set_wait_for_ready(in_process);
  v1::SubmitResponse response;
  const grpc::Status status = stub.Submit(&context, request, &response);
  if (!status.ok()) return ControlCallError(coordinator, status);
  return response;
}

// Submits a plan and follows it to its report and exit code, as `dbload run` does. `driver`
// (may be null: the run is on other machines) counts the rows of write scenarios before and
// after, to check them against the report.
int RunPlanVia(const RunVia& via, const v1::Plan& plan, db::Driver* driver,
               const std::string& source, FollowOptions options) {
  // Write scenarios that declare their row changes are checked against the database's own
  // counts. Not with a warm-up: its transactions change rows but are not in the report.
  const auto declared = DeclaredChanges(plan);
  std::set<std::string> changed_tables;
  for (const auto& by_query_type : declared) {
    for (const auto& table_rows : by_query_type.second) changed_tables.insert(table_rows.first);
  }
  std::map<std::string, int64_t> rows_before;
  const bool check_rows = driver != nullptr && !changed_tables.empty() && plan.warmup_ns() == 0;
  if (check_rows) {
    absl::StatusOr<std::map<std::string, int64_t>> counted = CountRows(*driver, changed_tables);
    if (!counted.ok()) {
      return Fail(absl::Status(counted.status().code(),
                               absl::StrCat(source, ": ", counted.status().message())));
    }
    rows_before = *std::move(counted);
  } else if (!changed_tables.empty() && driver != nullptr) {
    std::cout << "(rows changed are not checked: the warm-up's transactions change rows but are "
                 "not in the report)\n";
  }
  if (StopRequested().load()) return kExitInterrupted;
  absl::StatusOr<v1::SubmitResponse> submitted =
      Submit(*via.stub, via.address, plan, source, via.min_agents, via.wait_for_agents,
             /*in_process=*/via.cluster != nullptr);
  if (!submitted.ok()) {
    if (StopRequested().load()) return kExitInterrupted;
    return Fail(absl::Status(submitted.status().code(),
                             absl::StrCat(source, ": ", submitted.status().message())));
  }
  if (via.on_submitted) via.on_submitted(*submitted);
  const std::string run_id = submitted->run_id();
  options.coordinator = via.address;
  options.plan_path = source;
  options.interrupted = &StopRequested();
  if (via.cluster != nullptr) {
    options.on_interrupt = [&via] { via.cluster->Interrupt(); };
  } else {
    options.on_interrupt = [&via, run_id] {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      v1::StopRequest request;
      request.set_run_id(run_id);
      v1::StopResponse response;
      via.stub->Stop(&context, request, &response);
    };
  }
  if (check_rows) {
    options.complete_report = [&](v1::RunReport& report) -> absl::Status {
      absl::StatusOr<std::map<std::string, int64_t>> after = CountRows(*driver, changed_tables);
      if (!after.ok()) return after.status();
      return CheckRowChanges(declared, rows_before, *after, report);
    };
  }
  return FollowRun(*via.stub, run_id, options);
}

}  // namespace dbload::cli
