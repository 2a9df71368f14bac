#ifndef DBLOAD_COORDINATOR_SATURATION_H_
#define DBLOAD_COORDINATOR_SATURATION_H_

#include <cstdint>
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
  // the run's own delta, from before the load to after it, is whole. Counters survive a server
  // restart inside a span (a reset counts from zero, as in Prometheus' rate()); per_query
  // divides by the transactions executed, errors left out.
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

// What the generator- and pool-limited marks of a run, a stage or an interval are judged on.
struct LoadFigures {
  double busiest_cpu = 0;  // the busiest agent's CPU, as a fraction of its cores
  double schedule_lag_p99_ms = 0;
  double dispatch_lag_p99_ms = 0;  // lag of transactions that had a free connection
  // The connections' time in database calls (total service time) and their time in all
  // (connections × duration); the second is 0 when unknown.
  double service_s = 0;
  double connection_s = 0;
  uint32_t pool = 0;  // connections per agent, for the reason's text
};

// Why the generator, or else the connection pool, may have limited the load; empty when not.
struct LimitMarks {
  std::string generator;
  std::string pool;
};

// The limits are `max_agent_cpu` and `max_schedule_lag_p99` (zero takes the defaults, 0.9 and
// 10 ms).
//  - Generator-limited: the busiest agent's CPU over its limit, or the dispatch lag p99 over
//    the lag limit (transactions with a free connection started late).
//  - Arrivals queued instead (schedule lag p99 over the limit, dispatch lag under it): pool-
//    limited when the connections spent at least half their time in database calls (the
//    database, or too small a pool for its latency, set the pace). Connections busy with the
//    agent's own work (the noop driver flat out, on a machine that left the agent too little
//    CPU to show) make it generator-limited.
LimitMarks JudgeLimits(const dbload::v1::GeneratorLimits& limits, const LoadFigures& figures);

// Marks the stages (or, without stages, the run) that JudgeLimits finds generator- or pool-
// limited; the busiest agent's CPU is its highest in any interval of the stage. With stages,
// the run carries the first marked stage's mark and reason.
void MarkGeneratorLimits(const dbload::v1::GeneratorLimits& limits,
                         dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_SATURATION_H_
