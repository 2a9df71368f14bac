#include "agent/run_executor.h"

#include <thread>
#include <vector>

#include "common/db/noop_driver.h"
#include "common/workloads/oltp.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

v1::Plan OpenPlan(double rate, Nanos duration) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.mutable_target()->set_pool(4);
  plan.mutable_load()->mutable_open()->set_rate(rate);
  plan.mutable_stop()->set_duration_ns(duration);
  plan.set_seed(3);
  return plan;
}

class RunExecutorTest : public testing::Test {
 protected:
  // Runs on simulated time; `during` is called at each interval with the control mailbox.
  ExecutionResult Execute(const v1::Plan& plan, const RunShare& share,
                          std::function<void(int interval, RunControl&)> during = nullptr) {
    db::NoopDriver driver({.fixed_latency = 100 * kMicrosecond}, clock_);
    auto workload = MakeWorkload("oltp", {});
    auto scenario = *(*workload)->MakeScenario("point_select");
    RunControl control;
    int interval = 0;
    ExecutionHooks hooks{.on_interval =
                             [&](const IntervalOutput& out) {
                               per_interval_.push_back(out.snapshot.Executed());
                               if (during) during(++interval, control);
                             },
                         .control = &control};
    absl::StatusOr<ExecutionResult> result = ExecuteRun(plan, share, driver, *scenario, clock_, hooks);
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  SimulatedClock clock_;
  std::vector<uint64_t> per_interval_;
};

TEST_F(RunExecutorTest, ShareOverridesThePlansRate) {
  RunShare share;
  share.rate = 250;
  const ExecutionResult result = Execute(OpenPlan(1'000, 2 * kSecond), share);
  EXPECT_EQ(result.end_reason, "duration");
  uint64_t total = 0;
  for (uint64_t n : per_interval_) total += n;
  EXPECT_EQ(total, 500u);
}

TEST_F(RunExecutorTest, RateChangesThroughTheControlMailbox) {
  const ExecutionResult result =
      Execute(OpenPlan(1'000, 3 * kSecond), {}, [](int interval, RunControl& control) {
        if (interval == 1) control.SetRate(2'000);
      });
  ASSERT_GE(per_interval_.size(), 3u);
  EXPECT_NEAR(static_cast<double>(per_interval_[0]), 1'000, 2);
  // Picked up within a poll slice (100 ms) of the first interval's end.
  EXPECT_NEAR(static_cast<double>(per_interval_[2]), 2'000, 2);
  EXPECT_EQ(result.end_reason, "duration");
}

TEST_F(RunExecutorTest, StopThroughTheControlMailboxEndsTheRunWithItsReason) {
  const ExecutionResult result =
      Execute(OpenPlan(1'000, 60 * kSecond), {}, [](int interval, RunControl& control) {
        if (interval == 2) control.Stop("operator asked");
      });
  EXPECT_EQ(result.end_reason, "stopped: operator asked");
  EXPECT_LT(result.measured_s, 2.5);
}

TEST_F(RunExecutorTest, ClientsChangeThroughTheControlMailbox) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("noop");
  plan.mutable_load()->mutable_closed()->set_clients(1);
  plan.mutable_stop()->set_duration_ns(3 * kSecond);
  Execute(plan, {}, [](int interval, RunControl& control) {
    if (interval == 1) control.SetClients(3);
  });
  ASSERT_GE(per_interval_.size(), 3u);
  // 100 µs per transaction: 10,000/s per client.
  EXPECT_NEAR(static_cast<double>(per_interval_[0]), 10'000, 2);
  EXPECT_NEAR(static_cast<double>(per_interval_[2]), 30'000, 30);
}

TEST_F(RunExecutorTest, ZeroShareRunsNothingButEndsOnTime) {
  RunShare share;
  share.rate = 0;
  const ExecutionResult result = Execute(OpenPlan(1'000, 2 * kSecond), share);
  uint64_t total = 0;
  for (uint64_t n : per_interval_) total += n;
  EXPECT_EQ(total, 0u);
  EXPECT_EQ(result.end_reason, "duration");
}

}  // namespace
}  // namespace dbload
