#include "coordinator/coordinator_service.h"

#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/field_error.h"
#include "base/thread_name.h"
#include "coordinator/agent_registry.h"
#include "coordinator/plan_admission.h"
#include "coordinator/planner.h"
#include "coordinator/probe_session.h"
#include "coordinator/row_check.h"
#include "coordinator/run_controller.h"
#include "coordinator/run_saver.h"
#include "coordinator/run_store.h"
#include "dbload/v1/agent.grpc.pb.h"
#include "dbload/v1/control.grpc.pb.h"
#include "net/transport_security.h"
#include "plan/durations.h"
#include "plan/plan_validation.h"
#include "plan/target_secrets.h"
#include "workload/workload.h"

namespace dbload {

namespace {

namespace v1 = dbload::v1;
using AgentStream = AgentRegistry::AgentStream;

// How often a waiting Watch looks whether its client went away. Real time, not the injected
// clock: it is a poll for cancellation, not part of any run's timing.
constexpr auto kWatchPoll = std::chrono::milliseconds(200);

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

// What the saver writes with: the --state-dir's store, or nothing without one.
RunSaver::Write SaveInto(RunStore* store) {
  if (store == nullptr) return nullptr;
  return [store](const v1::RunReport& report) { return store->Save(report); };
}

}  // namespace

class CoordinatorService::Impl {
 public:
  Impl(Clock& clock, CoordinatorOptions options)
      : clock_(clock),
        options_(std::move(options)),
        saver_(SaveInto(options_.run_store), options_.log),
        agents_(mu_, options_.metrics),
        environment_{.clock = clock_,
                     .agents = agents_,
                     .saver = saver_,
                     .metrics = options_.metrics,
                     .log = options_.log,
                     .dead_man_timeout = options_.dead_man_timeout,
                     .stop_grace = options_.stop_grace,
                     .interval_wait = options_.interval_wait,
                     .progress_pushed = [this] { progress_cv_.notify_all(); },
                     .retired_probes = &retired_probes_},
        agent_link_(*this),
        control_(*this) {
    if (!options_.wall_time) options_.wall_time = DefaultWallTime;
    if (!options_.make_workload) options_.make_workload = MakePlanWorkload;
    if (options_.probe_factory == nullptr) {
      options_.probe_factory = std::make_shared<DatabaseProbeFactory>(
          clock_, DatabaseProbeFactory::Options{.allow_target = options_.probe_allow_target,
                                                .remedy = options_.probe_remedy,
                                                .resolver = options_.resolver,
                                                .log = options_.log});
    }
    RestoreRuns();
    if (options_.run_ticker) {
      ticker_ = std::thread([this] {
        NameThisThread("dbload-ticker");
        TickerLoop();
      });
    }
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
        if (auto probe = run->RetireProbe()) probes.push_back(std::move(probe));
      }
    }
    probes.clear();
    // Row checks' counting threads call back too: their runs wait for them.
    runs_.clear();
  }

  grpc::Service* agent_link_service() { return &agent_link_; }
  grpc::Service* control_service() { return &control_; }

  void Tick();
  void Shutdown(Nanos grace);

  grpc::Status Authenticate(const grpc::ServerContext& context) {
    grpc::Status checked = CheckCallToken(context, options_.token);
    if (!checked.ok() && options_.log) {
      options_.log(
          absl::StrCat("refused a call from ", context.peer(), ": ", checked.error_message()));
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
  grpc::Status Submit(grpc::ServerContext* context, const v1::SubmitRequest& request,
                      v1::SubmitResponse& response);
  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchRequest& request,
                     grpc::ServerWriter<v1::RunProgress>& writer);
  grpc::Status Stop(const v1::StopRequest& request);
  grpc::Status ListAgents(v1::ListAgentsResponse& response);
  grpc::Status GetReport(const v1::GetReportRequest& request, v1::RunReport& response);

  void TickerLoop();
  void StopTicker();
  void OnProbeReadings();
  // Between ticks: closes intervals that waited long enough for an agent's report.
  void PollRuns(Nanos now);
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  // All *Locked functions run under mu_.
  void HandleReportLocked(const std::string& name, AgentConn& agent, const v1::AgentReport& report);
  void AgentGoneLocked(const std::string& name, AgentConn& agent, const std::string& why);
  void RestoreRuns();
  // Idle agents take the place of lost ones in runs that can take them (RunController::Join).
  void JoinIdleAgentsLocked(Nanos now);
  std::shared_ptr<RunController> FindRunLocked(const std::string& run_id);

  Clock& clock_;
  CoordinatorOptions options_;
  std::mutex mu_;
  RunSaver saver_;
  AgentRegistry agents_;        // guarded by mu_
  RunEnvironment environment_;  // for every run; guarded by mu_
  AgentLinkImpl agent_link_;
  ControlImpl control_;

  std::condition_variable progress_cv_;  // a run pushed progress, or the coordinator stops
  std::map<std::string, std::shared_ptr<RunController>> runs_;
  std::string latest_run_;
  uint64_t run_counter_ = 0;
  uint64_t heartbeat_sequence_ = 0;
  bool shutting_down_ = false;

  std::atomic<bool> stop_ticker_{false};
  std::thread ticker_;
  // Set by probes' threads when a reading arrived, and by row checks' when a count is in; the
  // ticker then releases the assignments or finishes the runs waiting for it.
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
  if (absl::Status hello = CheckHello(message, DBLOAD_VERSION_STRING); !hello.ok()) {
    return ToGrpc(hello);
  }
  const v1::AgentHello hello = message.hello();
  const std::string name = hello.name();

  auto agent = std::make_shared<AgentConn>();
  agent->hello = hello;
  agent->context = context;
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
    }
    if (absl::Status added = agents_.Add(name, agent, clock_.Now()); !added.ok()) {
      return ToGrpc(added);
    }
  }
  Log(absl::StrCat("agent ", name, " connected (host ", hello.host(), ", ", hello.cores(),
                   " cores, dbload ", hello.version(), ")"));

  std::thread writer([this, agent, stream] { agents_.WriteLoop(*agent, stream); });
  std::string why_gone = "disconnected";
  // Each message is parsed into an arena emptied after it. On the heap, every parse freed the
  // previous report (a oneof's) and allocated the new one's ~80 arrays again: 15 % of the
  // coordinator's CPU at a thousand agents (bench/RESULTS.md section 24).
  google::protobuf::ArenaOptions arena_options;
  arena_options.start_block_size = 64 << 10;
  arena_options.max_block_size = 256 << 10;
  google::protobuf::Arena arena(arena_options);
  for (;; arena.Reset()) {
    auto* next = google::protobuf::Arena::CreateMessage<v1::AgentMessage>(&arena);
    if (!stream->Read(next)) break;
    std::lock_guard lock(mu_);
    agent->last_heard = clock_.Now();
    if (next->has_report()) {
      HandleReportLocked(name, *agent, next->report());
    } else if (next->has_sessions_ready()) {
      if (std::shared_ptr<RunController> run = FindRunLocked(next->sessions_ready().run_id())) {
        run->OnSessionsReady(name, *agent);
      }
    } else if (next->has_load_over()) {
      if (std::shared_ptr<RunController> run = FindRunLocked(next->load_over().run_id())) {
        run->OnLoadOver(name, *agent);
      }
    } else if (next->has_hello()) {
      why_gone = "sent a second AgentHello";
      break;
    }
    // A heartbeat only needs last_heard.
  }
  {
    std::lock_guard lock(mu_);
    AgentRegistry::Close(*agent);
    AgentGoneLocked(name, *agent, agent->lost ? "lost" : why_gone);
    agents_.Remove(name, agent);
  }
  writer.join();
  Log(absl::StrCat("agent ", name, " left (", agent->lost ? "silent too long" : why_gone, ")"));
  if (why_gone != "disconnected") {
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, why_gone);
  }
  return grpc::Status::OK;
}

