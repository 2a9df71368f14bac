#include "coordinator/coordinator_service.h"

#include "plan/stage_program.h"

#include <grpcpp/grpcpp.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "proto/agent_protocol.h"
#include "base/field_error.h"
#include "net/loopback.h"
#include "plan/plan_limits.h"
#include "net/transport_security.h"
#include "plan/plan_parser.h"
#include "workload/workload.h"
#include "db/driver_factory.h"
#include "coordinator/db_probe.h"
#include "coordinator/metrics_exporter.h"
#include "coordinator/saturation.h"
#include "coordinator/abort_monitor.h"
#include "coordinator/knee_search.h"
#include "coordinator/loss_bound.h"
#include "coordinator/run_store.h"
#include "coordinator/planner.h"
#include "coordinator/run_aggregator.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "dbload/v1/control.grpc.pb.h"

namespace dbload {

namespace {

namespace v1 = dbload::v1;
using AgentStream = grpc::ServerReaderWriter<v1::CoordinatorMessage, v1::AgentMessage>;

// Progress messages kept per run for watchers that connect late or read slowly: two minutes of
// intervals, whatever the run's length (memory stays flat).
constexpr size_t kProgressKept = 120;
// How often a waiting Watch looks whether its client went away. Real time, not the injected
// clock: it is a poll for cancellation, not part of any run's timing.
constexpr auto kWatchPoll = std::chrono::milliseconds(200);
// How long CoordinatorServer::Shutdown lets calls in progress finish before cancelling them.
constexpr auto kServerShutdownGrace = std::chrono::seconds(5);

grpc::Status ToGrpc(const absl::Status& status) {
  // absl and gRPC share the canonical code numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

std::string DefaultWallTime() {
  return absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());
}

// Unique within this process by the counter, and across restarts of the coordinator by the
// random part, so that an agent still holding a previous process's run cannot report into a new
// run of the same number.
std::string NewRunId(uint64_t counter) {
  std::random_device random;
  return absl::StrFormat("run-%d-%08x", counter, random());
}

double Seconds(Nanos nanos) { return static_cast<double>(nanos) / kSecond; }

// --state-dir: how often a running run's report so far is written, i.e. the most a coordinator
// that dies mid-run can lose of it.
constexpr Nanos kSaveEvery = 5 * kSecond;
// How long a run whose agents have all finished waits for the probe's reading after the load,
// and how long a new run's assignments wait for its first reading.
constexpr Nanos kProbeFinalWait = 3 * kSecond;
constexpr Nanos kProbeFirstWait = 2 * kSecond;
// An agent joins a running run only if at least this much of its duration is left.
constexpr Nanos kMinJoinTime = 2 * kSecond;

struct AgentConn {
  v1::AgentHello hello;
  grpc::ServerContext* context = nullptr;  // valid while the agent is in the registry
  Nanos connected_at = 0;
  Nanos last_heard = 0;
  std::string run_id;  // the run it works for; empty: idle
  // Its name in that run's reports: its own, or NAME#2 … when it joined a run that still holds
  // an earlier life of NAME (a restarted agent).
  std::string participant;
  bool lost = false;   // silent too long; its stream is being closed
  // Messages to the agent, written by the agent's writer thread so that a slow agent never
  // blocks the coordinator.
  std::deque<v1::CoordinatorMessage> outbox;
  bool closing = false;
  std::condition_variable outbox_cv;
};

// What an agent's latest report said about its own state, for the metrics.
struct AgentGauges {
  uint32_t in_flight = 0;
  uint32_t connections = 0;
  double cpu_seconds = 0;  // reported since the last published interval
  double cpu_utilization = 0;  // of its latest report, as a fraction of its cores
};

struct Run {
  std::string id;
  v1::Plan plan;
  std::vector<std::string> query_types;
  std::map<std::string, AgentGauges> agent_gauges;  // by agent name
  // The newest measured intervals, for the live marks: an interval's queued arrivals are
  // judged by what the connections did in the intervals they waited through.
  std::deque<v1::IntervalSample> recent_intervals;
  std::vector<std::string> agents;  // assigned, in agent_index order
  Nanos started = 0;
  std::string started_at;
  // Reset when the run ends: only its report is kept.
  std::optional<RunAggregator> aggregator;
  std::optional<AbortMonitor> abort_monitor;  // when the plan has abort rules
  std::map<uint32_t, KneeSearch> knees;        // by 1-based stage, for knee-search stages
  std::map<std::string, std::string> lost;  // agent -> why, for those lost before their final
  // For the bound on what lost agents ran unreported: when each was declared lost, its clients
  // then (closed loop), and the highest rate each participant was given (open loop).
  std::map<std::string, Nanos> lost_at;
  std::map<std::string, uint32_t> lost_clients;
  std::map<std::string, double> rate_of;
  // Statements prepared on each connection (PostgreSQL commits 2 for each, and 1 per start-up).
  uint32_t statements = 0;
  // The probe read before the assignments went out: its first reading precedes the load (it is
  // stamped against the time of the submit, not of the load's start, so its elapsed time alone
  // does not tell).
  bool probe_read_before_load = false;
  // Plans without stages: each agent's clients now (closed loops), and the spare slots not yet
  // handed out (from next_spare_slot to total_slots), for moving a lost agent's clients and for
  // agents that join.
  std::map<std::string, uint32_t> clients_of;
  uint32_t next_spare_slot = 0;
  uint32_t total_slots = 0;
  // Agents that joined the running run (to replace lost ones), by participant: their connection
  // name, and when they joined (seconds after the start; added to their reports' elapsed_s).
  std::map<std::string, std::string> connection_of;
  std::map<std::string, double> joined_at_s;
  std::set<std::string> shares_handed_over;  // lost agents whose unused queries a joiner took
  std::string stop_reason;                  // "stopped" or "interrupted" once asked to stop
  std::optional<Nanos> stop_sent_at;
  Nanos last_saved = 0;  // --state-dir: when the report so far was last written
  std::string failure;  // a report that could not be merged
  bool done = false;
  std::string state = "running";
  v1::RunReport report;  // once done
  std::deque<v1::RunProgress> progress;
  uint64_t progress_count = 0;  // ever pushed; progress.front() is number count - size
  // The database probe (none for the noop driver or when the plan turns it off), what it read,
  // and what the server said it is (filled on the probe's thread, hence the lock).
  std::unique_ptr<DatabaseProbe> probe;
  ProbeRecord probe_record;
  std::string probe_error;  // why there is no probe, or its last error
  // The target as the probe dials it (its host name resolved once), or why the coordinator's
  // --allow-target refuses it: decided in Submit, outside the coordinator's lock, because a
  // resolver can take seconds.
  absl::StatusOr<v1::Target> probe_target = absl::UnknownError("not checked");
  struct Identity {
    std::mutex mu;
    ServerIdentity server;
  };
  std::shared_ptr<Identity> identity;
  // When every agent had finished: the run then waits (briefly) for a probe reading taken after
  // the load, so that the last stage's deltas are whole.
  std::optional<Nanos> load_ended_at;
  // Assignments held back until the probe's first reading (or kProbeFirstWait), so that the
  // run's counters start from before its load.
  std::vector<std::pair<std::string, v1::CoordinatorMessage>> held_assignments;
  Nanos hold_deadline = 0;
  // The run's connections to the target over all agents (EXPLAIN's included), checked against
  // the server's max_connections once the probe has read it; and why the run was refused then.
  uint64_t connections = 0;
  std::string refusal;
  v1::RunManifest manifest;
};

}  // namespace

class CoordinatorService::Impl {
 public:
  Impl(Clock& clock, CoordinatorOptions options)
      : clock_(clock), options_(std::move(options)), agent_link_(*this), control_(*this) {
    if (!options_.wall_time) options_.wall_time = DefaultWallTime;
    if (!options_.make_workload) options_.make_workload = MakePlanWorkload;
    if (options_.resolver == nullptr) options_.resolver = std::make_shared<SystemResolver>();
    RestoreRuns();
    if (options_.run_ticker) ticker_ = std::thread([this] { TickerLoop(); });
  }

  ~Impl() {
    Shutdown(0);
    StopTicker();
    // Probes' threads call back into this object: end them before its members go.
    std::vector<std::unique_ptr<DatabaseProbe>> probes;
    {
      std::lock_guard lock(mu_);
      probes.swap(retired_probes_);
      for (auto& [id, run] : runs_) {
        if (run->probe != nullptr) probes.push_back(std::move(run->probe));
      }
    }
    probes.clear();
  }

  grpc::Service* agent_link_service() { return &agent_link_; }
  grpc::Service* control_service() { return &control_; }

  void Tick();
  void Shutdown(Nanos grace);

  grpc::Status Authenticate(const grpc::ServerContext& context) {
    grpc::Status checked = CheckCallToken(context, options_.token);
    if (!checked.ok() && options_.log) {
      options_.log(absl::StrCat("refused a call from ", context.peer(), ": ",
                                checked.error_message()));
    }
    return checked;
  }

 private:
  // Every call shows the coordinator's token first (CheckCallToken; OK when none is set).
  class AgentLinkImpl final : public v1::AgentLink::Service {
   public:
    explicit AgentLinkImpl(Impl& impl) : impl_(impl) {}
    grpc::Status Connect(grpc::ServerContext* context, AgentStream* stream) override {
      if (grpc::Status denied = impl_.Authenticate(*context); !denied.ok()) return denied;
      return impl_.Connect(context, stream);
    }

   private:
    Impl& impl_;
  };

