#include "coordinator/run_aggregator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

namespace dbload {
namespace {

constexpr char kRun[] = "run-1";

v1::Plan TestPlan() {
  v1::Plan plan;
  plan.set_name("test");
  plan.mutable_load()->mutable_open()->set_rate(3000);
  plan.mutable_stop()->set_duration_ns(10'000'000'000);
  plan.set_warmup_ns(2'000'000'000);
  return plan;
}

const std::vector<std::string> kQueryTypes = {"select", "update"};

std::vector<RunAggregator::AgentSpec> ThreeAgents(uint64_t budget = 0) {
  return {{"a0", budget}, {"a1", budget}, {"a2", budget}};
}

IntervalSnapshot EmptySnapshot() {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(kQueryTypes.size());
  return snapshot;
}

// A snapshot of `samples` random transactions, each of 1 to 20 statements, also recorded into
// `union_response` and `union_service` (and `union_statements`, and `union_rolled_back`: those of
// 20 statements count as rolled back by the workload) per query type, as if one recorder had
// seen every agent's samples.
IntervalSnapshot RandomSnapshot(std::mt19937_64& random, int samples,
                                std::vector<Histogram>* union_response,
                                std::vector<Histogram>* union_service, Histogram* union_lag,
                                std::vector<uint64_t>* union_statements = nullptr,
                                std::vector<uint64_t>* union_rolled_back = nullptr) {
  IntervalSnapshot snapshot = EmptySnapshot();
  std::lognormal_distribution<double> latency(13.0, 1.5);  // ~0.4 ms median, long tail
  for (int i = 0; i < samples; ++i) {
    const size_t q = random() % kQueryTypes.size();
    const int64_t service = static_cast<int64_t>(latency(random));
    const int64_t lag = static_cast<int64_t>(random() % 100'000);
    snapshot.query_types[q].response_time.Record(service + lag);
    snapshot.query_types[q].service_time.Record(service);
    snapshot.schedule_lag.Record(lag);
    const uint64_t statements = 1 + random() % 20;
    snapshot.query_types[q].statements += statements;
    if (union_statements != nullptr) (*union_statements)[q] += statements;
    if (statements == 20) {
      ++snapshot.query_types[q].rolled_back;
      if (union_rolled_back != nullptr) ++(*union_rolled_back)[q];
    }
    if (union_response != nullptr) {
      (*union_response)[q].Record(service + lag);
      (*union_service)[q].Record(service);
      union_lag->Record(lag);
    }
  }
  return snapshot;
}

v1::AgentReport MakeReport(uint64_t sequence, const IntervalSnapshot& snapshot, bool warmup = false,
                           double elapsed_s = 0, double interval_s = 1) {
  v1::AgentReport report;
  report.set_run_id(kRun);
  report.set_sequence(sequence);
  report.set_warmup(warmup);
  report.set_elapsed_s(elapsed_s);
  report.set_interval_s(interval_s);
  SnapshotToReport(snapshot, &report);
  return report;
}

v1::AgentReport FinalReport(uint64_t sequence, double measured_s, uint64_t not_started,
                            const IntervalSnapshot& snapshot) {
  v1::AgentReport report = MakeReport(sequence, snapshot);
  report.set_final(true);
  report.set_measured_s(measured_s);
  report.set_not_started(not_started);
  report.set_end_reason("duration");
  return report;
}

Histogram FromProto(const v1::Histogram& proto) {
  absl::StatusOr<Histogram> h = Histogram::FromProto(proto);
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? *h : Histogram();
}

TEST(RunAggregator, MergingThreeAgentsEqualsOneHistogramOfAllSamples) {
  std::mt19937_64 random(42);
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  std::vector<Histogram> union_response(kQueryTypes.size()), union_service(kQueryTypes.size());
  Histogram union_lag;
  std::vector<uint64_t> union_statements(kQueryTypes.size(), 0);
  std::vector<uint64_t> union_rolled_back(kQueryTypes.size(), 0);
  const std::vector<std::string> agents = {"a0", "a1", "a2"};
  std::map<std::string, uint64_t> executed_by_agent;
  std::map<std::string, Histogram> response_by_agent;
  std::map<std::string, uint64_t> sequence;
  // Per agent, warm-up included: what the database's commit count lacks.
  std::map<std::string, uint64_t> rolled_back_by_agent;
  const auto add_rolled_back = [&](const std::string& agent, const IntervalSnapshot& snapshot) {
    for (const QueryTypeInterval& q : snapshot.query_types) {
      rolled_back_by_agent[agent] += q.rolled_back;
    }
  };
  // Two warm-up reports each, not in the totals.
  for (int tick = 1; tick <= 2; ++tick) {
    for (const std::string& agent : agents) {
      const IntervalSnapshot snapshot = RandomSnapshot(random, 500, nullptr, nullptr, nullptr);
      add_rolled_back(agent, snapshot);
      ASSERT_TRUE(
          aggregator
              .AddReport(agent, MakeReport(++sequence[agent], snapshot, /*warmup=*/true, tick))
              .ok());
    }
    EXPECT_EQ(aggregator.CloseInterval(tick).size(), 1u);
  }
  // Eight measured ticks; the agents' reports arrive interleaved and unevenly (an agent may
  // miss a tick and send two reports in the next).
  uint64_t expected_executed = 0;
  for (int tick = 3; tick <= 10; ++tick) {
    std::vector<std::string> senders = agents;
    if (tick % 3 == 0) senders.push_back("a1");
    if (tick % 4 == 0) senders.erase(senders.begin() + 2);
    std::shuffle(senders.begin(), senders.end(), random);
    for (const std::string& agent : senders) {
      const int samples = 100 + static_cast<int>(random() % 2000);
      const IntervalSnapshot snapshot =
          RandomSnapshot(random, samples, &union_response, &union_service, &union_lag,
                         &union_statements, &union_rolled_back);
      executed_by_agent[agent] += samples;
      add_rolled_back(agent, snapshot);
      for (const QueryTypeInterval& q : snapshot.query_types) response_by_agent[agent].Add(q.response_time);
      expected_executed += samples;
      ASSERT_TRUE(
          aggregator.AddReport(agent, MakeReport(++sequence[agent], snapshot, false, tick)).ok());
    }
    aggregator.CloseInterval(tick);
  }
  for (const std::string& agent : agents) {
    const IntervalSnapshot snapshot =
        RandomSnapshot(random, 77, &union_response, &union_service, &union_lag, &union_statements,
                       &union_rolled_back);
    executed_by_agent[agent] += 77;
    add_rolled_back(agent, snapshot);
    for (const QueryTypeInterval& q : snapshot.query_types) response_by_agent[agent].Add(q.response_time);
    expected_executed += 77;
    ASSERT_TRUE(aggregator
                    .AddReport(agent, FinalReport(++sequence[agent], agent == "a1" ? 8.4 : 8.2,
                                                  agent == "a2" ? 5 : 1, snapshot))
                    .ok());
  }
  EXPECT_TRUE(aggregator.AllFinal());

  const v1::RunReport report = aggregator.Finish(10.4, "duration", "2024-01-01T00:00:00Z");
  EXPECT_EQ(report.executed(), expected_executed);
  uint64_t sum_over_agents = 0;
  for (const auto& [name, progress] : aggregator.agents()) {
    EXPECT_EQ(progress.executed, executed_by_agent[name]) << name;
    EXPECT_EQ(progress.rolled_back, rolled_back_by_agent[name]) << name;
    EXPECT_GT(progress.rolled_back, 0u) << name;
    sum_over_agents += progress.executed;
  }
  EXPECT_EQ(report.executed(), sum_over_agents);
  // Per agent, in the report: its own counts and percentiles of its own merged histogram.
  ASSERT_EQ(report.agents_size(), 3);
  for (const v1::AgentSummary& agent : report.agents()) {
    SCOPED_TRACE(agent.name());
    EXPECT_EQ(agent.executed(), executed_by_agent[agent.name()]);
    const Histogram& own = response_by_agent[agent.name()];
    EXPECT_EQ(agent.response_time().count(), own.TotalCount());
    EXPECT_EQ(agent.response_time().p99_ms(), own.ValueAtPercentile(99) / 1e6);
    EXPECT_EQ(agent.response_time().max_ms(), own.Max() / 1e6);
    EXPECT_EQ(agent.end_reason(), "duration");
  }
  ASSERT_EQ(report.query_types_size(), 2);
  Histogram all_response;
  for (size_t q = 0; q < kQueryTypes.size(); ++q) {
    EXPECT_EQ(report.query_types(q).name(), kQueryTypes[q]);
    EXPECT_TRUE(FromProto(report.query_types(q).response_histogram()) == union_response[q]) << q;
    EXPECT_TRUE(FromProto(report.query_types(q).service_histogram()) == union_service[q]) << q;
    EXPECT_EQ(report.query_types(q).executed(), union_response[q].TotalCount());
    EXPECT_EQ(report.query_types(q).statements(), union_statements[q]) << q;
    // Counted across ticks that reuse the aggregator's buffers, each rollback once.
    EXPECT_EQ(report.query_types(q).rolled_back(), union_rolled_back[q]) << q;
    EXPECT_GT(union_rolled_back[q], 0u);
    all_response.Add(union_response[q]);
  }
  // The warm-up's statements are in no total, as its transactions are not.
  EXPECT_EQ(report.statements(), union_statements[0] + union_statements[1]);
  EXPECT_GT(report.statements(), report.executed());
  // Summaries come from the merged counts, so they equal the union's exactly.
  EXPECT_EQ(report.response_time().p99_ms(), all_response.ValueAtPercentile(99) / 1e6);
  EXPECT_EQ(report.response_time().max_ms(), all_response.Max() / 1e6);
  EXPECT_EQ(report.schedule_lag().count(), union_lag.TotalCount());
  EXPECT_EQ(report.schedule_lag().p99_ms(), union_lag.ValueAtPercentile(99) / 1e6);
  EXPECT_DOUBLE_EQ(report.total_duration_s(), 8.4);  // the longest agent
  EXPECT_EQ(report.not_started(), 7u);               // 1 + 1 + 5
  EXPECT_EQ(report.end_reason(), "duration");
  EXPECT_EQ(report.wanted_rate(), 3000);
  // 2 warm-up + 8 measured ticks + the final one.
  ASSERT_EQ(report.intervals_size(), 11);
  EXPECT_TRUE(report.intervals(1).warmup());
  EXPECT_FALSE(report.intervals(2).warmup());
  uint64_t interval_sum = 0, interval_statements = 0;
  for (const auto& sample : report.intervals()) {
    if (!sample.warmup()) interval_sum += sample.executed();
    if (!sample.warmup()) interval_statements += sample.statements();
  }
  EXPECT_EQ(interval_sum, expected_executed);
  EXPECT_EQ(interval_statements, report.statements());
  EXPECT_GT(report.intervals(0).statements(), 0u);  // the warm-up's, in its own samples
}

TEST(RunAggregator, RepeatedSequenceIsIgnoredAndCounted) {
  std::mt19937_64 random(1);
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  const IntervalSnapshot snapshot = RandomSnapshot(random, 100, nullptr, nullptr, nullptr);
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(1, snapshot)).ok());
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(2, snapshot)).ok());
  EXPECT_TRUE(aggregator.AddReport("a0", MakeReport(2, snapshot)).ok());
  EXPECT_TRUE(aggregator.AddReport("a0", MakeReport(1, snapshot)).ok());
  EXPECT_EQ(aggregator.duplicate_reports(), 2u);
  EXPECT_EQ(aggregator.agents().at("a0").duplicates, 2u);
  EXPECT_EQ(aggregator.agents().at("a0").executed, 200u);
  const std::vector<v1::IntervalSample> samples = aggregator.CloseInterval(1);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].executed(), 200u);
}

