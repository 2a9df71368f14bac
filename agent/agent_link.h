#ifndef DBLOAD_AGENT_AGENT_LINK_H_
#define DBLOAD_AGENT_AGENT_LINK_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "common/db/driver.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// Makes the database driver for an assignment's target; the password is read on the agent.
using DriverFactory = std::function<absl::StatusOr<std::unique_ptr<db::Driver>>(
    const dbload::v1::Target& target, std::string password, Clock& clock)>;

struct AgentLinkOptions {
  std::string coordinator;  // host:port
  std::string name;         // unique among the coordinator's agents; default: hostname-pid
  double capacity = 1.0;
  // Used until an assignment names its own.
  Nanos dead_man_timeout = 5 * kSecond;
  Nanos heartbeat_interval = kSecond;
  Nanos reconnect_backoff_min = 100 * kMillisecond;
  Nanos reconnect_backoff_max = 5 * kSecond;
};

// An agent's side of the link: dials the coordinator, says hello, and then, for each
// assignment, runs its share (ExecuteRun) and streams one AgentReport per interval. It stops
// its load by itself when it has heard nothing from the coordinator for the dead-man timeout,
// and reconnects (with backoff) until Shutdown().
class AgentLink {
 public:
  AgentLink(AgentLinkOptions options, DriverFactory driver_factory, Clock& clock);
  ~AgentLink();
  AgentLink(const AgentLink&) = delete;
  AgentLink& operator=(const AgentLink&) = delete;

  // Runs until Shutdown() (from another thread or a signal handler's flag watcher).
  void Run();
  // Stops any load within a poll slice and makes Run() return.
  void Shutdown();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_AGENT_LINK_H_
