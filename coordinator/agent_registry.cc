#include "coordinator/agent_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/metrics_exporter.h"
#include "plan/durations.h"
#include "proto/agent_protocol.h"

namespace dbload {

absl::Status CheckHello(const v1::AgentMessage& first, const std::string& our_version) {
  if (!first.has_hello()) {
    return absl::FailedPreconditionError(
        "the first message on the agent link must be an AgentHello");
  }
  const v1::AgentHello& hello = first.hello();
  if (hello.protocol_version() != kAgentProtocolVersion) {
    // Both versions in the message: the operator has to upgrade one side and needs to know which.
    return absl::FailedPreconditionError(absl::StrCat(
        "agent protocol version ", hello.protocol_version(),
        " is not supported: this coordinator speaks agent protocol version ", kAgentProtocolVersion,
        " (agent dbload ", hello.version().empty() ? "?" : hello.version(), ", coordinator dbload ",
        our_version, "); run the same dbload version on both sides"));
  }
  if (hello.name().empty()) {
    return absl::InvalidArgumentError("AgentHello.name is empty: every agent needs a unique name");
  }
  return absl::OkStatus();
}

absl::Status AgentRegistry::Add(const std::string& name, std::shared_ptr<AgentConn> agent,
                                Nanos now) {
  if (auto existing = agents_.find(name); existing != agents_.end()) {
    return absl::AlreadyExistsError(
        absl::StrCat("an agent named '", name, "' is already connected (from host '",
                     existing->second->hello.host(), "'); agent names must be unique"));
  }
  agent->connected_at = agent->last_heard = now;
  agents_[name] = std::move(agent);
  PublishCount();
  return absl::OkStatus();
}

void AgentRegistry::Close(AgentConn& agent) {
  agent.closing = true;
  agent.outbox_cv.notify_all();
}

void AgentRegistry::Remove(const std::string& name, const std::shared_ptr<AgentConn>& agent) {
  if (auto it = agents_.find(name); it != agents_.end() && it->second == agent) agents_.erase(it);
  PublishCount();
}

AgentConn* AgentRegistry::Working(const std::string& connection, const std::string& run_id,
                                  const std::string& participant) const {
  const auto it = agents_.find(connection);
  if (it == agents_.end() || it->second->run_id != run_id ||
      it->second->participant != participant) {
    return nullptr;
  }
  return it->second.get();
}

AgentConn* AgentRegistry::AssignedTo(const std::string& name, const std::string& run_id) const {
  const auto it = agents_.find(name);
  return it != agents_.end() && it->second->run_id == run_id ? it->second.get() : nullptr;
}

std::vector<std::pair<std::string, std::shared_ptr<AgentConn>>> AgentRegistry::Idle() const {
  std::vector<std::pair<std::string, std::shared_ptr<AgentConn>>> idle;
  for (const auto& [name, agent] : agents_) {
    if (agent->lost || !agent->run_id.empty()) continue;
    idle.emplace_back(name, agent);
  }
  return idle;
}

void AgentRegistry::Enqueue(AgentConn& agent, v1::CoordinatorMessage message) {
  if (agent.closing) return;
  agent.outbox.push_back(std::move(message));
  agent.outbox_cv.notify_one();
}

void AgentRegistry::WriteLoop(AgentConn& agent, AgentStream* stream) {
  std::unique_lock lock(mu_);
  while (true) {
    agent.outbox_cv.wait(lock, [&] { return agent.closing || !agent.outbox.empty(); });
    if (agent.closing) return;  // the agent is leaving: what is left would go nowhere
    v1::CoordinatorMessage message = std::move(agent.outbox.front());
    agent.outbox.pop_front();
    lock.unlock();
    const bool written = stream->Write(message);
    lock.lock();
    if (!written) return;  // the stream is gone; the reader notices too
  }
}

void AgentRegistry::Beat(
    Nanos now, Nanos silence_limit, uint64_t sequence,
    const std::function<void(const std::string&, AgentConn&, const std::string&)>& on_lost) {
  v1::CoordinatorMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_sequence(sequence);
  for (auto& [name, agent] : agents_) {
    if (agent->lost) continue;
    if (now - agent->last_heard >= silence_limit) {
      agent->lost = true;
      agent->context->TryCancel();
      on_lost(name, *agent,
              absl::StrFormat("silent for %.1fs",
                              static_cast<double>(now - agent->last_heard) / kSecond));
      PublishCount();
      continue;
    }
    Enqueue(*agent, heartbeat);
  }
}

void AgentRegistry::CloseAll() {
  for (auto& [name, agent] : agents_) {
    Close(*agent);
    agent->context->TryCancel();
  }
}

std::string AgentRegistry::WaitFailure(uint32_t min_agents, Nanos waited) const {
  std::vector<std::string> idle;
  size_t busy = 0;
  for (const auto& [name, agent] : agents_) {
    if (agent->lost) continue;
    if (agent->run_id.empty()) {
      idle.push_back(name);
    } else {
      ++busy;
    }
  }
  std::string message = absl::StrCat(
      "no run started: the plan needs ", min_agents, " agent", min_agents == 1 ? "" : "s",
      " (min_agents) and ",
      waited > 0 ? absl::StrCat("after waiting ", FormatDurationNanos(waited), " ") : "",
      idle.size(), idle.size() == 1 ? " is" : " are", " connected and idle",
      idle.empty() ? "" : absl::StrCat(" (", absl::StrJoin(idle, ", "), ")"));
  if (busy > 0) absl::StrAppend(&message, "; ", busy, " more busy with another run");
  if (waited == 0) absl::StrAppend(&message, "; set wait_for_agents to wait for agents to connect");
  return message;
}

void AgentRegistry::List(Nanos now, v1::ListAgentsResponse& response) const {
  for (const auto& [name, agent] : agents_) {
    v1::AgentInfo& info = *response.add_agents();
    info.set_name(name);
    info.set_host(agent->hello.host());
    info.set_cores(agent->hello.cores());
    info.set_version(agent->hello.version());
    info.set_run_id(agent->run_id);
    info.set_connected_s(static_cast<double>(now - agent->connected_at) / kSecond);
  }
}

void AgentRegistry::PublishCount() const {
  if (metrics_ == nullptr) return;
  int connected = 0;
  for (const auto& [name, agent] : agents_) connected += agent->lost ? 0 : 1;
  metrics_->SetAgentsConnected(connected);
}

}  // namespace dbload