TEST(RunAggregator, GapInSequenceIsAnErrorAndChangesNothing) {
  std::mt19937_64 random(2);
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  const IntervalSnapshot snapshot = RandomSnapshot(random, 100, nullptr, nullptr, nullptr);
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(1, snapshot)).ok());
  const absl::Status gap = aggregator.AddReport("a0", MakeReport(4, snapshot));
  EXPECT_EQ(gap.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(gap.message()), ::testing::HasSubstr("reports 2 to 3 are missing"));
  EXPECT_THAT(std::string(gap.message()), ::testing::HasSubstr("a0"));
  EXPECT_EQ(aggregator.agents().at("a0").executed, 100u);
  EXPECT_EQ(aggregator.agents().at("a0").last_sequence, 1u);
  // The agent may still send the report that was due.
  EXPECT_TRUE(aggregator.AddReport("a0", MakeReport(2, snapshot)).ok());
}

TEST(RunAggregator, SequenceStartsAtOne) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  EXPECT_EQ(aggregator.AddReport("a0", MakeReport(0, EmptySnapshot())).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(aggregator.AddReport("a0", MakeReport(2, EmptySnapshot())).code(),
            absl::StatusCode::kDataLoss);
}

TEST(RunAggregator, UnknownQueryTypeIsRefused) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  IntervalSnapshot too_wide;
  too_wide.query_types.resize(3);
  too_wide.query_types[2].response_time.Record(1000);
  const absl::Status status = aggregator.AddReport("a1", MakeReport(1, too_wide));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("query type 2"));
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("a1"));
  EXPECT_EQ(aggregator.agents().at("a1").last_sequence, 0u);
  EXPECT_TRUE(aggregator.CloseInterval(1).empty());
}

