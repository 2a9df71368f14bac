// What the report makes of the probe's readings (per-stage deltas, per-query values) and of the
// generator's health, on hand-made readings and intervals with known answers.
#include "coordinator/saturation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "absl/strings/str_cat.h"
#include "report/report.h"
#include "report/report_html.h"

namespace dbload {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

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
  // The readings each span rests on, its boundary readings included.
  EXPECT_EQ(run.readings(), 6u);     // 1.02 … 5.03
  EXPECT_EQ(first.readings(), 3u);   // 1.02, 2.02, 3.02
  EXPECT_EQ(second.readings(), 4u);  // 3.02 … 5.03

  // Gauges: the newest reading of the span, and its range.
  const v1::SaturationDelta& connections = Named(report.stages(0).saturation(), "connections");
  EXPECT_TRUE(connections.gauge());
  EXPECT_EQ(connections.delta(), 5);
  EXPECT_EQ(connections.min(), 4);
  EXPECT_EQ(connections.max(), 5);
  EXPECT_EQ(connections.per_query(), 0);
}

// Without a warm-up the run's delta starts with the reading before the load (slightly
// negative on the run's clock), so that what the agents' set-up did counts in it.
TEST(ProbeRecordTest, WithoutAWarmUpTheRunStartsWithTheReadingBeforeTheLoad) {
  ProbeRecord record;
  record.Add(-0.3, Reading(10, 0));
  record.Add(0.7, Reading(60, 4));
  record.Add(2.01, Reading(130, 0));
  v1::RunReport report;
  *report.add_intervals() = Interval(1.0, 0);
  *report.add_intervals() = Interval(2.0, 0);
  report.set_executed(100);
  record.FillReport(report);
  const v1::SaturationDelta& run = Named(report.saturation(), "commits");
  EXPECT_EQ(run.delta(), 120);
  EXPECT_DOUBLE_EQ(run.from_s(), -0.3);
  EXPECT_EQ(run.readings(), 3u);
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

// A value some readings lack (the process source reads Pss only when it is cheap enough) rests
// on the readings that had it, not on the span's.
TEST(ProbeRecordTest, ReadingsCountOnlyTheReadingsThatHadTheValue) {
  ProbeRecord record;
  auto with_cpu = [](double commits, double cpu) {
    std::vector<ProbeValue> values = Reading(commits, 1);
    values.push_back({.source = "process", .name = "cpu_seconds", .value = cpu, .gauge = false});
    return values;
  };
  record.Add(1.02, with_cpu(0, 1));
  record.Add(2.02, Reading(10, 1));
  record.Add(3.02, Reading(20, 1));
  record.Add(4.02, with_cpu(30, 2));
  record.Add(5.03, with_cpu(40, 3));
  v1::RunReport report = TwoStageReport();
  record.FillReport(report);
  EXPECT_EQ(Named(report.saturation(), "commits").readings(), 5u);
  EXPECT_EQ(Named(report.saturation(), "cpu_seconds").readings(), 3u);
  EXPECT_EQ(Named(report.saturation(), "cpu_seconds").delta(), 2);
  EXPECT_EQ(Named(report.saturation(), "connections").readings(), 5u);
}

// Fewer than kMinProbeReadings readings mark a counter's figures in the text and HTML reports,
// with the note under the table; kMinProbeReadings of them do not.
TEST(ProbeRecordTest, ACounterOnFewerThanFiveReadingsIsMarkedAndOnFiveIsNot) {
  ASSERT_EQ(kMinProbeReadings, 5u);
  auto report_of = [](int readings) {
    ProbeRecord record;
    for (int i = 0; i < readings; ++i) {
      record.Add(1.02 + i * 4.01 / (readings - 1), Reading(100 * i, 2));
    }
    v1::RunReport report = TwoStageReport();
    report.clear_stages();  // the run's span only
    for (v1::IntervalSample& sample : *report.mutable_intervals()) sample.set_stage(0);
    record.FillReport(report);
    return report;
  };
  const v1::RunReport four = report_of(4);
  ASSERT_EQ(Named(four.saturation(), "commits").readings(), 4u);
  EXPECT_TRUE(FewProbeReadings(Named(four.saturation(), "commits")));
  const std::string text = RenderReportText(four);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("0.75", kFewReadingsMark)));  // 300 / 400
  EXPECT_THAT(text, HasSubstr(kFewReadingsNote));
  const std::string html = RenderReportHtml(four);
  EXPECT_THAT(html, HasSubstr(absl::StrCat("<td>300", kFewReadingsMark, "</td>")));
  EXPECT_THAT(html, HasSubstr(absl::StrCat("<td>0.75", kFewReadingsMark, "</td>")));
  EXPECT_THAT(html, HasSubstr(kFewReadingsNote));
  // The gauge is a level, not a figure over the span: not marked.
  EXPECT_THAT(text, Not(HasSubstr(absl::StrCat("2 max 2", kFewReadingsMark))));

  const v1::RunReport five = report_of(5);
  ASSERT_EQ(Named(five.saturation(), "commits").readings(), 5u);
  EXPECT_FALSE(FewProbeReadings(Named(five.saturation(), "commits")));
  EXPECT_THAT(RenderReportText(five),
              AllOf(HasSubstr("postgresql/commits"), Not(HasSubstr(kFewReadingsMark)),
                    Not(HasSubstr(kFewReadingsNote))));
  const std::string five_html = RenderReportHtml(five);
  EXPECT_THAT(five_html, HasSubstr("<td>400</td>"));
  EXPECT_THAT(five_html, AllOf(Not(HasSubstr(kFewReadingsMark)), Not(HasSubstr(kFewReadingsNote))));
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
  EXPECT_THAT(report.generator_limited_reason(),
              HasSubstr("stage 2: at 5.0–5.5 s an agent used 97%"));
}

