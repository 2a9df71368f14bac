#ifndef DBLOAD_CLI_LOCAL_CLUSTER_H_
#define DBLOAD_CLI_LOCAL_CLUSTER_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/agent_link.h"
#include "base/clock.h"
#include "coordinator/coordinator_service.h"

namespace dbload {

// `dbload run`: the same coordinator and agents as a distributed run, in this process, on
// loopback. The coordinator listens on 127.0.0.1 (a free port); `agents` AgentLinks named
// agent-1 … agent-N dial it from their own threads with the production driver factory. The
// plan then goes through the Control API exactly as `dbload submit` sends it: one code path,
// local or distributed. Quiet: neither the coordinator's nor the agents' event lines are
// printed (the CLI's output is the run's progress and report).
class LocalCluster {
 public:
  // `allow_target` (--allow-target) is every agent's list, and the probe's.
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Start(
      int agents, Clock& clock,
      const TargetAllowList& allow_target = TargetAllowList::LoopbackDefault());
  // Stops everything: agents first (so that none reconnects into a closing server), then the
  // coordinator and its server.
  ~LocalCluster();
  LocalCluster(const LocalCluster&) = delete;
  LocalCluster& operator=(const LocalCluster&) = delete;

  // host:port of the coordinator's AgentLink and Control services.
  const std::string& address() const { return address_; }
  // How to call it: the coordinator requires a random token of this process's making, so that
  // no one else on the machine can submit to, or stop, a run on its loopback port.
  const TransportSecurity& security() const { return security_; }
  // Ctrl-C: ends every running run as "interrupted" (as dbload-coordinator does on SIGINT):
  // agents stop, send their final reports, and the runs' reports are complete. Blocks until then
  // (at most the grace period).
  void Interrupt();

 private:
  LocalCluster() = default;

  std::unique_ptr<CoordinatorService> service_;
  std::unique_ptr<CoordinatorServer> server_;
  std::vector<std::unique_ptr<AgentLink>> agents_;
  std::vector<std::thread> agent_threads_;
  std::string address_;
  TransportSecurity security_;
};

}  // namespace dbload

#endif  // DBLOAD_CLI_LOCAL_CLUSTER_H_
