// RunController (run_controller.h), the run's time series: when an interval closes (every
// working agent has reported, or the wait is over), what a closed one does (abort rules, the
// watchers' progress, the report so far in the --state-dir) and how it reaches the metrics.
// Kept apart from run_controller.cc, which runs the run.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "coordinator/metrics_exporter.h"
#include "coordinator/run_controller.h"
#include "coordinator/saturation.h"
#include "proto/run_outcome.h"

namespace dbload {

namespace {

double Seconds(Nanos nanos) { return static_cast<double>(nanos) / kSecond; }

// How long an interval waits for an agent's first report (see RunController::Tick): its pool's
// connections are made first, and many through a proxy take seconds.
constexpr Nanos kFirstReportWait = 5 * kSecond;

}  // namespace

void RunController::Poll(Nanos now) {
  if (!done_) MaybeCloseInterval(now);
}

void RunController::MaybeCloseInterval(Nanos now) {
  if (!interval_due_) return;
  if (env_.interval_wait > 0) {
    const Nanos waited = now - *interval_due_;
    for (; close_scan_from_ < participants_.size(); ++close_scan_from_) {
      const std::string& name = participants_[close_scan_from_];
      if (!Working(name)) continue;
      // An agent whose latest report reached the end of the plan's duration has only its final
      // report left to send, at once: the completions of what was in flight at the end. The
      // interval waits for it, or those would make a sliver of an interval of their own.
      const bool at_end = AtPlannedEnd(name);
      if (aggregator_->HasPendingReport(name) && !at_end) continue;
      if (at_end && waited < env_.interval_wait) return;
      // An agent's first report comes a second after its sessions are connected, which takes
      // longer than a report's trip: the run's first interval waits for every agent's. One that
      // joined the running run holds none: the others' seconds would pile up meanwhile, merged
      // with the joiner's first one over windows in which the split changed.
      const bool reported_before = aggregator_->agents().at(name).last_sequence > 0;
      if (!reported_before && joined_at_s_.contains(name)) continue;
      if (waited < (reported_before ? env_.interval_wait : kFirstReportWait)) return;
    }
  }
  interval_due_.reset();
  PushIntervals(now);
}

void RunController::PushIntervals(Nanos now) {
  for (v1::IntervalSample& sample :
       aggregator_->CloseInterval(Seconds(now - started_), MetricsObserver())) {
    if (abort_monitor_ && !stopping() && !done_) {
      if (std::optional<std::string> why = abort_monitor_->Observe(sample)) {
        // Like a stop: the agents' final reports carry what they did until they stopped.
        stop_kind_ = v1::END_REASON_ABORTED;
        stop_reason_ = absl::StrCat("aborted: ", *why);
        stop_sent_at_ = now;
        SendStop(stop_reason_);
        Log(absl::StrCat("run ", id_, ": ", stop_reason_));
      }
    }
    v1::RunProgress progress;
    progress.set_run_id(id_);
    progress.set_run_state(v1::RUN_STATE_RUNNING);
    progress.set_state(RunStateText(v1::RUN_STATE_RUNNING));
    *progress.mutable_interval() = std::move(sample);
    progress.set_agents(WorkingAgents());
    progress.set_degraded(!lost_.empty());
    PushProgress(std::move(progress));
  }
  // Saved after this tick's intervals are closed, so that the report so far holds every report
  // received until now (it counts closed intervals only, and its duration is theirs).
  if (!done_ && env_.saver.Due(last_saved_, now)) {
    // What a restart would have to show: the report so far, marked running.
    last_saved_ = now;
    v1::RunReport so_far = aggregator_->ReportSoFar("running", started_at_);
    SetRunState(so_far, v1::RUN_STATE_RUNNING);
    CompleteReport(so_far);
    env_.saver.Save(std::move(so_far), id_);
  }
}

RunAggregator::IntervalObserver RunController::MetricsObserver() {
  if (env_.metrics == nullptr) return nullptr;
  return [this](const RunAggregator::ClosedInterval& closed) {
    RunInterval interval;
    interval.run_id = id_;
    interval.scenario = plan_.scenario();
    interval.query_types = query_types_;
    interval.merged = &closed.merged;
    interval.length_s = closed.length_s;
    interval.target_rate = closed.sample.target_rate();
    interval.clients = closed.sample.clients();
    if (const uint32_t stage = closed.sample.stage();
        stage > 0 && stage <= static_cast<uint32_t>(plan_.stages_size())) {
      interval.stage = stage;
      interval.stage_name = plan_.stages(stage - 1).name().empty() ? absl::StrCat("stage ", stage)
                                                                   : plan_.stages(stage - 1).name();
    }
    interval.warmup = closed.sample.warmup();
    for (auto& [agent, gauges] : agent_gauges_) {
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
      recent_intervals_.push_back(closed.sample);
      if (recent_intervals_.size() > kRecentKept) recent_intervals_.pop_front();
      std::vector<const v1::IntervalSample*> recent;
      for (const v1::IntervalSample& sample : recent_intervals_) recent.push_back(&sample);
      const v1::IntervalLimit limit =
          JudgeIntervals(plan_.generator(), recent, plan_.target().pool()).back().limit;
      interval.generator_limited = limit == v1::INTERVAL_LIMIT_GENERATOR;
      interval.pool_limited = limit == v1::INTERVAL_LIMIT_POOL;
      interval.database_stalled = limit == v1::INTERVAL_LIMIT_DATABASE_STALLED;
    }
    const double response_p99 = closed.sample.p99_ms();
    interval.dispatch_lag_share =
        response_p99 > 0 ? closed.sample.dispatch_lag_p99_ms() / response_p99 : 0;
    env_.metrics->OnInterval(interval);
  };
}

}  // namespace dbload
