// What the report makes of the probe's readings (per-stage deltas, per-query values) and of the
// generator's health, on hand-made readings and intervals with known answers.
#include "coordinator/saturation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dbload {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

v1::IntervalSample Interval(double elapsed_s, uint32_t stage, bool warmup = false,
                            double max_agent_cpu = 0) {
  v1::IntervalSample sample;
  sample.set_elapsed_s(elapsed_s);
  sample.set_stage(stage);
  sample.set_warmup(warmup);
  sample.set_max_agent_cpu(max_agent_cpu);
  return sample;
}

std::vector<ProbeValue> Reading(double commits, double connections) {
  return {{.source = "postgresql", .name = "commits", .value = commits, .gauge = false},
          {.source = "postgresql", .name = "connections", .value = connections, .gauge = true}};
}

const v1::SaturationDelta& Named(
    const google::protobuf::RepeatedPtrField<v1::SaturationDelta>& deltas,
    const std::string& name) {
  for (const v1::SaturationDelta& delta : deltas) {
    if (delta.name() == name) return delta;
  }
  static const v1::SaturationDelta kNone;
  ADD_FAILURE() << "no delta named " << name;
  return kNone;
}

// Two stages of 2 s after a 1 s warm-up; readings every second and one after the load.
v1::RunReport TwoStageReport() {
  v1::RunReport report;
  *report.add_intervals() = Interval(1.0, 1, /*warmup=*/true);
  *report.add_intervals() = Interval(2.0, 1);
  *report.add_intervals() = Interval(3.0, 1);
  *report.add_intervals() = Interval(4.0, 2);
  *report.add_intervals() = Interval(5.0, 2);
  report.set_executed(400);
  report.set_errors(0);
  for (uint32_t i = 1; i <= 2; ++i) {
    v1::StageReport& stage = *report.add_stages();
    stage.set_index(i);
    stage.set_executed(i == 1 ? 100 : 300);
  }
  return report;
}

TEST(ProbeRecordTest, StagesDeltasAddUpToTheRunsAndUseTheNewestReadingLast) {
  ProbeRecord record;
  record.Add(0.0, Reading(0, 0));
  record.Add(1.02, Reading(50, 4));    // first reading after the warm-up: the start
  record.Add(2.02, Reading(100, 4));
  record.Add(3.02, Reading(160, 5));   // first after stage 1's end (3.0)
  record.Add(4.02, Reading(300, 5));
  record.Add(5.02, Reading(420, 3));
  record.Add(5.03, Reading(470, 1));   // after the load: the end of the run and of stage 2
  v1::RunReport report = TwoStageReport();
  record.FillReport(report);

  ASSERT_EQ(report.probe_samples_size(), 7);
  EXPECT_EQ(report.probe_samples(1).values().at("postgresql/commits"), 50);

  const v1::SaturationDelta& run = Named(report.saturation(), "commits");
  EXPECT_EQ(run.delta(), 420);  // 470 − 50
  EXPECT_DOUBLE_EQ(run.per_query(), 420.0 / 400);
  EXPECT_DOUBLE_EQ(run.from_s(), 1.02);
  EXPECT_DOUBLE_EQ(run.to_s(), 5.03);

  const v1::SaturationDelta& first = Named(report.stages(0).saturation(), "commits");
  const v1::SaturationDelta& second = Named(report.stages(1).saturation(), "commits");
  EXPECT_EQ(first.delta(), 110);  // 160 − 50
  EXPECT_EQ(second.delta(), 310);  // 470 − 160
  EXPECT_EQ(first.delta() + second.delta(), run.delta());
  EXPECT_DOUBLE_EQ(first.per_query(), 110.0 / 100);
  EXPECT_DOUBLE_EQ(second.from_s(), 3.02);

  // Gauges: the newest reading of the span, and its range.
  const v1::SaturationDelta& connections = Named(report.stages(0).saturation(), "connections");
  EXPECT_TRUE(connections.gauge());
  EXPECT_EQ(connections.delta(), 5);
  EXPECT_EQ(connections.min(), 4);
  EXPECT_EQ(connections.max(), 5);
  EXPECT_EQ(connections.per_query(), 0);
}

TEST(ProbeRecordTest, AValueMissingFromAReadingIsLeftOutNotZeroed) {
  ProbeRecord record;
  record.Add(0.5, Reading(0, 0));
  // A source that came up later: its first value appears in the second reading.
  std::vector<ProbeValue> later = Reading(10, 1);
  later.push_back({.source = "haproxy", .name = "sessions", .value = 7, .gauge = false});
  record.Add(3.5, later);
  record.Add(5.5, Reading(30, 1));
  v1::RunReport report = TwoStageReport();
  record.FillReport(report);
  for (const v1::SaturationDelta& delta : report.saturation()) {
    EXPECT_NE(delta.name(), "sessions") << "a counter without both ends has no delta";
  }
  EXPECT_EQ(report.probe_samples(0).values().count("haproxy/sessions"), 0u);
  EXPECT_EQ(report.probe_samples(1).values().at("haproxy/sessions"), 7);
}

