#include "agent/interval_recorder.h"

#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

TEST(IntervalRecorderTest, DrainReturnsWhatWasRecordedSinceTheLastDrain) {
  IntervalRecorder recorder(2);
  recorder.RecordSuccess(0, 2 * kMillisecond, kMillisecond);
  recorder.RecordSuccess(1, 5 * kMillisecond, 5 * kMillisecond);
  recorder.RecordSuccess(1, 6 * kMillisecond, 6 * kMillisecond);
  recorder.RecordError(1, {db::ErrorClass::kRetryable, "40P01", "deadlock"});
  recorder.RecordScheduleLag(10 * kMicrosecond, /*had_free_connection=*/true);
  recorder.RecordScheduleLag(30 * kMillisecond, /*had_free_connection=*/false);
  IntervalSnapshot first = recorder.Drain();
  EXPECT_EQ(first.Executed(), 3u);
  EXPECT_EQ(first.Errors(), 1u);
  EXPECT_EQ(first.query_types[0].response_time.TotalCount(), 1u);
  EXPECT_EQ(first.query_types[1].service_time.TotalCount(), 2u);
  EXPECT_EQ((first.query_types[1].errors.at({db::ErrorClass::kRetryable, "40P01"})), 1u);
  EXPECT_EQ(first.schedule_lag.TotalCount(), 2u);
  // Only the lag of the transaction a free connection was waiting for is dispatch lag.
  EXPECT_EQ(first.dispatch_lag.TotalCount(), 1u);
  EXPECT_EQ(first.dispatch_lag.Min(), first.schedule_lag.Min());
  EXPECT_LT(first.dispatch_lag.Max(), kMillisecond);
  IntervalSnapshot second = recorder.Drain();
  EXPECT_EQ(second.Executed(), 0u);
  EXPECT_EQ(second.Errors(), 0u);

  second.Add(first);
  second.Add(first);
  EXPECT_EQ(second.Executed(), 6u);
  EXPECT_EQ(second.Errors(), 2u);
}

TEST(IntervalRecorderTest, ConcurrentRecordingWhileDrainingLosesNothing) {
  IntervalRecorder recorder(3);
  constexpr int kThreads = 4, kPerThread = 100'000;
  std::atomic<int> running = kThreads;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        recorder.RecordSuccess(i % 3, 1'000 + i, 900 + i);
        recorder.RecordScheduleLag(i % 7, i % 2 == 0);
        if (i % 1000 == 0) recorder.RecordError(t % 3, {db::ErrorClass::kFatal, "x", ""});
      }
      running.fetch_sub(1);
    });
  }
  IntervalSnapshot total;
  while (running.load() > 0) total.Add(recorder.Drain());
  for (auto& thread : threads) thread.join();
  total.Add(recorder.Drain());
  EXPECT_EQ(total.Executed(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(total.schedule_lag.TotalCount(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(total.dispatch_lag.TotalCount(), uint64_t{kThreads} * kPerThread / 2);
  EXPECT_EQ(total.Errors(), uint64_t{kThreads} * (kPerThread / 1000));
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

TEST(IntervalSnapshotWireTest, ReportRoundTripIsExact) {
  IntervalRecorder recorder(3);
  for (int i = 0; i < 1000; ++i) recorder.RecordSuccess(i % 2 == 0 ? 0 : 2, 1'000 + i * 37, 900 + i);
  recorder.RecordError(2, {db::ErrorClass::kConnection, "08006", "gone"});
  recorder.RecordScheduleLag(12'345, /*had_free_connection=*/true);
  recorder.RecordScheduleLag(99'999, /*had_free_connection=*/false);
  const IntervalSnapshot original = recorder.Drain();
  v1::AgentReport report;
  SnapshotToReport(original, &report);
  EXPECT_EQ(report.query_types_size(), 2);  // the empty query type 1 does not travel
  absl::StatusOr<IntervalSnapshot> decoded = SnapshotFromReport(report, 3);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  for (int q = 0; q < 3; ++q) {
    EXPECT_EQ(decoded->query_types[q].response_time, original.query_types[q].response_time);
    EXPECT_EQ(decoded->query_types[q].service_time, original.query_types[q].service_time);
    EXPECT_EQ(decoded->query_types[q].errors, original.query_types[q].errors);
  }
  EXPECT_EQ(decoded->schedule_lag, original.schedule_lag);
  EXPECT_EQ(decoded->dispatch_lag, original.dispatch_lag);
  EXPECT_EQ(decoded->dispatch_lag.TotalCount(), 1u);
}

TEST(IntervalSnapshotWireTest, MalformedReportsAreRefusedWithAReason) {
  v1::AgentReport report;
  report.add_query_types()->set_query_type(5);
  EXPECT_THAT(SnapshotFromReport(report, 3).status().message(),
              testing::HasSubstr("query type 5 but the scenario has 3"));
  report.mutable_query_types(0)->set_query_type(1);
  report.add_query_types()->set_query_type(1);
  EXPECT_THAT(SnapshotFromReport(report, 3).status().message(), testing::HasSubstr("repeats"));
  report.mutable_query_types()->RemoveLast();
  report.mutable_query_types(0)->add_errors()->set_error_class("mysterious");
  EXPECT_THAT(SnapshotFromReport(report, 3).status().message(),
              testing::HasSubstr("unknown error class"));
  report.mutable_query_types(0)->clear_errors();
  report.mutable_query_types(0)->mutable_response_time()->set_layout(9);
  EXPECT_THAT(SnapshotFromReport(report, 3).status().message(),
              testing::HasSubstr("response time: histogram layout 9"));
}

}  // namespace
}  // namespace dbload
