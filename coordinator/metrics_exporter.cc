#include "coordinator/metrics_exporter.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace dbload {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double kFineFirstBound_s = 50e-6;
constexpr double kFineLastBound_s = 60.0;
constexpr double kFineGrowth = 1.05;
constexpr double kWindowQuantiles[] = {0.5, 0.9, 0.99, 0.999};

// For every index of the dbload histogram layout, the Prometheus bucket its samples fall in:
// the first bound at or above the bucket's highest value (so a sample is never counted below
// its true value), or the +Inf bucket past the last bound (== bounds.size()).
std::vector<int> BucketOfIndex(const std::vector<double>& bounds) {
  std::vector<int> result(histogram_layout::kBucketCount);
  size_t bucket = 0;
  for (int i = 0; i < histogram_layout::kBucketCount; ++i) {
    const double highest_s = static_cast<double>(histogram_layout::HighestValueAt(i)) / 1e9;
    while (bucket < bounds.size() && bounds[bucket] < highest_s) ++bucket;
    result[i] = static_cast<int>(bucket);
  }
  return result;
}

// The native bucket of every index of the dbload histogram layout: the one that holds the
// bucket's highest value, as the classic buckets (and the report's quantiles) count it, so that
// the report's exact quantile lies in the native bucket Prometheus interpolates in.
constexpr int32_t kNativeZero = std::numeric_limits<int32_t>::min();
std::vector<int32_t> NativeOfIndex(std::optional<int> schema) {
  if (!schema) return {};
  std::vector<int32_t> result(histogram_layout::kBucketCount);
  for (int i = 0; i < histogram_layout::kBucketCount; ++i) {
    const int64_t highest_ns = histogram_layout::HighestValueAt(i);
    result[i] = highest_ns == 0 ? kNativeZero
                                : NativeBucketIndex(static_cast<double>(highest_ns) / 1e9, *schema);
  }
  return result;
}

ClientMetric::Label L(std::string name, std::string value) {
  return ClientMetric::Label{std::move(name), std::move(value)};
}

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

ClientMetric Gauge(std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return metric;
}

ClientMetric Counter(std::vector<ClientMetric::Label> labels, double value) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.counter.value = value;
  return metric;
}

Histogram MergeWindow(const std::deque<std::vector<std::pair<int, uint64_t>>>& window) {
  Histogram merged;
  for (const auto& counts : window) {
    for (const auto& [index, count] : counts) merged.RecordAtIndex(index, count);
  }
  return merged;
}

}  // namespace

std::vector<double> DefaultBucketBounds() {
  return {50e-6, 100e-6, 200e-6, 500e-6, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1, 10};
}

std::vector<double> FineBucketBounds() {
  std::vector<double> result;
  for (double bound = kFineFirstBound_s; bound < kFineLastBound_s * kFineGrowth;
       bound *= kFineGrowth) {
    // Rounded to 4 significant digits so the `le` labels read well and stay stable.
    const double scale = std::pow(10.0, 3 - static_cast<int>(std::floor(std::log10(bound))));
    result.push_back(std::round(bound * scale) / scale);
  }
  return result;
}

absl::StatusOr<std::vector<double>> ParseBucketBounds(std::string_view spec) {
  const absl::string_view text(spec.data(), spec.size());
  if (text == "default") return DefaultBucketBounds();
  if (text == "fine") return FineBucketBounds();
  std::vector<double> bounds;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    double bound = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(part), &bound) || !std::isfinite(bound) ||
        bound <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bucket bound '", part,
                       "': expected a positive number of seconds (or the whole value "
                       "'default' or 'fine')"));
    }
    if (!bounds.empty() && bound <= bounds.back()) {
      return absl::InvalidArgumentError(absl::StrCat("bucket bound ", part,
                                                     " is not above the one before it (",
                                                     bounds.back(), "): bounds go up"));
    }
    bounds.push_back(bound);
  }
  if (bounds.size() > kMaxBucketBounds) {
    return absl::InvalidArgumentError(
        absl::StrCat(bounds.size(), " bucket bounds; at most ", kMaxBucketBounds));
  }
  return bounds;
}