  class ControlImpl final : public v1::Control::Service {
   public:
    explicit ControlImpl(Impl& impl) : impl_(impl) {}
    grpc::Status Submit(grpc::ServerContext* context, const v1::SubmitRequest* request,
                        v1::SubmitResponse* response) override {
      if (grpc::Status denied = impl_.Authenticate(*context); !denied.ok()) return denied;
      return impl_.Submit(context, *request, *response);
    }
    grpc::Status Watch(grpc::ServerContext* context, const v1::WatchRequest* request,
                       grpc::ServerWriter<v1::RunProgress>* writer) override {
      if (grpc::Status denied = impl_.Authenticate(*context); !denied.ok()) return denied;
      return impl_.Watch(context, *request, *writer);
    }
    grpc::Status Stop(grpc::ServerContext* context, const v1::StopRequest* request,
                      v1::StopResponse*) override {
      if (grpc::Status denied = impl_.Authenticate(*context); !denied.ok()) return denied;
      return impl_.Stop(*request);
    }
    grpc::Status ListAgents(grpc::ServerContext* context, const v1::ListAgentsRequest*,
                            v1::ListAgentsResponse* response) override {
      if (grpc::Status denied = impl_.Authenticate(*context); !denied.ok()) return denied;
      return impl_.ListAgents(*response);
    }
    grpc::Status GetReport(grpc::ServerContext* context, const v1::GetReportRequest* request,
                           v1::RunReport* response) override {
      if (grpc::Status denied = impl_.Authenticate(*context); !denied.ok()) return denied;
      return impl_.GetReport(*request, *response);
    }

   private:
    Impl& impl_;
  };

  grpc::Status Connect(grpc::ServerContext* context, AgentStream* stream);
  void WriterLoop(AgentConn& agent, AgentStream* stream);
  grpc::Status Submit(grpc::ServerContext* context, const v1::SubmitRequest& request,
                      v1::SubmitResponse& response);
  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchRequest& request,
                     grpc::ServerWriter<v1::RunProgress>& writer);
  grpc::Status Stop(const v1::StopRequest& request);
  grpc::Status ListAgents(v1::ListAgentsResponse& response);
  grpc::Status GetReport(const v1::GetReportRequest& request, v1::RunReport& response);

  void TickerLoop();
  void StopTicker();
  void StartProbeLocked(Run& run);
  // The target as the probe would dial it, after the coordinator's --allow-target check.
  absl::StatusOr<v1::Target> ProbeTargetOf(const v1::Target& target) const;
  void TakeProbeReadingsLocked(Run& run);
  // The probe's readings, the generator's limits and the manifest, into a report of the run.
  void CompleteReportLocked(Run& run, v1::RunReport& report);
  // The agents lost before their final reports, with the bound on what they ran unreported.
  void AddLostAgentsLocked(const Run& run, v1::RunReport& report) const;
  void OnProbeReadings();
  // Sends the held assignments once the probe has read (or failed, or kProbeFirstWait passed).
  void MaybeReleaseAssignmentsLocked(Run& run, bool force = false);
  // Finishes a run, unstarted, whose connections the server's max_connections cannot take.
  bool RefusedByServerLocked(Run& run);
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  // All *Locked functions run under mu_.
  void EnqueueLocked(AgentConn& agent, v1::CoordinatorMessage message);
  void HandleReportLocked(const std::string& name, AgentConn& agent, const v1::AgentReport& report);
  void AgentGoneLocked(const std::string& name, AgentConn& agent, const std::string& why);
  void SendStopLocked(Run& run, const std::string& reason);
  void RestoreRuns();
  void ResplitLocked(Run& run);
  void MoveLostClientsLocked(Run& run, const std::vector<std::string>& survivors);
  // The connection of a run's participant while it works for the run; null otherwise.
  AgentConn* ParticipantConnLocked(const Run& run, const std::string& participant);
  // Participants still running the run: not lost, no final report yet, connected.
  std::vector<std::string> WorkingParticipantsLocked(const Run& run);
  // Idle agents take the place of lost ones in runs that can take them (see JoinLocked).
  void JoinIdleAgentsLocked(Nanos now);
  bool JoinLocked(Run& run, const std::string& name, AgentConn& agent, Nanos now);
  void SaveLocked(const v1::RunReport& report, const std::string& run_id);
  void SendToRunLocked(Run& run, const v1::CoordinatorMessage& message);
  void AdvanceKneesLocked(Run& run);
  void FailRunLocked(Run& run, const std::string& message);
  void MaybeFinishLocked(Run& run);
  void FinishRunLocked(Run& run);
  void PushProgressLocked(Run& run, v1::RunProgress progress);
  void PushIntervalsLocked(Run& run, Nanos now);
  // The observer that publishes a run's closed intervals to options_.metrics (null without).
  RunAggregator::IntervalObserver MetricsObserverLocked(Run& run);
  void PublishAgentsLocked();
  uint32_t WorkingAgentsLocked(const Run& run) const;
  std::shared_ptr<Run> FindRunLocked(const std::string& run_id);
  std::string WaitFailureLocked(uint32_t min_agents, Nanos waited) const;
  absl::Status WithinLimits(const v1::Plan& plan, const std::string& source) const;

  Clock& clock_;
  CoordinatorOptions options_;
  AgentLinkImpl agent_link_;
  ControlImpl control_;

  std::mutex mu_;
  std::condition_variable progress_cv_;  // a run pushed progress, or the coordinator stops
  std::map<std::string, std::shared_ptr<AgentConn>> agents_;
  std::map<std::string, std::shared_ptr<Run>> runs_;
  std::string latest_run_;
  uint64_t run_counter_ = 0;
  uint64_t heartbeat_sequence_ = 0;
  bool shutting_down_ = false;

  std::atomic<bool> stop_ticker_{false};
  std::thread ticker_;
  // Set by probes' threads when a reading arrived; the ticker then finishes runs waiting for it.
  std::atomic<bool> probe_reading_arrived_{false};
  // Probes of ended runs, destroyed outside mu_ (their thread may be in a statement).
  std::vector<std::unique_ptr<DatabaseProbe>> retired_probes_;
};

// ----- agents -----

grpc::Status CoordinatorService::Impl::Connect(grpc::ServerContext* context, AgentStream* stream) {
  v1::AgentMessage message;
  if (!stream->Read(&message)) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "the agent left before its AgentHello");
  }
  if (!message.has_hello()) {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "the first message on the agent link must be an AgentHello");
  }
  const v1::AgentHello hello = message.hello();
  if (hello.protocol_version() != kAgentProtocolVersion) {
    // Both versions in the message: the operator has to upgrade one side and needs to know which.
    return grpc::Status(
        grpc::StatusCode::FAILED_PRECONDITION,
        absl::StrCat("agent protocol version ", hello.protocol_version(),
                     " is not supported: this coordinator speaks agent protocol version ",
                     kAgentProtocolVersion, " (agent dbload ",
                     hello.version().empty() ? "?" : hello.version(), ", coordinator dbload ",
                     DBLOAD_VERSION_STRING, "); run the same dbload version on both sides"));
  }
  const std::string name = hello.name();
  if (name.empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "AgentHello.name is empty: every agent needs a unique name");
  }

  auto agent = std::make_shared<AgentConn>();
  agent->hello = hello;
  agent->context = context;
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
    }
    if (auto existing = agents_.find(name); existing != agents_.end()) {
      // Key spaces and reports are told apart by name; two agents under one name would mix them.
      return grpc::Status(
          grpc::StatusCode::ALREADY_EXISTS,
          absl::StrCat("an agent named '", name, "' is already connected (from host '",
                       existing->second->hello.host(), "'); agent names must be unique"));
    }
    agent->connected_at = agent->last_heard = clock_.Now();
    agents_[name] = agent;
    PublishAgentsLocked();
  }
  Log(absl::StrCat("agent ", name, " connected (host ", hello.host(), ", ", hello.cores(),
                   " cores, dbload ", hello.version(), ")"));

  std::thread writer([this, agent, stream] { WriterLoop(*agent, stream); });
  std::string why_gone = "disconnected";
  while (stream->Read(&message)) {
    std::lock_guard lock(mu_);
    agent->last_heard = clock_.Now();
    if (message.has_report()) {
      HandleReportLocked(name, *agent, message.report());
    } else if (message.has_hello()) {
      why_gone = "sent a second AgentHello";
      break;
    }
    // A heartbeat only needs last_heard.
  }
  {
    std::lock_guard lock(mu_);
    agent->closing = true;
    agent->outbox_cv.notify_all();
    AgentGoneLocked(name, *agent, agent->lost ? "lost" : why_gone);
    if (auto it = agents_.find(name); it != agents_.end() && it->second == agent) agents_.erase(it);
    PublishAgentsLocked();
  }
  writer.join();
  Log(absl::StrCat("agent ", name, " left (", agent->lost ? "silent too long" : why_gone, ")"));
  if (why_gone != "disconnected") {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, why_gone);
  }
  return grpc::Status::OK;
}