TEST(RunAggregator, MalformedHistogramIsRefused) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  v1::AgentReport report = MakeReport(1, EmptySnapshot());
  v1::QueryTypeDelta* delta = report.add_query_types();
  delta->set_query_type(0);
  delta->mutable_response_time()->set_layout(1);
  delta->mutable_response_time()->add_index_gaps(5);  // no count for it
  EXPECT_EQ(aggregator.AddReport("a0", report).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RunAggregator, ReportsForAnotherRunOrFromStrangersAreRefused) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  v1::AgentReport report = MakeReport(1, EmptySnapshot());
  report.set_run_id("run-2");
  const absl::Status wrong_run = aggregator.AddReport("a0", report);
  EXPECT_EQ(wrong_run.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_run.message()), ::testing::HasSubstr("run-2"));
  EXPECT_EQ(aggregator.AddReport("a9", MakeReport(1, EmptySnapshot())).code(),
            absl::StatusCode::kNotFound);
}

TEST(RunAggregator, NothingAfterTheFinalReport) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  ASSERT_TRUE(aggregator.AddReport("a0", FinalReport(1, 1, 0, EmptySnapshot())).ok());
  EXPECT_TRUE(aggregator.agents().at("a0").final);
  EXPECT_FALSE(aggregator.AllFinal());
  EXPECT_EQ(aggregator.AddReport("a0", MakeReport(2, EmptySnapshot())).code(),
            absl::StatusCode::kFailedPrecondition);
  // A repeat of the final itself is still just a duplicate.
  EXPECT_TRUE(aggregator.AddReport("a0", FinalReport(1, 1, 0, EmptySnapshot())).ok());
}