void CoordinatorService::Impl::HandleReportLocked(const std::string& agent_name, AgentConn& agent,
                                                  const v1::AgentReport& agent_report) {
  // After its final report the agent is free for another run, whatever becomes of this one.
  if (agent_report.final() && agent.run_id == agent_report.run_id()) agent.run_id.clear();
  std::shared_ptr<RunController> run = FindRunLocked(agent_report.run_id());
  if (run == nullptr || agent_report.run_id().empty()) {
    Log(absl::StrCat("agent ", agent_name, ": report for unknown run '", agent_report.run_id(),
                     "' ignored"));
    return;
  }
  run->OnReport(agent_name, agent, agent_report);
}

void CoordinatorService::Impl::AgentGoneLocked(const std::string& agent_name, AgentConn& agent,
                                               const std::string& why) {
  if (agent.run_id.empty()) return;
  std::shared_ptr<RunController> run = FindRunLocked(agent.run_id);
  agent.run_id.clear();
  const std::string name = agent.participant.empty() ? agent_name : agent.participant;
  if (run != nullptr) run->OnAgentGone(name, why);
}

// ----- runs -----

std::shared_ptr<RunController> CoordinatorService::Impl::FindRunLocked(const std::string& run_id) {
  // An empty id means the latest run: what someone at a terminal usually wants.
  auto it = runs_.find(run_id.empty() ? latest_run_ : run_id);
  return it == runs_.end() ? nullptr : it->second;
}

