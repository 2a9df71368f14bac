#ifndef DBLOAD_COORDINATOR_AGENT_REGISTRY_H_
#define DBLOAD_COORDINATOR_AGENT_REGISTRY_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/clock.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "dbload/v1/control.pb.h"

namespace dbload {

class MetricsExporter;

// One connected agent.
struct AgentConn {
  dbload::v1::AgentHello hello;
  grpc::ServerContext* context = nullptr;  // valid while the agent is in the registry
  Nanos connected_at = 0;
  Nanos last_heard = 0;
  std::string run_id;  // the run it works for; empty: idle
  // Its name in that run's reports: its own, or NAME#2 … when it joined a run that still holds
  // an earlier life of NAME (a restarted agent).
  std::string participant;
  bool lost = false;  // silent too long; its stream is being closed
  // Messages to the agent, written by the agent's writer thread so that a slow agent never
  // blocks the coordinator.
  std::deque<dbload::v1::CoordinatorMessage> outbox;
  bool closing = false;
  std::condition_variable outbox_cv;
};

// Whether an agent's first message opens a link this coordinator speaks: an AgentHello of
// protocol version kAgentProtocolVersion with a name. Errors say what to change (for a version
// mismatch, both versions and both dbload versions: the operator must upgrade one side).
absl::Status CheckHello(const dbload::v1::AgentMessage& first, const std::string& our_version);

// The connected agents by name (sorted: splits over them are deterministic), each with its
// outbox. It is guarded by the coordinator's mutex, which it is given: every method runs with
// that mutex held, except WriteLoop, which takes it itself and waits on the agent's outbox with
// it (so that the coordinator, under its mutex, only ever queues, never writes to a stream).
class AgentRegistry {
 public:
  using AgentStream =
      grpc::ServerReaderWriter<dbload::v1::CoordinatorMessage, dbload::v1::AgentMessage>;
  using Agents = std::map<std::string, std::shared_ptr<AgentConn>>;

  // `metrics`: where the number of connected agents is published; not owned, may be null.
  AgentRegistry(std::mutex& mu, MetricsExporter* metrics) : mu_(mu), metrics_(metrics) {}

  // Registers an agent that said hello at `now`; an error when its name is taken (key spaces
  // and reports are told apart by name).
  absl::Status Add(const std::string& name, std::shared_ptr<AgentConn> agent, Nanos now);
  // Closes the agent's outbox: its writer ends, and nothing more is queued.
  static void Close(AgentConn& agent);
  // Forgets the agent (unless a newer agent took its name meanwhile).
  void Remove(const std::string& name, const std::shared_ptr<AgentConn>& agent);
  const Agents& agents() const { return agents_; }

  // The agent connected as `connection` while it works for `run_id` as `participant`; null
  // otherwise (gone, idle again, or working for another run).
  AgentConn* Working(const std::string& connection, const std::string& run_id,
                     const std::string& participant) const;
  // The agent connected as `name` if it is assigned to `run_id`; null otherwise.
  AgentConn* AssignedTo(const std::string& name, const std::string& run_id) const;
  // Agents neither lost nor working, in name order.
  std::vector<std::pair<std::string, std::shared_ptr<AgentConn>>> Idle() const;

  // Queues a message for the agent's writer; dropped once the agent is closing.
  static void Enqueue(AgentConn& agent, dbload::v1::CoordinatorMessage message);
  // The agent's writer thread: writes its outbox to `stream` until the agent closes or the
  // stream fails. Takes the coordinator's mutex itself.
  void WriteLoop(AgentConn& agent, AgentStream* stream);

  // One tick: a heartbeat for every agent heard within `silence_limit`; an agent silent longer
  // is marked lost, its stream cancelled (a network partition keeps TCP open for minutes: the
  // agent, if alive, reconnects, and its dead-man timer stops any load meanwhile) and `on_lost`
  // called with why, in name order.
  void Beat(Nanos now, Nanos silence_limit, uint64_t sequence,
            const std::function<void(const std::string&, AgentConn&, const std::string&)>& on_lost);
  // Closes every agent's outbox and stream (the coordinator shuts down).
  void CloseAll();

  // Why no run started: how many agents are idle (by name) and busy, against `min_agents`.
  std::string WaitFailure(uint32_t min_agents, Nanos waited) const;
  void List(Nanos now, dbload::v1::ListAgentsResponse& response) const;

 private:
  void PublishCount() const;

  std::mutex& mu_;
  MetricsExporter* metrics_;
  Agents agents_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_AGENT_REGISTRY_H_
