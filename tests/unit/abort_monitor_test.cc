#include "coordinator/abort_monitor.h"

#include "base/clock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

v1::IntervalSample Sample(double elapsed_s, double p99_ms, uint64_t executed = 1000,
                          uint64_t errors = 0, double achieved = 1000, double target = 1000) {
  v1::IntervalSample sample;
  sample.set_elapsed_s(elapsed_s);
  sample.set_p99_ms(p99_ms);
  sample.set_executed(executed);
  sample.set_errors(errors);
  sample.set_achieved_rate(achieved);
  sample.set_target_rate(target);
  return sample;
}

TEST(AbortMonitorTest, P99RuleFiresOnlyAfterHoldingForTheWholeSpan) {
  v1::AbortRules rules;
  rules.set_p99_above_ns(20 * kMillisecond);
  rules.set_for_ns(3 * kSecond);
  AbortMonitor monitor(rules, /*measured_from_s=*/2);
  EXPECT_FALSE(monitor.Observe(Sample(3, 50)));
  EXPECT_FALSE(monitor.Observe(Sample(4, 50)));
  EXPECT_FALSE(monitor.Observe(Sample(5, 10)));  // a good second resets the streak
  EXPECT_FALSE(monitor.Observe(Sample(6, 50)));
  EXPECT_FALSE(monitor.Observe(Sample(7, 50)));
  const std::optional<std::string> why = monitor.Observe(Sample(8, 35.2));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "p99 35.2 ms above 20 ms for 3.0 s");
}

TEST(AbortMonitorTest, WarmupIsIgnoredAndErrorAndAchievedRulesFire) {
  v1::AbortRules errors;
  errors.set_error_rate_above(0.1);
  AbortMonitor on_errors(errors, 0);
  v1::IntervalSample warm = Sample(1, 1, 10, 90);
  warm.set_warmup(true);
  EXPECT_FALSE(on_errors.Observe(warm));
  EXPECT_FALSE(on_errors.Observe(Sample(2, 1, 95, 5)));
  const auto error_reason = on_errors.Observe(Sample(3, 1, 50, 50));
  ASSERT_TRUE(error_reason.has_value());
  EXPECT_EQ(*error_reason, "error rate 0.5 above 0.1 for 1.0 s");

  v1::AbortRules achieved;
  achieved.set_achieved_below(0.95);
  achieved.set_for_ns(2 * kSecond);
  AbortMonitor on_rate(achieved, 0);
  EXPECT_FALSE(on_rate.Observe(Sample(1, 1, 960, 0, 960, 1000)));
  EXPECT_FALSE(on_rate.Observe(Sample(2, 1, 900, 0, 900, 1000)));
  const auto rate_reason = on_rate.Observe(Sample(3, 1, 800, 0, 800, 1000));
  ASSERT_TRUE(rate_reason.has_value());
  EXPECT_EQ(*rate_reason, "achieved 800/s, 0.8 of the target 1000/s, below 0.95 for 2.0 s");
}

}  // namespace
}  // namespace dbload