void CoordinatorService::Impl::WriterLoop(AgentConn& agent, AgentStream* stream) {
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

void CoordinatorService::Impl::EnqueueLocked(AgentConn& agent, v1::CoordinatorMessage message) {
  if (agent.closing) return;
  agent.outbox.push_back(std::move(message));
  agent.outbox_cv.notify_one();
}

void CoordinatorService::Impl::HandleReportLocked(const std::string& agent_name, AgentConn& agent,
                                                  const v1::AgentReport& agent_report) {
  // After its final report the agent is free for another run, whatever becomes of this one.
  if (agent_report.final() && agent.run_id == agent_report.run_id()) agent.run_id.clear();
  std::shared_ptr<Run> run = FindRunLocked(agent_report.run_id());
  if (run == nullptr || agent_report.run_id().empty()) {
    Log(absl::StrCat("agent ", agent_name, ": report for unknown run '", agent_report.run_id(),
                     "' ignored"));
    return;
  }
  if (run->done) return;  // late (e.g. after a stop deadline): the report is already written
  const std::string& name = agent.participant.empty() ? agent_name : agent.participant;
  if (std::find(run->agents.begin(), run->agents.end(), name) == run->agents.end()) {
    // Someone else's run: refusing the report is enough, failing their run would not be fair.
    Log(absl::StrCat("agent ", agent_name, ": report for run ", run->id,
                     " ignored: not part of it"));
    return;
  }
  // An agent that joined late counts its time from its own start: on the run's clock, its
  // reports are that much later.
  v1::AgentReport shifted;
  const v1::AgentReport* report = &agent_report;
  if (auto joined = run->joined_at_s.find(name); joined != run->joined_at_s.end()) {
    shifted = agent_report;
    shifted.set_elapsed_s(agent_report.elapsed_s() + joined->second);
    report = &shifted;
  }
  if (!report->target_address().empty()) {
    for (v1::RunManifest::AgentHost& host : *run->manifest.mutable_agents()) {
      if (host.name() == name && host.target_address().empty()) {
        host.set_target_address(report->target_address());
      }
    }
  }
  if (report->final() && report->target_refused()) {
    // The agent refused its target (a host name resolved outside its --allow-target, or a list
    // that changed since its hello): the run cannot be the plan's, so it fails now and the
    // others stop; every refusing agent's reason goes into the end reason.
    const std::string why = report->fatal_error();
    if (run->failure.empty()) {
      run->failure = why;
      Log(absl::StrCat("run ", run->id, " failed: ", why));
      SendStopLocked(*run, absl::StrCat("run failed: ", why));
    } else if (!absl::StrContains(run->failure, why)) {
      absl::StrAppend(&run->failure, "; ", why);
    }
  }
  const uint64_t previous_sequence = run->aggregator->agents().at(name).last_sequence;
  if (absl::Status merged = run->aggregator->AddReport(name, *report); !merged.ok()) {
    FailRunLocked(*run, std::string(merged.message()));
    return;
  }
  if (run->aggregator->agents().at(name).last_sequence != previous_sequence) {  // not a repeat
    AgentGauges& gauges = run->agent_gauges[name];
    gauges.in_flight = report->in_flight();
    gauges.connections = report->connections();
    gauges.cpu_seconds += report->cpu_seconds();
    if (report->interval_s() > 0 && agent.hello.cores() > 0) {
      gauges.cpu_utilization = report->cpu_seconds() / (report->interval_s() * agent.hello.cores());
    }
    AdvanceKneesLocked(*run);
  }
  MaybeFinishLocked(*run);
}

void CoordinatorService::Impl::AgentGoneLocked(const std::string& agent_name, AgentConn& agent,
                                               const std::string& why) {
  if (agent.run_id.empty()) return;
  std::shared_ptr<Run> run = FindRunLocked(agent.run_id);
  agent.run_id.clear();
  const std::string name = agent.participant.empty() ? agent_name : agent.participant;
  if (run == nullptr || run->done) return;
  if (run->aggregator->agents().at(name).final) return;
  // Whatever it had in flight is no longer ours to show.
  if (auto gauges = run->agent_gauges.find(name); gauges != run->agent_gauges.end()) {
    gauges->second.in_flight = 0;
    gauges->second.connections = 0;
  }
  if (run->lost.emplace(name, why).second) {
    run->lost_at.emplace(name, clock_.Now());
    run->lost_clients[name] = run->clients_of[name];
    Log(absl::StrCat("run ", run->id, ": agent ", name, " lost (", why, "); the run is degraded"));
    if (options_.metrics != nullptr) {
      options_.metrics->SetAgentsLost(run->id, run->plan.scenario(),
                                      static_cast<int>(run->lost.size()));
    }
    ResplitLocked(*run);
  }
  MaybeFinishLocked(*run);
}

// ----- runs -----

std::shared_ptr<Run> CoordinatorService::Impl::FindRunLocked(const std::string& run_id) {
  // An empty id means the latest run: what someone at a terminal usually wants.
  auto it = runs_.find(run_id.empty() ? latest_run_ : run_id);
  return it == runs_.end() ? nullptr : it->second;
}

// After losing an agent, the load is split again over the agents still running it, so that the
// database keeps getting the plan's load: an open loop's rate by capacity, as at the start; a
// closed loop's lost clients spread over the survivors, on the run's spare slots (the lost
// agent's own slots may hold rows it inserted or ids it consumed). Plans with stages keep their
// split. Query shares are not moved: what the lost agent ran but never reported is unknown, and
// the report says the run is degraded.
void CoordinatorService::Impl::ResplitLocked(Run& run) {
  if (run.done || run.plan.stages_size() > 0) return;
  const std::vector<std::string> survivors = WorkingParticipantsLocked(run);
  if (survivors.empty()) return;
  std::vector<double> capacities;
  for (const std::string& name : survivors) {
    capacities.push_back(ParticipantConnLocked(run, name)->hello.capacity());
  }
  if (run.plan.load().has_closed()) {
    MoveLostClientsLocked(run, survivors);
    return;
  }
  const std::vector<double> rates = SplitRate(run.plan.load().open().rate(), capacities);
  for (size_t i = 0; i < survivors.size(); ++i) {
    v1::CoordinatorMessage message;
    message.mutable_change()->set_run_id(run.id);
    message.mutable_change()->mutable_load()->set_rate(rates[i]);
    run.rate_of[survivors[i]] = std::max(run.rate_of[survivors[i]], rates[i]);
    EnqueueLocked(*ParticipantConnLocked(run, survivors[i]), std::move(message));
  }
  Log(absl::StrCat("run ", run.id, ": the rate ", run.plan.load().open().rate(),
                   "/s is split again over ", absl::StrJoin(survivors, ", ")));
}

void CoordinatorService::Impl::MoveLostClientsLocked(Run& run,
                                                     const std::vector<std::string>& survivors) {
  uint32_t orphaned = 0;
  for (const auto& [name, why] : run.lost) {
    orphaned += std::exchange(run.clients_of[name], 0);
  }
  if (orphaned == 0) return;
  if (run.next_spare_slot + orphaned > run.total_slots) {
    Log(absl::StrCat("run ", run.id, ": ", orphaned, " clients of lost agents are not moved: ",
                     "the run has ", run.total_slots - run.next_spare_slot, " spare slots left"));
    return;
  }
  const std::vector<uint32_t> added = SpreadClients(orphaned, survivors.size());
  for (size_t i = 0; i < survivors.size(); ++i) {
    if (added[i] == 0) continue;
    uint32_t& clients = run.clients_of[survivors[i]];
    clients += added[i];
    v1::CoordinatorMessage message;
    v1::LoadChange& change = *message.mutable_change();
    change.set_run_id(run.id);
    change.mutable_load()->set_clients(clients);
    change.set_extra_first_slot(run.next_spare_slot);
    change.set_extra_slot_count(added[i]);
    run.next_spare_slot += added[i];
    EnqueueLocked(*ParticipantConnLocked(run, survivors[i]), std::move(message));
  }
  Log(absl::StrCat("run ", run.id, ": ", orphaned, " clients of lost agents moved to ",
                   absl::StrJoin(survivors, ", ")));
}

void CoordinatorService::Impl::RestoreRuns() {
  std::string latest_started_at;
  for (v1::RunReport& report : options_.restored_runs) {
    auto run = std::make_shared<Run>();
    run->id = report.run_id();
    run->plan = report.plan();
    run->started_at = report.started_at();
    run->done = true;
    run->state = report.state().empty() ? "finished" : report.state();
    run->report = std::move(report);
    // A watcher of a restored run sees how it ended, as it would have then.
    v1::RunProgress progress;
    progress.set_run_id(run->id);
    progress.set_state(run->state);
    progress.set_end_reason(run->report.end_reason());
    progress.set_degraded(run->report.degraded());
    PushProgressLocked(*run, std::move(progress));
    if (run->started_at >= latest_started_at) {
      latest_started_at = run->started_at;
      latest_run_ = run->id;
    }
    runs_[run->id] = std::move(run);
  }
  if (!options_.restored_runs.empty()) {
    Log(absl::StrCat("restored ", options_.restored_runs.size(), " run(s) from the state dir"));
  }
  options_.restored_runs.clear();
}

void CoordinatorService::Impl::SaveLocked(const v1::RunReport& report, const std::string& run_id) {
  if (options_.run_store == nullptr) return;
  v1::RunReport copy = report;  // a report so far is built for this; a final one is kept as is
  copy.set_run_id(run_id);
  if (absl::Status saved = options_.run_store->Save(copy); !saved.ok()) {
    // The run goes on: losing the state dir must not stop the load, but it must be said.
    Log(absl::StrCat("run ", run_id, ": ", saved.message()));
  }
#if defined(__GLIBC__)
  // Every save builds the whole report so far and its JSON: transient, and growing with the
  // run. glibc kept the freed pages in its arenas, so the coordinator's RSS grew with each save
  // (measured with 3 agents on the noop driver: 22.4 to 28.2 MiB over the run's second to
  // twelfth 10-s sample without this; 20.3 to 20.8 MiB with it).
  malloc_trim(0);
#endif
}

void CoordinatorService::Impl::SendToRunLocked(Run& run, const v1::CoordinatorMessage& message) {
  for (const std::string& name : run.agents) {
    if (AgentConn* agent = ParticipantConnLocked(run, name); agent != nullptr) {
      EnqueueLocked(*agent, message);
    }
  }
}

AgentConn* CoordinatorService::Impl::ParticipantConnLocked(const Run& run,
                                                          const std::string& participant) {
  const auto renamed = run.connection_of.find(participant);
  const auto it =
      agents_.find(renamed == run.connection_of.end() ? participant : renamed->second);
  if (it == agents_.end() || it->second->run_id != run.id ||
      it->second->participant != participant) {
    return nullptr;
  }
  return it->second.get();
}

std::vector<std::string> CoordinatorService::Impl::WorkingParticipantsLocked(const Run& run) {
  std::vector<std::string> working;
  for (const std::string& name : run.agents) {
    if (run.lost.contains(name) || run.aggregator->agents().at(name).final ||
        ParticipantConnLocked(run, name) == nullptr) {
      continue;
    }
    working.push_back(name);
  }
  return working;
}

// An idle agent takes the place of a lost one (a restarted agent, typically) in a running run
// whose split can take it: no stages (their levels are split once), not a prepare, at least
// kMinJoinTime left of its duration, and spare slots for the joiner's key spaces. Open loop: the
// rate is split again over the survivors and the joiner by capacity. Closed loop: the plan's
// clients are spread over them again, the joiner taking its part from the survivors. The
// joiner's plan is the rest of the run (what is left of the warm-up and of the duration); with a
// query limit, its share is what the lost agents had left of theirs by their last reports (what
// they ran after those is unknown: the database may see that much more than the report). It
// reports as NAME, or NAME#2 … if an earlier life of NAME is in the run.
void CoordinatorService::Impl::JoinIdleAgentsLocked(Nanos now) {
  for (auto& [id, run] : runs_) {
    const v1::Plan& plan = run->plan;
    if (run->done || run->stop_sent_at || !run->failure.empty() || plan.stages_size() > 0 ||
        plan.prepare_only() || plan.stop().duration_ns() <= 0 ||
        run->started + plan.stop().duration_ns() - now < kMinJoinTime) {
      continue;
    }
    for (auto& [name, agent] : agents_) {
      if (run->lost.size() <= run->joined_at_s.size()) break;  // replaces lost agents only
      if (agent->lost || agent->closing || !agent->run_id.empty()) continue;
      if (!JoinLocked(*run, name, *agent, now)) break;
    }
  }
}

bool CoordinatorService::Impl::JoinLocked(Run& run, const std::string& name, AgentConn& agent,
                                          Nanos now) {
  const v1::Plan& plan = run.plan;
  const std::vector<std::string> survivors = WorkingParticipantsLocked(run);
  std::string participant = name;
  for (int life = 2; run.aggregator->agents().contains(participant); ++life) {
    participant = absl::StrCat(name, "#", life);
  }
  // The query shares lost agents left unused, by their last reports.
  std::vector<std::string> handing_over;
  uint64_t queries = 0;
  if (plan.stop().queries() > 0) {
    for (const auto& [lost, why] : run.lost) {
      if (run.shares_handed_over.contains(lost)) continue;
      const AgentProgress& progress = run.aggregator->agents().at(lost);
      queries += progress.query_budget - std::min(progress.query_budget, progress.budget_used);
      handing_over.push_back(lost);
    }
    if (queries == 0) return false;
  }
  const bool open = plan.load().has_open();
  std::vector<v1::CoordinatorMessage> changes(survivors.size());
  uint32_t joiner_slots = 0;
  uint32_t spare_needed = 0;
  v1::LoadShare joiner_load;
  if (open) {
    std::vector<double> capacities;
    for (const std::string& survivor : survivors) {
      capacities.push_back(ParticipantConnLocked(run, survivor)->hello.capacity());
    }
    capacities.push_back(agent.hello.capacity());
    const std::vector<double> rates = SplitRate(plan.load().open().rate(), capacities);
    for (size_t i = 0; i < survivors.size(); ++i) {
      changes[i].mutable_change()->mutable_load()->set_rate(rates[i]);
      run.rate_of[survivors[i]] = std::max(run.rate_of[survivors[i]], rates[i]);
    }
    joiner_load.set_rate(rates.back());
    joiner_slots = spare_needed = plan.target().pool();
  } else {
    const std::vector<uint32_t> spread =
        SpreadClients(plan.load().closed().clients(), survivors.size() + 1);
    if (spread.back() == 0) return false;  // more agents than clients
    joiner_slots = spread.back();
    spare_needed = joiner_slots;
    for (size_t i = 0; i < survivors.size(); ++i) {
      const uint32_t now_clients = run.clients_of[survivors[i]];
      if (spread[i] > now_clients) spare_needed += spread[i] - now_clients;
    }
    joiner_load.set_clients(joiner_slots);
  }
  if (run.next_spare_slot + spare_needed > run.total_slots) {
    Log(absl::StrCat("run ", run.id, ": agent ", name, " not taken in: ", spare_needed,
                     " spare slots needed, ", run.total_slots - run.next_spare_slot, " left"));
    return false;
  }
  const Nanos elapsed = now - run.started;
  v1::CoordinatorMessage message;
  v1::Assignment& assignment = *message.mutable_assign();
  assignment.set_run_id(run.id);
  *assignment.mutable_plan() = plan;
  assignment.mutable_plan()->set_warmup_ns(std::max<Nanos>(0, plan.warmup_ns() - elapsed));
  assignment.mutable_plan()->mutable_stop()->set_duration_ns(plan.stop().duration_ns() - elapsed);
  assignment.set_agent_index(static_cast<uint32_t>(survivors.size()));
  assignment.set_agent_count(static_cast<uint32_t>(survivors.size() + 1));
  assignment.set_first_slot(run.next_spare_slot);
  assignment.set_total_slots(run.total_slots);
  *assignment.mutable_load() = joiner_load;
  assignment.set_dead_man_timeout_ns(options_.dead_man_timeout);
  assignment.set_queries(queries);
  run.shares_handed_over.insert(handing_over.begin(), handing_over.end());
  run.next_spare_slot += joiner_slots;
  for (size_t i = 0; i < survivors.size(); ++i) {
    v1::LoadChange& change = *changes[i].mutable_change();
    change.set_run_id(run.id);
    if (!open) {
      const uint32_t wanted = SpreadClients(plan.load().closed().clients(), survivors.size() + 1)[i];
      uint32_t& clients = run.clients_of[survivors[i]];
      if (wanted == clients) continue;
      if (wanted > clients) {
        change.set_extra_first_slot(run.next_spare_slot);
        change.set_extra_slot_count(wanted - clients);
        run.next_spare_slot += wanted - clients;
      }
      clients = wanted;
      change.mutable_load()->set_clients(wanted);
    }
    EnqueueLocked(*ParticipantConnLocked(run, survivors[i]), std::move(changes[i]));
  }
  run.agents.push_back(participant);
  run.connection_of[participant] = name;
  run.joined_at_s[participant] = Seconds(elapsed);
  if (!open) run.clients_of[participant] = joiner_slots;
  if (open) run.rate_of[participant] = joiner_load.rate();
  run.aggregator->AddAgent(
      {.name = participant, .query_budget = queries, .cores = agent.hello.cores()});
  agent.run_id = run.id;
  agent.participant = participant;
  EnqueueLocked(agent, std::move(message));
  Log(absl::StrCat("run ", run.id, ": agent ", name, " joined",
                   participant == name ? "" : absl::StrCat(" as ", participant), " with ",
                   open ? absl::StrCat(joiner_load.rate(), "/s")
                        : absl::StrCat(joiner_load.clients(), " clients"),
                   queries > 0 ? absl::StrCat(" and ", queries, " queries") : "",
                   absl::StrFormat(", for the remaining %.1f s",
                                   Seconds(plan.stop().duration_ns() - elapsed))));
  return true;
}

void CoordinatorService::Impl::SendStopLocked(Run& run, const std::string& reason) {
  MaybeReleaseAssignmentsLocked(run, /*force=*/true);  // a stop must find the agents assigned
  v1::CoordinatorMessage message;
  message.mutable_stop()->set_run_id(run.id);
  message.mutable_stop()->set_reason(reason);
  SendToRunLocked(run, message);
}

// Judges a knee search's step once every agent still working has reported `every` of it, and
// tells the agents the next step (or the end of the search).
void CoordinatorService::Impl::AdvanceKneesLocked(Run& run) {
  for (auto& [stage, search] : run.knees) {
    if (search.done()) continue;
    const RunAggregator::KneeTally* tally = run.aggregator->knee_tally(stage, search.step());
    if (tally == nullptr) continue;
    const double every_s = Seconds(run.plan.stages(stage - 1).knee().every_ns());
    KneeStepCounts counts{.executed = tally->executed, .errors = tally->errors,
                          .response = &tally->response};
    bool complete = true;
    for (const std::string& name : run.agents) {
      if (run.lost.contains(name) || run.aggregator->agents().at(name).final) continue;
      auto agent = tally->agents.find(name);
      // Reports come every second, cut at whole steps: allow for a millisecond of jitter.
      if (agent == tally->agents.end() || agent->second.second + 0.01 < every_s) {
        complete = false;
        break;
      }
    }
    if (!complete) continue;
    for (const auto& [name, part] : tally->agents) {
      if (part.second > 0) counts.achieved_rate += static_cast<double>(part.first) / part.second;
      counts.judged_s = std::max(counts.judged_s, part.second);
    }
    search.Judge(counts);
    const v1::KneeStep& judged = search.steps().back();
    Log(absl::StrCat("run ", run.id, ": knee step ", search.steps().size(), " at ",
                     judged.level(), judged.met() ? " met the SLO" : " missed: ", judged.missed()));
    v1::CoordinatorMessage message;
    v1::LoadChange& change = *message.mutable_change();
    change.set_run_id(run.id);
    if (search.done()) {
      change.set_knee_done(true);
      Log(absl::StrCat("run ", run.id, ": knee search done: ", search.knee()));
    } else {
      change.set_knee_step(search.step());
      change.set_knee_level(search.level());
    }
    SendToRunLocked(run, message);
  }
}

void CoordinatorService::Impl::FailRunLocked(Run& run, const std::string& message) {
  // The totals can no longer be exact: stop the load now rather than let it run for a report
  // that would be wrong.
  run.failure = message;
  Log(absl::StrCat("run ", run.id, " failed: ", message));
  SendStopLocked(run, absl::StrCat("run failed: ", message));
  FinishRunLocked(run);
}

void CoordinatorService::Impl::MaybeFinishLocked(Run& run) {
  if (run.done) return;
  for (const std::string& name : run.agents) {
    if (!run.aggregator->agents().at(name).final && run.lost.count(name) == 0) return;
  }
  if (run.probe != nullptr) {
    // One more reading after the load, so that the counters cover its last second. A probe
    // that is down is not waited for, nor one slower than kProbeFinalWait.
    const Nanos now = clock_.Now();
    if (!run.load_ended_at) {
      run.load_ended_at = now;
      run.probe->RequestReading();
    }
    TakeProbeReadingsLocked(run);
    const bool read_after_load =
        run.probe_record.last_elapsed_s() >= Seconds(*run.load_ended_at - run.started);
    if (!read_after_load && run.probe->up() && now - *run.load_ended_at < kProbeFinalWait) return;
  }
  FinishRunLocked(run);
}

absl::StatusOr<v1::Target> CoordinatorService::Impl::ProbeTargetOf(
    const v1::Target& target) const {
  v1::Target dialed = target;
  absl::StatusOr<std::string> endpoint =
      ApplyAllowTarget(options_.probe_allow_target, *options_.resolver,
                       {.subject = "the coordinator's probe",
                        .remedy = options_.probe_remedy,
                        .purpose = "to read its statistics"},
                       dialed);
  if (!endpoint.ok()) return endpoint.status();
  return dialed;
}

void CoordinatorService::Impl::StartProbeLocked(Run& run) {
  const v1::Target& target = run.plan.target();
  if (target.driver() == "noop" || run.plan.probe().disabled()) return;
  // The coordinator reads the password itself, from the same file or variable as the agents.
  absl::StatusOr<std::string> password = ReadTargetPassword(target);
  if (!password.ok()) {
    run.probe_error = absl::StrCat("probe off: ", password.status().message(),
                                   " (on the coordinator's machine)");
    return;
  }
  // The probe connects beside the target database where it can (PostgreSQL's maintenance
  // database, MySQL without a default one), so that its statements are not counted in the
  // target's own statistics nor listed among its sessions; failing that, to the target's.
  // The probe connects to the target too: only with the coordinator's consent, like an agent
  // (ProbeTargetOf). Without it the run goes on, unprobed, and the report says which flag would
  // allow it.
  if (!run.probe_target.ok()) {
    run.probe_error = absl::StrCat("probe off: ", run.probe_target.status().message());
    Log(absl::StrCat("run ", run.id, ": ", run.probe_error));
    return;
  }
  const v1::Target& dialed = *run.probe_target;
  v1::Target beside = dialed;
  beside.set_database(target.driver() == "postgresql" ? "postgres" : "");
  absl::StatusOr<std::unique_ptr<db::Driver>> made = db::MakeDriver(dialed, *password, clock_);
  absl::StatusOr<std::unique_ptr<db::Driver>> made_beside =
      db::MakeDriver(beside, *password, clock_);
  if (!made.ok() || !made_beside.ok()) {
    run.probe_error =
        absl::StrCat("probe off: ", (made.ok() ? made_beside : made).status().message());
    return;
  }
  std::shared_ptr<db::Driver> driver = *std::move(made), driver_beside = *std::move(made_beside);
  const bool local = !target.socket().empty() ||
                     IsLoopbackHost(dialed.dial_address().empty() ? target.host()
                                                                  : dialed.dial_address());
  run.identity = std::make_shared<Run::Identity>();
  DatabaseProbe::Opener opener = [driver, driver_beside, local, database = target.database(),
                                  identity = run.identity,
                                  haproxy = run.plan.probe().haproxy_stats()]()
      -> absl::StatusOr<std::vector<std::unique_ptr<ProbeSource>>> {
    absl::StatusOr<std::unique_ptr<SqlProbeSource>> sql =
        SqlProbeSource::Open(*driver_beside, database, local);
    if (!sql.ok()) sql = SqlProbeSource::Open(*driver, database, local);
    if (!sql.ok()) return sql.status();
    const ServerIdentity server = (*sql)->identity();
    {
      std::lock_guard lock(identity->mu);
      identity->server = server;
    }
    std::vector<std::unique_ptr<ProbeSource>> sources;
    sources.push_back(*std::move(sql));
    if (server.pid > 0) sources.push_back(std::make_unique<ProcessProbeSource>(server.pid));
    if (!haproxy.empty()) sources.push_back(std::make_unique<HaproxyProbeSource>(haproxy));
    return sources;
  };
  DatabaseProbe::Options options{
      .interval = run.plan.probe().interval_ns() > 0 ? run.plan.probe().interval_ns() : kSecond,
      .on_reading = [this] { probe_reading_arrived_.store(true); },
      .thread_start = [driver] { driver->ThreadStart(); },
      .thread_end = [driver] { driver->ThreadEnd(); }};
  run.probe = std::make_unique<DatabaseProbe>(clock_, std::move(opener), std::move(options));
}

void CoordinatorService::Impl::TakeProbeReadingsLocked(Run& run) {
  if (run.probe == nullptr) return;
  for (const ProbeReading& reading : run.probe->TakeReadings()) {
    run.probe_record.Add(Seconds(reading.at - run.started), reading.values);
    if (options_.metrics != nullptr) {
      options_.metrics->OnProbeReading(run.id, run.plan.scenario(), reading.values);
    }
  }
  // The probe's state now: a successful reading after an outage (a restarted server) clears the
  // error, so that the report does not blame a probe that recovered.
  run.probe_error = run.probe->error();
  if (options_.metrics != nullptr) {
    options_.metrics->SetProbeUp(run.id, run.plan.scenario(), run.probe->up());
  }
}

void CoordinatorService::Impl::CompleteReportLocked(Run& run, v1::RunReport& report) {
  AddLostAgentsLocked(run, report);
  run.probe_record.FillReport(report);
  report.set_probe_error(run.probe_error);
  MarkGeneratorLimits(run.plan.generator(), report);
  *report.mutable_manifest() = run.manifest;
  if (run.identity != nullptr) {
    std::lock_guard lock(run.identity->mu);
    const ServerIdentity& server = run.identity->server;
    report.mutable_manifest()->set_server_product(server.product);
    report.mutable_manifest()->set_server_version(server.version);
    report.mutable_manifest()->mutable_server_settings()->insert(server.settings.begin(),
                                                                 server.settings.end());
  }
}

void CoordinatorService::Impl::AddLostAgentsLocked(const Run& run, v1::RunReport& report) const {
  report.clear_lost_agents();
  report.set_degraded(!run.lost.empty());
  if (run.lost.empty() || !run.aggregator) return;
  const bool open = run.plan.load().has_open();
  const double per_client_rate = open ? 0 : BestPerClientRate(report);
  for (const auto& [name, why] : run.lost) {
    const AgentProgress& progress = run.aggregator->agents().at(name);
    LostAgentFacts facts{
        .name = name,
        .why = why,
        .last_report_s = progress.elapsed_s,
        .dead_man_s = Seconds(options_.dead_man_timeout),
        .open_loop = open,
        .poisson = open && run.plan.load().open().arrival() == v1::OpenLoad::POISSON,
        .wanted_arrivals = progress.wanted_arrivals,
        .completed =
            progress.executed + progress.errors + progress.warmup_executed + progress.warmup_errors,
        .in_flight = progress.in_flight,
        .per_client_rate = per_client_rate};
    if (auto at = run.lost_at.find(name); at != run.lost_at.end()) {
      facts.lost_s = std::max(progress.elapsed_s, Seconds(at->second - run.started));
    }
    if (auto rate = run.rate_of.find(name); rate != run.rate_of.end()) facts.rate = rate->second;
    if (auto clients = run.lost_clients.find(name); clients != run.lost_clients.end()) {
      facts.clients = clients->second;
    }
    facts.clients = std::max(facts.clients, progress.clients);
    *report.add_lost_agents() = BoundLostAgent(facts);
  }
}

void CoordinatorService::Impl::OnProbeReadings() {
  std::lock_guard lock(mu_);
  for (auto& [id, run] : runs_) {
    if (run->done) continue;
    MaybeReleaseAssignmentsLocked(*run);
    if (run->load_ended_at) MaybeFinishLocked(*run);
  }
}

void CoordinatorService::Impl::MaybeReleaseAssignmentsLocked(Run& run, bool force) {
  if (run.held_assignments.empty()) return;
  TakeProbeReadingsLocked(run);
  const Nanos now = clock_.Now();
  const bool probe_done = run.probe == nullptr || !run.probe_record.empty() ||
                          !run.probe->error().empty();
  if (!force && !probe_done && now < run.hold_deadline) return;
  if (RefusedByServerLocked(run)) return;
  // The run's clock starts with its load; the probe's first reading is then slightly negative.
  run.probe_read_before_load = run.probe != nullptr && !run.probe_record.empty();
  run.started = now;
  run.last_saved = now;
  for (auto& [name, message] : run.held_assignments) {
    auto agent = agents_.find(name);
    if (agent != agents_.end() && agent->second->run_id == run.id) {
      EnqueueLocked(*agent->second, std::move(message));
    }
  }
  run.held_assignments.clear();
}

bool CoordinatorService::Impl::RefusedByServerLocked(Run& run) {
  if (run.identity == nullptr) return false;
  uint64_t max_connections = 0;
  {
    std::lock_guard lock(run.identity->mu);
    auto it = run.identity->server.settings.find("max_connections");
    if (it == run.identity->server.settings.end() ||
        !absl::SimpleAtoi(it->second, &max_connections)) {
      return false;
    }
  }
  const absl::Status fits = CheckServerConnections(run.plan, run.connections, max_connections);
  if (fits.ok()) return false;
  // No agent has its assignment yet: none starts, and each is free for the next run at once.
  for (const auto& [name, message] : run.held_assignments) {
    auto agent = agents_.find(name);
    if (agent != agents_.end() && agent->second->run_id == run.id) agent->second->run_id.clear();
  }
  run.held_assignments.clear();
  run.refusal = absl::StrCat("target: ", FieldOf(fits).value_or(""), ": ", fits.message());
  Log(absl::StrCat("run ", run.id, " refused: ", run.refusal));
  FinishRunLocked(run);
  return true;
}

uint32_t CoordinatorService::Impl::WorkingAgentsLocked(const Run& run) const {
  return static_cast<uint32_t>(run.agents.size() - run.lost.size());
}

void CoordinatorService::Impl::PushProgressLocked(Run& run, v1::RunProgress progress) {
  run.progress.push_back(std::move(progress));
  if (run.progress.size() > kProgressKept) run.progress.pop_front();
  ++run.progress_count;
  progress_cv_.notify_all();
}

RunAggregator::IntervalObserver CoordinatorService::Impl::MetricsObserverLocked(Run& run) {
  if (options_.metrics == nullptr) return nullptr;
  return [this, &run](const RunAggregator::ClosedInterval& closed) {
    RunInterval interval;
    interval.run_id = run.id;
    interval.scenario = run.plan.scenario();
    interval.query_types = run.query_types;
    interval.merged = &closed.merged;
    interval.length_s = closed.length_s;
    interval.target_rate = closed.sample.target_rate();
    interval.clients = closed.sample.clients();
    if (const uint32_t stage = closed.sample.stage();
        stage > 0 && stage <= static_cast<uint32_t>(run.plan.stages_size())) {
      interval.stage = stage;
      interval.stage_name = run.plan.stages(stage - 1).name().empty()
                                ? absl::StrCat("stage ", stage)
                                : run.plan.stages(stage - 1).name();
    }
    interval.warmup = closed.sample.warmup();
    for (auto& [agent, gauges] : run.agent_gauges) {
      interval.in_flight += gauges.in_flight;
      interval.connections += gauges.connections;
      // The CPU goes with the first sample of a tick; a tick that crosses the end of the
      // warm-up publishes two samples and must not count it twice.
      interval.agent_cpu_seconds[agent] = gauges.cpu_seconds;
      interval.agent_cpu_utilization[agent] = gauges.cpu_utilization;
      gauges.cpu_seconds = 0;
    }
    if (!closed.sample.warmup()) {
      // Enough for the usual completion rate and for the lookback of a long stall.
      constexpr size_t kRecentKept = 30;
      run.recent_intervals.push_back(closed.sample);
      if (run.recent_intervals.size() > kRecentKept) run.recent_intervals.pop_front();
      std::vector<const v1::IntervalSample*> recent;
      for (const v1::IntervalSample& sample : run.recent_intervals) recent.push_back(&sample);
      const v1::IntervalLimit limit =
          JudgeIntervals(run.plan.generator(), recent, run.plan.target().pool()).back().limit;
      interval.generator_limited = limit == v1::INTERVAL_LIMIT_GENERATOR;
      interval.pool_limited = limit == v1::INTERVAL_LIMIT_POOL;
      interval.database_stalled = limit == v1::INTERVAL_LIMIT_DATABASE_STALLED;
    }
    const double response_p99 = closed.sample.p99_ms();
    interval.dispatch_lag_share =
        response_p99 > 0 ? closed.sample.dispatch_lag_p99_ms() / response_p99 : 0;
    options_.metrics->OnInterval(interval);
  };
}

void CoordinatorService::Impl::PublishAgentsLocked() {
  if (options_.metrics == nullptr) return;
  int connected = 0;
  for (const auto& [name, agent] : agents_) connected += agent->lost ? 0 : 1;
  options_.metrics->SetAgentsConnected(connected);
}

void CoordinatorService::Impl::PushIntervalsLocked(Run& run, Nanos now) {
  for (v1::IntervalSample& sample :
       run.aggregator->CloseInterval(Seconds(now - run.started), MetricsObserverLocked(run))) {
    if (run.abort_monitor && run.stop_reason.empty() && !run.done) {
      if (std::optional<std::string> why = run.abort_monitor->Observe(sample)) {
        // Like a stop: the agents' final reports carry what they did until they stopped.
        run.stop_reason = absl::StrCat("aborted: ", *why);
        run.stop_sent_at = now;
        SendStopLocked(run, run.stop_reason);
        Log(absl::StrCat("run ", run.id, ": ", run.stop_reason));
      }
    }
    v1::RunProgress progress;
    progress.set_run_id(run.id);
    progress.set_state("running");
    *progress.mutable_interval() = std::move(sample);
    progress.set_agents(WorkingAgentsLocked(run));
    progress.set_degraded(!run.lost.empty());
    PushProgressLocked(run, std::move(progress));
  }
  // Saved after this tick's intervals are closed, so that the report so far holds every report
  // received until now (it counts closed intervals only, and its duration is theirs).
  if (options_.run_store != nullptr && !run.done && now - run.last_saved >= kSaveEvery) {
    // What a restart would have to show: the report so far, marked running.
    run.last_saved = now;
    v1::RunReport so_far = run.aggregator->ReportSoFar("running", run.started_at);
    so_far.set_state("running");
    CompleteReportLocked(run, so_far);
    SaveLocked(so_far, run.id);
  }
}

void CoordinatorService::Impl::FinishRunLocked(Run& run) {
  if (run.done) return;
  const Nanos now = clock_.Now();
  PushIntervalsLocked(run, now);

  std::vector<std::string> agent_reasons;
  bool fatal = false;
  for (const std::string& name : run.agents) {
    const AgentProgress& progress = run.aggregator->agents().at(name);
    std::string reason = progress.end_reason;
    if (!progress.fatal_error.empty()) {
      fatal = true;
      // A database's fatal error is usually the end reason itself; an agent that could not start
      // says "not started" and why in fatal_error.
      if (reason.empty()) {
        reason = absl::StrCat("fatal error: ", progress.fatal_error);
      } else if (reason != progress.fatal_error) {
        absl::StrAppend(&reason, ": ", progress.fatal_error);
      }
    }
    if (!reason.empty() &&
        std::find(agent_reasons.begin(), agent_reasons.end(), reason) == agent_reasons.end()) {
      agent_reasons.push_back(reason);
    }
  }
  std::string end_reason;
  if (!run.refusal.empty()) {
    end_reason = absl::StrCat("not started: ", run.refusal);
    run.state = "failed";
  } else if (!run.failure.empty()) {
    end_reason = absl::StrCat("failed: ", run.failure);
    run.state = "failed";
  } else if (!run.stop_reason.empty()) {
    end_reason = run.stop_reason;
    run.state = absl::StartsWith(run.stop_reason, "aborted") ? "aborted" : "interrupted";
  } else if (agent_reasons.empty()) {
    end_reason = "failed: every agent was lost";
    run.state = "failed";
  } else {
    // Agents usually agree ("duration"); with a query split one may end by "queries" and another
    // by "duration", and the report says both.
    end_reason = absl::StrJoin(agent_reasons, ", ");
    run.state = fatal ? "failed" : "finished";
  }
  if (!run.lost.empty() && run.failure.empty()) {
    std::vector<std::string> lost;
    for (const auto& [name, why] : run.lost) {
      lost.push_back(absl::StrCat("agent ", name, " lost (", why, ")"));
    }
    absl::StrAppend(&end_reason, "; degraded: ", absl::StrJoin(lost, ", "));
  }

  run.report = run.aggregator->Finish(Seconds(now - run.started), end_reason, run.started_at,
                                     MetricsObserverLocked(run));
  run.report.set_run_id(run.id);
  run.report.set_state(run.state == "interrupted" && run.stop_reason == "stopped" ? "stopped"
                                                                                  : run.state);
  TakeProbeReadingsLocked(run);
  if (run.probe != nullptr) {
    run.probe->Stop();
    retired_probes_.push_back(std::move(run.probe));
  }
  CompleteReportLocked(run, run.report);
  {
    // The database's count of commits against the agents' (and their connections' own).
    int64_t reported = 0, connection_commits = 0;
    for (const auto& [name, progress] : run.aggregator->agents()) {
      reported += static_cast<int64_t>(progress.executed + progress.warmup_executed);
      connection_commits +=
          static_cast<int64_t>(progress.max_connections) * (1 + 2 * run.statements);
    }
    ReconcileCommits(reported, connection_commits, run.probe_read_before_load,
                     Seconds(run.load_ended_at.value_or(now) - run.started), run.report);
  }
  for (const auto& [stage, search] : run.knees) {
    v1::StageReport& out = *run.report.mutable_stages(static_cast<int>(stage) - 1);
    out.set_knee(search.knee());
    for (const v1::KneeStep& step : search.steps()) *out.add_knee_steps() = step;
  }
  run.aggregator.reset();  // the merged histograms live on in the report only
  SaveLocked(run.report, run.id);
  // Agents that have not sent their final report (stopped, or the run failed) stay busy until
  // they do: they may still be running the load.
  run.done = true;
  v1::RunProgress progress;
  progress.set_run_id(run.id);
  progress.set_state(run.state);
  progress.set_agents(WorkingAgentsLocked(run));
  progress.set_end_reason(end_reason);
  progress.set_degraded(!run.lost.empty());
  PushProgressLocked(run, std::move(progress));
  if (options_.metrics != nullptr) {
    // The metrics tell a stop asked for ("stopped") from a coordinator shutting down
    // ("interrupted"); the progress state says "interrupted" for both.
    const std::string metrics_state =
        run.state == "interrupted" && run.stop_reason == "stopped" ? "stopped" : run.state;
    options_.metrics->SetRunState(run.id, run.plan.scenario(), metrics_state);
    options_.metrics->SetAgentsLost(run.id, run.plan.scenario(), static_cast<int>(run.lost.size()));
  }
  Log(absl::StrCat("run ", run.id, " ", run.state, ": ", end_reason, "; executed ",
                   run.report.executed(), ", errors ", run.report.errors()));
}

// ----- ticks -----

void CoordinatorService::Impl::Tick() {
  std::vector<std::unique_ptr<DatabaseProbe>> retired;  // destroyed after the lock is released
  std::lock_guard lock(mu_);
  const Nanos now = clock_.Now();
  v1::CoordinatorMessage heartbeat;
  heartbeat.mutable_heartbeat()->set_sequence(++heartbeat_sequence_);
  for (auto& [name, agent] : agents_) {
    if (agent->lost) continue;
    if (now - agent->last_heard >= options_.agent_silence_limit) {
      // Its stream may be half-dead (a network partition keeps TCP open for minutes): close it,
      // so that the agent, if alive, reconnects and its dead-man timer stops any load meanwhile.
      agent->lost = true;
      agent->context->TryCancel();
      AgentGoneLocked(name, *agent,
                      absl::StrFormat("silent for %.1fs", Seconds(now - agent->last_heard)));
      PublishAgentsLocked();
      continue;
    }
    EnqueueLocked(*agent, heartbeat);
  }
  JoinIdleAgentsLocked(now);
  for (auto& [id, run] : runs_) {
    if (run->done) continue;
    MaybeReleaseAssignmentsLocked(*run);
    if (!run->held_assignments.empty()) continue;  // its load has not started
    TakeProbeReadingsLocked(*run);
    PushIntervalsLocked(*run, now);
    if (run->stop_sent_at && now - *run->stop_sent_at >= options_.stop_grace) {
      for (const std::string& name : run->agents) {
        if (!run->aggregator->agents().at(name).final) {
          run->lost.emplace(name,
                            absl::StrCat("no final report within ",
                                         FormatDurationNanos(options_.stop_grace), " of the stop"));
          run->lost_at.emplace(name, now);
        }
      }
    }
    MaybeFinishLocked(*run);
  }
  retired.swap(retired_probes_);
}

void CoordinatorService::Impl::TickerLoop() {
  // Sleeps in slices so that StopTicker is noticed promptly on a real clock.
  constexpr Nanos kSlice = 20 * kMillisecond;
  Nanos next = clock_.Now() + options_.tick_interval;
  while (!stop_ticker_.load()) {
    if (probe_reading_arrived_.exchange(false)) OnProbeReadings();
    const Nanos now = clock_.Now();
    if (now < next) {
      clock_.SleepUntil(std::min(next, now + kSlice));
      continue;
    }
    Tick();
    next += options_.tick_interval;
    if (next <= now) next = now + options_.tick_interval;  // after a stall, no burst of ticks
  }
}

void CoordinatorService::Impl::StopTicker() {
  stop_ticker_.store(true);
  if (ticker_.joinable()) ticker_.join();
}

void CoordinatorService::Impl::Shutdown(Nanos grace) {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    for (auto& [id, run] : runs_) {
      if (run->done) continue;
      run->stop_reason = "interrupted";
      run->stop_sent_at = clock_.Now();
      SendStopLocked(*run, "the coordinator is shutting down");
    }
    progress_cv_.notify_all();
  }
  const Nanos deadline = clock_.Now() + grace;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (std::all_of(runs_.begin(), runs_.end(), [](const auto& r) { return r.second->done; })) {
        break;
      }
    }
    const Nanos now = clock_.Now();
    if (now >= deadline) break;
    clock_.SleepUntil(std::min(deadline, now + options_.agent_wait_poll));
  }
  std::lock_guard lock(mu_);
  for (auto& [id, run] : runs_) {
    if (run->done) continue;
    for (const std::string& name : run->agents) {
      if (!run->aggregator->agents().at(name).final) {
        run->lost.emplace(name, "no final report before the coordinator shut down");
        run->lost_at.emplace(name, clock_.Now());
      }
    }
    FinishRunLocked(*run);
  }
  for (auto& [name, agent] : agents_) {
    agent->closing = true;
    agent->outbox_cv.notify_all();
    agent->context->TryCancel();
  }
  progress_cv_.notify_all();
}

