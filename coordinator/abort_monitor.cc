#include "coordinator/abort_monitor.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace dbload {

AbortMonitor::AbortMonitor(const v1::AbortRules& rules, double measured_from_s)
    : rules_(rules), last_end_s_(measured_from_s) {}

std::optional<std::string> AbortMonitor::Track(Streak& streak, bool broken,
                                               double interval_start_s, double end_s,
                                               const std::string& what) {
  if (!broken) {
    streak.since_s = -1;
    return std::nullopt;
  }
  if (streak.since_s < 0) streak.since_s = interval_start_s;
  const double held_s = end_s - streak.since_s;
  // A small tolerance: agents' intervals jitter by milliseconds around whole seconds.
  if (held_s + 0.01 < static_cast<double>(rules_.for_ns()) / 1e9) return std::nullopt;
  return absl::StrFormat("%s for %.1f s", what, held_s);
}

std::optional<std::string> AbortMonitor::Observe(const v1::IntervalSample& sample) {
  if (sample.warmup()) return std::nullopt;
  const double start_s = std::min(last_end_s_, sample.elapsed_s());
  const double end_s = sample.elapsed_s();
  last_end_s_ = end_s;
  std::optional<std::string> reason;
  if (rules_.p99_above_ns() > 0) {
    const double limit_ms = static_cast<double>(rules_.p99_above_ns()) / 1e6;
    reason = Track(p99_, sample.p99_ms() > limit_ms, start_s, end_s,
                   absl::StrFormat("p99 %.3g ms above %.3g ms", sample.p99_ms(), limit_ms));
    if (reason) return reason;
  }
  if (rules_.error_rate_above() > 0) {
    const double completed = static_cast<double>(sample.executed() + sample.errors());
    const double rate = completed > 0 ? static_cast<double>(sample.errors()) / completed : 0;
    reason = Track(errors_, rate > rules_.error_rate_above(), start_s, end_s,
                   absl::StrFormat("error rate %.3g above %.3g", rate, rules_.error_rate_above()));
    if (reason) return reason;
  }
  if (rules_.achieved_below() > 0 && sample.target_rate() > 0) {
    const double fraction = sample.achieved_rate() / sample.target_rate();
    reason = Track(achieved_, fraction < rules_.achieved_below(), start_s, end_s,
                   absl::StrFormat("achieved %.0f/s, %.3g of the target %.0f/s, below %.3g",
                                   sample.achieved_rate(), fraction, sample.target_rate(),
                                   rules_.achieved_below()));
  }
  return reason;
}

}  // namespace dbload
