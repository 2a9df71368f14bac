#include "coordinator/run_controller.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/field_error.h"
#include "coordinator/loss_bound.h"
#include "coordinator/metrics_exporter.h"
#include "coordinator/plan_admission.h"
#include "coordinator/saturation.h"
#include "plan/durations.h"
#include "plan/plan_limits.h"
#include "plan/session_settings.h"
#include "proto/run_outcome.h"

namespace dbload {

namespace {

double Seconds(Nanos nanos) { return static_cast<double>(nanos) / kSecond; }

v1::CoordinatorMessage StartLoadMessage(const std::string& run_id) {
  v1::CoordinatorMessage message;
  message.mutable_start_load()->set_run_id(run_id);
  return message;
}

// How long a run whose agents have all finished waits for the probe's reading after the load,
// and how long a new run's assignments wait for its first reading.
constexpr Nanos kProbeFinalWait = 3 * kSecond;
constexpr Nanos kProbeFirstWait = 2 * kSecond;
// How soon the probe reads again when its reading after the load still listed dbload's
// sessions in the database.
constexpr std::chrono::milliseconds kSessionsLeavingRereadAfter(100);
// An agent joins a running run only if at least this much of its duration is left.
constexpr Nanos kMinJoinTime = 2 * kSecond;

}  // namespace

RunController::RunController(RunEnvironment& env, RunLaunch launch, ProbeSession probe)
    : env_(env),
      id_(std::move(launch.id)),
      plan_(std::move(launch.plan)),
      query_types_(std::move(launch.query_types)),
      started_at_(std::move(launch.started_at)),
      statements_(launch.statements),
      probe_(std::move(probe)),
      rows_(std::move(launch.rows)),
      connections_(launch.connections) {
  const v1::Plan& plan = plan_;
  const std::vector<AgentShare>& shares = launch.shares;
  const std::vector<std::string>& names = launch.names;
  std::vector<RunAggregator::AgentSpec> specs;
  if (!shares.empty()) {
    shares_ = RunShares(shares.back().spare_first_slot, shares.back().total_slots);
  }
  for (const AgentShare& share : shares) {
    AddParticipant(names[share.agent]);
    shares_.AssignClients(names[share.agent], share.clients);
    specs.push_back({.name = names[share.agent],
                     .query_budget = share.queries,
                     .stage_budgets = share.stage_queries,
                     .cores = launch.agents[share.agent]->hello.cores()});
  }
  if (plan.load().has_open()) {
    const double peak = PeakOf(plan, /*rate=*/true).value;
    for (const AgentShare& share : shares) {
      shares_.AssignRate(names[share.agent],
                         plan.stages_size() > 0 ? share.rate_fraction * peak : share.rate);
    }
  }
  aggregator_.emplace(id_, plan, query_types_, specs);
  const v1::AbortRules& abort = plan.abort();
  if (abort.p99_above_ns() > 0 || abort.error_rate_above() > 0 || abort.achieved_below() > 0) {
    abort_monitor_.emplace(abort, Seconds(plan.warmup_ns()));
  }
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (!plan.stages(i).has_knee()) continue;
    knees_.emplace(
        static_cast<uint32_t>(i + 1),
        KneeSearch(plan.stages(i).knee(), plan.load().has_open(), plan.load().has_closed()));
  }
  started_ = env_.clock.Now();
  manifest_.set_dbload_version(DBLOAD_VERSION_STRING);
  manifest_.set_seed(plan.seed());
  if (const v1::Target connections = TargetForRun(plan);
      connections.isolation() != v1::ISOLATION_UNSPECIFIED || connections.session_size() > 0) {
    if (connections.isolation() != v1::ISOLATION_UNSPECIFIED) {
      manifest_.set_isolation(absl::AsciiStrToLower(v1::Isolation_Name(connections.isolation())));
    }
    *manifest_.mutable_session() = connections.session();
  }
  if (!launch.coordinator_host.empty()) manifest_.set_coordinator_host(launch.coordinator_host);
  for (const AgentShare& share : shares) {
    const v1::AgentHello& hello = launch.agents[share.agent]->hello;
    v1::RunManifest::AgentHost& host = *manifest_.add_agents();
    host.set_name(names[share.agent]);
    host.set_host(hello.host());
    host.set_cores(hello.cores());
    host.set_version(hello.version());
  }
  for (const AgentShare& share : shares) {
    AgentConn& agent = *launch.agents[share.agent];
    v1::CoordinatorMessage message;
    v1::Assignment& assignment = *message.mutable_assign();
    assignment.set_run_id(id_);
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
    assignment.set_dead_man_timeout_ns(env_.dead_man_timeout);
    assignment.set_queries(share.queries);
    for (uint64_t queries : share.stage_queries) assignment.add_stage_queries(queries);
    agent.run_id = id_;
    agent.participant = names[share.agent];
    held_assignments_.emplace_back(names[share.agent], std::move(message));
  }
  hold_deadline_ = env_.clock.Now() + kProbeFirstWait;
  rows_.CountBefore();
  MaybeReleaseAssignments();
  last_saved_ = started_;
  // (A probe quick enough to have read max_connections already may have refused the run.)
  if (env_.saver.enabled() && !done_) {
    v1::RunReport so_far = aggregator_->ReportSoFar("running", started_at_);
    SetRunState(so_far, v1::RUN_STATE_RUNNING);
    env_.saver.Save(std::move(so_far), id_);
  }
  if (env_.metrics != nullptr && !done_) {
    env_.metrics->SetRunState(id_, plan.scenario(), RunStateText(v1::RUN_STATE_RUNNING));
  }
}