void CoordinatorService::Impl::RestoreRuns() {
  if (!options_.restored_runs.empty()) latest_run_ = LatestRestored(options_.restored_runs);
  for (v1::RunReport& report : options_.restored_runs) {
    auto run = std::make_shared<RunController>(environment_, std::move(report));
    runs_[run->id()] = std::move(run);
  }
  if (!options_.restored_runs.empty()) {
    Log(absl::StrCat("restored ", options_.restored_runs.size(), " run(s) from the state dir"));
  }
  options_.restored_runs.clear();
}

void CoordinatorService::Impl::JoinIdleAgentsLocked(Nanos now) {
  for (auto& [id, run] : runs_) {
    for (auto& [name, agent] : agents_.agents()) {
      if (!run->WantsJoiner(now)) break;
      if (agent->lost || agent->closing || !agent->run_id.empty()) continue;
      if (!run->Join(name, *agent, now)) break;
    }
  }
}

void CoordinatorService::Impl::OnProbeReadings() {
  std::lock_guard lock(mu_);
  for (auto& [id, run] : runs_) run->OnProbeReading();
}

// ----- ticks -----

void CoordinatorService::Impl::PollRuns(Nanos now) {
  std::lock_guard lock(mu_);
  for (auto& [id, run] : runs_) run->Poll(now);
}

void CoordinatorService::Impl::Tick() {
  std::vector<std::unique_ptr<DatabaseProbe>> retired;  // destroyed after the lock is released
  std::lock_guard lock(mu_);
  const Nanos now = clock_.Now();
  agents_.Beat(now, options_.agent_silence_limit, ++heartbeat_sequence_,
               [this](const std::string& name, AgentConn& agent, const std::string& why) {
                 AgentGoneLocked(name, agent, why);
               });
  JoinIdleAgentsLocked(now);
  for (auto& [id, run] : runs_) run->Tick(now);
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
      PollRuns(now);
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
      if (!run->done()) run->Stop(v1::END_REASON_INTERRUPTED, "the coordinator is shutting down");
    }
    progress_cv_.notify_all();
  }
  const Nanos deadline = clock_.Now() + grace;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (std::all_of(runs_.begin(), runs_.end(), [](const auto& r) { return r.second->done(); })) {
        break;
      }
    }
    const Nanos now = clock_.Now();
    if (now >= deadline) break;
    clock_.SleepUntil(std::min(deadline, now + options_.agent_wait_poll));
  }
  std::lock_guard lock(mu_);
  for (auto& [id, run] : runs_) {
    run->EndWithoutFinalReports("no final report before the coordinator shut down");
  }
  agents_.CloseAll();
  progress_cv_.notify_all();
}

// ----- control -----

