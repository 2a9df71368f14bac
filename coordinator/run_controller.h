#ifndef DBLOAD_COORDINATOR_RUN_CONTROLLER_H_
#define DBLOAD_COORDINATOR_RUN_CONTROLLER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "base/clock.h"
#include "coordinator/abort_monitor.h"
#include "coordinator/agent_registry.h"
#include "coordinator/knee_search.h"
#include "coordinator/planner.h"
#include "coordinator/probe_session.h"
#include "coordinator/progress_ring.h"
#include "coordinator/row_check.h"
#include "coordinator/run_aggregator.h"
#include "coordinator/run_saver.h"
#include "coordinator/run_shares.h"
#include "dbload/v1/agent.pb.h"
#include "dbload/v1/control.pb.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

class MetricsExporter;

// What every run of one coordinator shares. Everything here is used under the coordinator's
// mutex, as every RunController method is called.
struct RunEnvironment {
  Clock& clock;
  AgentRegistry& agents;
  RunSaver& saver;
  MetricsExporter* metrics = nullptr;           // not owned; may be null
  std::function<void(const std::string&)> log;  // may be empty
  // Sent in every Assignment: an agent that hears nothing from us this long stops by itself.
  Nanos dead_man_timeout = 0;
  // After StopLoad, how long agents have to send their final report.
  Nanos stop_grace = 0;
  // How long past its tick an interval waits for a working agent that has sent nothing since
  // the previous one (0: it closes at the tick). See RunController::Tick.
  Nanos interval_wait = 0;
  // Wakes the watchers: a run pushed progress.
  std::function<void()> progress_pushed;
  // Probes of ended runs, for the coordinator to destroy outside its mutex (their thread may be
  // in a statement).
  std::vector<std::unique_ptr<DatabaseProbe>>* retired_probes = nullptr;
};

// What Submit decided for a new run before any agent hears of it.
struct RunLaunch {
  std::string id;
  dbload::v1::Plan plan;  // resolved and validated
  std::vector<std::string> query_types;
  uint32_t statements = 0;   // prepared on each connection
  uint64_t connections = 0;  // to the target over all agents, EXPLAIN's included
  std::string started_at;    // wall time, for the report
  std::string coordinator_host;
  std::vector<AgentShare> shares;  // SplitPlan over `agents`
  // The idle agents the plan was split over (AgentShare::agent indexes them), and their names.
  std::vector<std::shared_ptr<AgentConn>> agents;
  std::vector<std::string> names;
  // The rows the run's write scenario changes, counted before its load and after it (none
  // unless it declares its changes).
  RowCheck rows;
};

// One run, from its assignments to its report: it sends agents their shares (held until the
// probe's first reading), merges their reports (RunAggregator), judges abort rules and knee
// steps on the merged intervals, splits the load again when agents are lost or join (RunShares),
// publishes its intervals and progress (metrics, watchers, the --state-dir) and ends with one
// report. It reaches agents only through the registry, as participants working for it. Not
// thread-safe: the coordinator calls every method under its mutex.
// A write scenario's rows are counted (RowCheck) before its assignments go out and after the
// last final report, and the run waits for both counts.
class RunController {
 public:
  // A new run: assigns the agents (the assignments are held until the probe has read, or
  // kProbeFirstWait), saves the report so far and publishes the run as running. A probe quick
  // enough to have read max_connections already may have refused it (done() at once).
  RunController(RunEnvironment& env, RunLaunch launch, ProbeSession probe);
  // A run of an earlier life of the coordinator: ended, served with its saved report.
  RunController(RunEnvironment& env, v1::RunReport report);
  RunController(const RunController&) = delete;
  RunController& operator=(const RunController&) = delete;

  const std::string& id() const { return id_; }
  const std::string& started_at() const { return started_at_; }
  const std::vector<std::string>& participants() const { return participants_; }
  bool done() const { return done_; }
  bool stopping() const { return stop_kind_ != v1::END_REASON_UNSPECIFIED; }
  const ProgressRing& progress() const { return progress_; }