RunController::RunController(RunEnvironment& env, v1::RunReport report) : env_(env) {
  RestoredRun restored = Restore(report);
  id_ = report.run_id();
  plan_ = report.plan();
  started_at_ = report.started_at();
  done_ = true;
  state_ = restored.run_state;
  report_ = std::move(report);
  PushProgress(std::move(restored.progress));
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
bool RunController::WantsJoiner(Nanos now) const {
  if (done_ || stop_sent_at_ || !failure_.empty() || plan_.stages_size() > 0 ||
      plan_.prepare_only() || plan_.stop().duration_ns() <= 0 ||
      started_ + plan_.stop().duration_ns() - now < kMinJoinTime) {
    return false;
  }
  return lost_.size() > joined_at_s_.size();  // replaces lost agents only
}

void RunController::Tick(Nanos now) {
  if (done_) return;
  MaybeReleaseAssignments();
  if (!held_assignments_.empty()) return;  // its load has not started
  TakeProbeReadings();
  if (!interval_due_) {
    interval_due_ = now;
    close_scan_from_ = 0;
  }
  MaybeCloseInterval(now);
  if (stop_sent_at_ && now - *stop_sent_at_ >= env_.stop_grace) {
    MarkUnfinishedLost(absl::StrCat("no final report within ", FormatDurationNanos(env_.stop_grace),
                                    " of the stop"),
                       now);
  }
  MaybeFinish();
}

void RunController::OnProbeReading() {
  if (done_) return;
  MaybeReleaseAssignments();
  MaybeFinish();  // returns at once unless every agent is done
}

void RunController::Stop(v1::EndReasonKind why, const std::string& told_agents) {
  stop_kind_ = why;
  stop_reason_ = why == v1::END_REASON_STOPPED ? "stopped" : "interrupted";
  stop_sent_at_ = env_.clock.Now();
  SendStop(told_agents);
}

void RunController::EndWithoutFinalReports(const std::string& why) {
  if (done_) return;
  MarkUnfinishedLost(why, env_.clock.Now());
  FinishRun();
}

void RunController::MarkUnfinishedLost(const std::string& why, Nanos now) {
  for (const std::string& name : participants_) {
    if (!aggregator_->agents().at(name).final) {
      lost_.emplace(name, why);
      lost_at_.emplace(name, now);
    }
  }
}

v1::RunReport RunController::Report() {
  if (done_) return report_;
  v1::RunReport report = aggregator_->ReportSoFar("running", started_at_);
  CompleteReport(report);
  report.set_run_id(id_);
  SetRunState(report, v1::RUN_STATE_RUNNING);
  return report;
}

// After losing an agent, the load is split again over the agents still running it, so that the
// database keeps getting the plan's load: an open loop's rate by capacity, as at the start; a
// closed loop's lost clients spread over the survivors, on the run's spare slots (the lost
// agent's own slots may hold rows it inserted or ids it consumed). Plans with stages keep their
// split. Query shares are not moved: what the lost agent ran but never reported is unknown, and
// the report says the run is degraded.
void RunController::Resplit() {
  if (done_ || plan_.stages_size() > 0) return;
  const std::vector<std::string> survivors = WorkingParticipants();
  if (survivors.empty()) return;
  if (plan_.load().has_closed()) {
    std::vector<std::string> lost;
    for (const auto& [name, why] : lost_) lost.push_back(name);
    RunShares::ClientsMoved moved = shares_.MoveClientsOf(lost, survivors);
    if (moved.orphaned == 0) return;
    if (!moved.moved) {
      Log(absl::StrCat("run ", id_, ": ", moved.orphaned, " clients of lost agents are not moved: ",
                       "the run has ", shares_.spare_slots_left(), " spare slots left"));
      return;
    }
    SendChanges(std::move(moved.changes));
    Log(absl::StrCat("run ", id_, ": ", moved.orphaned, " clients of lost agents moved to ",
                     absl::StrJoin(survivors, ", ")));
    return;
  }
  std::vector<double> capacities;
  for (const std::string& name : survivors) {
    capacities.push_back(ParticipantConn(name)->hello.capacity());
  }
  SendChanges(shares_.SplitRate(plan_.load().open().rate(), survivors, capacities));
  Log(absl::StrCat("run ", id_, ": the rate ", plan_.load().open().rate(),
                   "/s is split again over ", absl::StrJoin(survivors, ", ")));
}

void RunController::SendChanges(std::vector<ShareChange> changes) {
  for (ShareChange& change : changes) {
    v1::CoordinatorMessage message;
    *message.mutable_change() = std::move(change.change);
    message.mutable_change()->set_run_id(id_);
    AgentRegistry::Enqueue(*ParticipantConn(change.participant), std::move(message));
  }
}

void RunController::SendToRun(const v1::CoordinatorMessage& message) {
  for (const std::string& name : participants_) {
    if (AgentConn* agent = ParticipantConn(name); agent != nullptr) {
      AgentRegistry::Enqueue(*agent, message);
    }
  }
}

AgentConn* RunController::ParticipantConn(const std::string& participant) const {
  const auto renamed = connection_of_.find(participant);
  return env_.agents.Working(renamed == connection_of_.end() ? participant : renamed->second, id_,
                             participant);
}

bool RunController::Working(const std::string& participant) const {
  return !lost_.contains(participant) && !aggregator_->agents().at(participant).final &&
         ParticipantConn(participant) != nullptr;
}

std::vector<std::string> RunController::WorkingParticipants() const {
  std::vector<std::string> working;
  for (const std::string& name : participants_) {
    if (Working(name)) working.push_back(name);
  }
  return working;
}

void RunController::AddParticipant(const std::string& participant) {
  participant_index_.emplace(participant, participants_.size());
  participants_.push_back(participant);
}

bool RunController::AtPlannedEnd(const std::string& participant) const {
  return plan_.stop().duration_ns() > 0 &&
         aggregator_->agents().at(participant).elapsed_s >=
             Seconds(plan_.warmup_ns() + plan_.stop().duration_ns()) - 1e-3;
}

bool RunController::Join(const std::string& name, AgentConn& agent, Nanos now) {
  const v1::Plan& plan = plan_;
  const std::vector<std::string> survivors = WorkingParticipants();
  std::string participant = name;
  for (int life = 2; aggregator_->agents().contains(participant); ++life) {
    participant = absl::StrCat(name, "#", life);
  }
  // The query shares lost agents left unused, by their last reports.
  std::vector<std::string> handing_over;
  uint64_t queries = 0;
  if (plan.stop().queries() > 0) {
    for (const auto& [lost, why] : lost_) {
      if (shares_handed_over_.contains(lost)) continue;
      const AgentProgress& progress = aggregator_->agents().at(lost);
      queries += progress.query_budget - std::min(progress.query_budget, progress.budget_used);
      handing_over.push_back(lost);
    }
    if (queries == 0) return false;
  }
  const bool open = plan.load().has_open();
  std::vector<double> capacities;
  for (const std::string& survivor : survivors) {
    capacities.push_back(ParticipantConn(survivor)->hello.capacity());
  }
  capacities.push_back(agent.hello.capacity());
  RunShares::Join join = shares_.Take(participant, plan, survivors, capacities);
  if (!join.taken) {
    if (join.spare_needed > 0) {
      Log(absl::StrCat("run ", id_, ": agent ", name, " not taken in: ", join.spare_needed,
                       " spare slots needed, ", shares_.spare_slots_left(), " left"));
    }
    return false;
  }
  const v1::LoadShare& joiner_load = join.load;
  const Nanos elapsed = now - started_;
  v1::CoordinatorMessage message;
  v1::Assignment& assignment = *message.mutable_assign();
  assignment.set_run_id(id_);
  *assignment.mutable_plan() = plan;
  assignment.mutable_plan()->set_warmup_ns(std::max<Nanos>(0, plan.warmup_ns() - elapsed));
  assignment.mutable_plan()->mutable_stop()->set_duration_ns(plan.stop().duration_ns() - elapsed);
  assignment.set_agent_index(static_cast<uint32_t>(survivors.size()));
  assignment.set_agent_count(static_cast<uint32_t>(survivors.size() + 1));
  assignment.set_first_slot(join.first_slot);
  assignment.set_total_slots(shares_.total_slots());
  *assignment.mutable_load() = joiner_load;
  assignment.set_dead_man_timeout_ns(env_.dead_man_timeout);
  assignment.set_queries(queries);
  shares_handed_over_.insert(handing_over.begin(), handing_over.end());
  SendChanges(std::move(join.changes));
  AddParticipant(participant);
  connection_of_[participant] = name;
  joined_at_s_[participant] = Seconds(elapsed);
  aggregator_->AddAgent(
      {.name = participant, .query_budget = queries, .cores = agent.hello.cores()});
  agent.run_id = id_;
  agent.participant = participant;
  AgentRegistry::Enqueue(agent, std::move(message));
  Log(absl::StrCat(
      "run ", id_, ": agent ", name, " joined",
      participant == name ? "" : absl::StrCat(" as ", participant), " with ",
      open ? absl::StrCat(joiner_load.rate(), "/s")
           : absl::StrCat(joiner_load.clients(), " clients"),
      queries > 0 ? absl::StrCat(" and ", queries, " queries") : "",
      absl::StrFormat(", for the remaining %.1f s", Seconds(plan.stop().duration_ns() - elapsed))));
  return true;
}

void RunController::SendStop(const std::string& reason) {
  MaybeReleaseAssignments(/*force=*/true);  // a stop must find the agents assigned
  v1::CoordinatorMessage message;
  message.mutable_stop()->set_run_id(id_);
  message.mutable_stop()->set_reason(reason);
  SendToRun(message);
}

// Judges a knee search's step once every agent still working has reported `every` of it, and
// tells the agents the next step (or the end of the search).
void RunController::AdvanceKnees() {
  for (auto& [stage, search] : knees_) {
    if (search.done()) continue;
    const RunAggregator::KneeTally* tally = aggregator_->knee_tally(stage, search.step());
    if (tally == nullptr) continue;
    const double every_s = Seconds(plan_.stages(stage - 1).knee().every_ns());
    KneeStepCounts counts{
        .executed = tally->executed, .errors = tally->errors, .response = &tally->response};
    bool complete = true;
    for (const std::string& name : participants_) {
      if (lost_.contains(name) || aggregator_->agents().at(name).final) continue;
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
    Log(absl::StrCat("run ", id_, ": knee step ", search.steps().size(), " at ", judged.level(),
                     judged.met() ? " met the SLO" : " missed: ", judged.missed()));
    v1::CoordinatorMessage message;
    v1::LoadChange& change = *message.mutable_change();
    change.set_run_id(id_);
    if (search.done()) {
      change.set_knee_done(true);
      Log(absl::StrCat("run ", id_, ": knee search done: ", search.knee()));
    } else {
      change.set_knee_step(search.step());
      change.set_knee_level(search.level());
    }
    SendToRun(message);
  }
}

void RunController::FailRun(const std::string& message) {
  // The totals can no longer be exact: stop the load now rather than let it run for a report
  // that would be wrong.
  failure_ = message;
  Log(absl::StrCat("run ", id_, " failed: ", message));
  SendStop(absl::StrCat("run failed: ", message));
  FinishRun();
}

void RunController::MaybeFinish() {
  if (done_) return;
  for (const std::string& name : participants_) {
    if (!aggregator_->agents().at(name).final && lost_.count(name) == 0) return;
  }
  // The rows after the load, counted meanwhile, for as long as the database takes.
  const bool rows_counted = !EndsAsPlanned() || rows_.CountAfter();
  if (probe_.active()) {
    // One more reading after the load, so that the counters cover its last second, once the
    // run's sessions have left the database: the agents closed theirs before their final
    // reports, but a backend exits (and PostgreSQL's publishes its last counts) when the server
    // gets to it. A probe that is down is not waited for, nor one slower than kProbeFinalWait.
    const Nanos now = env_.clock.Now();
    if (!load_ended_at_) {
      load_ended_at_ = now;
      probe_.RequestReading();
    }
    TakeProbeReadings();
    const bool read_after_load = probe_.last_reading_s() >= Seconds(*load_ended_at_ - started_);
    if (!(read_after_load && probe_.LoadSessionsGone()) && probe_.up() &&
        now - *load_ended_at_ < kProbeFinalWait) {
      if (read_after_load) probe_.RequestReading(kSessionsLeavingRereadAfter);
      return;
    }
  }
  if (!rows_counted) return;
  FinishRun();
}

void RunController::TakeProbeReadings() {
  if (!probe_.active()) return;
  const std::vector<ProbeReading> readings = probe_.TakeReadings(started_);
  if (env_.metrics == nullptr) return;
  for (const ProbeReading& reading : readings) {
    env_.metrics->OnProbeReading(id_, plan_.scenario(), reading.values);
  }
  env_.metrics->SetProbeUp(id_, plan_.scenario(), probe_.up());
}

void RunController::MaybeReleaseAssignments(bool force) {
  if (held_assignments_.empty()) return;
  TakeProbeReadings();
  const Nanos now = env_.clock.Now();
  if (!force && !probe_.FirstReadingIn() && now < hold_deadline_) return;
  if (!force && !rows_.BeforeIn()) return;
  if (RefusedByServer()) return;
  // The run's clock starts with its load; the probe's readings so far, kept from the run's
  // launch, are then slightly negative.
  probe_read_before_load_ = probe_.active() && probe_.has_readings();
  probe_.MoveClockStart(Seconds(now - started_));
  started_ = now;
  last_saved_ = now;
  for (auto& [name, message] : held_assignments_) {
    if (AgentConn* agent = env_.agents.AssignedTo(name, id_)) {
      AgentRegistry::Enqueue(*agent, std::move(message));
    }
  }
  held_assignments_.clear();
}

bool RunController::RefusedByServer() {
  const std::optional<uint64_t> max_connections = probe_.MaxConnections();
  if (!max_connections) return false;
  const absl::Status fits = CheckServerConnections(plan_, connections_, *max_connections);
  if (fits.ok()) return false;
  // No agent has its assignment yet: none starts, and each is free for the next run at once.
  for (const auto& [name, message] : held_assignments_) {
    if (AgentConn* agent = env_.agents.AssignedTo(name, id_)) agent->run_id.clear();
  }
  held_assignments_.clear();
  refusal_ = absl::StrCat("target: ", FieldOf(fits).value_or(""), ": ", fits.message());
  Log(absl::StrCat("run ", id_, " refused: ", refusal_));
  FinishRun();
  return true;
}

uint32_t RunController::WorkingAgents() const {
  return static_cast<uint32_t>(participants_.size() - lost_.size());
}

void RunController::PushProgress(v1::RunProgress progress) {
  progress_.Push(std::move(progress));
  env_.progress_pushed();
}

void RunController::OnReport(const std::string& agent_name, const AgentConn& agent,
                             const v1::AgentReport& agent_report) {
  if (done_) return;  // late (e.g. after a stop deadline): the report is already written
  const std::string& name = agent.participant.empty() ? agent_name : agent.participant;
  const auto index = participant_index_.find(name);
  if (index == participant_index_.end()) {
    // Someone else's run: refusing the report is enough, failing their run would not be fair.
    Log(absl::StrCat("agent ", agent_name, ": report for run ", id_, " ignored: not part of it"));
    return;
  }
  // An agent that joined late counts its time from its own start: on the run's clock, its
  // reports are that much later.
  v1::AgentReport shifted;
  const v1::AgentReport* report = &agent_report;
  if (auto joined = joined_at_s_.find(name); joined != joined_at_s_.end()) {
    shifted = agent_report;
    shifted.set_elapsed_s(agent_report.elapsed_s() + joined->second);
    report = &shifted;
  }
  // The manifest lists the participants assigned at the start, in their order.
  if (const size_t i = index->second; !report->target_address().empty() &&
                                      i < static_cast<size_t>(manifest_.agents_size()) &&
                                      manifest_.agents(i).target_address().empty()) {
    manifest_.mutable_agents(i)->set_target_address(report->target_address());
  }
  if (report->final() && report->target_refused()) {
    // The agent refused its target (a host name resolved outside its --allow-target, or a list
    // that changed since its hello): the run cannot be the plan's, so it fails now and the
    // others stop; every refusing agent's reason goes into the end reason.
    const std::string why = report->fatal_error();
    if (failure_.empty()) {
      failure_ = why;
      Log(absl::StrCat("run ", id_, " failed: ", why));
      SendStop(absl::StrCat("run failed: ", why));
    } else if (!absl::StrContains(failure_, why)) {
      absl::StrAppend(&failure_, "; ", why);
    }
  }
  const uint64_t previous_sequence = aggregator_->agents().at(name).last_sequence;
  if (absl::Status merged = aggregator_->AddReport(name, *report); !merged.ok()) {
    FailRun(std::string(merged.message()));
    return;
  }
  if (aggregator_->agents().at(name).last_sequence != previous_sequence) {  // not a repeat
    AgentGauges& gauges = agent_gauges_[name];
    gauges.in_flight = report->in_flight();
    gauges.connections = report->connections();
    gauges.cpu_seconds += report->cpu_seconds();
    if (report->interval_s() > 0 && agent.hello.cores() > 0) {
      gauges.cpu_utilization = report->cpu_seconds() / (report->interval_s() * agent.hello.cores());
    }
    AdvanceKnees();
    if (index->second < close_scan_from_ && AtPlannedEnd(name)) close_scan_from_ = index->second;
  }
  MaybeCloseInterval(env_.clock.Now());
  if (report->final()) {  // it is no longer waited for
    MaybeStartLoad();
    MaybeCloseSessions();
  }
  MaybeFinish();
}

void RunController::OnSessionsReady(const std::string& agent_name, const AgentConn& agent) {
  if (done_) return;
  const std::string& name = agent.participant.empty() ? agent_name : agent.participant;
  if (!participant_index_.contains(name)) return;
  ready_s_.emplace(name, Seconds(env_.clock.Now() - started_));
  if (!load_started_) {
    MaybeStartLoad();
  } else if (AgentConn* joiner = ParticipantConn(name)) {
    AgentRegistry::Enqueue(*joiner, StartLoadMessage(id_));
  }
}

bool RunController::EveryWorkingParticipant(
    absl::FunctionRef<bool(const std::string&)> said) const {
  for (const std::string& name : participants_) {
    if (!said(name) && Working(name)) return false;
  }
  return true;
}

void RunController::MaybeStartLoad() {
  if (done_ || load_started_ || ready_s_.empty()) return;
  if (!EveryWorkingParticipant([&](const std::string& name) { return ready_s_.contains(name); })) {
    return;
  }
  load_started_ = true;
  SendToRun(StartLoadMessage(id_));
}

void RunController::OnLoadOver(const std::string& agent_name, const AgentConn& agent) {
  if (done_) return;
  const std::string& name = agent.participant.empty() ? agent_name : agent.participant;
  if (!participant_index_.contains(name)) return;
  load_over_.insert(name);
  MaybeCloseSessions();
}

void RunController::MaybeCloseSessions() {
  if (done_ || sessions_closed_ || load_over_.empty()) return;
  if (!EveryWorkingParticipant(
          [&](const std::string& name) { return load_over_.contains(name); })) {
    return;
  }
  sessions_closed_ = true;
  v1::CoordinatorMessage message;
  message.mutable_close_sessions()->set_run_id(id_);
  SendToRun(message);
}

void RunController::OnAgentGone(const std::string& name, const std::string& why) {
  if (done_) return;
  if (aggregator_->agents().at(name).final) return;
  // Whatever it had in flight is no longer ours to show.
  if (auto gauges = agent_gauges_.find(name); gauges != agent_gauges_.end()) {
    gauges->second.in_flight = 0;
    gauges->second.connections = 0;
  }
  if (lost_.emplace(name, why).second) {
    lost_at_.emplace(name, env_.clock.Now());
    lost_clients_[name] = shares_.clients(name);
    Log(absl::StrCat("run ", id_, ": agent ", name, " lost (", why, "); the run is degraded"));
    if (env_.metrics != nullptr) {
      env_.metrics->SetAgentsLost(id_, plan_.scenario(), static_cast<int>(lost_.size()));
    }
    Resplit();
  }
  MaybeStartLoad();  // it is no longer waited for
  MaybeCloseSessions();
  MaybeFinish();
}

}  // namespace dbload