MetricsExporter::MetricsExporter(int window_intervals, std::vector<double> bucket_bounds,
                                 std::optional<int> native_schema)
    : window_intervals_(static_cast<size_t>(std::max(1, window_intervals))),
      bounds_(std::move(bucket_bounds)),
      bucket_of_index_(BucketOfIndex(bounds_)),
      native_schema_(native_schema),
      native_of_index_(NativeOfIndex(native_schema)) {}

MetricsExporter::RunSeries& MetricsExporter::SeriesFor(const std::string& run_id,
                                                       const std::string& scenario) {
  auto [it, inserted] = runs_.try_emplace(run_id);
  if (inserted) {
    it->second.scenario = scenario;
    it->second.order = next_order_++;
    // Bounded cardinality: forget the oldest run beyond the limit.
    while (runs_.size() > kRunsKept) {
      auto oldest = std::min_element(runs_.begin(), runs_.end(), [](const auto& a, const auto& b) {
        return a.second.order < b.second.order;
      });
      runs_.erase(oldest);
    }
  }
  return runs_.at(run_id);
}

void MetricsExporter::AddDistribution(const Histogram& histogram, Distribution& into) const {
  if (histogram.Empty()) return;
  const std::vector<int>& bucket_of = bucket_of_index_;
  into.buckets.resize(bounds_.size() + 1, 0);
  for (int i = 0; i < histogram_layout::kBucketCount; ++i) {
    const uint64_t count = histogram.CountAtIndex(i);
    if (count == 0) continue;
    into.buckets[bucket_of[i]] += count;
    if (!native_of_index_.empty()) {
      const int32_t native = native_of_index_[i];
      (native == kNativeZero ? into.native_zero : into.native[native]) += count;
    }
    const double mid_s = (static_cast<double>(histogram_layout::LowestValueAt(i)) +
                          static_cast<double>(histogram_layout::HighestValueAt(i))) / 2e9;
    into.sum_s += mid_s * static_cast<double>(count);
  }
  into.count += histogram.TotalCount();
}

void MetricsExporter::PushWindow(const Histogram& histogram,
                                 std::deque<SparseCounts>& window) const {
  SparseCounts counts;
  for (int i = 0; i < histogram_layout::kBucketCount && !histogram.Empty(); ++i) {
    if (const uint64_t count = histogram.CountAtIndex(i)) counts.emplace_back(i, count);
  }
  window.push_back(std::move(counts));
  while (window.size() > window_intervals_) window.pop_front();
}

void MetricsExporter::OnInterval(const RunInterval& interval) {
  std::lock_guard lock(mu_);
  RunSeries& run = SeriesFor(interval.run_id, interval.scenario);
  run.query_type_names = interval.query_types;
  run.query_types.resize(interval.query_types.size());
  run.target_rate = interval.target_rate;
  run.clients = interval.clients;
  run.in_flight = interval.in_flight;
  run.connections = interval.connections;
  if (interval.stage > 0) {
    run.stage = interval.stage;
    run.stage_name = interval.stage_name;
  }
  if (interval.merged == nullptr) return;
  const IntervalSnapshot& merged = *interval.merged;
  run.achieved_rate = interval.length_s > 0 ? merged.Executed() / interval.length_s : 0;
  for (size_t q = 0; q < run.query_types.size() && q < merged.query_types.size(); ++q) {
    QueryTypeSeries& series = run.query_types[q];
    const QueryTypeInterval& counts = merged.query_types[q];
    series.ok += counts.response_time.TotalCount();
    series.statements += counts.statements;
    series.retry.Add(counts.retry);
    series.rolled_back += counts.rolled_back;
    for (const auto& [key, count] : counts.errors) {
      series.errors[{std::string(db::ErrorClassName(key.first)), key.second}] += count;
    }
    AddDistribution(counts.response_time, series.response);
    AddDistribution(counts.service_time, series.service);
    PushWindow(counts.response_time, series.window);
  }
  PushWindow(merged.schedule_lag, run.lag_window);
  AddDistribution(merged.connect_time, run.connect);
  for (const auto& [agent, seconds] : interval.agent_cpu_seconds) {
    run.agent_cpu_seconds[agent] += seconds;
  }
  for (const auto& [agent, fraction] : interval.agent_cpu_utilization) {
    run.agent_cpu_utilization[agent] = fraction;
  }
  run.generator_limited = interval.generator_limited;
  run.pool_limited = interval.pool_limited;
  run.database_stalled = interval.database_stalled;
  run.dispatch_lag_share = interval.dispatch_lag_share;
}

