#include "coordinator/saturation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dbload {
namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

// Where a report's spans end: the warm-up, and each stage.
struct Spans {
  double warmup_end_s = 0;
  std::map<uint32_t, double> stage_end_s;  // by 1-based stage
};

Spans SpansOf(const v1::RunReport& report) {
  Spans spans;
  for (const v1::IntervalSample& sample : report.intervals()) {
    if (sample.warmup()) spans.warmup_end_s = std::max(spans.warmup_end_s, sample.elapsed_s());
    if (!sample.warmup() && sample.stage() > 0) {
      double& end = spans.stage_end_s[sample.stage()];
      end = std::max(end, sample.elapsed_s());
    }
  }
  return spans;
}

}  // namespace

void ProbeRecord::Add(double elapsed_s, const std::vector<ProbeValue>& values) {
  Row row{.elapsed_s = elapsed_s, .values = std::vector<double>(keys_.size(), kMissing)};
  for (const ProbeValue& value : values) {
    const std::string key = absl::StrCat(value.source, "/", value.name);
    auto [it, added] = index_.emplace(key, keys_.size());
    if (added) {
      keys_.push_back({.source = value.source, .name = value.name, .gauge = value.gauge});
      row.values.push_back(kMissing);
    }
    row.values[it->second] = value.value;
  }
  rows_.push_back(std::move(row));
}

size_t ProbeRecord::ReadingAtOrAfter(double elapsed_s) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].elapsed_s >= elapsed_s) return i;
  }
  return rows_.size() - 1;
}

void ProbeRecord::AddSpan(size_t first, size_t last, uint64_t queries,
                          google::protobuf::RepeatedPtrField<v1::SaturationDelta>& out) const {
  if (rows_.empty() || last < first) return;
  for (size_t key = 0; key < keys_.size(); ++key) {
    const Key& k = keys_[key];
    auto at = [&](size_t row) {
      return key < rows_[row].values.size() ? rows_[row].values[key] : kMissing;
    };
    v1::SaturationDelta delta;
    delta.set_source(k.source);
    delta.set_name(k.name);
    delta.set_gauge(k.gauge);
    delta.set_from_s(rows_[first].elapsed_s);
    delta.set_to_s(rows_[last].elapsed_s);
    if (k.gauge) {
      double low = std::numeric_limits<double>::infinity(), high = -low, newest = kMissing;
      for (size_t row = first; row <= last; ++row) {
        const double value = at(row);
        if (std::isnan(value)) continue;
        low = std::min(low, value);
        high = std::max(high, value);
        newest = value;
      }
      if (std::isnan(newest)) continue;
      delta.set_delta(newest);
      delta.set_min(low);
      delta.set_max(high);
    } else {
      if (std::isnan(at(first)) || std::isnan(at(last))) continue;
      // Summed reading by reading, so that a counter reset (a restarted server counts from
      // zero) is handled as Prometheus' rate() does: the new value was counted from zero, no
      // work was undone. A dip that is no reset counts nothing until the counter passes its
      // highest reading again (CounterWasReset).
      double sum = 0, previous = at(first);
      for (size_t row = first + 1; row <= last; ++row) {
        const double value = at(row);
        if (std::isnan(value)) continue;
        if (value >= previous) {
          sum += value - previous;
          previous = value;
        } else if (CounterWasReset(previous, value)) {
          sum += value;
          previous = value;
        }
      }
      delta.set_delta(sum);
      if (queries > 0) delta.set_per_query(sum / static_cast<double>(queries));
    }
    *out.Add() = std::move(delta);
  }
}

void ProbeRecord::FillReport(v1::RunReport& report) const {
  report.clear_probe_samples();
  report.clear_saturation();
  for (v1::StageReport& stage : *report.mutable_stages()) stage.clear_saturation();
  for (const Row& row : rows_) {
    v1::ProbeSample& sample = *report.add_probe_samples();
    sample.set_elapsed_s(row.elapsed_s);
    for (size_t key = 0; key < keys_.size() && key < row.values.size(); ++key) {
      if (std::isnan(row.values[key])) continue;
      (*sample.mutable_values())[absl::StrCat(keys_[key].source, "/", keys_[key].name)] =
          row.values[key];
    }
  }
  if (rows_.empty()) return;
  // Each boundary is the first reading at or after it, and the end the newest reading (taken
  // after the load when the run is over), so that consecutive spans share their boundary
  // readings and the stages' deltas add up to the run's.
  const Spans spans = SpansOf(report);
  const size_t start = ReadingAtOrAfter(spans.warmup_end_s);
  const size_t newest = rows_.size() - 1;
  AddSpan(start, newest, report.executed(), *report.mutable_saturation());
  size_t stage_start = start;
  uint32_t last_stage = 0;
  for (const auto& [stage, end_s] : spans.stage_end_s) last_stage = std::max(last_stage, stage);
  for (v1::StageReport& stage : *report.mutable_stages()) {
    auto end = spans.stage_end_s.find(stage.index());
    if (end == spans.stage_end_s.end()) continue;  // never reached
    const size_t stage_end = stage.index() == last_stage ? newest : ReadingAtOrAfter(end->second);
    AddSpan(stage_start, stage_end, stage.executed(), *stage.mutable_saturation());
    stage_start = stage_end;
  }
}