TEST(MarkGeneratorLimitsTest, DispatchLagOverThePlansShareMarksTheStage) {
  v1::RunReport report = TwoStageReport();
  report.mutable_stages(0)->mutable_schedule_lag()->set_p99_ms(4);
  report.mutable_stages(0)->mutable_dispatch_lag()->set_p99_ms(4);
  report.mutable_stages(0)->mutable_response_time()->set_p99_ms(20);
  v1::GeneratorLimits limits;
  limits.set_max_dispatch_lag_share(0.15);
  MarkGeneratorLimits(limits, report);
  EXPECT_TRUE(report.stages(0).generator_limited());
  EXPECT_THAT(report.stages(0).generator_limited_reason(),
              HasSubstr("dispatch lag p99 4 ms = 20% of response p99 20 ms (limit 15%"));
  EXPECT_FALSE(report.stages(0).pool_limited()) << "the agent was late, whatever the pool did";
  EXPECT_FALSE(report.stages(1).generator_limited());
  EXPECT_NEAR(report.stages(0).dispatch_lag_share(), 0.2, 1e-9);
  // A share of 25 % would not have marked it.
  limits.set_max_dispatch_lag_share(0.25);
  MarkGeneratorLimits(limits, report);
  EXPECT_FALSE(report.stages(0).generator_limited());
  EXPECT_FALSE(report.stages(0).pool_limited());
}

// One second of a run on `connections` connections: what completed, where the connections'
// time went (the rest of it idle, 1 % in the agent's own work) and the interval's lags.
struct Second {
  double elapsed_s = 0;
  uint64_t executed = 0;
  uint64_t errors = 0;
  double in_db_call = 0;  // shares of the connections' time
  double connecting = 0;
  double schedule_lag_p99_ms = 0.3;
  double dispatch_lag_p99_ms = 0.2;
  double p99_ms = 1;
  uint32_t stage = 0;
  int connections = 16;
};

v1::IntervalSample IntervalOf(const Second& s) {
  v1::IntervalSample sample = Interval(s.elapsed_s, s.stage);
  sample.set_executed(s.executed);
  sample.set_errors(s.errors);
  sample.set_schedule_lag_p99_ms(s.schedule_lag_p99_ms);
  sample.set_dispatch_lag_p99_ms(s.dispatch_lag_p99_ms);
  sample.set_p99_ms(s.p99_ms);
  v1::ConnectionTime& time = *sample.mutable_connection_time();
  const double total = s.connections;  // connection-seconds in one second
  time.set_in_db_call_s(s.in_db_call * total);
  time.set_connecting_s(s.connecting * total);
  const double agent = std::min(0.01, 1 - s.in_db_call - s.connecting);
  time.set_in_agent_s(agent * total);
  time.set_idle_s(std::max(0.0, 1 - s.in_db_call - s.connecting - agent) * total);
  return sample;
}

