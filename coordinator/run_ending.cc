// RunController (run_controller.h), the end of a run: its end reason and state, its report
// (the merged counts, the probe's readings, the generator's limits, the lost agents' bounds,
// the commits reconciled, the rows changed, the knee steps). Kept apart from run_controller.cc,
// which runs the run.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/loss_bound.h"
#include "coordinator/metrics_exporter.h"
#include "coordinator/run_controller.h"
#include "coordinator/saturation.h"
#include "proto/run_outcome.h"

namespace dbload {

namespace {

double Seconds(Nanos nanos) { return static_cast<double>(nanos) / kSecond; }

}  // namespace

bool RunController::EndsAsPlanned() const {
  if (!refusal_.empty() || !failure_.empty() || !stop_reason_.empty() || !lost_.empty()) {
    return false;
  }
  for (const std::string& name : participants_) {
    if (!aggregator_->agents().at(name).fatal_error.empty()) return false;
  }
  return !participants_.empty();
}

void RunController::FinishRun() {
  if (done_) return;
  const Nanos now = env_.clock.Now();
  interval_due_.reset();
  PushIntervals(now);

  std::vector<std::string> agent_reasons;
  // The run's kind when its agents decide it: the first agent's (in agent order) that gave a
  // reason, as the joined text begins with it.
  v1::EndReasonKind agents_kind = v1::END_REASON_UNSPECIFIED;
  bool fatal = false;
  for (const std::string& name : participants_) {
    const AgentProgress& progress = aggregator_->agents().at(name);
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
      if (agent_reasons.empty()) {
        agents_kind =
            progress.end_reason.empty() ? v1::END_REASON_FATAL_ERROR : progress.end_reason_kind;
      }
      agent_reasons.push_back(reason);
    }
  }
  std::string end_reason;
  v1::EndReasonKind end_kind = v1::END_REASON_UNSPECIFIED;
  if (!refusal_.empty()) {
    end_reason = absl::StrCat("not started: ", refusal_);
    end_kind = v1::END_REASON_NOT_STARTED;
    state_ = v1::RUN_STATE_FAILED;
  } else if (!failure_.empty()) {
    end_reason = absl::StrCat("failed: ", failure_);
    end_kind = v1::END_REASON_FAILED;
    state_ = v1::RUN_STATE_FAILED;
  } else if (stopping()) {
    end_reason = stop_reason_;
    end_kind = stop_kind_;
    state_ = stop_kind_ == v1::END_REASON_ABORTED   ? v1::RUN_STATE_ABORTED
             : stop_kind_ == v1::END_REASON_STOPPED ? v1::RUN_STATE_STOPPED
                                                    : v1::RUN_STATE_INTERRUPTED;
  } else if (agent_reasons.empty()) {
    end_reason = "failed: every agent was lost";
    end_kind = v1::END_REASON_AGENTS_LOST;
    state_ = v1::RUN_STATE_FAILED;
  } else {
    // Agents usually agree ("duration"); with a query split one may end by "queries" and another
    // by "duration", and the report says both.
    end_reason = absl::StrJoin(agent_reasons, ", ");
    end_kind = agents_kind;
    state_ = fatal ? v1::RUN_STATE_FAILED : v1::RUN_STATE_FINISHED;
  }
  if (!lost_.empty() && failure_.empty()) {
    std::vector<std::string> lost;
    for (const auto& [name, why] : lost_) {
      lost.push_back(absl::StrCat("agent ", name, " lost (", why, ")"));
    }
    absl::StrAppend(&end_reason, "; degraded: ", absl::StrJoin(lost, ", "));
  }