  // A report of the run from the agent connected as `agent_name` (working as
  // agent.participant).
  void OnReport(const std::string& agent_name, const AgentConn& agent,
                const v1::AgentReport& report);
  // The agent connected as `agent_name` has its sessions open and waits for StartLoad; once
  // every working participant has, they all get it (one that joined a started run, at once).
  void OnSessionsReady(const std::string& agent_name, const AgentConn& agent);
  // The agent connected as `agent_name` says its load is over and holds its connections open;
  // once every working participant has, they all get CloseSessions.
  void OnLoadOver(const std::string& agent_name, const AgentConn& agent);
  // A participant left (or went silent) before its final report: the run is degraded and its
  // load split again over the others.
  void OnAgentGone(const std::string& participant, const std::string& why);
  // Whether an idle agent could take the place of a lost one now: the run replaces lost agents
  // only, and only when its split can take one (no stages, not a prepare, at least
  // kMinJoinTime of its duration left).
  bool WantsJoiner(Nanos now) const;
  // The idle agent connected as `name` joins; false if the split cannot take it.
  bool Join(const std::string& name, AgentConn& agent, Nanos now);

  // One tick: releases held assignments, takes the probe's readings, closes an interval,
  // gives up on agents silent past the stop grace, and ends the run when it can.
  //
  // The interval closes at the tick if every working agent has a report in it; otherwise when
  // the last of them arrives (OnReport), or interval_wait after the tick (Poll); kFirstReportWait
  // for an agent that has not reported yet. Agents report on their own clocks, and one whose
  // reports arrive around our tick (its start, plus the network's delay) would otherwise land in
  // one interval or the next by chance: one second would lose its share of the rate and the
  // next would hold two of its reports.
  void Tick(Nanos now);
  // Closes an interval that waited interval_wait for an agent's report.
  void Poll(Nanos now);
  // The probe read, or the row check counted: held assignments may go out, and a run waiting
  // for its last reading or count end.
  void OnProbeReading();
  // Tells the agents to stop (`told_agents` says why); the run ends as `why` says (STOPPED: asked
  // to; INTERRUPTED: the coordinator shuts down) once they confirm (or after the stop grace).
  void Stop(v1::EndReasonKind why, const std::string& told_agents);
  // Ends the run now, every participant without its final report lost for `why`.
  void EndWithoutFinalReports(const std::string& why);
  // The report: the final one, or the report so far, marked running.
  v1::RunReport Report();
  // The probe, stopped, for the coordinator to destroy outside its mutex.
  std::unique_ptr<DatabaseProbe> RetireProbe() { return probe_.Retire(); }

 private:
  // What an agent's latest report said about its own state, for the metrics.
  struct AgentGauges {
    uint32_t in_flight = 0;
    uint32_t connections = 0;
    double cpu_seconds = 0;      // reported since the last published interval
    double cpu_utilization = 0;  // of its latest report, as a fraction of its cores
  };

  void Log(const std::string& line) const {
    if (env_.log) env_.log(line);
  }
  void Resplit();
  void SendChanges(std::vector<ShareChange> changes);
  void SendToRun(const v1::CoordinatorMessage& message);
  void SendStop(const std::string& reason);
  // The connection of a participant while it works for the run; null otherwise.
  AgentConn* ParticipantConn(const std::string& participant) const;
  // Participants still running the run: not lost, no final report yet, connected.
  std::vector<std::string> WorkingParticipants() const;
  bool Working(const std::string& participant) const;
  void AddParticipant(const std::string& participant);
  // Whether the participant's latest report reached the end of the plan's duration: only its
  // final report is left to come.
  bool AtPlannedEnd(const std::string& participant) const;
  void MarkUnfinishedLost(const std::string& why, Nanos now);
  void AdvanceKnees();
  void FailRun(const std::string& message);
  void MaybeFinish();
  // Whether `said` holds for every participant still working for the run.
  bool EveryWorkingParticipant(absl::FunctionRef<bool(const std::string&)> said) const;
  // Sends StartLoad once every working participant has said SessionsReady (some has).
  void MaybeStartLoad();
  // Sends CloseSessions once every working participant has said LoadOver (some has).
  void MaybeCloseSessions();
  // Whether the run, its agents all done, ends as its plan says: not stopped, aborted, failed or
  // degraded, no agent's fatal error. Only such a run's rows are counted after its load.
  bool EndsAsPlanned() const;
  void FinishRun();
  void TakeProbeReadings();
  // The probe's readings, the generator's limits and the manifest, into a report of the run.
  void CompleteReport(v1::RunReport& report);
  // The agents lost before their final reports, with the bound on what they ran unreported.
  void AddLostAgents(v1::RunReport& report) const;
  // Sends the held assignments once the probe has read (or failed, or kProbeFirstWait passed).
  void MaybeReleaseAssignments(bool force = false);
  // Finishes the run, unstarted, when the server's max_connections cannot take its connections.
  bool RefusedByServer();
  uint32_t WorkingAgents() const;
  void PushProgress(v1::RunProgress progress);
  void PushIntervals(Nanos now);
  // Closes the interval due since a tick, if every working agent reported or the wait is over.
  void MaybeCloseInterval(Nanos now);
  // The observer that publishes closed intervals to the metrics (null without).
  RunAggregator::IntervalObserver MetricsObserver();

