#include "coordinator/knee_search.h"

#include <functional>

#include "gtest/gtest.h"

namespace dbload {
namespace {

// A system that meets the SLO up to `capacity` (inclusive): above it p99 explodes.
void RunAgainst(KneeSearch& search, double capacity, int max_steps = 100) {
  for (int i = 0; i < max_steps && !search.done(); ++i) {
    Histogram response;
    response.Record(search.level() <= capacity ? 2'000'000 : 80'000'000);  // 2 ms or 80 ms
    search.Judge({.executed = 1000,
                  .response = &response,
                  .achieved_rate = std::min(search.level(), capacity * 1.01),
                  .judged_s = 10});
  }
}

v1::KneeSearch Spec(double from, double step, double max, uint32_t refine) {
  v1::KneeSearch spec;
  spec.set_from(from);
  spec.set_step(step);
  spec.set_max(max);
  spec.set_every_ns(10'000'000'000);
  spec.set_refine(refine);
  spec.set_p99_ns(10'000'000);
  spec.set_achieved(0.95);
  return spec;
}

TEST(KneeSearchTest, ClimbsThenBisectsToTheHighestLevelThatMet) {
  KneeSearch search(Spec(1000, 1000, 50000, 3), /*open=*/true, /*whole=*/false);
  RunAgainst(search, 5500);
  ASSERT_TRUE(search.done());
  // 1000 … 5000 met, 6000 missed; then 5500 met, 5750 missed, 5625 missed.
  std::vector<double> levels;
  for (const v1::KneeStep& step : search.steps()) levels.push_back(step.level());
  EXPECT_EQ(levels, (std::vector<double>{1000, 2000, 3000, 4000, 5000, 6000, 5500, 5750, 5625}));
  EXPECT_EQ(search.knee(), 5500);
  EXPECT_FALSE(search.steps()[5].met());
  EXPECT_EQ(search.steps()[5].missed(),
            "p99 80 ms above 10 ms, achieved 5555/s, below 0.95 of 6000/s");
  EXPECT_EQ(search.step(), 9u);
}

TEST(KneeSearchTest, ClientsBisectToNeighbouringIntegers) {
  v1::KneeSearch spec = Spec(1, 4, 32, 10);
  spec.set_achieved(0);
  KneeSearch search(spec, /*open=*/false, /*whole=*/true);
  RunAgainst(search, 10);
  ASSERT_TRUE(search.done());
  EXPECT_EQ(search.knee(), 10);  // 1, 5, 9, 13 (missed), 11 (missed), 10 met; 10 and 11 touch
  EXPECT_EQ(search.steps().back().level(), 10);
}

TEST(KneeSearchTest, EndsAtMaxWhenEveryStepMetAndAtOnceWhenTheFirstMissed) {
  KneeSearch all_met(Spec(100, 100, 300, 3), true, false);
  RunAgainst(all_met, 1e9);
  EXPECT_EQ(all_met.knee(), 300);
  EXPECT_EQ(all_met.steps().size(), 3u);

  KneeSearch none_met(Spec(100, 100, 300, 3), true, false);
  RunAgainst(none_met, 50);
  EXPECT_EQ(none_met.knee(), 0);
  EXPECT_EQ(none_met.steps().size(), 1u);
  EXPECT_TRUE(none_met.done());
}

}  // namespace
}  // namespace dbload