  report_ =
      aggregator_->Finish(Seconds(now - started_), end_reason, started_at_, MetricsObserver());
  report_.set_run_id(id_);
  SetRunState(report_, state_);
  report_.set_end_reason_kind(end_kind);
  TakeProbeReadings();
  if (auto probe = probe_.Retire()) env_.retired_probes->push_back(std::move(probe));
  CompleteReport(report_);
  if (EndsAsPlanned()) {
    if (absl::Status rows = rows_.FillReport(report_); !rows.ok()) {
      Log(absl::StrCat("run ", id_, ": ", rows.message()));
    }
  }
  {
    // The database's count of commits against the agents' (and their connections' own: every
    // connection opened, reconnects included, did its start-up and prepared the statements).
    // A transaction the workload rolled back by design completed, but committed nothing.
    int64_t reported = 0;
    ConnectionSetUp set_up;
    for (const auto& [name, progress] : aggregator_->agents()) {
      reported += static_cast<int64_t>(progress.executed + progress.warmup_executed) -
                  static_cast<int64_t>(progress.rolled_back);
      if (progress.connections_opened > 0) {
        set_up.connections_opened += static_cast<int64_t>(progress.connections_opened);
        set_up.statements_prepared += static_cast<int64_t>(progress.statements_prepared);
      } else {  // an older agent: each of its connections once, each preparing every statement
        set_up.connections_opened += progress.max_connections;
        set_up.statements_prepared += int64_t{progress.max_connections} * statements_;
      }
    }
    ReconcileCommits(reported, set_up, probe_read_before_load_,
                     Seconds(load_ended_at_.value_or(now) - started_), report_);
  }
  for (const auto& [stage, search] : knees_) {
    v1::StageReport& out = *report_.mutable_stages(static_cast<int>(stage) - 1);
    out.set_knee(search.knee());
    for (const v1::KneeStep& step : search.steps()) *out.add_knee_steps() = step;
  }
  aggregator_.reset();  // the merged histograms live on in the report only
  env_.saver.Save(report_, id_);
  // Agents that have not sent their final report (stopped, or the run failed) stay busy until
  // they do: they may still be running the load.
  done_ = true;
  v1::RunProgress progress;
  progress.set_run_id(id_);
  progress.set_run_state(state_);
  // The progress has always said "interrupted" for a stop too, and older clients read it.
  progress.set_state(
      RunStateText(state_ == v1::RUN_STATE_STOPPED ? v1::RUN_STATE_INTERRUPTED : state_));
  progress.set_agents(WorkingAgents());
  progress.set_end_reason(end_reason);
  progress.set_end_reason_kind(end_kind);
  progress.set_degraded(!lost_.empty());
  const std::string logged_state = progress.state();
  PushProgress(std::move(progress));
  if (env_.metrics != nullptr) {
    // The metrics tell a stop asked for ("stopped") from a coordinator shutting down
    // ("interrupted").
    env_.metrics->SetRunState(id_, plan_.scenario(), RunStateText(state_));
    env_.metrics->SetAgentsLost(id_, plan_.scenario(), static_cast<int>(lost_.size()));
  }
  Log(absl::StrCat("run ", id_, " ", logged_state, ": ", end_reason, "; executed ",
                   report_.executed(), ", errors ", report_.errors()));
}

void RunController::CompleteReport(v1::RunReport& report) {
  for (v1::AgentSummary& agent : *report.mutable_agents()) {
    if (auto ready = ready_s_.find(agent.name()); ready != ready_s_.end()) {
      agent.set_ready_s(ready->second);
    }
  }
  AddLostAgents(report);
  probe_.FillReport(report);
  MarkGeneratorLimits(plan_.generator(), report);
  *report.mutable_manifest() = manifest_;
  probe_.FillManifest(*report.mutable_manifest());
}

void RunController::AddLostAgents(v1::RunReport& report) const {
  report.clear_lost_agents();
  report.set_degraded(!lost_.empty());
  if (lost_.empty() || !aggregator_) return;
  const bool open = plan_.load().has_open();
  const double per_client_rate = open ? 0 : BestPerClientRate(report);
  for (const auto& [name, why] : lost_) {
    const AgentProgress& progress = aggregator_->agents().at(name);
    LostAgentFacts facts{.name = name,
                         .why = why,
                         .last_report_s = progress.elapsed_s,
                         .dead_man_s = Seconds(env_.dead_man_timeout),
                         .open_loop = open,
                         .poisson = open && plan_.load().open().arrival() == v1::OpenLoad::POISSON,
                         .wanted_arrivals = progress.wanted_arrivals,
                         .completed = progress.executed + progress.errors +
                                      progress.warmup_executed + progress.warmup_errors,
                         .in_flight = progress.in_flight,
                         .per_client_rate = per_client_rate};
    if (auto at = lost_at_.find(name); at != lost_at_.end()) {
      facts.lost_s = std::max(progress.elapsed_s, Seconds(at->second - started_));
    }
    if (std::optional<double> rate = shares_.highest_rate(name)) facts.rate = *rate;
    if (auto clients = lost_clients_.find(name); clients != lost_clients_.end()) {
      facts.clients = clients->second;
    }
    facts.clients = std::max(facts.clients, progress.clients);
    *report.add_lost_agents() = BoundLostAgent(facts);
  }
}

}  // namespace dbload
