#ifndef DBLOAD_CLI_RUN_VIA_H_
#define DBLOAD_CLI_RUN_VIA_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "cli/control_client.h"
#include "cli/local_cluster.h"
#include "dbload/v1/control.grpc.pb.h"
#include "dbload/v1/plan.pb.h"

// Submitting a plan and following it to its report: the one path of `dbload run`,
// `submit --wait`, `suite run` and the agents' part of `prepare`.
namespace dbload::cli {

// Sends the plan through the Control API; the coordinator waits up to `wait_for_agents` for
// `min_agents` idle agents. `in_process`: the coordinator is this process's own, so a failed
// first connection is retried until the deadline.
absl::StatusOr<v1::SubmitResponse> Submit(v1::Control::Stub& stub, const std::string& coordinator,
                                          const v1::Plan& plan, const std::string& plan_path,
                                          uint32_t min_agents, Nanos wait_for_agents,
                                          bool in_process = false);

// Where a run goes: this process's coordinator and agents (`dbload run`), or a running
// coordinator (`dbload submit --wait`, `dbload suite run --coordinator`).
struct RunVia {
  v1::Control::Stub* stub = nullptr;
  std::string address;
  uint32_t min_agents = 1;
  Nanos wait_for_agents = 0;
  LocalCluster* cluster = nullptr;  // in this process: Ctrl-C interrupts it
  // Told the run's id and agents once it is submitted (may be null).
  std::function<void(const v1::SubmitResponse&)> on_submitted;
};

// Submits a plan and follows it to its report and exit code (FollowRun).
int RunPlanVia(const RunVia& via, const v1::Plan& plan, const std::string& source,
               FollowOptions options);

}  // namespace dbload::cli

#endif  // DBLOAD_CLI_RUN_VIA_H_
