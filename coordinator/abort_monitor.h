#ifndef DBLOAD_COORDINATOR_ABORT_MONITOR_H_
#define DBLOAD_COORDINATOR_ABORT_MONITOR_H_

#include <optional>
#include <string>

#include "dbload/v1/plan.pb.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// Watches a run's merged per-interval samples for a plan's abort rules (plan.proto AbortRules):
// p99 above a limit, error rate above a fraction, achieved rate below a fraction of the target.
// A rule fires once it has been broken without a break for at least `for` of measured time;
// warm-up samples are ignored. Pure: it sees samples, never a clock, so tests feed it numbers.
class AbortMonitor {
 public:
  // `measured_from_s`: where the measured part starts on the samples' elapsed_s axis.
  AbortMonitor(const dbload::v1::AbortRules& rules, double measured_from_s);

  // The reason to abort ("p99 35.2 ms above 20 ms for 5.0 s"), once a rule has held long
  // enough; nothing before. Samples come in elapsed order.
  std::optional<std::string> Observe(const dbload::v1::IntervalSample& sample);

 private:
  struct Streak {
    double since_s = -1;  // start of the first interval of the current breach; <0: none
  };
  std::optional<std::string> Track(Streak& streak, bool broken, double interval_start_s,
                                   double end_s, const std::string& what);

  dbload::v1::AbortRules rules_;
  double last_end_s_;
  Streak p99_, errors_, achieved_;
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_ABORT_MONITOR_H_
