#include "suite/suite_scaling.h"

#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMillisecond = 1'000'000;

TEST(SuiteScalingTest, ScaleTimesRatesAndCountsOfAnOpenLoop) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(1000);
  plan.mutable_stop()->set_queries(10);
  v1::Stage& stage = *plan.add_stages();
  stage.mutable_rate()->set_from(100);
  stage.mutable_rate()->set_to(200);
  stage.mutable_rate()->set_step(10);
  stage.mutable_rate()->set_max(300);
  stage.set_queries(3);
  ScalePlan(plan, 0.5, 1);
  EXPECT_DOUBLE_EQ(plan.load().open().rate(), 500);
  EXPECT_EQ(plan.stop().queries(), 5u);
  EXPECT_DOUBLE_EQ(plan.stages(0).rate().from(), 50);
  EXPECT_DOUBLE_EQ(plan.stages(0).rate().to(), 100);
  EXPECT_DOUBLE_EQ(plan.stages(0).rate().step(), 5);
  EXPECT_DOUBLE_EQ(plan.stages(0).rate().max(), 150);
  EXPECT_EQ(plan.stages(0).queries(), 2u);  // 1.5 rounds to 2
}

TEST(SuiteScalingTest, AQueryCountNeverBecomesZeroAndZeroStaysUnset) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(1000);
  plan.mutable_stop()->set_queries(3);
  plan.add_stages()->set_queries(0);
  ScalePlan(plan, 0.01, 1);
  EXPECT_EQ(plan.stop().queries(), 1u);
  EXPECT_EQ(plan.stages(0).queries(), 0u);
}

TEST(SuiteScalingTest, ClientsStayButAStaircasesPeriodScales) {
  v1::Plan plan;
  plan.mutable_load()->mutable_closed()->set_clients(8);
  plan.mutable_load()->mutable_closed()->set_think_time_ns(10 * kMillisecond);
  v1::Stage& stage = *plan.add_stages();
  stage.mutable_clients()->set_from(1);
  stage.mutable_clients()->set_step(2);
  stage.mutable_clients()->set_max(16);
  stage.mutable_clients()->set_every_ns(10 * kSecond);
  ScalePlan(plan, 4, 0.5);
  EXPECT_EQ(plan.load().closed().clients(), 8u);
  EXPECT_EQ(plan.load().closed().think_time_ns(), 5 * kMillisecond);
  EXPECT_DOUBLE_EQ(plan.stages(0).clients().from(), 1);
  EXPECT_DOUBLE_EQ(plan.stages(0).clients().step(), 2);
  EXPECT_DOUBLE_EQ(plan.stages(0).clients().max(), 16);
  EXPECT_EQ(plan.stages(0).clients().every_ns(), 5 * kSecond);
}

TEST(SuiteScalingTest, TimeScaleMakesDurationsWholeMillisecondsAndCountsLonger) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(100);
  plan.set_warmup_ns(3 * kSecond);
  plan.mutable_stop()->set_duration_ns(10 * kSecond);
  plan.mutable_stop()->set_queries(1000);
  plan.mutable_abort()->set_for_ns(2 * kSecond);
  plan.mutable_abort()->set_p99_above_ns(50 * kMillisecond);
  v1::Stage& stage = *plan.add_stages();
  stage.set_duration_ns(1 * kMillisecond);
  v1::KneeSearch& knee = *plan.add_stages()->mutable_knee();
  knee.set_from(10);
  knee.set_step(10);
  knee.set_max(100);
  knee.set_every_ns(5 * kSecond);
  knee.set_p99_ns(20 * kMillisecond);
  ScalePlan(plan, 1, 0.1);
  EXPECT_EQ(plan.warmup_ns(), 300 * kMillisecond);
  EXPECT_EQ(plan.stop().duration_ns(), 1 * kSecond);
  EXPECT_EQ(plan.stop().queries(), 100u);  // a count-bound case lasts 0.1 times as long too
  EXPECT_EQ(plan.abort().for_ns(), 200 * kMillisecond);
  EXPECT_EQ(plan.stages(0).duration_ns(), 1 * kMillisecond);  // 0.1 ms: at least 1 ms
  EXPECT_EQ(plan.stages(1).knee().every_ns(), 500 * kMillisecond);
  EXPECT_DOUBLE_EQ(plan.stages(1).knee().from(), 10);  // rates: --scale only
  // Latency limits are not times of the case.
  EXPECT_EQ(plan.abort().p99_above_ns(), 50 * kMillisecond);
  EXPECT_EQ(plan.stages(1).knee().p99_ns(), 20 * kMillisecond);
}

TEST(SuiteScalingTest, AnOpenLoopsKneeSearchScalesWithTheRate) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(100);
  v1::KneeSearch& knee = *plan.add_stages()->mutable_knee();
  knee.set_from(100);
  knee.set_step(50);
  knee.set_max(1000);
  ScalePlan(plan, 2, 1);
  EXPECT_DOUBLE_EQ(plan.stages(0).knee().from(), 200);
  EXPECT_DOUBLE_EQ(plan.stages(0).knee().step(), 100);
  EXPECT_DOUBLE_EQ(plan.stages(0).knee().max(), 2000);
}

TEST(SuiteScalingTest, OneAndOneChangesNothing) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open()->set_rate(123.5);
  plan.mutable_stop()->set_duration_ns(1234567);  // not whole milliseconds: kept as given
  plan.mutable_stop()->set_queries(7);
  const v1::Plan before = plan;
  ScalePlan(plan, 1, 1);
  EXPECT_EQ(plan.SerializeAsString(), before.SerializeAsString());
}

}  // namespace
}  // namespace dbload
