#include "plan/stage_program.h"

#include <limits>

#include "gtest/gtest.h"

namespace dbload {
namespace {

v1::Level Staircase(double from, double step, Nanos every, double max) {
  v1::Level level;
  level.set_shape(v1::Level::STAIRCASE);
  level.set_from(from);
  level.set_step(step);
  level.set_every_ns(every);
  level.set_max(max);
  return level;
}

v1::Level Ramp(double from, double to) {
  v1::Level level;
  level.set_shape(v1::Level::RAMP);
  level.set_from(from);
  level.set_to(to);
  return level;
}

constexpr Nanos kNever = std::numeric_limits<Nanos>::max();

TEST(StageProgramTest, StaircaseAddsAStepEveryPeriodUpToMaxAndHoldsTheTopOneOnePeriod) {
  // "Add one client every 60 s", from 1 to 4.
  v1::Stage stage;
  *stage.mutable_clients() = Staircase(1, 1, 60 * kSecond, 4);
  EXPECT_EQ(StageLength(stage), 4 * 60 * kSecond);
  const v1::Level& level = stage.clients();
  EXPECT_EQ(LevelAt(level, 0, 240 * kSecond, true), 1);
  EXPECT_EQ(LevelAt(level, 60 * kSecond - 1, 240 * kSecond, true), 1);
  EXPECT_EQ(LevelAt(level, 60 * kSecond, 240 * kSecond, true), 2);
  EXPECT_EQ(LevelAt(level, 180 * kSecond, 240 * kSecond, true), 4);
  EXPECT_EQ(LevelAt(level, 10'000 * kSecond, 240 * kSecond, true), 4);
  EXPECT_EQ(NextLevelChange(level, 0, 240 * kSecond, true, kRateRampSlice), 60 * kSecond);
  EXPECT_EQ(NextLevelChange(level, 61 * kSecond, 240 * kSecond, true, kRateRampSlice),
            120 * kSecond);
  EXPECT_EQ(NextLevelChange(level, 180 * kSecond, 240 * kSecond, true, kRateRampSlice), kNever);
  EXPECT_DOUBLE_EQ(MeanLevel(level, 240 * kSecond, true), 2.5);
}

TEST(StageProgramTest, StaircaseThatDoesNotDivideEvenlyEndsAtMax) {
  v1::Stage stage;
  *stage.mutable_rate() = Staircase(100, 300, kSecond, 500);  // 100, 400, 500
  EXPECT_EQ(StageLength(stage), 3 * kSecond);
  EXPECT_EQ(LevelAt(stage.rate(), 2 * kSecond, 3 * kSecond, false), 500);
}

TEST(StageProgramTest, RateRampIsLinearAndFollowedInSlicesAtTheirMiddle) {
  const v1::Level level = Ramp(100, 1100);
  EXPECT_DOUBLE_EQ(LevelAt(level, 0, 10 * kSecond, false), 100);
  EXPECT_DOUBLE_EQ(LevelAt(level, 5 * kSecond, 10 * kSecond, false), 600);
  EXPECT_DOUBLE_EQ(LevelAt(level, 10 * kSecond, 10 * kSecond, false), 1100);
  EXPECT_EQ(NextLevelChange(level, 0, 10 * kSecond, false, kRateRampSlice), kRateRampSlice);
  EXPECT_DOUBLE_EQ(MeanLevel(level, 10 * kSecond, false), 600);

  v1::Plan plan;
  plan.mutable_load()->mutable_open();
  v1::Stage& stage = *plan.add_stages();
  stage.set_duration_ns(10 * kSecond);
  *stage.mutable_rate() = level;
  const StageProgram half(plan, 0.5, 0, 2);
  EXPECT_DOUBLE_EQ(half.Rate(0, 5 * kSecond), 300);
  // The slice [0, 100 ms) paces at the ramp's value at 50 ms: 105/s in all, half of it here.
  EXPECT_DOUBLE_EQ(half.PacedRate(0, 0), 52.5);
}

TEST(StageProgramTest, ClientRampMovesInWholeStepsOfEqualLength) {
  const v1::Level level = Ramp(1, 4);  // 1, 2, 3, 4: a quarter of the stage each
  const Nanos length = 8 * kSecond;
  EXPECT_EQ(LevelAt(level, 0, length, true), 1);
  EXPECT_EQ(LevelAt(level, 2 * kSecond - 1, length, true), 1);
  EXPECT_EQ(LevelAt(level, 2 * kSecond, length, true), 2);
  EXPECT_EQ(LevelAt(level, 7 * kSecond, length, true), 4);
  EXPECT_EQ(NextLevelChange(level, 0, length, true, kRateRampSlice), 2 * kSecond);
  EXPECT_EQ(NextLevelChange(level, 6 * kSecond, length, true, kRateRampSlice), kNever);
  // Down works the same way.
  EXPECT_EQ(LevelAt(Ramp(4, 1), 7 * kSecond, length, true), 1);
}

TEST(StageProgramTest, ClientsAreSpreadEvenlyAndSlotsCountEveryStart) {
  EXPECT_EQ(ClientsOfAgent(7, 0, 3), 3u);
  EXPECT_EQ(ClientsOfAgent(7, 1, 3), 2u);
  EXPECT_EQ(ClientsOfAgent(7, 2, 3), 2u);
  EXPECT_EQ(ClientsOfAgent(1, 2, 3), 0u);

  // Up to 4, down to 1, back up to 3: one agent starts 4 + 2 clients.
  v1::Plan plan;
  plan.mutable_load()->mutable_closed();
  auto add = [&](v1::Level level) {
    v1::Stage& stage = *plan.add_stages();
    stage.set_duration_ns(4 * kSecond);
    *stage.mutable_clients() = level;
  };
  add(Ramp(1, 4));
  add(Ramp(4, 1));
  add(Ramp(1, 3));
  EXPECT_EQ(StageProgram(plan, 0, 0, 1).ClientStarts(), 6u);
  // Of two agents, the first holds clients 1 and 3 of each level: 2 + 1.
  EXPECT_EQ(StageProgram(plan, 0, 0, 2).ClientStarts(), 3u);
  EXPECT_EQ(StageProgram(plan, 0, 0, 1).TotalLength(), 12 * kSecond);
}

}  // namespace
}  // namespace dbload