TEST(RunAggregator, TickWhereAgentsCrossTheWarmupGivesTwoSamples) {
  std::mt19937_64 random(3);
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  ASSERT_TRUE(
      aggregator
          .AddReport("a0", MakeReport(1, RandomSnapshot(random, 10, nullptr, nullptr, nullptr),
                                      /*warmup=*/true))
          .ok());
  ASSERT_TRUE(
      aggregator
          .AddReport("a1", MakeReport(1, RandomSnapshot(random, 20, nullptr, nullptr, nullptr),
                                      /*warmup=*/false))
          .ok());
  const std::vector<v1::IntervalSample> samples = aggregator.CloseInterval(2.0);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_TRUE(samples[0].warmup());
  EXPECT_EQ(samples[0].executed(), 10u);
  EXPECT_FALSE(samples[1].warmup());
  EXPECT_EQ(samples[1].executed(), 20u);
  EXPECT_EQ(samples[0].elapsed_s(), samples[1].elapsed_s());
  EXPECT_EQ(aggregator.ReportSoFar("running", "").executed(), 20u);
  EXPECT_EQ(aggregator.agents().at("a0").warmup_executed, 10u);
}

TEST(RunAggregator, EmptyTickYieldsNoSampleAndWithoutIntervalLengthsTheNextSpansBoth) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  IntervalSnapshot snapshot = EmptySnapshot();
  snapshot.query_types[0].response_time.RecordMany(1000, 400);
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(1, snapshot, false, 1, /*interval_s=*/0)).ok());
  ASSERT_EQ(aggregator.CloseInterval(1).size(), 1u);
  EXPECT_TRUE(aggregator.CloseInterval(2).empty());
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(2, snapshot, false, 3, /*interval_s=*/0)).ok());
  const std::vector<v1::IntervalSample> samples = aggregator.CloseInterval(3);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(samples[0].achieved_rate(), 200);  // 400 over the 2 s since the last close
}

