#include "coordinator/run_aggregator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "coordinator/plan_changes.h"
#include "proto/run_outcome.h"

namespace dbload {

namespace {

// A histogram emptied for reuse: Histogram::Reset is O(1) and keeps the buffer, so the next
// tick's merges zero only the span they use instead of allocating 270 KB per histogram.
Histogram Emptied(Histogram& histogram) {
  histogram.Reset();
  return std::move(histogram);
}

// Starts the snapshot afresh, keeping only its histograms' buffers: every other field takes its
// default, so a field added to the structs is reset without a change here.
void ResetSnapshot(IntervalSnapshot& snapshot) {
  for (QueryTypeInterval& q : snapshot.query_types) {
    q = QueryTypeInterval{.response_time = Emptied(q.response_time),
                          .service_time = Emptied(q.service_time)};
  }
  snapshot = IntervalSnapshot{.query_types = std::move(snapshot.query_types),
                              .schedule_lag = Emptied(snapshot.schedule_lag),
                              .dispatch_lag = Emptied(snapshot.dispatch_lag),
                              .connect_time = Emptied(snapshot.connect_time)};
}

}  // namespace

RunAggregator::RunAggregator(std::string run_id, const v1::Plan& plan,
                             std::vector<std::string> query_types,
                             const std::vector<AgentSpec>& agents)
    : run_id_(std::move(run_id)),
      query_type_count_(static_cast<int>(query_types.size())),
      target_rate_(plan.load().has_open() ? plan.load().open().rate() : 0),
      warmup_s_(static_cast<double>(plan.warmup_ns()) / 1e9),
      builder_(plan, std::move(query_types)),
      staged_(plan.stages_size() > 0),
      plan_clients_(plan.load().closed().clients()),
      stage_count_(plan.stages_size()) {
  for (const AgentSpec& spec : agents) AddAgent(spec);
}

void RunAggregator::AddAgent(const AgentSpec& spec) {
  if (agents_.contains(spec.name)) return;
  AgentProgress& progress = agents_[spec.name];
  progress.query_budget = spec.query_budget;
  progress.stage_budgets = spec.stage_budgets;
  progress.stage_budgets.resize(stage_count_, 0);
  progress.stage_used.assign(stage_count_, 0);
  agent_cores_[spec.name] = spec.cores;
  if (staged_) agent_stage_seconds_[spec.name].assign(stage_count_, 0.0);
}

absl::Status RunAggregator::AddReport(const std::string& agent, const v1::AgentReport& report) {
  if (report.run_id() != run_id_) {
    return absl::InvalidArgumentError(absl::StrCat("agent ", agent, ": report for run '",
                                                   report.run_id(), "', expected '", run_id_, "'"));
  }
  auto it = agents_.find(agent);
  if (it == agents_.end()) {
    return absl::NotFoundError(absl::StrCat("agent ", agent, " sent a report for run ", run_id_,
                                            " but is not part of it"));
  }
  AgentProgress& progress = it->second;
  if (report.sequence() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent ", agent, ": report sequence 0; sequences start at 1"));
  }
  // A repeat is harmless (a resend after a reconnect, say) as long as it is not counted again.
  if (report.sequence() <= progress.last_sequence) {
    ++progress.duplicates;
    ++duplicates_;
    return absl::OkStatus();
  }
  if (progress.final) {
    return absl::FailedPreconditionError(absl::StrCat("agent ", agent, ": report ",
                                                      report.sequence(), " after its final report ",
                                                      progress.last_sequence));
  }
  if (report.sequence() != progress.last_sequence + 1) {
    // The missing reports' samples are gone: the run's totals can no longer be exact.
    return absl::DataLossError(absl::StrCat(
        "agent ", agent, ": report ", report.sequence(), " follows report ", progress.last_sequence,
        ": reports ", progress.last_sequence + 1, " to ", report.sequence() - 1, " are missing"));
  }
  // Checked whole before anything is counted; its histograms are then added straight from the
  // report (interval/interval_snapshot.h CheckedReport), none decoded on the way.
  absl::StatusOr<CheckedReport> checked = CheckReport(report, query_type_count_);
  if (!checked.ok()) {
    return absl::Status(checked.status().code(),
                        absl::StrCat("agent ", agent, ": report ", report.sequence(), ": ",
                                     checked.status().message()));
  }
  const uint64_t executed = checked->executed;
  const uint64_t errors = checked->counts.Errors();
  // Transactions that ended in an ignored error took their starts from the budget too.
  const uint64_t completed = checked->Completed();
  // The agent completes exactly its share of a count (stop.queries after the warm-up, or a
  // stage's); more means something upstream broke the promise that the coordinator never asks
  // for more than the plan.
  const bool stage_known = report.stage() >= 1 && report.stage() <= progress.stage_budgets.size();
  uint64_t* used = nullptr;
  uint64_t limit = 0;
  if (!report.warmup() && staged_ && stage_known) {
    used = &progress.stage_used[report.stage() - 1];
    limit = progress.stage_budgets[report.stage() - 1];
  } else if (!report.warmup() && !staged_) {
    used = &progress.budget_used;
    limit = progress.query_budget;
  }
  if (used != nullptr && limit > 0 && *used + completed > limit) {
    return absl::FailedPreconditionError(
        absl::StrCat("agent ", agent, ": ", *used + completed,
                     " transactions completed, more than its share of the query count (", limit,
                     staged_ ? absl::StrCat(" in stage ", report.stage()) : std::string(), ")"));
  }

  // A report with nothing in it (a refusal, a final word) may name no stage; it changes none.
  const bool empty = completed == 0 && report.interval_s() == 0;
  if (staged_ && ((report.stage() == 0 && !empty) ||
                  report.stage() > agent_stage_seconds_[agent].size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("agent ", agent, ": report ", report.sequence(), " names stage ",
                     report.stage(), "; the plan has stages 1 to ",
                     agent_stage_seconds_[agent].size()));
  }

  progress.last_sequence = report.sequence();
  for (const v1::CapturedPlan& captured : report.plans()) KeepPlan(captured);
  progress.cpu_seconds += report.cpu_seconds();
  if (used != nullptr) *used += completed;
  progress.elapsed_s = report.elapsed_s();
  progress.wanted_arrivals += report.target_rate() * report.interval_s();
  if (!empty) {  // a final report carries no gauges
    progress.in_flight = report.in_flight();
    if (report.clients() > 0) progress.clients = report.clients();
  }
  progress.max_connections = std::max(progress.max_connections, report.connections());
  for (const QueryTypeInterval& q : checked->counts.query_types) {
    progress.rolled_back += q.rolled_back;
  }
  progress.connections_opened += report.connections_opened();
  progress.statements_prepared += report.statements_prepared();
  if (report.warmup()) {
    progress.warmup_executed += executed;
    progress.warmup_errors += errors;
  } else {
    progress.executed += executed;
    progress.errors += errors;
    checked->AddResponseTimesTo(progress.response_time);
  }
  const uint32_t stage = staged_ ? std::max<uint32_t>(report.stage(), 1) : 0;
  Pending& pending = pending_[{.measured = !report.warmup(), .stage = stage}];
  if (pending.snapshot.query_types.empty()) {
    pending.snapshot.query_types.resize(query_type_count_);
  }
  checked->AddTo(pending.snapshot);
  if (staged_) {
    // A final report carries no interval (and no target): it must not zero the agent's.
    if (!empty) pending.agent_target[agent] = {report.target_rate(), report.clients()};
    if (!report.warmup()) agent_stage_seconds_[agent][stage - 1] += report.interval_s();
    if (!report.warmup() && report.knee_step() > 0) {
      KneeTally& tally = knee_tallies_[{stage, report.knee_step()}];
      auto& [agent_executed, agent_seconds] = tally.agents[agent];
      agent_executed += executed;
      agent_seconds += report.interval_s();
      tally.executed += executed;
      tally.errors += errors;
      checked->AddResponseTimesTo(tally.response);
    }
  }
  pending.any = true;
  Pending::AgentPart& part = pending.agent_parts[agent];
  if (!report.warmup()) {
    part.executed += executed;
    part.errors += errors;
  }
  part.elapsed_s = std::max(part.elapsed_s, report.elapsed_s());
  if (report.interval_s() > 0) {
    pending.agents_elapsed_s = std::max(pending.agents_elapsed_s, report.elapsed_s());
    auto& [agent_executed, agent_seconds] = pending.agent_time[agent];
    agent_executed += executed;
    agent_seconds += report.interval_s();
    pending.agent_cpu_seconds[agent] += report.cpu_seconds();
  }
  if (!report.fatal_error().empty()) progress.fatal_error = report.fatal_error();
  if (report.final()) {
    progress.final = true;
    progress.measured_s = report.measured_s();
    progress.not_started = report.not_started();
    progress.end_reason = report.end_reason();
    progress.end_reason_kind = EndReasonKindOf(report);  // an older agent's from its text
    setup_s_ = std::max(setup_s_, report.setup_s());
  }
  return absl::OkStatus();
}

// The shortest span of an agent's reports in a sample over which its CPU counts.
constexpr double kMinCpuJudgedSeconds = 0.2;

v1::IntervalSample RunAggregator::ClosePending(Pending& pending, PendingKey key,
                                               double elapsed_s, double tick_s,
                                               const IntervalObserver& observer) {
  const uint64_t executed = pending.snapshot.Executed();
  double rate = 0;
  uint64_t timed = 0;  // executed by agents that said how long their intervals were
  for (const auto& [agent, time] : pending.agent_time) {
    rate += static_cast<double>(time.first) / time.second;
    timed += time.first;
  }
  // The builder computes the rate as executed / length, so the length handed over is the one
  // that gives the agents' own rate; reports without interval_s count over the tick.
  if (timed < executed && tick_s > 0) rate += static_cast<double>(executed - timed) / tick_s;
  const double length_s = rate > 0 ? static_cast<double>(executed) / rate : tick_s;
  double target_rate = target_rate_;
  uint32_t clients = plan_clients_;
  if (staged_) {
    target_rate = 0;
    clients = 0;
    for (const auto& [agent, target] : pending.agent_target) {
      target_rate += target.first;
      clients += target.second;
    }
  }
  // Never later than the tick that closes it (an agent's clock may run a little ahead of ours).
  const double stamp_s =
      pending.agents_elapsed_s > 0 ? std::min(pending.agents_elapsed_s, elapsed_s) : elapsed_s;
  // The busiest agent's CPU over its own intervals' time, as a fraction of its cores.
  double max_agent_cpu = 0;
  for (const auto& [agent, cpu_seconds] : pending.agent_cpu_seconds) {
    const double seconds = pending.agent_time[agent].second;
    const uint32_t cores = agent_cores_[agent];
    // A fraction over a few milliseconds (the last, cut-short interval of a run) says little.
    if (seconds >= kMinCpuJudgedSeconds && cores > 0) {
      max_agent_cpu = std::max(max_agent_cpu, cpu_seconds / (seconds * cores));
    }
  }
  v1::IntervalSample sample = builder_.AddInterval({.elapsed_s = stamp_s,
                                                    .length_s = length_s,
                                                    .target_rate = target_rate,
                                                    .warmup = !key.measured,
                                                    .stage = key.stage,
                                                    .clients = clients,
                                                    .max_agent_cpu = max_agent_cpu},
                                                   pending.snapshot);
  if (observer) observer(ClosedInterval{sample, pending.snapshot, length_s});
  for (const auto& [agent, part] : pending.agent_parts) {
    AgentProgress& progress = agents_.at(agent);
    progress.closed_executed += part.executed;
    progress.closed_errors += part.errors;
    progress.closed_elapsed_s = std::max(progress.closed_elapsed_s, part.elapsed_s);
  }
  pending.agent_parts.clear();
  ResetSnapshot(pending.snapshot);
  pending.agent_time.clear();
  pending.agent_cpu_seconds.clear();
  pending.agent_target.clear();
  pending.agents_elapsed_s = 0;
  pending.any = false;
  return sample;
}

std::vector<v1::IntervalSample> RunAggregator::CloseInterval(double elapsed_s,
                                                             const IntervalObserver& observer) {
  std::vector<v1::IntervalSample> samples;
  const double tick_s = std::max(0.0, elapsed_s - last_close_s_);
  for (auto& [key, pending] : pending_) {  // warm-up first, then by stage
    if (pending.any) samples.push_back(ClosePending(pending, key, elapsed_s, tick_s, observer));
  }
  if (!samples.empty()) last_close_s_ = elapsed_s;
  return samples;
}

bool RunAggregator::AllFinal() const {
  return std::all_of(agents_.begin(), agents_.end(),
                     [](const auto& entry) { return entry.second.final; });
}

bool RunAggregator::HasPendingReport(const std::string& agent) const {
  return std::any_of(pending_.begin(), pending_.end(), [&agent](const auto& entry) {
    return entry.second.agent_parts.contains(agent);
  });
}

double RunAggregator::MeasuredSeconds(bool closed_only) const {
  double measured = 0;
  for (const auto& [name, progress] : agents_) {
    const double agent_measured = closed_only ? std::max(0.0, progress.closed_elapsed_s - warmup_s_)
                                  : progress.final ? progress.measured_s
                                                   : std::max(0.0, progress.elapsed_s - warmup_s_);
    measured = std::max(measured, agent_measured);
  }
  return measured;
}

uint64_t RunAggregator::NotStarted() const {
  uint64_t total = 0;
  for (const auto& [name, progress] : agents_) total += progress.not_started;
  return total;
}

uint64_t RunAggregator::executed() const {
  uint64_t total = 0;
  for (const auto& [name, progress] : agents_) total += progress.executed;
  return total;
}

const RunAggregator::KneeTally* RunAggregator::knee_tally(uint32_t stage, uint32_t step) const {
  auto it = knee_tallies_.find({stage, step});
  return it == knee_tallies_.end() ? nullptr : &it->second;
}

std::vector<double> RunAggregator::StageSeconds() const {
  std::vector<double> longest;
  for (const auto& [agent, seconds] : agent_stage_seconds_) {
    longest.resize(seconds.size(), 0.0);
    for (size_t i = 0; i < seconds.size(); ++i) longest[i] = std::max(longest[i], seconds[i]);
  }
  return longest;
}

void RunAggregator::AddAgentSummaries(v1::RunReport& report, bool closed_only) const {
  for (const auto& [name, progress] : agents_) {
    v1::AgentSummary& agent = *report.add_agents();
    agent.set_name(name);
    agent.set_executed(closed_only ? progress.closed_executed : progress.executed);
    agent.set_errors(closed_only ? progress.closed_errors : progress.errors);
    agent.set_measured_s(closed_only      ? std::max(0.0, progress.closed_elapsed_s - warmup_s_)
                         : progress.final ? progress.measured_s
                                          : std::max(0.0, progress.elapsed_s - warmup_s_));
    agent.set_end_reason(progress.end_reason);
    agent.set_cpu_seconds(progress.cpu_seconds);
    *agent.mutable_response_time() = Summarize(progress.response_time);
  }
}

void RunAggregator::KeepPlan(const v1::CapturedPlan& captured) {
  const uint32_t stage = captured.stage();
  if (captured.after_load() ? stage != 0
      : staged_             ? stage < 1 || stage > static_cast<uint32_t>(stage_count_)
                            : stage != 0) {
    return;
  }
  std::vector<v1::QueryPlan>& kept = captured.after_load() ? plans_after_load_ : plans_[stage];
  // One per query type: a second agent's (a replacement's) adds nothing, and an agent cannot
  // grow the report past the scenario's size.
  if (kept.size() >= static_cast<size_t>(query_type_count_)) return;
  for (const v1::QueryPlan& plan : kept) {
    if (plan.query_type() == captured.plan().query_type()) return;
  }
  kept.push_back(captured.plan());
}

void RunAggregator::AddPlans(v1::RunReport& report) const {
  for (const auto& [stage, plans] : plans_) {
    google::protobuf::RepeatedPtrField<v1::QueryPlan>* into = nullptr;
    if (stage == 0) {
      into = report.mutable_explains();
    } else if (static_cast<int>(stage) <= report.stages_size()) {
      into = report.mutable_stages(static_cast<int>(stage) - 1)->mutable_explains();
    }
    if (into == nullptr) continue;
    for (const v1::QueryPlan& plan : plans) *into->Add() = plan;
  }
  for (const v1::QueryPlan& plan : plans_after_load_) *report.add_explains_after_load() = plan;
  std::vector<PlanCaptureAt> captures;
  if (report.stages_size() == 0) captures.push_back({"the start", &report.explains()});
  for (const v1::StageReport& stage : report.stages()) {
    captures.push_back(
        {absl::StrCat("stage ", stage.index(), " (", stage.name(), ")"), &stage.explains()});
  }
  captures.push_back({"after the load", &report.explains_after_load()});
  for (v1::PlanChange& change : FindPlanChanges(captures)) {
    *report.add_plan_changes() = std::move(change);
  }
}

v1::RunReport RunAggregator::ReportSoFar(const std::string& end_reason,
                                         const std::string& started_at) const {
  v1::RunReport report = builder_.Finish(MeasuredSeconds(/*closed_only=*/true) + setup_s_, setup_s_,
                                         NotStarted(), end_reason, started_at, StageSeconds());
  AddAgentSummaries(report, /*closed_only=*/true);
  AddPlans(report);
  return report;
}

v1::RunReport RunAggregator::Finish(double elapsed_s, const std::string& end_reason,
                                    const std::string& started_at,
                                    const IntervalObserver& observer) {
  CloseInterval(elapsed_s, observer);
  v1::RunReport report =
      builder_.Finish(MeasuredSeconds(/*closed_only=*/false) + setup_s_, setup_s_, NotStarted(),
                      end_reason, started_at, StageSeconds());
  AddAgentSummaries(report, /*closed_only=*/false);
  AddPlans(report);
  return report;
}

}  // namespace dbload
