#ifndef DBLOAD_AGENT_AGENT_LINK_H_
#define DBLOAD_AGENT_AGENT_LINK_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/coordinator_address.h"  // CheckCoordinatorAddress, which Run() applies
#include "agent/reconnect_policy.h"     // IsPermanentLinkRefusal, which ends Run()
#include "base/clock.h"
#include "db/driver.h"
#include "plan/plan_limits.h"
#include "net/target_allow_list.h"
#include "net/transport_security.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// Makes the database driver for an assignment's target; the password is read on the agent.
using DriverFactory = std::function<absl::StatusOr<std::unique_ptr<db::Driver>>(
    const dbload::v1::Target& target, std::string password, Clock& clock)>;

struct AgentLinkOptions {
  std::string coordinator;  // host:port
  std::string name;         // unique among the coordinator's agents; default: hostname-pid
  double capacity = 1.0;
  // TLS towards the coordinator (its certificate checked against the CA: the agent takes
  // assignments only from the coordinator it authenticated) and the token sent with the link.
  TransportSecurity security;
  // Used until an assignment names its own.
  Nanos dead_man_timeout = 5 * kSecond;
  Nanos heartbeat_interval = kSecond;
  Nanos reconnect_backoff_min = 100 * kMillisecond;
  Nanos reconnect_backoff_max = 5 * kSecond;
  // What the agent can still start (threads, file descriptors), read when it says hello and
  // again for each assignment, which it refuses when the run's workers do not fit. Empty:
  // ReadAgentResources (agent/agent_resources.h); tests inject their own.
  std::function<AgentResources()> resources;
  // --allow-target: the database targets this agent may send load to. An assignment whose
  // target is outside is refused before any connection is opened, with a final report that
  // says why (AgentReport.target_refused); the list goes to the coordinator in AgentHello.
  TargetAllowList allow_target = TargetAllowList::LoopbackDefault();
  // Resolves a target's host name, once per run; the address checked is the one every
  // connection of the run dials. Empty: SystemResolver.
  std::shared_ptr<Resolver> resolver;
  // One line per event worth telling an operator (connected, run started or ended, coordinator
  // lost, reconnecting, a message ignored). Calls are serialized; may be empty.
  std::function<void(const std::string&)> on_event;
};

// An agent's side of the link: dials the coordinator, says hello, and then, for each
// assignment, runs its share (ExecuteRun) and streams one AgentReport per interval. It stops
// its load by itself when it has heard nothing from the coordinator for the dead-man timeout,
// and reconnects (with backoff) until Shutdown() or a permanent refusal.
class AgentLink {
 public:
  AgentLink(AgentLinkOptions options, DriverFactory driver_factory, Clock& clock);
  ~AgentLink();
  AgentLink(const AgentLink&) = delete;
  AgentLink& operator=(const AgentLink&) = delete;

  // Runs until Shutdown() (from another thread or a signal handler's flag watcher): OK. Returns
  // at once if the coordinator address fails CheckCoordinatorAddress (also reported through
  // on_event) or if Shutdown() was called before; and when the coordinator refuses the agent
  // for good (IsPermanentLinkRefusal), with a message naming the coordinator and its reason,
  // not reported through on_event (the caller tells it, once). Call it from one thread, once.
  absl::Status Run();
  // Stops any load within a poll slice and makes Run() return (after the run's final report has
  // been offered to the coordinator, for at most a second). Final: the link does not run again.
  void Shutdown();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_AGENT_LINK_H_