LimitMarks JudgeLimits(const v1::GeneratorLimits& limits, const LoadFigures& figures) {
  constexpr double kDefaultMaxAgentCpu = 0.9;
  constexpr Nanos kDefaultMaxScheduleLagP99 = 10 * kMillisecond;
  // Connections in database calls at least this share of the time make queueing the pool's.
  constexpr double kPoolBusy = 0.5;
  const double max_cpu = limits.max_agent_cpu() > 0 ? limits.max_agent_cpu() : kDefaultMaxAgentCpu;
  const double max_lag_ms =
      static_cast<double>(limits.max_schedule_lag_p99_ns() > 0 ? limits.max_schedule_lag_p99_ns()
                                                               : kDefaultMaxScheduleLagP99) /
      1e6;
  std::vector<std::string> why;
  if (figures.busiest_cpu > max_cpu) {
    why.push_back(absl::StrFormat(
        "an agent used %.0f%% of its cores (limit %.0f%%): the database may have more to give",
        figures.busiest_cpu * 100, max_cpu * 100));
  }
  if (figures.dispatch_lag_p99_ms > max_lag_ms) {
    why.push_back(absl::StrFormat(
        "dispatch lag p99 %.4g ms (limit %.4g ms): transactions that had a free connection "
        "started late, so the agent fell behind",
        figures.dispatch_lag_p99_ms, max_lag_ms));
  }
  LimitMarks marks;
  const bool queued = figures.schedule_lag_p99_ms > max_lag_ms &&
                      figures.dispatch_lag_p99_ms <= max_lag_ms;
  if (queued && why.empty()) {
    const double database_busy =
        figures.connection_s > 0 ? figures.service_s / figures.connection_s : -1;
    if (database_busy < 0 || database_busy >= kPoolBusy) {
      marks.pool = absl::StrFormat(
          "schedule lag p99 %.4g ms (limit %.4g ms) against %.4g ms with a free connection: "
          "arrivals waited for a busy connection, so the database, or a pool of %d per agent "
          "too small for its latency, limited the load",
          figures.schedule_lag_p99_ms, max_lag_ms, figures.dispatch_lag_p99_ms, figures.pool);
    } else {
      why.push_back(absl::StrFormat(
          "schedule lag p99 %.4g ms (limit %.4g ms): arrivals waited for connections that spent "
          "only %.0f%% of their time in database calls, so the agent's own work held them up",
          figures.schedule_lag_p99_ms, max_lag_ms, database_busy * 100));
    }
  }
  marks.generator = absl::StrJoin(why, "; ");
  return marks;
}

void MarkGeneratorLimits(const v1::GeneratorLimits& limits, v1::RunReport& report) {
  double run_cpu = 0;
  std::map<uint32_t, double> stage_cpu;
  for (const v1::IntervalSample& sample : report.intervals()) {
    if (sample.warmup()) continue;
    run_cpu = std::max(run_cpu, sample.max_agent_cpu());
    double& cpu = stage_cpu[sample.stage()];
    cpu = std::max(cpu, sample.max_agent_cpu());
  }
  const uint32_t pool = report.plan().target().pool();
  // Open loop: every agent keeps `pool` connections.
  const double connections =
      static_cast<double>(pool) * std::max(1, report.agents_size());
  auto mark = [&](auto& scope, double cpu, double duration_s) {
    const v1::LatencySummary& service = scope.service_time();
    const LimitMarks marks = JudgeLimits(
        limits, {.busiest_cpu = cpu,
                 .schedule_lag_p99_ms = scope.schedule_lag().p99_ms(),
                 .dispatch_lag_p99_ms = scope.dispatch_lag().p99_ms(),
                 .service_s = static_cast<double>(service.count()) * service.mean_ms() / 1e3,
                 .connection_s = duration_s * connections,
                 .pool = pool});
    scope.set_generator_limited(!marks.generator.empty());
    scope.set_generator_limited_reason(marks.generator);
    scope.set_pool_limited(!marks.pool.empty());
    scope.set_pool_limited_reason(marks.pool);
  };
  if (report.stages_size() == 0) {
    mark(report, run_cpu, report.queries_duration_s());
    return;
  }
  // With stages the run's marks are its stages': figures over a load that changed from stage
  // to stage (a staircase that saturates only at its top) would blur the run's own.
  report.clear_generator_limited();
  report.clear_generator_limited_reason();
  report.clear_pool_limited();
  report.clear_pool_limited_reason();
  for (v1::StageReport& stage : *report.mutable_stages()) {
    mark(stage, stage_cpu[stage.index()], stage.duration_s());
    const std::string where = absl::StrCat("stage ", stage.index(), ": ");
    if (stage.generator_limited() && !report.generator_limited()) {
      report.set_generator_limited(true);
      report.set_generator_limited_reason(where + stage.generator_limited_reason());
    }
    if (stage.pool_limited() && !report.pool_limited()) {
      report.set_pool_limited(true);
      report.set_pool_limited_reason(where + stage.pool_limited_reason());
    }
  }
}

}  // namespace dbload
