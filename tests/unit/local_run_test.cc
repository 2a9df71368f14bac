#include "cli/local_run.h"

#include <vector>

#include "db/noop_driver.h"
#include "report/report.h"
#include "workload/oltp.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

v1::Plan NoopPlan() {
  v1::Plan plan;
  plan.set_name("noop-test");
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(2);
  plan.set_workload("oltp");
  plan.set_scenario("point_select");
  plan.set_seed(7);
  return plan;
}

class LocalRunTest : public testing::Test {
 protected:
  v1::RunReport Run(const v1::Plan& plan, Nanos latency) {
    db::NoopDriver driver({.fixed_latency = latency}, clock_);
    auto workload = MakeWorkload("oltp", {});
    auto scenario = *(*workload)->MakeScenario("point_select");
    LocalRunHooks hooks{.on_interval = [&](const v1::IntervalSample& s) { samples_.push_back(s); }};
    absl::StatusOr<v1::RunReport> report = RunPlanLocally(plan, driver, *scenario, clock_, hooks);
    EXPECT_TRUE(report.ok()) << report.status();
    return *report;
  }

  SimulatedClock clock_;
  std::vector<v1::IntervalSample> samples_;
};

TEST_F(LocalRunTest, OpenLoopReportCountsOnlyTheMeasuredPart) {
  v1::Plan plan = NoopPlan();
  plan.mutable_load()->mutable_open()->set_rate(1'000);
  plan.set_warmup_ns(2 * kSecond);
  plan.mutable_stop()->set_duration_ns(5 * kSecond);
  const v1::RunReport report = Run(plan, 200 * kMicrosecond);
  EXPECT_EQ(report.end_reason(), "duration");
  EXPECT_EQ(report.executed(), 5'000u);
  EXPECT_NEAR(report.total_duration_s(), 5.0, 0.001);
  EXPECT_NEAR(report.actual_rate(), 1'000.0, 1.0);
  EXPECT_EQ(report.wanted_rate(), 1'000.0);
  EXPECT_EQ(report.not_started(), 0u);
  EXPECT_NEAR(report.response_time().p50_ms(), 0.2, 0.001);
  // One line per second, two of them warm-up, and the interval counts add up.
  uint64_t measured = 0, warm = 0;
  for (const auto& s : samples_) (s.warmup() ? warm : measured) += s.executed();
  EXPECT_EQ(measured, 5'000u);
  EXPECT_EQ(warm, 2'000u);
  EXPECT_GE(samples_.size(), 7u);
  EXPECT_TRUE(samples_[0].warmup());
  EXPECT_NEAR(samples_[3].achieved_rate(), 1'000.0, 1.0);
  // The report's per-query-type histogram is the same data as its summary.
  ASSERT_EQ(report.query_types_size(), 1);
  auto histogram = Histogram::FromProto(report.query_types(0).response_histogram());
  ASSERT_TRUE(histogram.ok());
  EXPECT_EQ(histogram->TotalCount(), 5'000u);
}

TEST_F(LocalRunTest, QueryBudgetEndsTheRunWithExactlyThatManyQueries) {
  v1::Plan plan = NoopPlan();
  plan.mutable_load()->mutable_closed()->set_clients(3);
  plan.mutable_target()->set_pool(3);
  plan.set_warmup_ns(kSecond);
  plan.mutable_stop()->set_queries(10'000);
  const v1::RunReport report = Run(plan, kMillisecond);
  EXPECT_EQ(report.end_reason(), "queries");
  EXPECT_EQ(report.executed(), 10'000u);
  // 3 clients at 1 ms each: 3,000/s, so about 3.33 s.
  EXPECT_NEAR(report.total_duration_s(), 10'000 / 3'000.0, 0.01);
  EXPECT_NEAR(report.actual_rate(), 3'000.0, 10.0);
}

TEST_F(LocalRunTest, TextReportHasThePublishedShape) {
  v1::Plan plan = NoopPlan();
  plan.mutable_load()->mutable_open()->set_rate(500);
  plan.mutable_stop()->set_duration_ns(2 * kSecond);
  const std::string text = RenderReportText(Run(plan, 100 * kMicrosecond));
  for (const char* line : {"Total test duration: PT2.000S", "Queries duration: PT2.000S",
                           "Executed queries: 1000", "Wanted queries rate: 500/s",
                           "Actual queries rate: 500/s", "Percentile 50:", "99.9:"}) {
    EXPECT_THAT(text, testing::HasSubstr(line));
  }
}

TEST_F(LocalRunTest, JsonReportRoundTrips) {
  v1::Plan plan = NoopPlan();
  plan.mutable_load()->mutable_open()->set_rate(100);
  plan.mutable_stop()->set_duration_ns(kSecond);
  const v1::RunReport report = Run(plan, 100 * kMicrosecond);
  auto parsed = ParseReportJson(RenderReportJson(report));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->executed(), report.executed());
  EXPECT_EQ(parsed->query_types(0).response_histogram().counts_size(),
            report.query_types(0).response_histogram().counts_size());
  EXPECT_FALSE(ParseReportJson("{\"format_version\": 99}").ok());
  EXPECT_FALSE(ParseReportJson("not json").ok());
}

}  // namespace
}  // namespace dbload