// Reports arrive with jitter: the rate comes from the agents' own interval lengths, so a tick
// that caught two reports of one agent does not show double the rate.
TEST(RunAggregator, RateIsTheSumOfTheAgentsOwnRates) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  IntervalSnapshot thousand = EmptySnapshot();
  thousand.query_types[0].response_time.RecordMany(1000, 1000);
  IntervalSnapshot fifty = EmptySnapshot();
  fifty.query_types[1].response_time.RecordMany(1000, 50);
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(1, thousand, false, 1, 1.0)).ok());
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(2, thousand, false, 2, 1.0)).ok());
  ASSERT_TRUE(aggregator.AddReport("a1", MakeReport(1, fifty, false, 0.1, 0.1)).ok());
  const std::vector<v1::IntervalSample> samples = aggregator.CloseInterval(1.01);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].executed(), 2050u);
  EXPECT_NEAR(samples[0].achieved_rate(), 1000 + 500, 1e-9);
}

TEST(RunAggregator, MoreThanTheQueryBudgetIsRefused) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents(/*budget=*/500));
  IntervalSnapshot snapshot = EmptySnapshot();
  snapshot.query_types[0].response_time.RecordMany(1000, 300);
  // Warm-up completions do not count against the budget.
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(1, snapshot, /*warmup=*/true)).ok());
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(2, snapshot)).ok());
  const absl::Status over = aggregator.AddReport("a0", MakeReport(3, snapshot));
  EXPECT_EQ(over.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(over.message()), ::testing::HasSubstr("600"));
  snapshot.query_types[0].response_time.Reset();
  snapshot.query_types[0].errors[{db::ErrorClass::kRetryable, "40001"}] = 200;
  EXPECT_TRUE(aggregator.AddReport("a0", MakeReport(3, snapshot)).ok());
  EXPECT_EQ(aggregator.agents().at("a0").errors, 200u);
}

TEST(RunAggregator, LostAgentCountsWithItsLastElapsedTime) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, {{"a0", 0}, {"a1", 0}});
  ASSERT_TRUE(aggregator.AddReport("a0", FinalReport(1, 5.0, 0, EmptySnapshot())).ok());
  ASSERT_TRUE(aggregator.AddReport("a1", MakeReport(1, EmptySnapshot(), false, 9.5)).ok());
  const v1::RunReport report = aggregator.Finish(10, "duration; degraded", "");
  EXPECT_DOUBLE_EQ(report.total_duration_s(), 7.5);  // 9.5 s elapsed less 2 s warm-up
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

