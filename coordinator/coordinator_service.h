#ifndef DBLOAD_COORDINATOR_COORDINATOR_SERVICE_H_
#define DBLOAD_COORDINATOR_COORDINATOR_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/clock.h"
#include "net/target_allow_list.h"
#include "net/transport_security.h"
#include "workload/workload.h"
#include "dbload/v1/report.pb.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace dbload {

class MetricsExporter;
class ProbeFactory;
class RunStore;

struct CoordinatorOptions {
  // One interval of every run's time series, and the heartbeat period towards agents.
  Nanos tick_interval = kSecond;
  // An agent silent this long (no report, no heartbeat) is lost: its stream is closed and its
  // run marked degraded.
  Nanos agent_silence_limit = 3 * kSecond;
  // Sent in every Assignment: an agent that hears nothing from us this long stops by itself.
  Nanos dead_man_timeout = 5 * kSecond;
  // After StopLoad, how long agents have to send their final report before the run ends
  // without it (and says so).
  Nanos stop_grace = 10 * kSecond;
  // How long past its tick an interval may wait for an agent that has not reported since the
  // previous one, so that every interval holds a report of every working agent (see
  // RunController::Tick). More than one of the agents' seconds: an interval that waited for a
  // slow agent may have taken a quick one's next report too, and the one after must wait for
  // that agent's next second then.
  Nanos interval_wait = 1500 * kMillisecond;
  // How often Submit looks again while it waits for agents.
  Nanos agent_wait_poll = 50 * kMillisecond;
  // false: no ticker thread; the owner calls Tick() (tests on a simulated clock).
  bool run_ticker = true;
  // RFC 3339 UTC wall time, for the reports' started_at only (never for durations). Default:
  // the system clock.
  std::function<std::string()> wall_time;
  // Limits of this coordinator (--max-rate, --max-clients): a plan whose peak rate (open loop)
  // or peak number of clients (closed loop), over all its stages and knee steps, is above them
  // is refused before any load, naming the field and the limit. 0: no limit beyond the plan
  // parser's own.
  double max_rate = 0;
  uint32_t max_clients = 0;
  // Notable events (agents coming and going, runs starting and ending), one line each. Default:
  // none.
  std::function<void(const std::string&)> log;
  // Where runs' intervals, states and the number of connected agents are published (Prometheus);
  // not owned, must outlive the service. Default: none. Every closed interval is published,
  // warm-up ones too: they are real traffic against the database, and a dashboard that hid them
  // would show a quiet database while it is being loaded. The report's totals exclude them, so
  // dbload_queries_total exceeds the report's executed by the warm-up's transactions.
  MetricsExporter* metrics = nullptr;
  // --state-dir: where every run's report is saved when the run starts, every
  // kSaveEvery of it and when it ends; not owned. Default: none (reports live in memory only).
  RunStore* run_store = nullptr;
  // Runs of an earlier life of the coordinator (from RunStore::LoadAll), served like finished
  // ones: their reports and final states.
  std::vector<dbload::v1::RunReport> restored_runs;
  // Every call (agents' links, the Control API) must carry this token (--token-file); refused
  // calls are logged with their peer. Empty: none required.
  std::string token;
  // How Submit finds a plan's workload (to check its scenario and learn its query types).
  // Default: the built-in workloads (MakeWorkload); benchmarks inject others.
  WorkloadFactory make_workload;
  // --allow-target of the coordinator itself: the probe connects to a run's target only when
  // it is in this list (checked like an agent's, before connecting); otherwise the probe is off
  // for the run, with a note naming the flag, and the run goes on. `probe_remedy` is whom the
  // note tells to start with the flag. Agents' lists come in their AgentHello: a run that an
  // agent would refuse is refused at Submit, naming each such agent and why.
  TargetAllowList probe_allow_target = TargetAllowList::LoopbackDefault();
  std::string probe_remedy = "the coordinator";
  // Resolves the target's host name for the probe, once per run. Empty: SystemResolver.
  std::shared_ptr<Resolver> resolver;
  // Makes each run's database probe (coordinator/probe_session.h). Default: a
  // DatabaseProbeFactory over probe_allow_target, probe_remedy and resolver above; tests
  // inject their own.
  std::shared_ptr<ProbeFactory> probe_factory;
};

// The coordinator: the registry of connected agents and the runs split across them, served as
// two gRPC services, AgentLink (agents dial in and hold one stream each) and Control (the CLI
// submits, watches, stops, lists, fetches reports). It knows agents only through the protocol in
// proto/dbload/v1/agent.proto.
//
// Agents: the first message must be an AgentHello of protocol version kAgentProtocolVersion and
// a name no connected agent has. Heartbeats go both ways every tick; an agent silent for
// agent_silence_limit is lost.
//
// Runs: Submit validates the plan, waits for min_agents idle agents, splits the load with the
// planner, sends each agent its Assignment and aggregates their reports (RunAggregator). A run
// ends when every assigned agent has sent its final report or has been lost (then the run is
// marked degraded in its end reason and its report's `degraded` and `lost_agents`, which bound
// what each lost agent ran after its last report; the load is split again over the survivors),
// or after Stop once the agents confirm (or stop_grace passes). An agent report that
// cannot be merged exactly (a gap, an unknown query type) fails the run and stops its load.
// A write scenario that declares its row changes has its tables counted by the coordinator,
// once for the run, before the load and after it (RowCheck), and its report says what the
// database counted. Finished runs' reports are kept in memory.
//
// All timing goes through the injected clock.
class CoordinatorService {
 public:
  CoordinatorService(Clock& clock, CoordinatorOptions options);
  ~CoordinatorService();
  CoordinatorService(const CoordinatorService&) = delete;
  CoordinatorService& operator=(const CoordinatorService&) = delete;

  // The two services, to register with a grpc::ServerBuilder (or use CoordinatorServer).
  grpc::Service* agent_link_service();
  grpc::Service* control_service();

  // One tick: heartbeats, lost agents, one interval of every running run, stop deadlines.
  // The ticker thread calls it every tick_interval; call it by hand when run_ticker is false.
  void Tick();

  // For a graceful exit: tells every running run's agents to stop ("interrupted"), waits up to
  // `grace` for their final reports, ends the runs (with or without them), closes every agent
  // stream and refuses new work. Idempotent.
  void Shutdown(Nanos grace);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// True for addresses that only this machine can reach: 127.0.0.0/8, ::1, localhost, or a unix
// socket ("unix:PATH"). `address` is host:port as gRPC takes it ("[::1]:7000" for IPv6).
bool IsLoopbackListenAddress(const std::string& address);

// A gRPC server for a CoordinatorService. In this build it listens on loopback addresses only:
// agent links and the control API have no TLS or authentication yet.
class CoordinatorServer {
 public:
  // `address` is host:port; port 0 picks a free one (see port()).
  // TLS as `security` says; without TLS, an address off this machine is refused unless
  // security.allow_insecure_remote. The token is the service's (CoordinatorOptions::token).
  static absl::StatusOr<std::unique_ptr<CoordinatorServer>> Start(
      const std::string& address, CoordinatorService& service,
      const TransportSecurity& security = {});
  ~CoordinatorServer();
  int port() const { return port_; }
  // Stops accepting calls and waits for the current ones (call service.Shutdown() first, so that
  // agent streams and watches end).
  void Shutdown();

 private:
  CoordinatorServer(std::unique_ptr<grpc::Server> server, int port);
  std::unique_ptr<grpc::Server> server_;
  int port_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_COORDINATOR_SERVICE_H_
