#include "plan/stage_program.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dbload {

namespace {

using v1::Level;

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

// Levels of a whole-step ramp: from, from±1, …, to.
int64_t RampSteps(const Level& level) {
  return static_cast<int64_t>(std::llround(std::fabs(level.to() - level.from()))) + 1;
}

int64_t StaircaseIndex(const Level& level, Nanos elapsed) {
  return level.every_ns() > 0 ? elapsed / level.every_ns() : 0;
}

}  // namespace

int64_t KneeStepLimit(const v1::KneeSearch& knee) {
  const double climb = knee.step() > 0 ? std::ceil((knee.max() - knee.from()) / knee.step()) : 0;
  return static_cast<int64_t>(std::max(climb, 0.0)) + 1 + knee.refine();
}

Nanos StageLength(const v1::Stage& stage) {
  if (stage.has_knee()) {
    return KneeStepLimit(stage.knee()) * (stage.knee().every_ns() + kKneeStepSlack);
  }
  if (stage.duration_ns() > 0) return stage.duration_ns();
  const Level& level = stage.has_rate() ? stage.rate() : stage.clients();
  if (level.shape() == Level::STAIRCASE && level.step() > 0) {
    const auto levels = static_cast<int64_t>(std::ceil((level.max() - level.from()) / level.step()));
    return (std::max<int64_t>(levels, 0) + 1) * level.every_ns();
  }
  return 0;
}

double LevelAt(const Level& level, Nanos elapsed, Nanos length, bool whole) {
  elapsed = std::max<Nanos>(elapsed, 0);
  switch (level.shape()) {
    case Level::RAMP: {
      if (length <= 0) return level.from();
      const double progress = std::min(1.0, static_cast<double>(elapsed) / length);
      if (!whole) return level.from() + (level.to() - level.from()) * progress;
      const int64_t steps = RampSteps(level);
      const int64_t index = std::min<int64_t>(
          steps - 1, static_cast<int64_t>(static_cast<__int128>(elapsed) * steps / length));
      return level.from() + (level.to() >= level.from() ? index : -index);
    }
    case Level::STAIRCASE:
      return std::min(level.max(),
                      level.from() + level.step() * static_cast<double>(StaircaseIndex(level, elapsed)));
    default:
      return level.from();
  }
}

double MaxLevel(const Level& level) {
  switch (level.shape()) {
    case Level::RAMP:
      return std::max(level.from(), level.to());
    case Level::STAIRCASE:
      return std::max(level.from(), level.max());
    default:
      return level.from();
  }
}

double MeanLevel(const Level& level, Nanos length, bool whole) {
  if (length <= 0) return level.from();
  switch (level.shape()) {
    case Level::RAMP:
      // Continuous: the midpoint. Whole steps: each of from…to held equally long, same mean.
      (void)whole;
      return (level.from() + level.to()) / 2;
    case Level::STAIRCASE: {
      double integral = 0;  // level × nanoseconds
      for (Nanos start = 0; start < length; start += level.every_ns()) {
        const Nanos held = std::min(level.every_ns(), length - start);
        integral += LevelAt(level, start, length, whole) * static_cast<double>(held);
      }
      return integral / static_cast<double>(length);
    }
    default:
      return level.from();
  }
}

Nanos NextLevelChange(const Level& level, Nanos elapsed, Nanos length, bool whole,
                      Nanos rate_ramp_slice) {
  elapsed = std::max<Nanos>(elapsed, 0);
  switch (level.shape()) {
    case Level::RAMP: {
      if (length <= 0 || elapsed >= length) return kNever;
      if (!whole) return std::min(length, elapsed + rate_ramp_slice);
      const int64_t steps = RampSteps(level);
      const auto index = static_cast<int64_t>(static_cast<__int128>(elapsed) * steps / length);
      if (index + 1 >= steps) return kNever;
      // The first nanosecond at which the index reaches index + 1 (ceiling division).
      const __int128 numerator = static_cast<__int128>(index + 1) * length;
      return static_cast<Nanos>((numerator + steps - 1) / steps);
    }
    case Level::STAIRCASE: {
      const int64_t index = StaircaseIndex(level, elapsed);
      if (LevelAt(level, elapsed, length, whole) >= level.max()) return kNever;
      return (index + 1) * level.every_ns();
    }
    default:
      return kNever;
  }
}