TEST(RunAggregatorStages, EachStageHoldsExactlyItsReportsAndLastsAsLongAsItsLongestAgent) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open();
  for (int i = 0; i < 2; ++i) {
    v1::Stage& stage = *plan.add_stages();
    stage.set_name(i == 0 ? "low" : "high");
    stage.set_duration_ns(2'000'000'000);
    stage.mutable_rate()->set_shape(v1::Level::CONSTANT);
    stage.mutable_rate()->set_from(i == 0 ? 100 : 300);
  }
  RunAggregator aggregator(kRun, plan, kQueryTypes, {{"a0", 0}, {"a1", 0}});
  std::mt19937_64 random(7);
  std::map<std::string, uint64_t> sequence;
  uint64_t executed[2] = {0, 0};
  std::vector<uint64_t> statements[2] = {std::vector<uint64_t>(kQueryTypes.size(), 0),
                                         std::vector<uint64_t>(kQueryTypes.size(), 0)};
  // Each agent: stage 1 in two reports (1 s and 1 s, a1's second one 1.2 s), stage 2 in two.
  for (const std::string agent : {"a0", "a1"}) {
    for (uint32_t stage = 1; stage <= 2; ++stage) {
      for (int part = 0; part < 2; ++part) {
        const int samples = 50 + static_cast<int>(random() % 100);
        executed[stage - 1] += samples;
        v1::AgentReport report =
            MakeReport(++sequence[agent],
                       RandomSnapshot(random, samples, nullptr, nullptr, nullptr,
                                      &statements[stage - 1]),
                       false, 0, agent == "a1" && stage == 1 && part == 1 ? 1.2 : 1.0);
        report.set_stage(stage);
        report.set_target_rate(stage == 1 ? 50 : 150);
        ASSERT_TRUE(aggregator.AddReport(agent, report).ok());
      }
    }
  }
  // Both agents' stage-2 reports close as one sample whose target is the sum of theirs.
  const std::vector<v1::IntervalSample> samples = aggregator.CloseInterval(4);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].stage(), 1u);
  EXPECT_EQ(samples[1].stage(), 2u);
  EXPECT_EQ(samples[1].target_rate(), 300);

  v1::AgentReport beyond = MakeReport(++sequence["a0"], EmptySnapshot(), false, 0, 1);
  beyond.set_stage(3);
  EXPECT_EQ(aggregator.AddReport("a0", beyond).code(), absl::StatusCode::kInvalidArgument);

  const v1::RunReport report = aggregator.Finish(5, "duration", "");
  ASSERT_EQ(report.stages_size(), 2);
  EXPECT_EQ(report.stages(0).name(), "low");
  EXPECT_EQ(report.stages(0).executed(), executed[0]);
  EXPECT_EQ(report.stages(1).executed(), executed[1]);
  EXPECT_EQ(report.executed(), executed[0] + executed[1]);
  for (int stage = 0; stage < 2; ++stage) {
    EXPECT_EQ(report.stages(stage).statements(), statements[stage][0] + statements[stage][1]);
    for (size_t q = 0; q < kQueryTypes.size(); ++q) {
      EXPECT_EQ(report.stages(stage).query_types(q).statements(), statements[stage][q]);
    }
  }
  EXPECT_EQ(report.statements(), report.stages(0).statements() + report.stages(1).statements());
  EXPECT_EQ(samples[0].statements() + samples[1].statements(), report.statements());
  EXPECT_DOUBLE_EQ(report.stages(0).duration_s(), 2.2);
  EXPECT_DOUBLE_EQ(report.stages(1).duration_s(), 2.0);
  EXPECT_DOUBLE_EQ(report.stages(0).wanted_rate(), 100);
  EXPECT_DOUBLE_EQ(report.stages(1).actual_rate(), executed[1] / 2.0);
}

v1::CapturedPlan Captured(uint32_t stage, const std::string& query_type, const std::string& plan) {
  v1::CapturedPlan captured;
  captured.set_stage(stage);
  captured.mutable_plan()->set_query_type(query_type);
  captured.mutable_plan()->set_plan(plan);
  return captured;
}

