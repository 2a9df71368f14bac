#ifndef DBLOAD_COORDINATOR_SATURATION_H_
#define DBLOAD_COORDINATOR_SATURATION_H_

#include <map>
#include <string>
#include <vector>

#include "coordinator/db_probe.h"
#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// One run's probe readings, kept compactly (one key list, one row of numbers per reading), and
// what the report makes of them.
class ProbeRecord {
 public:
  // `elapsed_s`: when the reading was taken, on the run's clock.
  void Add(double elapsed_s, const std::vector<ProbeValue>& values);
  bool empty() const { return rows_.empty(); }
  // The elapsed time of the newest reading (-1 when none).
  double last_elapsed_s() const { return rows_.empty() ? -1 : rows_.back().elapsed_s; }

  // Sets the report's probe_samples and the saturation of the measured run and of each stage.
  // Spans come from the report's intervals: the measured run from the end of the warm-up, a
  // stage from the end of the previous one, to its last interval. A boundary's reading is the
  // first one at or after it; the end of the run (and of its last stage) is the newest reading,
  // which the coordinator takes after the load. Readings are a probe interval apart and
  // PostgreSQL publishes a busy backend's counters about once a second, so a boundary between
  // stages is exact only to about a second (SaturationDelta.from_s/to_s name the readings);
  // the run's own delta, from before the load to after it, is whole.
  void FillReport(dbload::v1::RunReport& report) const;

 private:
  struct Key {
    std::string source, name;
    bool gauge = false;
  };
  struct Row {
    double elapsed_s = 0;
    std::vector<double> values;  // by key index; NaN where the reading lacked the key
  };
  size_t ReadingAtOrAfter(double elapsed_s) const;  // the newest when none is
  void AddSpan(size_t first, size_t last, uint64_t queries,
               google::protobuf::RepeatedPtrField<dbload::v1::SaturationDelta>& out) const;

  std::vector<Key> keys_;
  std::map<std::string, size_t> index_;  // "source/name" -> key index
  std::vector<Row> rows_;
};

// Why the generator may have limited the load: the busiest agent's CPU (a fraction of its
// cores) over `max_agent_cpu`, or the dispatch lag p99 (the lateness of transactions that had
// a free connection waiting) over `max_schedule_lag_p99` (zero limits take the defaults, 0.9
// and 10 ms). Empty when neither.
std::string GeneratorLimitReason(const dbload::v1::GeneratorLimits& limits, double busiest_cpu,
                                 double dispatch_lag_p99_ms);

// Why the connection pool may have limited an open loop that the generator did not: the
// schedule lag p99 over the limit while the dispatch lag p99 stayed under it, so arrivals
// queued for busy connections. Empty otherwise (and whenever `generator_limited`).
std::string PoolLimitReason(const dbload::v1::GeneratorLimits& limits, uint32_t pool,
                            bool generator_limited, double schedule_lag_p99_ms,
                            double dispatch_lag_p99_ms);

// Marks the stages (or, without stages, the run) in which the generator may have limited the
// load (the busiest agent's CPU over the limit in some interval, or the dispatch lag p99 over
// its limit), and those in which arrivals queued for a busy connection instead (PoolLimitReason).
void MarkGeneratorLimits(const dbload::v1::GeneratorLimits& limits,
                         dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_SATURATION_H_