uint32_t ClientsOfAgent(uint32_t total, uint32_t index, uint32_t count) {
  if (count == 0 || index >= count) return 0;
  return total / count + (index < total % count ? 1 : 0);
}

StageProgram::StageProgram(const v1::Plan& plan, double rate_fraction, uint32_t index,
                           uint32_t count)
    : stages_(plan.stages().begin(), plan.stages().end()),
      open_(plan.load().has_open()),
      rate_fraction_(rate_fraction),
      index_(index),
      count_(count) {
  for (const v1::Stage& stage : stages_) lengths_.push_back(StageLength(stage));
}

const v1::Level& StageProgram::LevelOf(const v1::Stage& stage) const {
  return open_ ? stage.rate() : stage.clients();
}

double StageProgram::Rate(size_t stage, Nanos elapsed) const {
  return rate_fraction_ * LevelAt(LevelOf(stages_[stage]), elapsed, lengths_[stage], false);
}

double StageProgram::PacedRate(size_t stage, Nanos elapsed) const {
  const v1::Level& level = LevelOf(stages_[stage]);
  if (level.shape() != Level::RAMP) return Rate(stage, elapsed);
  const Nanos slice_end = NextChange(stage, elapsed);
  const Nanos middle = slice_end == kNever ? elapsed : elapsed + (slice_end - elapsed) / 2;
  return Rate(stage, middle);
}

uint32_t StageProgram::KneeClients(double total) const {
  return ClientsOfAgent(static_cast<uint32_t>(std::llround(std::max(total, 0.0))), index_, count_);
}

uint32_t StageProgram::Clients(size_t stage, Nanos elapsed) const {
  const double total = LevelAt(LevelOf(stages_[stage]), elapsed, lengths_[stage], true);
  return ClientsOfAgent(static_cast<uint32_t>(std::llround(std::max(total, 0.0))), index_, count_);
}

Nanos StageProgram::NextChange(size_t stage, Nanos elapsed) const {
  return NextLevelChange(LevelOf(stages_[stage]), elapsed, lengths_[stage], !open_,
                         kRateRampSlice);
}

uint32_t StageProgram::ClientStarts() const {
  if (open_) return AnyRate() ? 1 : 0;
  uint64_t starts = 0;
  uint32_t previous = 0;
  for (size_t s = 0; s < stages_.size(); ++s) {
    if (stages_[s].has_knee()) {
      // Unknown in advance: the climb to max, then each refinement may add up to half a step
      // (bisection), a bound rather than the exact count.
      const v1::KneeSearch& knee = stages_[s].knee();
      const auto bound = [&](double total) {
        return count_ == 0 ? 0 : static_cast<uint64_t>(std::ceil(total / count_));
      };
      starts += bound(knee.max()) + knee.refine() * bound(std::ceil(knee.step() / 2) + 1);
      previous = KneeClients(knee.max());
      continue;
    }
    // Every moment the level changes within the stage (a stage ends before a change at its
    // very end takes effect).
    for (Nanos t = 0; t == 0 || t < (lengths_[s] > 0 ? lengths_[s] : kNever);
         t = NextChange(s, t)) {
      const uint32_t clients = Clients(s, t);
      if (clients > previous) starts += clients - previous;
      previous = clients;
    }
  }
  return static_cast<uint32_t>(std::min<uint64_t>(starts, std::numeric_limits<uint32_t>::max()));
}

bool StageProgram::AnyRate() const {
  if (!open_ || !(rate_fraction_ > 0)) return false;
  return std::any_of(stages_.begin(), stages_.end(),
                     [](const v1::Stage& stage) {
                       return stage.has_knee() ? stage.knee().max() > 0 : MaxLevel(stage.rate()) > 0;
                     });
}

Nanos StageProgram::TotalLength() const {
  Nanos total = 0;
  for (Nanos length : lengths_) {
    if (length == 0) return 0;
    total += length;
  }
  return total;
}

}  // namespace dbload