TEST(RunAggregatorPlans, EachStageKeepsTheFirstPlanOfEachQueryTypeFromAnyAgent) {
  v1::Plan plan;
  plan.mutable_load()->mutable_open();
  for (int i = 0; i < 2; ++i) {
    v1::Stage& stage = *plan.add_stages();
    stage.set_name(i == 0 ? "low" : "high");
    stage.set_duration_ns(1'000'000'000);
    stage.mutable_rate()->set_from(100);
  }
  RunAggregator aggregator(kRun, plan, kQueryTypes, {{"a0", 0}, {"a1", 0}});
  std::mt19937_64 random(3);
  // a0 captures stage 1 with its first report, and stage 2 with its third.
  v1::AgentReport first = MakeReport(1, RandomSnapshot(random, 10, nullptr, nullptr, nullptr));
  first.set_stage(1);
  *first.add_plans() = Captured(1, "select", "Index Scan stage 1");
  *first.add_plans() = Captured(1, "update", "Update stage 1");
  ASSERT_TRUE(aggregator.AddReport("a0", first).ok());
  // A plan naming a stage the plan does not have is dropped; the report still counts.
  v1::AgentReport second = MakeReport(2, RandomSnapshot(random, 10, nullptr, nullptr, nullptr));
  second.set_stage(1);
  *second.add_plans() = Captured(3, "select", "no such stage");
  *second.add_plans() = Captured(0, "select", "no stage in a plan with stages");
  ASSERT_TRUE(aggregator.AddReport("a0", second).ok());
  v1::AgentReport third = MakeReport(3, RandomSnapshot(random, 10, nullptr, nullptr, nullptr));
  third.set_stage(2);
  *third.add_plans() = Captured(2, "select", "Seq Scan stage 2");
  ASSERT_TRUE(aggregator.AddReport("a0", third).ok());
  // ReportSoFar already has them.
  const v1::RunReport so_far = aggregator.ReportSoFar("", "");
  ASSERT_EQ(so_far.stages_size(), 2);
  ASSERT_EQ(so_far.stages(0).explains_size(), 2);
  // Another agent's later plans of the same stage and query type add nothing; a new query type
  // of stage 2 is kept, and a repeated report's plans are not taken twice.
  v1::AgentReport other = MakeReport(1, RandomSnapshot(random, 10, nullptr, nullptr, nullptr));
  other.set_stage(2);
  *other.add_plans() = Captured(2, "select", "a1's select");
  *other.add_plans() = Captured(2, "update", "a1's update");
  *other.add_plans() = Captured(2, "update", "a1's second update");
  ASSERT_TRUE(aggregator.AddReport("a1", other).ok());
  ASSERT_TRUE(aggregator.AddReport("a1", other).ok());  // a duplicate

  const v1::RunReport report = aggregator.Finish(3, "duration", "");
  EXPECT_EQ(report.explains_size(), 0);
  ASSERT_EQ(report.stages_size(), 2);
  ASSERT_EQ(report.stages(0).explains_size(), 2);
  EXPECT_EQ(report.stages(0).explains(0).query_type(), "select");
  EXPECT_EQ(report.stages(0).explains(0).plan(), "Index Scan stage 1");
  EXPECT_EQ(report.stages(0).explains(1).plan(), "Update stage 1");
  ASSERT_EQ(report.stages(1).explains_size(), 2);
  EXPECT_EQ(report.stages(1).explains(0).plan(), "Seq Scan stage 2");
  EXPECT_EQ(report.stages(1).explains(1).plan(), "a1's update");
}

TEST(RunAggregatorPlans, APlanWithoutStagesKeepsThemInTheRunReport) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  v1::AgentReport report = MakeReport(1, EmptySnapshot());
  *report.add_plans() = Captured(0, "select", "Index Scan using pk");
  *report.add_plans() = Captured(1, "update", "a stage the plan does not have");
  ASSERT_TRUE(aggregator.AddReport("a0", report).ok());
  const v1::RunReport finished = aggregator.Finish(1, "duration", "");
  ASSERT_EQ(finished.explains_size(), 1);
  EXPECT_EQ(finished.explains(0).query_type(), "select");
  EXPECT_EQ(finished.explains(0).plan(), "Index Scan using pk");
}

// The capture after the load is kept apart and compared with the start's: a plan whose nodes
// changed is named, one whose costs alone changed is not.
TEST(RunAggregatorPlans, APlanThatChangedBeforeTheLoadEndedIsNamed) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes, ThreeAgents());
  v1::AgentReport report = MakeReport(1, EmptySnapshot());
  *report.add_plans() = Captured(0, "select", "Index Scan using t_pkey on t  (cost=0.29..8.31)");
  *report.add_plans() = Captured(0, "update", "Update on t  (cost=0.29..8.31 rows=0 width=0)");
  ASSERT_TRUE(aggregator.AddReport("a0", report).ok());
  v1::AgentReport last = MakeReport(2, EmptySnapshot());
  for (v1::CapturedPlan captured :
       {Captured(0, "select", "Seq Scan on t  (cost=0.00..1.01 rows=1 width=4)"),
        Captured(0, "update", "Update on t  (cost=0.42..8.44 rows=0 width=0)")}) {
    captured.set_after_load(true);
    *last.add_plans() = captured;
  }
  ASSERT_TRUE(aggregator.AddReport("a0", last).ok());
  const v1::RunReport finished = aggregator.Finish(1, "duration", "");
  ASSERT_EQ(finished.explains_size(), 2);
  ASSERT_EQ(finished.explains_after_load_size(), 2);
  ASSERT_EQ(finished.plan_changes_size(), 1);
  EXPECT_EQ(finished.plan_changes(0).query_type(), "select");
  EXPECT_EQ(finished.plan_changes(0).before(), "the start");
  EXPECT_EQ(finished.plan_changes(0).after(), "after the load");
  EXPECT_EQ(finished.plan_changes(0).before_shape(), "Index Scan using t_pkey on t");
  EXPECT_EQ(finished.plan_changes(0).after_shape(), "Seq Scan on t");
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