// Ten seconds at 2,000/s on 16 connections, PostgreSQL healthy (3 % in database calls) except
// where `faulty` says; the run's figures as the report would have them.
v1::RunReport TenSeconds(const std::map<int, Second>& faulty) {
  v1::RunReport report;
  report.mutable_plan()->mutable_target()->set_pool(16);
  report.set_queries_duration_s(10);
  for (int i = 0; i < 10; ++i) {
    Second second{.elapsed_s = i + 1.0, .executed = 2'000, .in_db_call = 0.03};
    if (auto it = faulty.find(i); it != faulty.end()) {
      second = it->second;
      second.elapsed_s = i + 1.0;
    }
    *report.add_intervals() = IntervalOf(second);
  }
  report.mutable_schedule_lag()->set_p99_ms(909);
  report.mutable_dispatch_lag()->set_p99_ms(0.3);
  report.mutable_response_time()->set_p99_ms(909);
  // Over the whole run the connections were in database calls 13 % of the time: judged on that
  // average, the stall's queueing was blamed on the agent's own work.
  report.mutable_service_time()->set_count(20'000);
  report.mutable_service_time()->set_mean_ms(10 * 16 * 0.13 * 1e3 / 20'000);
  return report;
}

// A 1 s SIGSTOP of PostgreSQL at 4–5 s: nothing completes while every connection sits in a
// database call; the next second serves the backlog, whose arrivals waited up to a second.
TEST(JudgeIntervalsTest, AStallIsTheDatabasesAndItsSecondsAreNamed) {
  v1::RunReport report = TenSeconds(
      {{4, {.executed = 0, .in_db_call = 1.0}},
       {5, {.executed = 4'000, .in_db_call = 0.06, .schedule_lag_p99_ms = 909, .p99_ms = 909}}});
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  EXPECT_FALSE(report.pool_limited()) << report.pool_limited_reason();
  EXPECT_TRUE(report.database_stalled());
  EXPECT_THAT(report.database_stalled_reason(),
              AllOf(HasSubstr("at 4.0–6.0 s"), HasSubstr("in database calls 100%"),
                    HasSubstr("completed 0 transactions")));
  for (int i = 0; i < report.intervals_size(); ++i) {
    EXPECT_EQ(report.intervals(i).limit(),
              i == 4 || i == 5 ? v1::INTERVAL_LIMIT_DATABASE_STALLED : v1::INTERVAL_LIMIT_NONE)
        << "interval " << i;
  }
  const std::string text = RenderReportText(report);
  EXPECT_THAT(text, HasSubstr("DATABASE-STALLED: at 4.0–6.0 s"));
  EXPECT_THAT(text, HasSubstr("Intervals judged: database-stalled at 4.0–6.0 s\n"));
  EXPECT_THAT(text, Not(HasSubstr("GENERATOR-LIMITED")));
}

// The run's last interval, 3 ms long as the run ends: its connections in their last calls all
// along, completing 7 transactions, are the end of the run, not a stall. A full second like it
// still is one.
TEST(JudgeIntervalsTest, TheRunsShortLastIntervalIsNoStall) {
  for (const double length : {0.003, 1.0}) {
    v1::RunReport report = TenSeconds({});
    v1::IntervalSample tail =
        IntervalOf({.elapsed_s = 10 + length, .executed = 7, .in_db_call = 1.0});
    tail.set_length_s(length);
    v1::ConnectionTime& time = *tail.mutable_connection_time();
    time.set_in_db_call_s(time.in_db_call_s() * length);
    time.set_in_agent_s(time.in_agent_s() * length);
    time.set_idle_s(time.idle_s() * length);
    *report.add_intervals() = tail;
    MarkGeneratorLimits({}, report);
    EXPECT_EQ(report.database_stalled(), length == 1.0)
        << "length " << length << ": " << report.database_stalled_reason();
  }
}

// The same stall from 4.5 to 5.5 s: half of it in each of two seconds.
TEST(JudgeIntervalsTest, AStallAcrossTwoIntervalsIsFoundInBoth) {
  v1::RunReport report = TenSeconds(
      {{4, {.executed = 1'000, .in_db_call = 0.52}},
       {5, {.executed = 2'900, .in_db_call = 0.53, .schedule_lag_p99_ms = 500, .p99_ms = 500}}});
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  EXPECT_TRUE(report.database_stalled());
  EXPECT_THAT(report.database_stalled_reason(), HasSubstr("at 4.0–6.0 s"));
}

// The stall began late in a second (the server's processes frozen one after another): that
// second's arrivals queued a little behind the first frozen connections, before the stall
// shows in the next one. Measured: "at 2.0–3.0 s arrivals queued (schedule lag p99 17.51 ms …)
// for connections that were in database calls … only 18% of the time".
TEST(JudgeIntervalsTest, QueueingAsAStallBeginsIsTheStalls) {
  v1::RunReport report = TenSeconds(
      {{3, {.executed = 1'900, .in_db_call = 0.18, .schedule_lag_p99_ms = 17.5, .p99_ms = 20}},
       {4, {.executed = 571, .in_db_call = 0.87}},
       {5, {.executed = 2'500, .in_db_call = 0.05, .schedule_lag_p99_ms = 900, .p99_ms = 900}}});
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  EXPECT_THAT(report.database_stalled_reason(), HasSubstr("at 3.0–6.0 s"));
}

// PostgreSQL restarted, 3 s down: the sessions fail, then reconnect with backoff until it is
// back; the backlog's arrivals waited through the outage.
TEST(JudgeIntervalsTest, ARestartIsTheDatabasesOutage) {
  v1::RunReport report = TenSeconds(
      {{3, {.executed = 900, .errors = 16, .in_db_call = 0.01, .connecting = 0.55}},
       {4, {.executed = 0, .connecting = 1.0}},
       {5, {.executed = 0, .connecting = 1.0}},
       {6,
        {.executed = 8'000,
         .in_db_call = 0.1,
         .connecting = 0.2,
         .schedule_lag_p99_ms = 2'900,
         .p99_ms = 2'900}},
       {7, {.executed = 2'000, .in_db_call = 0.03, .schedule_lag_p99_ms = 40, .p99_ms = 45}}});
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  EXPECT_FALSE(report.pool_limited()) << report.pool_limited_reason();
  EXPECT_TRUE(report.database_stalled());
  EXPECT_THAT(report.database_stalled_reason(),
              AllOf(HasSubstr("at 3.0–8.0 s"), HasSubstr("reconnecting 100%")));
}

// An outage longer than half the run: its silent seconds must not become the usual pace.
TEST(JudgeIntervalsTest, AnOutageLongerThanHalfTheRunIsStillTheDatabases) {
  std::map<int, Second> down;
  down[3] = {.executed = 1'700, .errors = 16, .in_db_call = 0.05, .connecting = 0.11};
  for (int i = 4; i < 10; ++i) down[i] = {.executed = 0, .connecting = 1.0};
  v1::RunReport report = TenSeconds(down);
  MarkGeneratorLimits({}, report);
  EXPECT_TRUE(report.database_stalled());
  EXPECT_THAT(report.database_stalled_reason(), HasSubstr("at 4.0–10.0 s"));
  EXPECT_FALSE(report.pool_limited()) << report.pool_limited_reason();
}

// A pool too small for the database's latency: every second the connections sit in database
// calls and arrivals queue, at the same completions per second of call as always.
TEST(JudgeIntervalsTest, QueueingForConnectionsBusyInDatabaseCallsIsThePools) {
  v1::RunReport report = TwoStageReport();
  report.mutable_plan()->mutable_target()->set_pool(2);
  report.clear_intervals();
  *report.add_intervals() = IntervalOf(
      {.elapsed_s = 1, .executed = 500, .in_db_call = 0.4, .stage = 1, .connections = 2});
  *report.add_intervals() = IntervalOf(
      {.elapsed_s = 2, .executed = 500, .in_db_call = 0.4, .stage = 1, .connections = 2});
  for (double at : {3.0, 4.0, 5.0}) {
    *report.add_intervals() = IntervalOf({.elapsed_s = at,
                                          .executed = 1'000,
                                          .in_db_call = 0.99,
                                          .schedule_lag_p99_ms = 40,
                                          .p99_ms = 42,
                                          .stage = 2,
                                          .connections = 2});
  }
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.stages(0).pool_limited()) << report.stages(0).pool_limited_reason();
  EXPECT_TRUE(report.stages(1).pool_limited());
  EXPECT_THAT(report.stages(1).pool_limited_reason(),
              AllOf(HasSubstr("at 2.0–5.0 s"), HasSubstr("schedule lag p99 40 ms"),
                    HasSubstr("0.2 ms with a free connection"), HasSubstr("in database calls 99%"),
                    HasSubstr("pool of 2 per agent")));
  EXPECT_FALSE(report.stages(1).database_stalled()) << report.stages(1).database_stalled_reason();
  EXPECT_FALSE(report.stages(1).generator_limited()) << report.stages(1).generator_limited_reason();
  EXPECT_TRUE(report.pool_limited());
  EXPECT_THAT(report.pool_limited_reason(), HasSubstr("stage 2: at 2.0–5.0 s"));
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  EXPECT_EQ(report.intervals(3).limit(), v1::INTERVAL_LIMIT_POOL);
}

// The same queueing, but the connections were in database calls 0.4 % of the time (the noop
// driver flat out on an agent whose CPU the machine's other load kept under its limit).
TEST(JudgeIntervalsTest, QueueingForConnectionsBusyWithTheAgentsOwnWorkIsTheGenerators) {
  v1::RunReport report;
  report.mutable_plan()->mutable_target()->set_pool(2);
  for (double at : {1.0, 2.0, 3.0}) {
    *report.add_intervals() = IntervalOf({.elapsed_s = at,
                                          .executed = 100'000,
                                          .in_db_call = 0.004,
                                          .schedule_lag_p99_ms = 40,
                                          .p99_ms = 41,
                                          .connections = 2});
  }
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.pool_limited()) << report.pool_limited_reason();
  EXPECT_FALSE(report.database_stalled()) << report.database_stalled_reason();
  EXPECT_TRUE(report.generator_limited());
  EXPECT_THAT(report.generator_limited_reason(),
              AllOf(HasSubstr("at 0.0–3.0 s"), HasSubstr("schedule lag p99 40 ms"),
                    HasSubstr("reconnecting only 0% of the time"), HasSubstr("agent's own work")));
  EXPECT_EQ(report.intervals(1).limit(), v1::INTERVAL_LIMIT_GENERATOR);

  // Flat out on a machine that hides the agent's CPU: calls of 0.6 µs, half of the time, and
  // the agent's own work between them the other half. The calls are not what held arrivals.
  for (v1::IntervalSample& sample : *report.mutable_intervals()) {
    sample.mutable_connection_time()->set_in_db_call_s(1.04);
    sample.mutable_connection_time()->set_in_agent_s(0.96);
    sample.mutable_connection_time()->set_idle_s(0);
  }
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.pool_limited()) << report.pool_limited_reason();
  EXPECT_TRUE(report.generator_limited());
  EXPECT_THAT(report.generator_limited_reason(), HasSubstr("in the agent's own work 48%"));
}

// Open loop at 10,000/s: the agent's dispatch lag p99 (5.3 ms) is half of the response p99
// (10.4 ms) although under the old fixed 10 ms limit.
TEST(JudgeIntervalsTest, DispatchLagIsJudgedAgainstTheResponseTimeItHidesIn) {
  v1::RunReport report;
  report.mutable_dispatch_lag()->set_p99_ms(5.3);
  report.mutable_schedule_lag()->set_p99_ms(5.3);
  report.mutable_response_time()->set_p99_ms(10.4);
  MarkGeneratorLimits({}, report);
  EXPECT_TRUE(report.generator_limited());
  EXPECT_THAT(report.generator_limited_reason(),
              HasSubstr("dispatch lag p99 5.3 ms = 51% of response p99 10.4 ms (limit 10%, above "
                        "1 ms)"));
  EXPECT_NEAR(report.dispatch_lag_share(), 0.51, 0.005);
  EXPECT_THAT(RenderReportText(report),
              HasSubstr("dispatch lag p99 5.300 ms = 51% of response p99 10.400 ms"));

  v1::GeneratorLimits limits;
  limits.set_max_dispatch_lag_share(0.6);  // the plan accepts more
  MarkGeneratorLimits(limits, report);
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  EXPECT_NEAR(report.dispatch_lag_share(), 0.51, 0.005) << "the share is stated all the same";

  // Microseconds are scheduling noise, whatever their share of a fast query's p99.
  report.mutable_dispatch_lag()->set_p99_ms(0.05);
  report.mutable_response_time()->set_p99_ms(0.08);
  MarkGeneratorLimits({}, report);
  EXPECT_FALSE(report.generator_limited()) << report.generator_limited_reason();
  limits.Clear();
  limits.set_min_dispatch_lag_p99_ns(10 * kMicrosecond);
  MarkGeneratorLimits(limits, report);
  EXPECT_TRUE(report.generator_limited()) << "a lower floor lets it count";
}

// The live marks judge the newest interval on the ones before it only.
TEST(JudgeIntervalsTest, TheNewestIntervalIsJudgedOnThoseBeforeIt) {
  v1::RunReport report = TenSeconds(
      {{4, {.executed = 0, .in_db_call = 1.0}},
       {5, {.executed = 4'000, .in_db_call = 0.06, .schedule_lag_p99_ms = 909, .p99_ms = 909}}});
  std::vector<const v1::IntervalSample*> so_far;
  for (int i = 0; i <= 5; ++i) so_far.push_back(&report.intervals(i));
  const std::vector<IntervalJudgement> judged = JudgeIntervals({}, so_far, 16);
  EXPECT_EQ(judged[4].limit, v1::INTERVAL_LIMIT_DATABASE_STALLED);
  EXPECT_EQ(judged[5].limit, v1::INTERVAL_LIMIT_DATABASE_STALLED) << judged[5].why;
  EXPECT_THAT(judged[5].why, HasSubstr("behind the database's stall at 4.0–5.0 s"));
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
