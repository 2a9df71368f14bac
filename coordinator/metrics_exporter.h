#ifndef DBLOAD_COORDINATOR_METRICS_EXPORTER_H_
#define DBLOAD_COORDINATOR_METRICS_EXPORTER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/db_probe.h"
#include "coordinator/metrics_exposition.h"
#include "interval/interval_snapshot.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace dbload {

// What the coordinator learned about a run in one interval, merged across its agents.
struct RunInterval {
  std::string run_id;
  std::string scenario;
  std::vector<std::string> query_types;
  const IntervalSnapshot* merged = nullptr;  // exact counts of the interval
  double length_s = 0;
  double target_rate = 0;  // 0 for a closed loop
  uint32_t clients = 0;
  uint32_t in_flight = 0;
  uint32_t connections = 0;
  bool warmup = false;
  uint32_t stage = 0;  // 1-based in plans with stages
  std::string stage_name;
  // CPU seconds each agent used in the interval, and its latest CPU as a fraction of its cores.
  std::map<std::string, double> agent_cpu_seconds;
  std::map<std::string, double> agent_cpu_utilization;
  // The busiest agent's CPU or the dispatch lag went over the plan's generator limits.
  bool generator_limited = false;
  // Open loop: arrivals queued for busy connections (coordinator/saturation.h JudgeIntervals).
  bool pool_limited = false;
  // The database stopped answering (or the interval's arrivals waited through such a stall).
  bool database_stalled = false;
  // The interval's dispatch lag p99 ÷ its response-time p99.
  double dispatch_lag_share = 0;
};

// Publishes runs to Prometheus, following its conventions (seconds, `_total` counters), from
// the same exact counts the report uses:
//   dbload_queries_total{run,scenario,query_type,result,error_class}      counter
//   dbload_statements_total{run,scenario,query_type}  statements the transactions sent, BEGIN,
//                                   COMMIT and ROLLBACK included, whatever their result
//                                   (sysbench's queries: rate() of it is its QPS)   counter
//   dbload_retries_total{run,scenario,query_type,cause}  tries again under the workload's
//                                   retry policy, by the error that caused them       counter
//   dbload_retry_failures_total{run,scenario,query_type}  transactions tried again that still
//                                   failed (also in dbload_queries_total's errors)    counter
//   dbload_rolled_back_total{run,scenario,query_type}  transactions the workload rolled back
//                                   by design (TPC-C's), also result="ok"; only once some were
//                                                                                     counter
//   dbload_response_time_seconds / dbload_service_time_seconds{…}         histograms
//   dbload_connect_time_seconds{run,scenario}   connects of runs with a connection per
//                                   transaction (target.connect), only in those     histogram
//   dbload_response_time_window_seconds{…,quantile}   exact quantiles of the last window
//   dbload_schedule_lag_window_seconds{run,quantile}
//   dbload_target_rate, dbload_achieved_rate (queries per second), dbload_clients,
//   dbload_in_flight, dbload_connections{run}                             gauges
//   dbload_agent_cpu_seconds_total{run,agent}                             counter
//                                   (a run of more than kAgentSeriesMax agents: agent="all",
//                                   their sum)
//   dbload_agents_connected                                               gauge
//   dbload_run_info{run,scenario,state}                                   gauge (1)
//   dbload_run_agents_lost{run}     agents lost before their final report (> 0: degraded)
//   dbload_run_stage{run,stage}     the current stage's 1-based index (plans with stages)
//   dbload_agent_cpu_utilization{run,agent}  an agent's CPU in its latest report / its cores
//                                   (more than kAgentSeriesMax agents: agent="busiest", the
//                                   highest)
//   dbload_generator_limited{run,scenario}   1 when the last interval went over the generator
//                                            limits (agent CPU, dispatch lag p99, or arrivals
//                                            queued behind the agent's own work)
//   dbload_pool_limited{run,scenario}        1 when the last interval's arrivals queued for
//                                            busy connections (the database or the pool set the
//                                            pace)
//   dbload_database_stalled{run,scenario}    1 when in the last interval the database stopped
//                                            answering, or its arrivals waited through that
//   dbload_dispatch_lag_share{run,scenario}  the last interval's dispatch lag p99 ÷ its
//                                            response-time p99: the agent's own share of it
//   dbload_db_counter_total / dbload_db_gauge{run,scenario,source,name}
//                                   what the database probe last read (coordinator/db_probe.h)
//   dbload_probe_up{run,scenario}   1 when the probe's last attempt succeeded
// The exported histograms' classic buckets are few by default (DefaultBucketBounds), so that a
// run stays cheap for Prometheus; the exact figures are the window quantile gauges (within the
// histogram's 0.1 %) and the reports. Label sets are bounded: query types come from the
// scenario, and only the newest kRunsKept runs are kept.
//
// The default: 14 bounds from 50 µs to 10 s, in 1-2-5 steps up to 100 ms where databases
// answer, then 0.5, 1 and 10 s. A run of 20 query types exports about 850 series and 90 KB a
// scrape (17 series per histogram, two histograms per query type; 11,796 series and 1.27 MB
// with the fine buckets). histogram_quantile() then answers within the bucket that holds the
// true quantile, interpolated linearly inside it: between bounds at most 2.5× apart up to
// 100 ms, 5× up to 1 s, 10× up to 10 s, and above 10 s it says 10 s.
//
// A Prometheus that asks for the protobuf exposition (native histograms enabled) gets each
// histogram as a native one too (coordinator/metrics_exposition.h), still one series, within
// one exponential bucket: 2.2 % at the default schema, 5.
std::vector<double> DefaultBucketBounds();
// 5 % growth from 50 µs to 60 s (289 bounds): histogram_quantile() within 5 %, 14× the series.
std::vector<double> FineBucketBounds();
inline constexpr size_t kMaxBucketBounds = 1000;
// `--metrics-buckets`: "default", "fine", or bounds in seconds, ascending, comma-separated
// ("0.001,0.005,0.02,0.1,1"), at most kMaxBucketBounds. The error names the bound at fault.
absl::StatusOr<std::vector<double>> ParseBucketBounds(std::string_view spec);