// The busiest agent's CPU in each sample, as a fraction of its own cores; a cut-short report
// (a few milliseconds) is not judged.
TEST(RunAggregator, EachSampleCarriesTheBusiestAgentsCpuOverItsCores) {
  RunAggregator aggregator(kRun, TestPlan(), kQueryTypes,
                           {{.name = "a0", .cores = 2}, {.name = "a1", .cores = 4}});
  v1::AgentReport a0 = MakeReport(1, EmptySnapshot(), /*warmup=*/true, 1.0, 1.0);
  a0.set_cpu_seconds(1.5);  // 75 % of 2 cores
  v1::AgentReport a1 = MakeReport(1, EmptySnapshot(), /*warmup=*/true, 1.0, 1.0);
  a1.set_cpu_seconds(3.6);  // 90 % of 4 cores
  ASSERT_TRUE(aggregator.AddReport("a0", a0).ok());
  ASSERT_TRUE(aggregator.AddReport("a1", a1).ok());
  std::vector<v1::IntervalSample> samples = aggregator.CloseInterval(1.0);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_DOUBLE_EQ(samples[0].max_agent_cpu(), 0.9);

  v1::AgentReport short_one = MakeReport(2, EmptySnapshot(), /*warmup=*/true, 1.05, 0.05);
  short_one.set_cpu_seconds(1.0);  // 10 cores' worth over 50 ms: teardown, not load
  ASSERT_TRUE(aggregator.AddReport("a0", short_one).ok());
  samples = aggregator.CloseInterval(2.0);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].max_agent_cpu(), 0);
}

// An interrupted run's report (ReportSoFar, saved to --state-dir and served after a restart)
// takes its counts and its duration from the same intervals: a report received after the last
// close is in neither (it was in the duration only: 9 intervals' counts over 10 s, the rate 10 %
// low), and the agents' own lines agree with the totals.
TEST(RunAggregator, ReportSoFarTakesCountsAndDurationFromTheSameClosedIntervals) {
  v1::Plan plan = TestPlan();
  plan.set_warmup_ns(0);
  RunAggregator aggregator(kRun, plan, kQueryTypes, {{"a0", 0}});
  IntervalSnapshot snapshot = EmptySnapshot();
  snapshot.query_types[0].response_time.RecordMany(1000, 100);
  snapshot.query_types[0].service_time.RecordMany(1000, 100);
  for (uint64_t second = 1; second <= 9; ++second) {
    ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(second, snapshot, false, second, 1)).ok());
    ASSERT_EQ(aggregator.CloseInterval(second + 0.3).size(), 1u);
  }
  // The tenth second's report arrives; no tick has closed it yet.
  ASSERT_TRUE(aggregator.AddReport("a0", MakeReport(10, snapshot, false, 10, 1)).ok());
  const v1::RunReport so_far = aggregator.ReportSoFar("running", "");
  EXPECT_EQ(so_far.executed(), 900u);
  double lengths = 0;
  uint64_t executed = 0;
  for (const v1::IntervalSample& sample : so_far.intervals()) {
    lengths += sample.length_s();
    executed += sample.executed();
  }
  EXPECT_EQ(executed, 900u);
  EXPECT_DOUBLE_EQ(lengths, 9);
  EXPECT_DOUBLE_EQ(so_far.total_duration_s(), lengths);
  EXPECT_DOUBLE_EQ(so_far.actual_rate(), static_cast<double>(executed) / lengths);
  ASSERT_EQ(so_far.agents_size(), 1);
  EXPECT_EQ(so_far.agents(0).executed(), 900u);
  EXPECT_DOUBLE_EQ(so_far.agents(0).measured_s(), 9);
  // Once closed, the tenth second is in both.
  aggregator.CloseInterval(10.3);
  const v1::RunReport later = aggregator.ReportSoFar("running", "");
  EXPECT_EQ(later.executed(), 1000u);
  EXPECT_DOUBLE_EQ(later.total_duration_s(), 10);
}

}  // namespace
}  // namespace dbload
