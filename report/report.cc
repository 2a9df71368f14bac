// The report builder: a run's intervals merged into its report (totals and percentiles from the
// merged histograms of the measured intervals, per stage too).
#include "report/report.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "db/driver.h"
#include "base/percentile_interval.h"
#include "plan/stage_program.h"

namespace dbload {

namespace {

double Ms(double nanos) { return nanos / 1e6; }

}  // namespace

v1::LatencySummary Summarize(const Histogram& h) {
  v1::LatencySummary s;
  s.set_count(h.TotalCount());
  if (h.Empty()) return s;
  s.set_min_ms(Ms(h.Min()));
  s.set_max_ms(Ms(h.Max()));
  s.set_mean_ms(Ms(h.Mean()));
  s.set_stddev_ms(Ms(h.Stddev()));
  // Every percentile, its samples beyond and its interval in one pass over the histogram.
  const std::vector<PercentileBasis> bases = DescribePercentiles(h, kPublishedPercentiles);
  s.set_p50_ms(Ms(bases[0].value_ns));
  s.set_p75_ms(Ms(bases[1].value_ns));
  s.set_p90_ms(Ms(bases[2].value_ns));
  s.set_p95_ms(Ms(bases[3].value_ns));
  s.set_p99_ms(Ms(bases[4].value_ns));
  s.set_p999_ms(Ms(bases[5].value_ns));
  s.set_p9999_ms(Ms(bases[6].value_ns));
  for (const PercentileBasis& b : bases) {
    v1::PercentileBasis* out = s.add_percentiles();
    out->set_percentile(b.percentile);
    out->set_value_ms(Ms(b.value_ns));
    out->set_samples_beyond(b.samples_beyond);
    out->set_ci_low_ms(Ms(b.ci_low_ns));
    out->set_ci_high_ms(Ms(b.ci_high_ns));
    out->set_ci_high_open(b.ci_high_open);
    out->set_few_samples(b.few_samples());
  }
  return s;
}

RunReportBuilder::RunReportBuilder(const v1::Plan& plan, std::vector<std::string> query_types)
    : plan_(plan),
      query_types_(std::move(query_types)),
      stage_measured_(plan.stages_size()),
      stage_max_clients_(plan.stages_size(), 0) {
  measured_.query_types.resize(query_types_.size());
  warmup_executed_.resize(query_types_.size());
  for (IntervalSnapshot& stage : stage_measured_) stage.query_types.resize(query_types_.size());
}

v1::IntervalSample RunReportBuilder::AddInterval(const IntervalInfo& info,
                                                 const IntervalSnapshot& snapshot) {
  Histogram response;
  for (const auto& q : snapshot.query_types) response.Add(q.response_time);
  v1::IntervalSample sample;
  sample.set_elapsed_s(info.elapsed_s);
  sample.set_target_rate(info.target_rate);
  sample.set_achieved_rate(info.length_s > 0 ? snapshot.Executed() / info.length_s : 0);
  sample.set_executed(snapshot.Executed());
  sample.set_errors(snapshot.Errors());
  sample.set_ignored(snapshot.Ignored());
  sample.set_statements(snapshot.Statements());
  sample.set_p50_ms(Ms(response.ValueAtPercentile(50)));
  sample.set_p99_ms(Ms(response.ValueAtPercentile(99)));
  sample.set_p999_ms(Ms(response.ValueAtPercentile(99.9)));
  sample.set_schedule_lag_p99_ms(Ms(snapshot.schedule_lag.ValueAtPercentile(99)));
  sample.set_dispatch_lag_p99_ms(Ms(snapshot.dispatch_lag.ValueAtPercentile(99)));
  sample.set_length_s(info.length_s);
  sample.set_warmup(info.warmup);
  sample.set_stage(info.stage);
  sample.set_clients(info.clients);
  sample.set_max_agent_cpu(info.max_agent_cpu);
  if (snapshot.connection_time.Total() > 0) {
    ConnectionTimeToProto(snapshot.connection_time, sample.mutable_connection_time());
  }
  samples_.push_back(sample);
  if (info.warmup) {
    for (size_t i = 0; i < snapshot.query_types.size() && i < warmup_executed_.size(); ++i) {
      warmup_executed_[i] += snapshot.query_types[i].response_time.TotalCount();
    }
  } else {
    measured_.Add(snapshot);
    if (info.stage > 0 && info.stage <= stage_measured_.size()) {
      stage_measured_[info.stage - 1].Add(snapshot);
      uint32_t& peak = stage_max_clients_[info.stage - 1];
      peak = std::max(peak, info.clients);
    }
  }
  return sample;
}

namespace {

// Query types, totals and latency summaries of merged counts, into a run's or a stage's report.
template <typename Report>
void FillMeasured(const IntervalSnapshot& measured, const std::vector<std::string>& names,
                  Report& report) {
  report.set_executed(measured.Executed());
  report.set_errors(measured.Errors());
  report.set_ignored(measured.Ignored());
  report.set_statements(measured.Statements());
  report.set_retries(measured.Retries());
  Histogram response, service;
  for (size_t i = 0; i < names.size(); ++i) {
    const QueryTypeInterval& q = measured.query_types[i];
    response.Add(q.response_time);
    service.Add(q.service_time);
    v1::QueryTypeReport* out = report.add_query_types();
    out->set_name(names[i]);
    out->set_executed(q.response_time.TotalCount());
    out->set_errors(q.ErrorCount());
    out->set_ignored(q.IgnoredCount());
    out->set_statements(q.statements);
    for (const auto& [key, count] : q.errors) {
      v1::ErrorCount* e = out->add_error_counts();
      e->set_error_class(std::string(db::ErrorClassName(key.first)));
      e->set_code(key.second);
      e->set_count(count);
    }
    RetryTallyToProto(q.retry, *out);
    out->set_rolled_back(q.rolled_back);
    *out->mutable_response_time() = Summarize(q.response_time);
    *out->mutable_service_time() = Summarize(q.service_time);
    q.response_time.ToProto(out->mutable_response_histogram());
    q.service_time.ToProto(out->mutable_service_histogram());
  }
  *report.mutable_response_time() = Summarize(response);
  *report.mutable_service_time() = Summarize(service);
  *report.mutable_schedule_lag() = Summarize(measured.schedule_lag);
  *report.mutable_dispatch_lag() = Summarize(measured.dispatch_lag);
  if (!measured.connect_time.Empty()) {
    *report.mutable_connect_time() = Summarize(measured.connect_time);
  }
}

}  // namespace

v1::RunReport RunReportBuilder::Finish(double measured_s, double outside_queries_s,
                                       uint64_t not_started, std::string end_reason,
                                       std::string started_at,
                                       const std::vector<double>& stage_seconds) const {
  v1::RunReport report;
  report.set_format_version(kReportFormatVersion);
  report.set_dbload_version(DBLOAD_VERSION_STRING);
  *report.mutable_plan() = plan_;
  report.set_started_at(std::move(started_at));
  report.set_total_duration_s(measured_s);
  report.set_queries_duration_s(measured_s - outside_queries_s);
  FillMeasured(measured_, query_types_, report);
  for (int i = 0; i < report.query_types_size(); ++i) {
    report.mutable_query_types(i)->set_warmup_executed(warmup_executed_[static_cast<size_t>(i)]);
  }
  const bool open = plan_.load().has_open();
  if (open && plan_.stages_size() == 0) report.set_wanted_rate(plan_.load().open().rate());
  report.set_actual_rate(report.queries_duration_s() > 0
                             ? report.executed() / report.queries_duration_s()
                             : 0);
  for (int i = 0; i < plan_.stages_size(); ++i) {
    const v1::Stage& stage = plan_.stages(i);
    v1::StageReport& out = *report.add_stages();
    out.set_name(stage.name().empty() ? absl::StrCat("stage ", i + 1) : stage.name());
    out.set_index(static_cast<uint32_t>(i + 1));
    const double seconds = static_cast<size_t>(i) < stage_seconds.size() ? stage_seconds[i] : 0;
    out.set_duration_s(seconds);
    FillMeasured(stage_measured_[i], query_types_, out);
    if (open) {
      const Nanos length = StageLength(stage);
      out.set_wanted_rate(
          MeanLevel(stage.rate(), length > 0 ? length : static_cast<Nanos>(seconds * 1e9), false));
    }
    out.set_actual_rate(seconds > 0 ? out.executed() / seconds : 0);
    out.set_max_clients(stage_max_clients_[i]);
  }
  // A staged open loop wants, over the run, what its stages wanted over their time.
  if (open && plan_.stages_size() > 0 && measured_s > 0) {
    double wanted = 0;
    for (const v1::StageReport& stage : report.stages()) wanted += stage.wanted_rate() * stage.duration_s();
    report.set_wanted_rate(wanted / measured_s);
  }
  for (const auto& sample : samples_) *report.add_intervals() = sample;
  report.set_not_started(not_started);
  report.set_end_reason(std::move(end_reason));
  return report;
}

}  // namespace dbload