class MetricsExporter final : public prometheus::Collectable {
 public:
  static constexpr size_t kRunsKept = 8;
  // Per-agent series of a run, at most: a thousand agents would be two thousand series. Past
  // it a run exports its agents' summed CPU and the busiest one's utilization (the generator
  // limit is judged on the busiest), and the report keeps each agent's figures.
  static constexpr size_t kAgentSeriesMax = 50;

  // Quantile gauges cover the last `window_intervals` intervals; the histograms are exported
  // with `bucket_bounds` (seconds, ascending; +Inf is added), and as native histograms of
  // `native_schema` unless it is nullopt.
  explicit MetricsExporter(int window_intervals = 10,
                           std::vector<double> bucket_bounds = DefaultBucketBounds(),
                           std::optional<int> native_schema = kDefaultNativeSchema);

  void OnInterval(const RunInterval& interval);
  void SetRunState(const std::string& run_id, const std::string& scenario,
                   const std::string& state);
  void SetAgentsConnected(int agents);
  void SetAgentsLost(const std::string& run_id, const std::string& scenario, int lost);
  // The database probe's latest reading of a run (replaces the previous one), and its health.
  // Counters are exported monotonic across server restarts (a reset adds an offset).
  void OnProbeReading(const std::string& run_id, const std::string& scenario,
                      const std::vector<ProbeValue>& values);
  void SetProbeUp(const std::string& run_id, const std::string& scenario, bool up);

  // Called by the exposer's threads. Collect has the classic histograms only.
  std::vector<prometheus::MetricFamily> Collect() const override;
  Exposition Expose() const;
  // The /metrics page for a scrape whose Accept header is `accept`: the protobuf exposition,
  // with native histograms, to a client that accepts it while native histograms are on; the
  // text exposition otherwise.
  ExposedPage Render(std::string_view accept) const;

  // The histogram bucket bounds, in seconds.
  const std::vector<double>& bucket_bounds() const { return bounds_; }

 private:
  using SparseCounts = std::vector<std::pair<int, uint64_t>>;  // (histogram index, count)
  struct Distribution {
    std::vector<uint64_t> buckets;  // per bound, not cumulative
    uint64_t count = 0;
    double sum_s = 0;
    uint64_t native_zero = 0;
    std::map<int32_t, uint64_t> native;  // native bucket index → count
  };
  struct QueryTypeSeries {
    Distribution response, service;
    uint64_t ok = 0;
    std::map<std::pair<std::string, std::string>, uint64_t> errors;  // (class, code)
    uint64_t statements = 0;
    RetryTally retry;
    uint64_t rolled_back = 0;
    std::deque<SparseCounts> window;  // response time, newest last
  };
  // A probe counter's highest value since its last reset, and what it counted before its resets.
  struct ProbeCounter {
    bool read = false;
    double last = 0;
    double offset = 0;
  };
  struct RunSeries {
    std::string scenario;
    std::string state = "running";
    int agents_lost = 0;
    std::vector<std::string> query_type_names;
    std::vector<QueryTypeSeries> query_types;
    std::deque<SparseCounts> lag_window;
    Distribution connect;  // empty unless the run connects per transaction
    double target_rate = 0, achieved_rate = 0;
    uint32_t clients = 0, in_flight = 0, connections = 0;
    uint32_t stage = 0;
    std::string stage_name;
    std::map<std::string, double> agent_cpu_seconds;
    std::map<std::string, double> agent_cpu_utilization;
    bool generator_limited = false;
    bool pool_limited = false;
    bool database_stalled = false;
    double dispatch_lag_share = 0;
    std::vector<ProbeValue> probe_values;  // counters with their offsets added
    std::map<std::string, ProbeCounter> probe_counters;  // by "source/name"
    std::optional<bool> probe_up;  // unset: the run has no probe
    uint64_t order = 0;
  };

  RunSeries& SeriesFor(const std::string& run_id, const std::string& scenario);
  void AddDistribution(const Histogram& histogram, Distribution& into) const;
  void PushWindow(const Histogram& histogram, std::deque<SparseCounts>& window) const;

  const size_t window_intervals_;
  const std::vector<double> bounds_;
  const std::vector<int> bucket_of_index_;  // per dbload histogram index: its bucket in bounds_
  const std::optional<int> native_schema_;
  // Per dbload histogram index: its native bucket (kNativeZero for the value 0); empty when
  // native histograms are off.
  const std::vector<int32_t> native_of_index_;
  mutable std::mutex mu_;
  std::map<std::string, RunSeries> runs_;
  uint64_t next_order_ = 0;
  int agents_connected_ = 0;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_METRICS_EXPORTER_H_
