#include "agent/pacer.h"

#include <cmath>

namespace dbload {

UniformPacer::UniformPacer(Nanos start, double per_second, double phase)
    : period_ns_(1e9 / per_second) {
  base_ = start + static_cast<Nanos>(phase * period_ns_);
}

Nanos UniformPacer::Next() {
  // count_ * period_ns_ is a non-negative double, so adding 0.5 and truncating rounds it to the
  // nearest nanosecond, as llround would, without a libm call. In a double the offset is within
  // half a nanosecond of exact up to 2^51 ns (26 days) after a rate change; only later can an
  // arrival move by one nanosecond.
  last_ = base_ + static_cast<Nanos>(static_cast<double>(count_) * period_ns_ + 0.5);
  ++count_;
  return last_;
}

void UniformPacer::SetRate(double per_second) {
  // The gap after the last arrival is the first at the new rate.
  if (count_ > 0) {
    base_ = last_;
    count_ = 1;
  }
  period_ns_ = 1e9 / per_second;
}

PoissonPacer::PoissonPacer(Nanos start, double per_second, uint64_t seed)
    : next_ns_(static_cast<double>(start)), mean_gap_ns_(1e9 / per_second), random_(seed) {}

Nanos PoissonPacer::Next() {
  // Inverse transform; 1 - u is in (0, 1], so the log is finite.
  next_ns_ += -std::log(1.0 - random_.NextDouble()) * mean_gap_ns_;
  Nanos next = static_cast<Nanos>(next_ns_);
  if (next <= last_) next = last_ + 1;  // keep arrivals strictly ordered
  last_ = next;
  return next;
}

void PoissonPacer::SetRate(double per_second) { mean_gap_ns_ = 1e9 / per_second; }

}  // namespace dbload