void MetricsExporter::OnProbeReading(const std::string& run_id, const std::string& scenario,
                                     const std::vector<ProbeValue>& values) {
  std::lock_guard lock(mu_);
  RunSeries& run = SeriesFor(run_id, scenario);
  run.probe_values = values;
  for (ProbeValue& value : run.probe_values) {
    if (value.gauge) continue;
    // A restarted server counts from zero again. The exported counter stays monotonic (what
    // was counted before the reset is kept as an offset), so that a scrape across the restart
    // and the report's deltas agree: both count the new value from zero, as rate() does.
    // A dip that is no reset (CounterWasReset) is exported as the highest value read.
    ProbeCounter& counter = run.probe_counters[absl::StrCat(value.source, "/", value.name)];
    if (!counter.read || value.value >= counter.last) {
      counter.last = value.value;
    } else if (CounterWasReset(counter.last, value.value)) {
      counter.offset += counter.last;
      counter.last = value.value;
    }
    counter.read = true;
    value.value = counter.offset + counter.last;
  }
}

void MetricsExporter::SetProbeUp(const std::string& run_id, const std::string& scenario,
                                 bool up) {
  std::lock_guard lock(mu_);
  SeriesFor(run_id, scenario).probe_up = up;
}

void MetricsExporter::SetRunState(const std::string& run_id, const std::string& scenario,
                                  const std::string& state) {
  std::lock_guard lock(mu_);
  SeriesFor(run_id, scenario).state = state;
}

void MetricsExporter::SetAgentsLost(const std::string& run_id, const std::string& scenario,
                                    int lost) {
  std::lock_guard lock(mu_);
  SeriesFor(run_id, scenario).agents_lost = lost;
}

void MetricsExporter::SetAgentsConnected(int agents) {
  std::lock_guard lock(mu_);
  agents_connected_ = agents;
}

std::vector<MetricFamily> MetricsExporter::Collect() const { return Expose().families; }

ExposedPage MetricsExporter::Render(std::string_view accept) const {
  if (native_schema_ && AcceptsPrometheusProtobuf(accept)) {
    return {kProtobufContentType, PrometheusProtobuf(Expose())};
  }
  return {kTextContentType, PrometheusText(*this)};
}

