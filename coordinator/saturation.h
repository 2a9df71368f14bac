#ifndef DBLOAD_COORDINATOR_SATURATION_H_
#define DBLOAD_COORDINATOR_SATURATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
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
  // Adds `by_s` to every reading's time (the run's clock started later than they were kept).
  void ShiftElapsed(double by_s) {
    for (Row& row : rows_) row.elapsed_s += by_s;
  }
  // The value named `name` (of whichever source has it) in the newest reading, if it has one.
  std::optional<double> Newest(absl::string_view name) const;

  // Sets the report's probe_samples and the saturation of the measured run and of each stage.
  // Spans come from the report's intervals: the measured run from the end of the warm-up (or,
  // without one, from the first reading, taken before the load), a stage from the end of the
  // previous one, to its last interval. A boundary's reading is the first one at or after it;
  // the end of the run (and of its last stage) is the newest reading, which the coordinator
  // takes after the load. Readings are a probe interval apart and PostgreSQL publishes a busy
  // backend's counters about once a second, so a boundary between stages is exact only to
  // about a second (SaturationDelta.from_s/to_s name the readings); the run's own delta, from
  // before the load to after it, is whole. Each delta's `readings` counts the readings of the
  // span that had its value (a reading may lack one: the process source's rss_bytes, a value a
  // restarted server no longer gives). Counters survive a server restart inside a span (a reset
  // counts from zero, as in Prometheus' rate()); per_query divides by the transactions
  // executed, errors left out.
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

// The plan's generator limits with their defaults filled in.
struct GeneratorThresholds {
  double max_cpu = 0.9;             // of an agent's cores
  double queue_lag_ms = 10;         // schedule lag p99 over this: arrivals queued
  double max_dispatch_share = 0.1;  // dispatch lag p99 over this share of the response p99 …
  double min_dispatch_lag_ms = 1;   // … and over this floor marks the generator
};
GeneratorThresholds ThresholdsOf(const dbload::v1::GeneratorLimits& limits);

// Why the dispatch lag p99 marks the generator (empty when it does not): over the share of the
// response-time p99 and over the floor. Relative, because lateness that is a small part of
// what is published changes nothing a reader concludes, and a fixed limit let half of a fast
// database's p99 pass. The text states the share: how much of the percentile it can be.
std::string DispatchLagMark(const GeneratorThresholds& limits, double dispatch_lag_p99_ms,
                            double response_p99_ms);

// How one interval was judged, and on what.
struct IntervalJudgement {
  enum class Cause {
    kNone,
    kDatabaseStalled,    // connections stuck in database calls or reconnecting, few completed
    kQueuedBehindStall,  // arrivals queued through a stalled interval (this one or before)
    kPool,               // arrivals queued for connections busy in database calls
    kAgentCpu,           // the busiest agent's CPU over the limit
    kDispatchLag,        // transactions with a free connection started late
    kQueuedBehindAgent,  // arrivals queued for connections busy with the agent's own work
  };
  Cause cause = Cause::kNone;
  dbload::v1::IntervalLimit limit = dbload::v1::INTERVAL_LIMIT_NONE;
  std::string why;  // the figures that decided it
};

// Judges each interval from what the connections did in it (ConnectionTime) and, for arrivals
// that queued, in the intervals they waited through (back from the interval's start by its
// schedule lag p99, plus a second for the agents' and the coordinator's ticks). An interval is
//  - database-stalled when its connections spent at least 30 % of the time in database calls
//    or reconnecting beyond what its completions took at the run's usual pace (completions per
//    second of database calls, the median over its measured intervals), completing under half
//    that pace, or when its queued arrivals waited through such an interval: a stall, a
//    restart, an outage;
//  - generator-limited when the busiest agent's CPU or the interval's dispatch lag went over
//    the limits, or its arrivals queued for connections that were in database calls (or
//    reconnecting) less than half the time, or in the agent's own work a quarter of it or
//    more: the agent's own work held them up;
//  - pool-limited when its arrivals queued for connections in database calls at least half
//    the time (without connection times, from an older agent, queueing counts as the pool's).
// Warm-up intervals are judged kNone and count in no median.
std::vector<IntervalJudgement> JudgeIntervals(
    const dbload::v1::GeneratorLimits& limits,
    const std::vector<const dbload::v1::IntervalSample*>& samples, uint32_t pool);

// Sets each interval's `limit`, and marks the stages (or, without stages, the run) from their
// intervals: database-stalled and pool-limited when any interval was (the reason names them
// in elapsed seconds); generator-limited when an interval's CPU was over the limit or its
// arrivals queued behind the agent's own work, or when the scope's own dispatch lag p99 marks
// it (DispatchLagMark on the scope's merged percentiles: one late second does not mark a run
// whose published p99 it does not move). Sets dispatch_lag_share. With stages, the run
// carries the first marked stage's marks and reasons.
void MarkGeneratorLimits(const dbload::v1::GeneratorLimits& limits,
                         dbload::v1::RunReport& report);

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_SATURATION_H_
