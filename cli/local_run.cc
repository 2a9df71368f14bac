#include "cli/local_run.h"

#include "agent/run_executor.h"
#include "report/report.h"

namespace dbload {

namespace {
// The fragment after the last full second stays in the report's time series, but a rate over a
// few milliseconds means nothing to someone watching.
constexpr double kMinPrintedInterval_s = 0.2;
}  // namespace

absl::StatusOr<v1::RunReport> RunPlanLocally(const v1::Plan& plan, db::Driver& driver,
                                             Scenario& scenario, Clock& clock,
                                             const LocalRunHooks& hooks) {
  for (const v1::Stage& stage : plan.stages()) {
    if (stage.has_knee()) {
      // Its steps are judged on merged counts by a coordinator, which this path has none of.
      return absl::InvalidArgumentError(
          "a knee-search stage needs a coordinator: use `dbload run` or `dbload submit`");
    }
  }
  RunReportBuilder builder(plan, scenario.query_types());
  const bool staged = plan.stages_size() > 0;
  RunShare share;
  share.queries = plan.stop().queries();
  for (const v1::Stage& stage : plan.stages()) share.stage_queries.push_back(stage.queries());
  const double target_rate = plan.load().has_open() ? plan.load().open().rate() : 0;
  std::vector<double> stage_seconds(plan.stages_size(), 0.0);
  ExecutionHooks execution_hooks{
      .on_interval =
          [&](const IntervalOutput& out) {
            if (out.stage > 0 && !out.warmup) stage_seconds[out.stage - 1] += out.length_s;
            const v1::IntervalSample sample =
                builder.AddInterval({.elapsed_s = out.elapsed_s,
                                     .length_s = out.length_s,
                                     .target_rate = staged ? out.target_rate : target_rate,
                                     .warmup = out.warmup,
                                     .stage = out.stage,
                                     .clients = out.clients},
                                    out.snapshot);
            if (hooks.on_interval && out.length_s >= kMinPrintedInterval_s) hooks.on_interval(sample);
          },
      .interrupted = hooks.interrupted};
  absl::StatusOr<ExecutionResult> result =
      ExecuteRun(plan, share, driver, scenario, clock, execution_hooks);
  if (!result.ok()) return result.status();
  v1::RunReport report =
      builder.Finish(result->measured_s + result->setup_s, result->setup_s, result->not_started,
                     result->end_reason, result->started_at, stage_seconds);
  report.set_end_reason_kind(result->end_reason_kind);
  return report;
}

}  // namespace dbload