Exposition MetricsExporter::Expose() const {
  std::lock_guard lock(mu_);
  MetricFamily queries = Family("dbload_queries_total", "Completed transactions by result.",
                                MetricType::Counter);
  MetricFamily statements =
      Family("dbload_statements_total",
             "Statements the transactions sent, BEGIN, COMMIT and ROLLBACK included, whatever "
             "their result (sysbench's queries).",
             MetricType::Counter);
  MetricFamily retries =
      Family("dbload_retries_total", "Tries again under the workload's retry policy, by cause.",
             MetricType::Counter);
  MetricFamily retry_failures = Family(
      "dbload_retry_failures_total",
      "Transactions tried again that still failed (also counted as errors).", MetricType::Counter);
  MetricFamily rolled_back =
      Family("dbload_rolled_back_total",
             "Transactions the workload ended with ROLLBACK by design (TPC-C's New-Orders on an "
             "unused item), also counted as ok.",
             MetricType::Counter);
  MetricFamily response = Family("dbload_response_time_seconds",
                                 "Response time from the intended start (includes queueing).",
                                 MetricType::Histogram);
  MetricFamily service = Family("dbload_service_time_seconds",
                                "Service time from the actual start.", MetricType::Histogram);
  MetricFamily connect =
      Family("dbload_connect_time_seconds",
             "Connects of runs that open a connection per transaction.", MetricType::Histogram);
  MetricFamily window = Family("dbload_response_time_window_seconds",
                               "Exact response-time quantiles over the last window.",
                               MetricType::Gauge);
  MetricFamily lag = Family("dbload_schedule_lag_window_seconds",
                            "Exact schedule-lag quantiles over the last window.", MetricType::Gauge);
  MetricFamily target = Family("dbload_target_rate", "Wanted queries per second (open loop).",
                               MetricType::Gauge);
  MetricFamily achieved = Family("dbload_achieved_rate", "Completed queries per second.",
                                 MetricType::Gauge);
  MetricFamily clients = Family("dbload_clients", "Closed-loop clients.", MetricType::Gauge);
  MetricFamily in_flight = Family("dbload_in_flight", "Transactions in flight.", MetricType::Gauge);
  MetricFamily connections =
      Family("dbload_connections", "Open database sessions.", MetricType::Gauge);
  MetricFamily cpu = Family("dbload_agent_cpu_seconds_total", "CPU time used by each agent.",
                            MetricType::Counter);
  MetricFamily info = Family("dbload_run_info", "Runs and their state.", MetricType::Gauge);
  MetricFamily stage = Family("dbload_run_stage", "The stage a run is in (1-based).",
                              MetricType::Gauge);
  MetricFamily lost = Family("dbload_run_agents_lost",
                             "Agents lost before their final report (more than 0: degraded).",
                             MetricType::Gauge);
  MetricFamily agents =
      Family("dbload_agents_connected", "Agents connected to the coordinator.", MetricType::Gauge);
  MetricFamily utilization = Family("dbload_agent_cpu_utilization",
                                    "An agent's CPU in its latest report, as a fraction of its cores.",
                                    MetricType::Gauge);
  MetricFamily generator_limited =
      Family("dbload_generator_limited",
             "1 when the last interval went over the generator limits (agent CPU, dispatch lag, "
             "or arrivals queued behind the agent's own work).",
             MetricType::Gauge);
  MetricFamily pool_limited =
      Family("dbload_pool_limited",
             "1 when the last interval's arrivals queued for busy connections (schedule lag over "
             "the limit, dispatch lag under it): the database or the pool set the pace.",
             MetricType::Gauge);
  MetricFamily database_stalled =
      Family("dbload_database_stalled",
             "1 when in the last interval the database stopped answering (connections stuck in "
             "database calls or reconnecting), or its arrivals waited through such a stall.",
             MetricType::Gauge);
  MetricFamily dispatch_lag_share =
      Family("dbload_dispatch_lag_share",
             "The last interval's dispatch lag p99 as a fraction of its response-time p99: how "
             "much of the published percentile the agent's own lateness can be.",
             MetricType::Gauge);
  MetricFamily db_counter = Family("dbload_db_counter_total",
                                   "A cumulative counter the database probe read from the server.",
                                   MetricType::Counter);
  MetricFamily db_gauge =
      Family("dbload_db_gauge", "A level the database probe read from the server.", MetricType::Gauge);
  MetricFamily probe_up = Family("dbload_probe_up", "1 when the database probe's last attempt succeeded.",
                                 MetricType::Gauge);
  agents.metric.push_back(Gauge({}, agents_connected_));

  const std::vector<double>& bounds = bounds_;
  auto histogram_metric = [&](std::vector<ClientMetric::Label> labels, const Distribution& d) {
    ClientMetric metric;
    metric.label = std::move(labels);
    metric.histogram.sample_count = d.count;
    metric.histogram.sample_sum = d.sum_s;
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= bounds.size(); ++b) {
      cumulative += b < d.buckets.size() ? d.buckets[b] : 0;
      metric.histogram.bucket.push_back(
          {cumulative, b < bounds.size() ? bounds[b] : std::numeric_limits<double>::infinity()});
    }
    return metric;
  };
  // The native histograms of the response, service and connect families, one per series.
  std::vector<NativeHistogram> response_native, service_native, connect_native;
  auto native_histogram = [&](const Distribution& d, std::vector<NativeHistogram>& into) {
    if (!native_schema_) return;
    NativeHistogram& native = into.emplace_back();
    native.schema = *native_schema_;
    native.zero_count = d.native_zero;
    native.buckets.assign(d.native.begin(), d.native.end());
  };

  for (const auto& [run_id, run] : runs_) {
    const std::vector<ClientMetric::Label> run_labels = {L("run", run_id)};
    info.metric.push_back(
        Gauge({L("run", run_id), L("scenario", run.scenario), L("state", run.state)}, 1));
    lost.metric.push_back(Gauge({L("run", run_id)}, run.agents_lost));
    if (run.stage > 0) {
      stage.metric.push_back(Gauge({L("run", run_id), L("stage", run.stage_name)}, run.stage));
    }
    target.metric.push_back(Gauge(run_labels, run.target_rate));
    achieved.metric.push_back(Gauge(run_labels, run.achieved_rate));
    clients.metric.push_back(Gauge(run_labels, run.clients));
    in_flight.metric.push_back(Gauge(run_labels, run.in_flight));
    connections.metric.push_back(Gauge(run_labels, run.connections));
    if (run.agent_cpu_seconds.size() <= kAgentSeriesMax &&
        run.agent_cpu_utilization.size() <= kAgentSeriesMax) {
      for (const auto& [agent, seconds] : run.agent_cpu_seconds) {
        cpu.metric.push_back(Counter({L("run", run_id), L("agent", agent)}, seconds));
      }
      for (const auto& [agent, fraction] : run.agent_cpu_utilization) {
        utilization.metric.push_back(Gauge({L("run", run_id), L("agent", agent)}, fraction));
      }
    } else {
      double seconds = 0, busiest = 0;
      for (const auto& [agent, agent_seconds] : run.agent_cpu_seconds) seconds += agent_seconds;
      for (const auto& [agent, fraction] : run.agent_cpu_utilization) {
        busiest = std::max(busiest, fraction);
      }
      cpu.metric.push_back(Counter({L("run", run_id), L("agent", "all")}, seconds));
      utilization.metric.push_back(Gauge({L("run", run_id), L("agent", "busiest")}, busiest));
    }
    const std::vector<ClientMetric::Label> run_scenario = {L("run", run_id),
                                                           L("scenario", run.scenario)};
    generator_limited.metric.push_back(Gauge(run_scenario, run.generator_limited ? 1 : 0));
    pool_limited.metric.push_back(Gauge(run_scenario, run.pool_limited ? 1 : 0));
    database_stalled.metric.push_back(Gauge(run_scenario, run.database_stalled ? 1 : 0));
    dispatch_lag_share.metric.push_back(Gauge(run_scenario, run.dispatch_lag_share));
    if (run.connect.count > 0) {
      connect.metric.push_back(histogram_metric(run_scenario, run.connect));
      native_histogram(run.connect, connect_native);
    }
    if (run.probe_up) probe_up.metric.push_back(Gauge(run_scenario, *run.probe_up ? 1 : 0));
    for (const ProbeValue& value : run.probe_values) {
      std::vector<ClientMetric::Label> labels = run_scenario;
      labels.push_back(L("source", value.source));
      labels.push_back(L("name", value.name));
      (value.gauge ? db_gauge : db_counter)
          .metric.push_back(value.gauge ? Gauge(std::move(labels), value.value)
                                        : Counter(std::move(labels), value.value));
    }
    const Histogram lag_window = MergeWindow(run.lag_window);
    for (double q : kWindowQuantiles) {
      lag.metric.push_back(Gauge({L("run", run_id), L("quantile", absl::StrFormat("%g", q))},
                                 lag_window.ValueAtPercentile(q * 100) / 1e9));
    }
    for (size_t i = 0; i < run.query_types.size(); ++i) {
      const QueryTypeSeries& series = run.query_types[i];
      const std::vector<ClientMetric::Label> labels = {
          L("run", run_id), L("scenario", run.scenario), L("query_type", run.query_type_names[i])};
      auto with = [&](std::vector<ClientMetric::Label> extra) {
        std::vector<ClientMetric::Label> all = labels;
        all.insert(all.end(), extra.begin(), extra.end());
        return all;
      };
      queries.metric.push_back(
          Counter(with({L("result", "ok"), L("error_class", "")}), static_cast<double>(series.ok)));
      std::map<std::string, uint64_t> by_class;
      for (const auto& [key, count] : series.errors) by_class[key.first] += count;
      const std::string ignored_class(db::ErrorClassName(db::ErrorClass::kIgnored));
      for (const auto& [error_class, count] : by_class) {
        // Ignored errors (sysbench's) are neither ok nor errors: a result of their own, so that
        // error rates over result="error" leave them out, as the report's errors do.
        const bool ignored = error_class == ignored_class;
        queries.metric.push_back(Counter(
            with({L("result", ignored ? "ignored" : "error"), L("error_class", error_class)}),
            static_cast<double>(count)));
      }
      statements.metric.push_back(Counter(labels, static_cast<double>(series.statements)));
      // Only for query types that retried: a series per cause of every query type would be
      // zeros for workloads without a retry policy.
      for (const auto& [cause, count] : series.retry.retries) {
        retries.metric.push_back(Counter(with({L("cause", std::string(db::RetryCauseName(cause)))}),
                                         static_cast<double>(count)));
      }
      if (!series.retry.empty()) {
        retry_failures.metric.push_back(
            Counter(labels, static_cast<double>(series.retry.failed_after_retries)));
      }
      // Only for query types whose workload rolled back: other workloads never do.
      if (series.rolled_back > 0) {
        rolled_back.metric.push_back(Counter(labels, static_cast<double>(series.rolled_back)));
      }
      response.metric.push_back(histogram_metric(labels, series.response));
      native_histogram(series.response, response_native);
      service.metric.push_back(histogram_metric(labels, series.service));
      native_histogram(series.service, service_native);
      const Histogram recent = MergeWindow(series.window);
      for (double q : kWindowQuantiles) {
        window.metric.push_back(Gauge(with({L("quantile", absl::StrFormat("%g", q))}),
                                      recent.ValueAtPercentile(q * 100) / 1e9));
      }
    }
  }
  Exposition exposition;
  auto expose = [&](MetricFamily& family, std::vector<NativeHistogram> native) {
    exposition.families.push_back(std::move(family));
    exposition.native.push_back(std::move(native));
  };
  for (MetricFamily* family : {&queries, &statements, &retries, &retry_failures, &rolled_back}) {
    expose(*family, {});
  }
  expose(response, std::move(response_native));
  expose(service, std::move(service_native));
  expose(connect, std::move(connect_native));
  for (MetricFamily* family : {&window,
                               &lag,
                               &target,
                               &achieved,
                               &clients,
                               &in_flight,
                               &connections,
                               &cpu,
                               &utilization,
                               &info,
                               &stage,
                               &lost,
                               &agents,
                               &generator_limited,
                               &pool_limited,
                               &database_stalled,
                               &dispatch_lag_share,
                               &db_counter,
                               &db_gauge,
                               &probe_up}) {
    expose(*family, {});
  }
  return exposition;
}

}  // namespace dbload