// ----- control -----

std::string CoordinatorService::Impl::WaitFailureLocked(uint32_t min_agents, Nanos waited) const {
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

namespace {
// The most a plan asks for at any moment, as the field that says it.
struct PlanPeak {
  double value = 0;
  std::string field;
};

PlanPeak PeakOf(const v1::Plan& plan, bool rate) {
  PlanPeak peak;
  if (plan.stages_size() == 0) {
    if (rate && plan.load().has_open()) return {plan.load().open().rate(), "load.open.rate"};
    if (!rate && plan.load().has_closed()) {
      return {static_cast<double>(plan.load().closed().clients()), "load.closed.clients"};
    }
    return peak;
  }
  if (rate != plan.load().has_open()) return peak;
  for (int i = 0; i < plan.stages_size(); ++i) {
    const v1::Stage& stage = plan.stages(i);
    const std::string name = rate ? "rate" : "clients";
    const double value = stage.has_knee() ? stage.knee().max()
                                          : MaxLevel(rate ? stage.rate() : stage.clients());
    if (value > peak.value) {
      peak = {value, absl::StrCat("stages.", i, ".", stage.has_knee() ? "knee.max" : name)};
    }
  }
  return peak;
}
}  // namespace

absl::Status CoordinatorService::Impl::WithinLimits(const v1::Plan& plan,
                                                    const std::string& source) const {
  const PlanPeak rate = PeakOf(plan, /*rate=*/true);
  if (options_.max_rate > 0 && rate.value > options_.max_rate) {
    return absl::FailedPreconditionError(
        absl::StrCat(source, ": ", rate.field, ": ", rate.value,
                     " transactions/s is above this coordinator's limit of ", options_.max_rate,
                     " (--max-rate)"));
  }
  const PlanPeak clients = PeakOf(plan, /*rate=*/false);
  if (options_.max_clients > 0 && clients.value > options_.max_clients) {
    return absl::FailedPreconditionError(
        absl::StrCat(source, ": ", clients.field, ": ", clients.value,
                     " clients is above this coordinator's limit of ", options_.max_clients,
                     " (--max-clients)"));
  }
  return absl::OkStatus();
}

grpc::Status CoordinatorService::Impl::Submit(grpc::ServerContext* context,
                                              const v1::SubmitRequest& request,
                                              v1::SubmitResponse& response) {
  const std::string source = request.source_name().empty() ? "plan" : request.source_name();
  // A YAML workload named but not included (a client that did not resolve it) is read here, so
  // that the agents receive it inside the plan.
  v1::Plan plan = request.plan();
  if (absl::Status resolved = ResolvePlanWorkload(plan); !resolved.ok()) {
    const std::optional<std::string> field = FieldOf(resolved);
    return ToGrpc(absl::Status(resolved.code(), field ? absl::StrCat(source, ": ", *field, ": ",
                                                                     resolved.message())
                                                      : std::string(resolved.message())));
  }
  if (absl::Status valid = ValidatePlan(plan, source); !valid.ok()) return ToGrpc(valid);
  if (absl::Status within = WithinLimits(plan, source); !within.ok()) return ToGrpc(within);
  // The workload judges its own name, options and scenario, and names the query types that the
  // agents' reports index.
  std::vector<std::string> query_types;
  uint32_t statements = 0;
  {
    auto field_error = [&source](const absl::Status& status, const char* default_field) {
      const std::string field = FieldOf(status).value_or(std::string(default_field));
      return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                          absl::StrCat(source, ": ", field, ": ", status.message()));
    };
    absl::StatusOr<std::unique_ptr<Workload>> workload = options_.make_workload(plan);
    if (!workload.ok()) return field_error(workload.status(), "workload");
    absl::StatusOr<std::unique_ptr<Scenario>> scenario = (*workload)->MakeScenario(plan.scenario());
    if (!scenario.ok()) return field_error(scenario.status(), "scenario");
    query_types = (*scenario)->query_types();
    statements = static_cast<uint32_t>((*scenario)->Statements(db::Dialect::kPostgreSql).size());
  }

  // The plan's own requirement and the request's: the stricter of each.
  const uint32_t min_agents = std::max({1u, request.min_agents(), plan.agents().min()});
  const Nanos wait = std::max<int64_t>({0, request.wait_for_agents_ns(), plan.agents().wait_ns()});
  const Nanos deadline = clock_.Now() + wait;
  // Checked and resolved before the lock: a resolver may take seconds.
  absl::StatusOr<v1::Target> probe_target =
      plan.probe().disabled() ? absl::StatusOr<v1::Target>(plan.target())
                              : ProbeTargetOf(plan.target());
  std::unique_lock lock(mu_);
  std::vector<std::shared_ptr<AgentConn>> idle;
  std::vector<std::string> idle_names;
  while (true) {
    if (shutting_down_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
    }
    idle.clear();
    idle_names.clear();
    for (const auto& [name, agent] : agents_) {  // sorted by name: a deterministic split
      if (agent->lost || !agent->run_id.empty()) continue;
      idle.push_back(agent);
      idle_names.push_back(name);
    }
    if (idle.size() >= min_agents) break;
    const Nanos now = clock_.Now();
    if (now >= deadline) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, WaitFailureLocked(min_agents, wait));
    }
    lock.unlock();
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "Submit cancelled while waiting for agents");
    }
    clock_.SleepUntil(std::min(deadline, now + options_.agent_wait_poll));
    lock.lock();
  }

  std::vector<double> capacities;
  for (const auto& agent : idle) capacities.push_back(agent->hello.capacity());
  const std::vector<AgentShare> shares = SplitPlan(plan, capacities);
  // Before any agent hears of the run: each share must fit the room its agent said it has (one
  // thread and one connection per worker); the agent checks again when it is assigned.
  uint64_t connections = 0;
  for (const AgentShare& share : shares) {
    const bool explain = share.agent_index == 0 && !plan.explain().disabled();
    connections += share.connections + (explain && share.connections > 0 ? 1 : 0);
    const v1::AgentResources& room = idle[share.agent]->hello.resources();
    const AgentResources resources{.threads = room.threads(),
                                   .threads_bound = room.threads_bound(),
                                   .files = room.files(),
                                   .files_bound = room.files_bound()};
    if (absl::Status fits = CheckAgentResources(plan, share.connections, explain, resources,
                                                idle_names[share.agent]);
        !fits.ok()) {
      // Without the source: the CLI puts the plan's path in front of a refused Submit.
      Log(absl::StrCat("refused plan '", plan.name(), "': ", fits.message()));
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          absl::StrCat(FieldOf(fits).value_or(""), ": ", fits.message()));
    }
  }

  // Before any agent hears of the run: every agent that would refuse its target (its
  // --allow-target, from its hello), each named with its reason. An agent that sent no list (an
  // older one) and a host name only the agent can resolve are left to the agent's own check.
  std::vector<std::string> refusals;
  for (const AgentShare& share : shares) {
    const v1::AgentHello& hello = idle[share.agent]->hello;
    if (hello.allow_target().empty()) continue;
    absl::StatusOr<TargetAllowList> allow = TargetAllowList::Parse(
        std::vector<std::string>(hello.allow_target().begin(), hello.allow_target().end()));
    if (!allow.ok()) continue;  // the agent parsed its own flag; it will judge for itself
    const absl::Status allowed = allow->PreCheck(
        plan.target(),
        {.subject = absl::StrCat("agent '", idle_names[share.agent], "'"), .remedy = "the agent"});
    if (!allowed.ok()) refusals.emplace_back(allowed.message());
  }
  if (!refusals.empty()) {
    const std::string why = absl::StrJoin(refusals, "; ");
    Log(absl::StrCat("refused plan '", plan.name(), "': ", why));
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, absl::StrCat("target: ", why));
  }

  auto run = std::make_shared<Run>();
  run->id = NewRunId(++run_counter_);
  run->plan = plan;
  run->probe_target = std::move(probe_target);
  std::vector<RunAggregator::AgentSpec> specs;
  for (const AgentShare& share : shares) {
    run->agents.push_back(idle_names[share.agent]);
    run->clients_of[idle_names[share.agent]] = share.clients;
    run->next_spare_slot = share.spare_first_slot;
    run->total_slots = share.total_slots;
    specs.push_back({.name = idle_names[share.agent],
                     .query_budget = share.queries,
                     .stage_budgets = share.stage_queries,
                     .cores = idle[share.agent]->hello.cores()});
  }
  run->query_types = query_types;
  run->connections = connections;
  run->statements = statements;
  if (plan.load().has_open()) {
    const double peak = PeakOf(plan, /*rate=*/true).value;
    for (const AgentShare& share : shares) {
      run->rate_of[idle_names[share.agent]] =
          plan.stages_size() > 0 ? share.rate_fraction * peak : share.rate;
    }
  }
  run->aggregator.emplace(run->id, plan, query_types, specs);
  const v1::AbortRules& abort = plan.abort();
  if (abort.p99_above_ns() > 0 || abort.error_rate_above() > 0 || abort.achieved_below() > 0) {
    run->abort_monitor.emplace(abort, Seconds(plan.warmup_ns()));
  }
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (!plan.stages(i).has_knee()) continue;
    run->knees.emplace(static_cast<uint32_t>(i + 1),
                       KneeSearch(plan.stages(i).knee(), plan.load().has_open(),
                                  plan.load().has_closed()));
  }
  run->started = clock_.Now();
  run->started_at = options_.wall_time();
  run->manifest.set_dbload_version(DBLOAD_VERSION_STRING);
  run->manifest.set_seed(plan.seed());
  if (char host[256] = {}; gethostname(host, sizeof(host) - 1) == 0) {
    run->manifest.set_coordinator_host(host);
  }
  for (const AgentShare& share : shares) {
    const v1::AgentHello& hello = idle[share.agent]->hello;
    v1::RunManifest::AgentHost& host = *run->manifest.add_agents();
    host.set_name(idle_names[share.agent]);
    host.set_host(hello.host());
    host.set_cores(hello.cores());
    host.set_version(hello.version());
  }
  StartProbeLocked(*run);
  for (const AgentShare& share : shares) {
    AgentConn& agent = *idle[share.agent];
    v1::CoordinatorMessage message;
    v1::Assignment& assignment = *message.mutable_assign();
    assignment.set_run_id(run->id);
    *assignment.mutable_plan() = plan;
    assignment.set_agent_index(share.agent_index);
    assignment.set_agent_count(share.agent_count);
    assignment.set_first_slot(share.first_slot);
    assignment.set_total_slots(share.total_slots);
    if (plan.stages_size() > 0) {
      assignment.set_rate_fraction(share.rate_fraction);
    } else if (plan.load().has_open()) {
      assignment.mutable_load()->set_rate(share.rate);
    } else {
      assignment.mutable_load()->set_clients(share.clients);
    }
    assignment.set_phase(share.phase);
    assignment.set_dead_man_timeout_ns(options_.dead_man_timeout);
    assignment.set_queries(share.queries);
    for (uint64_t queries : share.stage_queries) assignment.add_stage_queries(queries);
    agent.run_id = run->id;
    agent.participant = idle_names[share.agent];
    run->held_assignments.emplace_back(idle_names[share.agent], std::move(message));
  }
  run->hold_deadline = clock_.Now() + kProbeFirstWait;
  MaybeReleaseAssignmentsLocked(*run);
  runs_[run->id] = run;
  latest_run_ = run->id;
  run->last_saved = run->started;
  // (A probe quick enough to have read max_connections already may have refused the run.)
  if (options_.run_store != nullptr && !run->done) {
    v1::RunReport so_far = run->aggregator->ReportSoFar("running", run->started_at);
    so_far.set_state("running");
    SaveLocked(so_far, run->id);
  }
  if (options_.metrics != nullptr && !run->done) {
    options_.metrics->SetRunState(run->id, plan.scenario(), "running");
  }
  response.set_run_id(run->id);
  for (const std::string& name : run->agents) response.add_agents(name);
  Log(absl::StrCat("run ", run->id, " started: plan '", plan.name(), "' across ",
                   run->agents.size(), " agent", run->agents.size() == 1 ? "" : "s", " (",
                   absl::StrJoin(run->agents, ", "), ")"));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Impl::Watch(grpc::ServerContext* context,
                                             const v1::WatchRequest& request,
                                             grpc::ServerWriter<v1::RunProgress>& writer) {
  std::shared_ptr<Run> run;
  {
    std::lock_guard lock(mu_);
    run = FindRunLocked(request.run_id());
  }
  if (run == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no run '", request.run_id(), "'"));
  }
  // Starts with what is still kept, so that a Watch right after Submit misses nothing.
  uint64_t next = 0;
  while (true) {
    std::vector<v1::RunProgress> batch;
    bool done = false;
    {
      std::unique_lock lock(mu_);
      progress_cv_.wait_for(lock, kWatchPoll,
                            [&] { return run->progress_count > next || run->done; });
      const uint64_t first = run->progress_count - run->progress.size();
      next = std::max(next, first);  // a watcher too slow to keep up skips what is gone
      for (; next < run->progress_count; ++next) batch.push_back(run->progress[next - first]);
      done = run->done;
    }
    for (const v1::RunProgress& progress : batch) {
      if (!writer.Write(progress)) {
        return grpc::Status(grpc::StatusCode::CANCELLED, "the watcher left");
      }
    }
    if (done) return grpc::Status::OK;
    if (context->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "the watcher left");
    }
  }
}

