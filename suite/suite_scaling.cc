#include "suite/suite_scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace dbload {
namespace {

namespace v1 = dbload::v1;

uint64_t ScaledCount(uint64_t count, double scale) {
  if (count == 0) return 0;
  return std::max<uint64_t>(
      1, static_cast<uint64_t>(std::llround(static_cast<double>(count) * scale)));
}

// Whole milliseconds, at least 1 ms: a scaled duration never becomes 0 ("unset").
int64_t ScaledDuration(int64_t nanos, double time_scale) {
  if (nanos <= 0 || time_scale == 1) return nanos;
  constexpr double kMillisecond = 1e6;
  const double millis = std::round(static_cast<double>(nanos) * time_scale / kMillisecond);
  return static_cast<int64_t>(std::max(1.0, millis) * kMillisecond);
}

void ScaleLevel(v1::Level& level, double scale, double time_scale) {
  level.set_from(level.from() * scale);
  level.set_to(level.to() * scale);
  level.set_step(level.step() * scale);
  level.set_max(level.max() * scale);
  level.set_every_ns(ScaledDuration(level.every_ns(), time_scale));
}

}  // namespace

void ScalePlan(v1::Plan& plan, double scale, double time_scale) {
  const bool open = plan.load().has_open();
  if (open) plan.mutable_load()->mutable_open()->set_rate(plan.load().open().rate() * scale);
  if (plan.load().has_closed()) {
    v1::ClosedLoad& closed = *plan.mutable_load()->mutable_closed();
    closed.set_think_time_ns(ScaledDuration(closed.think_time_ns(), time_scale));
  }
  plan.set_warmup_ns(ScaledDuration(plan.warmup_ns(), time_scale));
  v1::StopRule& stop = *plan.mutable_stop();
  stop.set_duration_ns(ScaledDuration(stop.duration_ns(), time_scale));
  stop.set_queries(ScaledCount(stop.queries(), scale * time_scale));
  if (plan.has_abort()) {
    plan.mutable_abort()->set_for_ns(ScaledDuration(plan.abort().for_ns(), time_scale));
  }
  for (v1::Stage& stage : *plan.mutable_stages()) {
    stage.set_duration_ns(ScaledDuration(stage.duration_ns(), time_scale));
    stage.set_queries(ScaledCount(stage.queries(), scale * time_scale));
    // Clients are not scaled (a closed loop's level), but its staircase's period is.
    const double level_scale = open ? scale : 1;
    if (stage.has_rate()) ScaleLevel(*stage.mutable_rate(), level_scale, time_scale);
    if (stage.has_clients()) ScaleLevel(*stage.mutable_clients(), 1, time_scale);
    if (stage.has_knee()) {
      v1::KneeSearch& knee = *stage.mutable_knee();
      knee.set_from(knee.from() * level_scale);
      knee.set_step(knee.step() * level_scale);
      knee.set_max(knee.max() * level_scale);
      knee.set_every_ns(ScaledDuration(knee.every_ns(), time_scale));
    }
  }
}

}  // namespace dbload
