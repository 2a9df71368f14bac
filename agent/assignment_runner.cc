#include "agent/assignment_runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/coordinator_connection.h"
#include "agent/run_executor.h"
#include "interval/interval_snapshot.h"
#include "workload/loader.h"

namespace dbload {

namespace {

namespace v1 = dbload::v1;

double ProcessCpuSeconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

AssignmentRunner::AssignmentRunner(Clock& clock, const std::atomic<bool>& shutdown,
                                   std::function<void(const std::string&)> event)
    : clock_(clock), shutdown_(shutdown), event_(std::move(event)) {}

void AssignmentRunner::Run(ActiveRun& run) {
  Event(absl::StrCat(
      "run ", run.run_id, ": started",
      run.target_address.empty() ? "" : absl::StrCat(", dialing ", run.target_address)));
  double cpu_mark = ProcessCpuSeconds();
  const auto cpu_since_mark = [&] {
    const double now = ProcessCpuSeconds();
    const double used = std::max(0.0, now - cpu_mark);
    cpu_mark = now;
    return used;
  };
  double last_elapsed_s = 0;
  uint32_t last_stage = 0;
  v1::AgentMessage final_message;
  v1::AgentReport& final_report = *final_message.mutable_report();
  // Plans come from ExecuteRun's capture thread and leave with the next report.
  std::mutex plans_mu;
  std::vector<v1::CapturedPlan> plans_pending;
  const auto take_plans = [&](v1::AgentReport& report) {
    std::lock_guard lock(plans_mu);
    for (v1::CapturedPlan& plan : plans_pending) *report.add_plans() = std::move(plan);
    plans_pending.clear();
  };
  if (run.nothing_to_run) {
    final_report.set_end_reason("queries");
    final_report.set_end_reason_kind(v1::END_REASON_QUERIES);
  } else if (run.plan.prepare_only()) {
    LoadParts(run, final_report);
  } else {
    ExecutionHooks hooks;
    hooks.on_plans = [&](PlanMoment moment, std::vector<v1::QueryPlan> plans) {
      std::lock_guard lock(plans_mu);
      for (v1::QueryPlan& plan : plans) {
        v1::CapturedPlan& captured = plans_pending.emplace_back();
        captured.set_stage(moment.stage);
        captured.set_after_load(moment.after_load);
        *captured.mutable_plan() = std::move(plan);
      }
    };
    // The load starts when every agent of the run is ready (the coordinator's StartLoad).
    hooks.on_sessions_ready = [&] {
      v1::AgentMessage message;
      message.mutable_sessions_ready()->set_run_id(run.run_id);
      run.connection->Send(std::move(message));
    };
    // Each report's CPU is the load's during its interval: the set-up before the first
    // interval (reading samples, connecting, waiting for the others) is left out.
    hooks.on_load_start = [&] { (void)cpu_since_mark(); };
    hooks.on_interval = [&](const IntervalOutput& out) {
      v1::AgentMessage message;
      v1::AgentReport& report = *message.mutable_report();
      report.set_run_id(run.run_id);
      report.set_sequence(++run.sequence);
      report.set_target_address(run.target_address);
      take_plans(report);
      SnapshotToReport(out.snapshot, &report);
      report.set_in_flight(out.in_flight);
      report.set_connections(out.connections);
      report.set_cpu_seconds(cpu_since_mark());
      report.set_interval_s(out.length_s);
      report.set_warmup(out.warmup);
      report.set_elapsed_s(out.elapsed_s);
      report.set_stage(out.stage);
      last_stage = out.stage;
      report.set_target_rate(out.target_rate);
      report.set_clients(out.clients);
      report.set_knee_step(out.knee_step);
      last_elapsed_s = out.elapsed_s;
      run.connection->Send(std::move(message));
    };
    // Its connections stay open until every agent's load is over (the coordinator's
    // CloseSessions), so that closing them does not slow the others' last transactions.
    hooks.on_load_over = [&] {
      v1::AgentMessage message;
      message.mutable_load_over()->set_run_id(run.run_id);
      run.connection->Send(std::move(message));
    };
    // Shutdown() ends the run as "interrupted"; the coordinator's StopLoad and the dead-man
    // timer come through the control mailbox as "stopped: …".
    hooks.interrupted = &shutdown_;
    hooks.control = &run.control;
    const absl::StatusOr<ExecutionResult> result =
        ExecuteRun(run.plan, run.share, *run.driver, *run.scenario, clock_, hooks);
    if (!result.ok()) {
      // Nothing ran (connecting failed): the status says why, without the password.
      final_report.set_end_reason("not started");
      final_report.set_end_reason_kind(v1::END_REASON_NOT_STARTED);
      final_report.set_fatal_error(db::Redact(
          absl::StrCat("run ", run.run_id, ": ", result.status().message()), run.password));
    } else {
      final_report.set_end_reason(db::Redact(result->end_reason, run.password));
      final_report.set_end_reason_kind(result->end_reason_kind);
      final_report.set_setup_s(result->setup_s);
      final_report.set_measured_s(result->measured_s);
      final_report.set_not_started(result->not_started);
      if (result->end_reason_kind == v1::END_REASON_FATAL_ERROR) {
        final_report.set_fatal_error(final_report.end_reason());
      }
    }
  }
  take_plans(final_report);
  final_report.set_run_id(run.run_id);
  final_report.set_sequence(++run.sequence);
  final_report.set_final(true);
  final_report.set_target_address(run.target_address);
  final_report.set_elapsed_s(last_elapsed_s);
  final_report.set_stage(last_stage);
  final_report.set_cpu_seconds(cpu_since_mark());
  Event(absl::StrCat("run ", run.run_id, ": ended: ", final_report.end_reason(),
                     final_report.fatal_error().empty() ? "" : " (", final_report.fatal_error(),
                     final_report.fatal_error().empty() ? "" : ")"));
  // Free the slot before the coordinator can read the final report and assign the next run;
  // that assignment reaps (joins) this thread first, so this report still goes out before
  // anything of the next run.
  run.finished = true;
  run.connection->Send(std::move(final_message));
}

void AssignmentRunner::LoadParts(ActiveRun& run, v1::AgentReport& final_report) {
  const int first = static_cast<int>(run.share.first_slot);
  const int count = static_cast<int>(run.share.clients.value_or(0));
  if (count == 0) {
    final_report.set_end_reason("loaded no parts");
    final_report.set_end_reason_kind(v1::END_REASON_LOADED);
    return;
  }
  LoadOptions options{
      .parallel = static_cast<int>(run.plan.load().closed().clients()),
      .stage = LoadOptions::Stage::kPartsOnly,
      .first_part = first,
      .part_count = count,
      .should_stop = [&run, this] { return shutdown_.load() || run.control.StopRequested(); }};
  const absl::Status loaded =
      LoadWorkloadData(run.workload->DataSpec(), *run.driver, options, nullptr);
  if (loaded.ok()) {
    final_report.set_end_reason(count == 1
                                    ? absl::StrCat("loaded part ", first)
                                    : absl::StrCat("loaded parts ", first, "-", first + count - 1));
    final_report.set_end_reason_kind(v1::END_REASON_LOADED);
  } else {
    final_report.set_end_reason(
        db::Redact(absl::StrCat("fatal error: ", loaded.message()), run.password));
    final_report.set_end_reason_kind(v1::END_REASON_FATAL_ERROR);
    final_report.set_fatal_error(final_report.end_reason());
  }
}

}  // namespace dbload