// A MariaDB restart in the second stage: its counters start again from zero. The span counts
// what the server counted (Prometheus' rate() rule: after a decrease the new value is counted
// from zero), never a negative delta.
TEST(ProbeRecordTest, ACounterResetCountsTheNewValueFromZero) {
  ProbeRecord record;
  record.Add(1.02, Reading(50, 4));
  record.Add(3.02, Reading(160, 5));  // the end of stage 1
  record.Add(4.02, Reading(200, 5));  // then the server restarted
  record.Add(4.52, Reading(30, 2));   // 30 counted since the restart
  record.Add(5.03, Reading(90, 2));
  v1::RunReport report = TwoStageReport();
  record.FillReport(report);
  const v1::SaturationDelta& run = Named(report.saturation(), "commits");
  EXPECT_EQ(run.delta(), (200 - 50) + 30 + (90 - 30));
  EXPECT_DOUBLE_EQ(run.per_query(), 240.0 / 400);
  const v1::SaturationDelta& first = Named(report.stages(0).saturation(), "commits");
  const v1::SaturationDelta& second = Named(report.stages(1).saturation(), "commits");
  EXPECT_EQ(first.delta(), 110);
  EXPECT_EQ(second.delta(), 40 + 30 + 60);
  EXPECT_EQ(first.delta() + second.delta(), run.delta());
  for (const auto* deltas : {&report.saturation(), &report.stages(0).saturation(),
                             &report.stages(1).saturation()}) {
    for (const v1::SaturationDelta& delta : *deltas) EXPECT_GE(delta.delta(), 0) << delta.name();
  }
}

// A small dip is not a reset: the server's CPU time dips when a backend is reaped between
// reading the postmaster and its children. Counting the dipped value from zero would add the
// server's whole lifetime CPU; it counts nothing until the counter passes its high mark.
TEST(ProbeRecordTest, ADipThatIsNoResetCountsNothing) {
  ProbeRecord record;
  record.Add(1.02, Reading(1000, 1));
  record.Add(3.02, Reading(1003, 1));
  record.Add(4.02, Reading(1002.5, 1));
  record.Add(5.03, Reading(1005, 1));
  v1::RunReport report = TwoStageReport();
  record.FillReport(report);
  EXPECT_EQ(Named(report.saturation(), "commits").delta(), 5);
  EXPECT_EQ(Named(report.stages(1).saturation(), "commits").delta(), 2);
}

// "Per executed transaction" means per transaction completed without error; failed ones are
// reported apart (their share), not mixed into the divisor.
TEST(ProbeRecordTest, PerQueryDividesByExecutedTransactionsOnly) {
  ProbeRecord record;
  record.Add(1.02, Reading(0, 1));
  record.Add(3.02, Reading(100, 1));
  record.Add(5.03, Reading(400, 1));
  v1::RunReport report = TwoStageReport();
  report.set_errors(100);  // 400 executed and 100 failed
  report.mutable_stages(0)->set_errors(25);
  record.FillReport(report);
  EXPECT_DOUBLE_EQ(Named(report.saturation(), "commits").per_query(), 400.0 / 400);
  EXPECT_DOUBLE_EQ(Named(report.stages(0).saturation(), "commits").per_query(), 100.0 / 100);
}

TEST(ProbeRecordTest, NoReadingsLeaveTheReportWithoutSaturation) {
  ProbeRecord record;
  v1::RunReport report = TwoStageReport();
  record.FillReport(report);
  EXPECT_EQ(report.saturation_size(), 0);
  EXPECT_EQ(report.probe_samples_size(), 0);
  EXPECT_EQ(report.stages(0).saturation_size(), 0);
}

TEST(MarkGeneratorLimitsTest, MarksTheStageWhoseAgentRanOutOfCpu) {
  v1::RunReport report = TwoStageReport();
  *report.add_intervals() = Interval(5.5, 2, false, /*max_agent_cpu=*/0.97);
  *report.add_intervals() = Interval(0.5, 1, /*warmup=*/true, /*max_agent_cpu=*/1.0);  // ignored
  report.mutable_stages(0)->mutable_schedule_lag()->set_p99_ms(0.2);
  report.mutable_stages(1)->mutable_schedule_lag()->set_p99_ms(0.3);
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.stages(0).generator_limited());
  EXPECT_TRUE(report.stages(0).generator_limited_reason().empty());
  EXPECT_TRUE(report.stages(1).generator_limited());
  EXPECT_THAT(report.stages(1).generator_limited_reason(), HasSubstr("97% of its cores"));
  EXPECT_TRUE(report.generator_limited());
  EXPECT_THAT(report.generator_limited_reason(), HasSubstr("stage 2: an agent used 97%"));
}

