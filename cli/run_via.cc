#include "cli/run_via.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/cli_common.h"
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

// Submits a plan and follows it to its report and exit code, as `dbload run` does. The report
// is the coordinator's, row changes included.
int RunPlanVia(const RunVia& via, const v1::Plan& plan, const std::string& source,
               FollowOptions options) {
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
  return FollowRun(*via.stub, run_id, options);
}

}  // namespace dbload::cli