grpc::Status CoordinatorService::Impl::Stop(const v1::StopRequest& request) {
  std::lock_guard lock(mu_);
  std::shared_ptr<Run> run = FindRunLocked(request.run_id());
  if (run == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no run '", request.run_id(), "'"));
  }
  if (run->done || !run->stop_reason.empty()) return grpc::Status::OK;
  // The run ends once the agents confirm with their final reports, which carry what they did
  // until they stopped; Tick ends it anyway after stop_grace.
  run->stop_reason = "stopped";
  run->stop_sent_at = clock_.Now();
  SendStopLocked(*run, "stop requested");
  Log(absl::StrCat("run ", run->id, ": stop requested"));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Impl::ListAgents(v1::ListAgentsResponse& response) {
  std::lock_guard lock(mu_);
  const Nanos now = clock_.Now();
  for (const auto& [name, agent] : agents_) {
    v1::AgentInfo& info = *response.add_agents();
    info.set_name(name);
    info.set_host(agent->hello.host());
    info.set_cores(agent->hello.cores());
    info.set_version(agent->hello.version());
    info.set_run_id(agent->run_id);
    info.set_connected_s(Seconds(now - agent->connected_at));
  }
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Impl::GetReport(const v1::GetReportRequest& request,
                                                 v1::RunReport& response) {
  std::lock_guard lock(mu_);
  std::shared_ptr<Run> run = FindRunLocked(request.run_id());
  if (run == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no run '", request.run_id(), "'"));
  }
  if (run->done) {
    response = run->report;
  } else {
    response = run->aggregator->ReportSoFar("running", run->started_at);
    CompleteReportLocked(*run, response);
    response.set_run_id(run->id);
    response.set_state("running");
  }
  return grpc::Status::OK;
}

// ----- public -----

CoordinatorService::CoordinatorService(Clock& clock, CoordinatorOptions options)
    : impl_(std::make_unique<Impl>(clock, std::move(options))) {}
CoordinatorService::~CoordinatorService() = default;
grpc::Service* CoordinatorService::agent_link_service() { return impl_->agent_link_service(); }
grpc::Service* CoordinatorService::control_service() { return impl_->control_service(); }
void CoordinatorService::Tick() { impl_->Tick(); }
void CoordinatorService::Shutdown(Nanos grace) { impl_->Shutdown(grace); }

bool IsLoopbackListenAddress(const std::string& address) { return IsLoopbackAddress(address); }

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(
    const std::string& address, CoordinatorService& service, const TransportSecurity& security) {
  if (absl::Status allowed = CheckAddressSecurity(address, security, "--listen"); !allowed.ok()) {
    return allowed;
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(address, ServerCredentials(security), &port);
  // Reports and assignments as large as the plan limits allow (plan/plan_limits.h).
  builder.SetMaxReceiveMessageSize(kMaxRpcMessageBytes);
  builder.SetMaxSendMessageSize(kMaxRpcMessageBytes);
  builder.RegisterService(service.agent_link_service());
  builder.RegisterService(service.control_service());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || (port == 0 && !absl::StartsWith(address, "unix:"))) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on '", address, "' (in use, or not a host:port?)"));
  }
  return std::unique_ptr<CoordinatorServer>(new CoordinatorServer(std::move(server), port));
}

CoordinatorServer::CoordinatorServer(std::unique_ptr<grpc::Server> server, int port)
    : server_(std::move(server)), port_(port) {}

CoordinatorServer::~CoordinatorServer() { Shutdown(); }

void CoordinatorServer::Shutdown() {
  if (server_ == nullptr) return;
  // gRPC's deadline is wall-clock by its API; it only bounds how long a stuck call may delay exit.
  server_->Shutdown(std::chrono::system_clock::now() + kServerShutdownGrace);
  server_->Wait();
  server_.reset();
}

}  // namespace dbload