grpc::Status CoordinatorService::Impl::Submit(grpc::ServerContext* context,
                                              const v1::SubmitRequest& request,
                                              v1::SubmitResponse& response) {
  const std::string source = request.source_name().empty() ? "plan" : request.source_name();
  // A workload written in YAML arrives inside the plan (workload_spec): the coordinator reads
  // no YAML, and a plan that names one without it is refused by the workload check below.
  const v1::Plan& plan = request.plan();
  if (absl::Status valid = ValidatePlan(plan, source); !valid.ok()) return ToGrpc(valid);
  if (absl::Status within =
          WithinCoordinatorLimits(plan, source, options_.max_rate, options_.max_clients);
      !within.ok()) {
    return ToGrpc(within);
  }
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
  const absl::StatusOr<v1::Target> probe_target = options_.probe_factory->Resolve(plan);
  // Its rows are counted here, once for the run (RunController holds the load for the count).
  RowCheck rows = RowCheck::For(
      plan, [this](const v1::Plan& p) { return options_.probe_factory->MakeRowCounter(p); },
      [this] { probe_reading_arrived_.store(true); },
      [this](const v1::Plan& p) { return options_.probe_factory->MakeValueReader(p); });
  std::unique_lock lock(mu_);
  std::vector<std::shared_ptr<AgentConn>> idle;
  std::vector<std::string> idle_names;
  while (true) {
    if (shutting_down_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the coordinator is shutting down");
    }
    idle.clear();
    idle_names.clear();
    for (auto& [name, agent] : agents_.Idle()) {  // sorted by name: a deterministic split
      idle.push_back(std::move(agent));
      idle_names.push_back(name);
    }
    if (idle.size() >= min_agents) break;
    const Nanos now = clock_.Now();
    if (now >= deadline) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          agents_.WaitFailure(min_agents, wait));
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
  std::vector<const v1::AgentHello*> hellos;
  for (const auto& agent : idle) hellos.push_back(&agent->hello);
  std::string refusal;
  const absl::StatusOr<uint64_t> connections =
      AdmitShares(plan, shares, hellos, idle_names, refusal);
  if (!connections.ok()) {
    Log(absl::StrCat("refused plan '", plan.name(), "': ", refusal));
    return ToGrpc(connections.status());
  }

  RunLaunch launch{.id = NewRunId(++run_counter_),
                   .plan = plan,
                   .query_types = query_types,
                   .statements = statements,
                   .connections = *connections,
                   .started_at = options_.wall_time(),
                   .coordinator_host = "",
                   .shares = shares,
                   .agents = idle,
                   .names = idle_names,
                   .rows = std::move(rows)};
  if (char host[256] = {}; gethostname(host, sizeof(host) - 1) == 0) {
    launch.coordinator_host = host;
  }
  ProbeSession probe = options_.probe_factory->Start(
      launch.id, plan, probe_target, [this] { probe_reading_arrived_.store(true); });
  auto run = std::make_shared<RunController>(environment_, std::move(launch), std::move(probe));
  runs_[run->id()] = run;
  latest_run_ = run->id();
  response.set_run_id(run->id());
  for (const std::string& name : run->participants()) response.add_agents(name);
  Log(absl::StrCat("run ", run->id(), " started: plan '", plan.name(), "' across ",
                   run->participants().size(), " agent", run->participants().size() == 1 ? "" : "s",
                   " (", absl::StrJoin(run->participants(), ", "), ")"));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Impl::Watch(grpc::ServerContext* context,
                                             const v1::WatchRequest& request,
                                             grpc::ServerWriter<v1::RunProgress>& writer) {
  std::shared_ptr<RunController> run;
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
                            [&] { return run->progress().count() > next || run->done(); });
      batch = run->progress().Since(next);
      done = run->done();
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
  std::shared_ptr<RunController> run = FindRunLocked(request.run_id());
  if (run == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no run '", request.run_id(), "'"));
  }
  if (run->done() || run->stopping()) return grpc::Status::OK;
  // The run ends once the agents confirm with their final reports, which carry what they did
  // until they stopped; Tick ends it anyway after stop_grace.
  run->Stop(v1::END_REASON_STOPPED, "stop requested");
  Log(absl::StrCat("run ", run->id(), ": stop requested"));
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Impl::ListAgents(v1::ListAgentsResponse& response) {
  std::lock_guard lock(mu_);
  agents_.List(clock_.Now(), response);
  return grpc::Status::OK;
}

grpc::Status CoordinatorService::Impl::GetReport(const v1::GetReportRequest& request,
                                                 v1::RunReport& response) {
  std::lock_guard lock(mu_);
  std::shared_ptr<RunController> run = FindRunLocked(request.run_id());
  if (run == nullptr) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no run '", request.run_id(), "'"));
  }
  response = run->Report();
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

}  // namespace dbload
