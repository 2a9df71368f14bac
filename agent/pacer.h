#ifndef DBLOAD_AGENT_PACER_H_
#define DBLOAD_AGENT_PACER_H_

#include <functional>
#include <memory>

#include "base/clock.h"
#include "base/random.h"

namespace dbload {

// Open-loop arrivals: the intended start time of each transaction, independent of how long
// earlier ones took. Latency is measured from these times, which is what makes it honest
// about queueing (coordinated omission). Not thread-safe: the runner serializes access.
class Pacer {
 public:
  virtual ~Pacer() = default;
  // The next intended start; strictly increasing from call to call.
  virtual Nanos Next() = 0;
  // Applies from the next arrival on: the gap after the last arrival is drawn at the new rate,
  // so a change causes neither a burst nor a gap. `per_second` must be > 0.
  virtual void SetRate(double per_second) = 0;
};

// Evenly spaced arrivals. Arrival k after the last rate change is computed as base + k * period
// (not by repeated addition), so rates that do not divide a second into whole nanoseconds do
// not drift.
class UniformPacer final : public Pacer {
 public:
  // `phase` in [0, 1): fraction of one period by which the first arrival is delayed, so that
  // several generators at the same rate do not fire in lockstep.
  UniformPacer(Nanos start, double per_second, double phase = 0.0);
  Nanos Next() override;
  void SetRate(double per_second) override;

 private:
  Nanos base_;         // the arrival at which the current rate took effect
  int64_t count_ = 0;  // arrivals handed out since base_
  double period_ns_;  // not long double: x87 math + llroundl were ~15 % of a saturated engine
  Nanos last_ = 0;
};

// Poisson arrivals: exponentially distributed gaps, from a seeded stream (reproducible).
class PoissonPacer final : public Pacer {
 public:
  PoissonPacer(Nanos start, double per_second, uint64_t seed);
  Nanos Next() override;
  void SetRate(double per_second) override;

 private:
  double next_ns_;
  double mean_gap_ns_;
  Nanos last_ = 0;
  Random random_;
};

// Makes the pacer once the run knows its start time.
using PacerFactory = std::function<std::unique_ptr<Pacer>(Nanos start)>;

}  // namespace dbload

#endif  // DBLOAD_AGENT_PACER_H_