  RunEnvironment& env_;
  std::string id_;
  v1::Plan plan_;
  std::vector<std::string> query_types_;
  std::map<std::string, AgentGauges> agent_gauges_;  // by participant
  // The newest measured intervals, for the live marks: an interval's queued arrivals are
  // judged by what the connections did in the intervals they waited through.
  std::deque<v1::IntervalSample> recent_intervals_;
  std::vector<std::string> participants_;  // assigned, in agent_index order
  absl::flat_hash_map<std::string, size_t> participant_index_;  // into participants_
  Nanos started_ = 0;
  std::string started_at_;
  // Reset when the run ends: only its report is kept.
  std::optional<RunAggregator> aggregator_;
  std::optional<AbortMonitor> abort_monitor_;  // when the plan has abort rules
  std::map<uint32_t, KneeSearch> knees_;       // by 1-based stage, for knee-search stages
  std::map<std::string, std::string> lost_;    // participant -> why, lost before its final
  // For the bound on what lost agents ran unreported: when each was declared lost, and its
  // clients then (closed loop); the highest rate each was given is in `shares_`.
  std::map<std::string, Nanos> lost_at_;
  std::map<std::string, uint32_t> lost_clients_;
  // Statements prepared on each connection (PostgreSQL commits 2 for each, and 1 per start-up).
  uint32_t statements_ = 0;
  // The probe read before the assignments went out: its first reading precedes the load (it is
  // stamped against the time of the submit, not of the load's start, so its elapsed time alone
  // does not tell).
  bool probe_read_before_load_ = false;
  // Each participant's clients and highest rate, and the spare slots for moving a lost agent's
  // clients and for agents that join (plans without stages).
  RunShares shares_;
  // Agents that joined the running run (to replace lost ones), by participant: their connection
  // name, and when they joined (seconds after the start; added to their reports' elapsed_s).
  std::map<std::string, std::string> connection_of_;
  std::map<std::string, double> joined_at_s_;
  std::set<std::string> shares_handed_over_;  // lost agents whose unused queries a joiner took
  // Once asked to stop (or aborted): why, and its words ("stopped", "aborted: p99 …").
  v1::EndReasonKind stop_kind_ = v1::END_REASON_UNSPECIFIED;
  std::string stop_reason_;
  std::optional<Nanos> stop_sent_at_;
  Nanos last_saved_ = 0;  // --state-dir: when the report so far was last written
  std::optional<Nanos> interval_due_;  // the tick whose interval waits for an agent's report
  // Participants before this index have their part of the due interval in, or are no longer
  // waited for; that holds until it closes (reports stay, the wait only grows, an agent that
  // leaves is not waited for), except for an agent whose new report reaches the plan's end
  // (OnReport moves the index back). So each report costs the check of one participant, not
  // of all: at a thousand agents that was a million checks a second.
  size_t close_scan_from_ = 0;
  // Participants whose sessions are open, and when (seconds after started_, for the report's
  // AgentSummary.ready_s); whether StartLoad went out.
  std::map<std::string, double> ready_s_;
  bool load_started_ = false;
  // Participants whose load is over, their connections held open (OnLoadOver); whether
  // CloseSessions went out.
  std::set<std::string> load_over_;
  bool sessions_closed_ = false;
  std::string failure_;   // a report that could not be merged
  bool done_ = false;
  v1::RunState state_ = v1::RUN_STATE_RUNNING;
  v1::RunReport report_;   // once done
  ProgressRing progress_;  // for watchers
  // The database probe (inactive for the noop driver or when the plan turns it off), what it
  // read, and what the server said it is.
  ProbeSession probe_;
  // When every agent had finished: the run then waits (briefly) for a probe reading taken after
  // the load, so that the last stage's deltas are whole.
  std::optional<Nanos> load_ended_at_;
  // Assignments held back until the probe's first reading (or kProbeFirstWait), so that the
  // run's counters start from before its load.
  std::vector<std::pair<std::string, v1::CoordinatorMessage>> held_assignments_;
  // The rows the run changes, counted before its load and after its last final report.
  RowCheck rows_;
  Nanos hold_deadline_ = 0;
  // The run's connections to the target over all agents (EXPLAIN's included), checked against
  // the server's max_connections once the probe has read it; and why the run was refused then.
  uint64_t connections_ = 0;
  std::string refusal_;
  v1::RunManifest manifest_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_RUN_CONTROLLER_H_
