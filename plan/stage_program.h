#ifndef DBLOAD_PLAN_STAGE_PROGRAM_H_
#define DBLOAD_PLAN_STAGE_PROGRAM_H_

#include <cstdint>
#include <vector>

#include "base/clock.h"
#include "dbload/v1/plan.pb.h"

namespace dbload {

// The arithmetic of plan stages (plan.proto: Stage, Level), shared by the parser (limits), the
// coordinator (splits, wanted rates) and agents (their load at each moment). Pure functions of
// the plan: no clock is read here, so every ramp and staircase is tested without waiting.

// How long a stage lasts: its duration, else a staircase's natural length (each level held for
// one period, the top one included); 0 for a stage that ends on a query count only. A knee
// search ends when the coordinator says; its length is the bound an agent stops it at anyway:
// every step it could take, each `every` plus kKneeStepSlack for the judgement to arrive.
Nanos StageLength(const dbload::v1::Stage& stage);

inline constexpr Nanos kKneeStepSlack = 5 * kSecond;

// The number of steps a knee search can take: its climb from `from` to `max`, and `refine`.
int64_t KneeStepLimit(const dbload::v1::KneeSearch& knee);

// The total level (all agents) `elapsed` into a stage of `length`. With `whole` (clients) a ramp
// moves in whole steps, each level held for an equal share of the stage.
double LevelAt(const dbload::v1::Level& level, Nanos elapsed, Nanos length, bool whole);

// The highest level a stage reaches.
double MaxLevel(const dbload::v1::Level& level);

// The time-weighted mean level over a stage of `length` (the wanted rate a stage reports).
double MeanLevel(const dbload::v1::Level& level, Nanos length, bool whole);

// When, after `elapsed`, a stage's level next changes: the next step of a staircase or of a
// whole-step ramp, `elapsed + rate_ramp_slice` for a rate ramp (which changes continuously and is
// followed in slices), and never (INT64_MAX) for a constant level.
Nanos NextLevelChange(const dbload::v1::Level& level, Nanos elapsed, Nanos length, bool whole,
                      Nanos rate_ramp_slice);

// Agent `index` of `count` runs this many of `total` clients: 7 over 3 is 3, 2, 2.
uint32_t ClientsOfAgent(uint32_t total, uint32_t index, uint32_t count);

// One agent's view of a staged plan: its load at each moment of each stage.
class StageProgram {
 public:
  // Open loop: the agent takes `rate_fraction` of every rate. Closed loop: it is agent `index`
  // of `count` in the spread of every client level.
  StageProgram(const dbload::v1::Plan& plan, double rate_fraction, uint32_t index,
               uint32_t count);

  size_t size() const { return stages_.size(); }
  const dbload::v1::Stage& stage(size_t i) const { return stages_[i]; }
  Nanos Length(size_t stage) const { return lengths_[stage]; }
  bool open() const { return open_; }

  bool IsKnee(size_t stage) const { return stages_[stage].has_knee(); }
  // This agent's part of a knee search's total level.
  double KneeRate(double total) const { return rate_fraction_ * total; }
  uint32_t KneeClients(double total) const;

  double Rate(size_t stage, Nanos elapsed) const;
  // The rate to pace at from `elapsed` until NextChange: a rate ramp is followed in slices, each
  // at the ramp's value in its middle, so that the arrivals add up to the ramp's integral.
  double PacedRate(size_t stage, Nanos elapsed) const;
  uint32_t Clients(size_t stage, Nanos elapsed) const;
  Nanos NextChange(size_t stage, Nanos elapsed) const;

  // Sessions this agent needs over the run: clients it ever starts (a client retired and later
  // replaced counts twice, so that slots never repeat), or 0/1 for open loops (rate or not).
  uint32_t ClientStarts() const;
  // Whether any stage gives this agent a rate above 0.
  bool AnyRate() const;
  // The sum of the stages' lengths, or 0 if one of them ends on a query count only.
  Nanos TotalLength() const;

 private:
  const dbload::v1::Level& LevelOf(const dbload::v1::Stage& stage) const;

  std::vector<dbload::v1::Stage> stages_;
  std::vector<Nanos> lengths_;
  bool open_;
  double rate_fraction_;
  uint32_t index_;
  uint32_t count_;
};

// How often a rate ramp's target is refreshed: fine enough that a ramp looks continuous at the
// reporting interval, coarse enough to cost nothing.
inline constexpr Nanos kRateRampSlice = 100 * kMillisecond;

}  // namespace dbload

#endif  // DBLOAD_PLAN_STAGE_PROGRAM_H_
