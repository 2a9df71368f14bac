// `dbload watch`, `stop` and `agents`: commands for a running dbload-coordinator (its `report`
// is in command_report.cc, beside the report of a file).
#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/control_client.h"
#include "process/exit_codes.h"

namespace dbload::cli {

int WatchCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("watch", args, {"--coordinator"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("watch", *flags, /*takes_run=*/true);
  if (!ref.ok()) return Fail(ref.status());
  // Whether the run exists, and its real id, before following it.
  v1::GetReportRequest request;
  request.set_run_id(ref->run_id);
  v1::RunReport report;
  const grpc::Status found = ref->stub->GetReport(CallContext().get(), request, &report);
  if (!found.ok()) return Fail(RunCallError(*ref, found));
  FollowOptions options{.coordinator = ref->coordinator, .print_report = false};
  return FollowRun(*ref->stub, ref->run_id, options);
}

int StopCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("stop", args, {"--coordinator"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("stop", *flags, /*takes_run=*/true);
  if (!ref.ok()) return Fail(ref.status());
  v1::StopRequest request;
  request.set_run_id(ref->run_id);
  v1::StopResponse response;
  const grpc::Status stopped = ref->stub->Stop(CallContext().get(), request, &response);
  if (!stopped.ok()) return Fail(RunCallError(*ref, stopped));
  std::cout << "stop requested for "
            << (ref->run_id.empty() ? "the latest run" : "run " + ref->run_id) << "\n";
  return kExitOk;
}

int AgentsCommand(const std::vector<std::string>& args) {
  absl::StatusOr<Flags> flags = ParseFlags("agents", args, {"--coordinator"}, {});
  if (!flags.ok()) return Fail(flags.status());
  absl::StatusOr<RunRef> ref = ParseRunRef("agents", *flags, /*takes_run=*/false);
  if (!ref.ok()) return Fail(ref.status());
  v1::ListAgentsResponse response;
  const grpc::Status listed =
      ref->stub->ListAgents(CallContext().get(), v1::ListAgentsRequest(), &response);
  if (!listed.ok()) return Fail(ControlCallError(ref->coordinator, listed));
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "HOST", "CORES", "VERSION", "RUN", "CONNECTED"}};
  for (const v1::AgentInfo& agent : response.agents()) {
    rows.push_back({agent.name(), agent.host(), absl::StrCat(agent.cores()), agent.version(),
                    agent.run_id().empty() ? "-" : agent.run_id(),
                    absl::StrFormat("%.0fs", agent.connected_s())});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i],
                      i + 1 < row.size() ? std::string(widths[i] - row[i].size() + 2, ' ') : "");
    }
    std::cout << line << "\n";
  }
  if (response.agents().empty()) std::cout << "(no agents connected)\n";
  return kExitOk;
}

}  // namespace dbload::cli
