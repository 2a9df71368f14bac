#include "cli/local_cluster.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "base/thread_name.h"
#include "db/driver_factory.h"

namespace dbload {

namespace {
// How long agents get, after Ctrl-C, to stop and send their final reports: longer than an
// interval, shorter than the dead-man timeout.
constexpr Nanos kInterruptGrace = 3 * kSecond;
}  // namespace

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Start(
    int agents, Clock& clock, const TargetAllowList& allow_target) {
  std::unique_ptr<LocalCluster> cluster(new LocalCluster());
  cluster->security_.token = RandomToken();
  // One resolver for the probe and the agents: each still resolves once per run.
  auto resolver = std::make_shared<SystemResolver>();
  cluster->service_ = std::make_unique<CoordinatorService>(
      clock, CoordinatorOptions{.token = cluster->security_.token,
                                .probe_allow_target = allow_target,
                                .probe_remedy = "dbload run",
                                .resolver = resolver});
  absl::StatusOr<std::unique_ptr<CoordinatorServer>> server =
      CoordinatorServer::Start("127.0.0.1:0", *cluster->service_);
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("in-process coordinator: ", server.status().message()));
  }
  cluster->server_ = *std::move(server);
  cluster->address_ = absl::StrCat("127.0.0.1:", cluster->server_->port());
  for (int i = 1; i <= agents; ++i) {
    AgentLinkOptions options;
    options.coordinator = cluster->address_;
    options.name = absl::StrCat("agent-", i);
    options.security = cluster->security_;
    options.allow_target = allow_target;
    options.resolver = resolver;
    cluster->agents_.push_back(
        std::make_unique<AgentLink>(std::move(options), db::MakeDriver, clock));
  }
  for (auto& agent : cluster->agents_) {
    cluster->agent_threads_.emplace_back([link = agent.get()] {
      NameThisThread("dbload-agent");
      // Only a refusal ends it early, and this process's coordinator knows its agents' token:
      // a bug, but one the run's "no agents" would not explain.
      if (const absl::Status ended = link->Run(); !ended.ok()) {
        std::cerr << "dbload: in-process agent: " << ended.message() << "\n";
      }
    });
  }
  return cluster;
}

void LocalCluster::Interrupt() { service_->Shutdown(kInterruptGrace); }

LocalCluster::~LocalCluster() {
  for (auto& agent : agents_) agent->Shutdown();
  for (std::thread& thread : agent_threads_) thread.join();
  if (service_ != nullptr) service_->Shutdown(0);
  if (server_ != nullptr) server_->Shutdown();
  server_.reset();
  service_.reset();
}

}  // namespace dbload