TEST(MarkGeneratorLimitsTest, DispatchLagOverThePlansLimitMarksTheStage) {
  v1::RunReport report = TwoStageReport();
  report.mutable_stages(0)->mutable_schedule_lag()->set_p99_ms(4);
  report.mutable_stages(0)->mutable_dispatch_lag()->set_p99_ms(4);
  v1::GeneratorLimits limits;
  limits.set_max_schedule_lag_p99_ns(2 * kMillisecond);
  MarkGeneratorLimits(limits, report);
  EXPECT_TRUE(report.stages(0).generator_limited());
  EXPECT_THAT(report.stages(0).generator_limited_reason(), HasSubstr("dispatch lag p99 4 ms"));
  EXPECT_FALSE(report.stages(0).pool_limited()) << "the agent was late, whatever the pool did";
  EXPECT_FALSE(report.stages(1).generator_limited());
  // The default limit (10 ms) would not have marked it.
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.stages(0).generator_limited());
  EXPECT_FALSE(report.stages(0).pool_limited());
}

// Stage 2 of TwoStageReport (and the run) queued: arrivals waited 40 ms at p99, those with a
// free connection started within 0.3 ms. 8 connections over 2 s, each query `service_ms`.
v1::RunReport QueuedReport(double service_ms) {
  v1::RunReport report = TwoStageReport();
  report.mutable_plan()->mutable_target()->set_pool(8);
  report.set_queries_duration_s(4);
  for (int i = 0; i < 2; ++i) report.mutable_stages(i)->set_duration_s(2);
  v1::StageReport& stage = *report.mutable_stages(1);
  stage.mutable_schedule_lag()->set_p99_ms(40);
  stage.mutable_dispatch_lag()->set_p99_ms(0.3);
  stage.mutable_service_time()->set_count(3000);  // at 5 ms: 15 s of 16 connection-s
  stage.mutable_service_time()->set_mean_ms(service_ms);
  // Over the whole run the connections were busy less than half the time (stage 1 was light):
  // with stages, the run's marks come from its stages, not from these blurred figures.
  report.mutable_schedule_lag()->set_p99_ms(35);
  report.mutable_dispatch_lag()->set_p99_ms(0.3);
  report.mutable_service_time()->set_count(3000);
  report.mutable_service_time()->set_mean_ms(service_ms);
  return report;
}

TEST(MarkGeneratorLimitsTest, LagFromQueueingForBusyConnectionsMarksThePoolNotTheGenerator) {
  v1::RunReport report = QueuedReport(/*service_ms=*/5);
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.stages(1).generator_limited()) << report.stages(1).generator_limited_reason();
  EXPECT_TRUE(report.stages(1).pool_limited());
  EXPECT_THAT(report.stages(1).pool_limited_reason(),
              AllOf(HasSubstr("schedule lag p99 40 ms"), HasSubstr("0.3 ms with a free connection"),
                    HasSubstr("pool of 8 per agent")));
  EXPECT_FALSE(report.stages(0).pool_limited());
  EXPECT_TRUE(report.pool_limited());
  EXPECT_THAT(report.pool_limited_reason(), HasSubstr("stage 2: schedule lag p99 40 ms"));
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
}

TEST(MarkGeneratorLimitsTest, QueueingForConnectionsBusyWithTheAgentsOwnWorkIsTheGenerators) {
  // The same queueing, but the connections were in database calls 0.4 % of the time (the noop
  // driver flat out on an agent whose CPU the machine's other load kept under its limit).
  v1::RunReport report = QueuedReport(/*service_ms=*/0.02);
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.stages(1).pool_limited()) << report.stages(1).pool_limited_reason();
  EXPECT_TRUE(report.stages(1).generator_limited());
  EXPECT_THAT(report.stages(1).generator_limited_reason(),
              AllOf(HasSubstr("schedule lag p99 40 ms"), HasSubstr("only 0% of their time")));
}

TEST(MarkGeneratorLimitsTest, AnAgentOutOfCpuIsNotCalledPoolLimited) {
  // Workers busy with the agent's own work (CPU-bound, e.g. the noop driver flat out) queue
  // arrivals too: the CPU says whose limit it was.
  v1::RunReport report = TwoStageReport();
  *report.add_intervals() = Interval(5.5, 2, false, /*max_agent_cpu=*/0.99);
  report.mutable_stages(1)->mutable_schedule_lag()->set_p99_ms(500);
  MarkGeneratorLimits({}, report);
  EXPECT_TRUE(report.stages(1).generator_limited());
  EXPECT_FALSE(report.stages(1).pool_limited());
}

}  // namespace
}  // namespace dbload
