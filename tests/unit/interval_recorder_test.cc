#include "agent/interval_recorder.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

TEST(IntervalRecorderTest, DrainReturnsWhatWasRecordedSinceTheLastDrain) {
  IntervalRecorder recorder(2);
  recorder.RecordSuccess(0, 2 * kMillisecond, kMillisecond, 1);
  recorder.RecordSuccess(1, 5 * kMillisecond, 5 * kMillisecond, 20);
  recorder.RecordSuccess(1, 6 * kMillisecond, 6 * kMillisecond, 20);
  // A transaction that failed sent statements too (up to the failing one, and its ROLLBACK).
  recorder.RecordError(1, {db::ErrorClass::kRetryable, "40P01", "deadlock"}, 7);
  recorder.RecordScheduleLag(10 * kMicrosecond, /*had_free_connection=*/true);
  recorder.RecordScheduleLag(30 * kMillisecond, /*had_free_connection=*/false);
  IntervalSnapshot first = recorder.Drain();
  EXPECT_EQ(first.Executed(), 3u);
  EXPECT_EQ(first.Errors(), 1u);
  EXPECT_EQ(first.query_types[0].response_time.TotalCount(), 1u);
  EXPECT_EQ(first.query_types[1].service_time.TotalCount(), 2u);
  EXPECT_EQ((first.query_types[1].errors.at({db::ErrorClass::kRetryable, "40P01"})), 1u);
  EXPECT_EQ(first.query_types[0].statements, 1u);
  EXPECT_EQ(first.query_types[1].statements, 47u);
  EXPECT_EQ(first.Statements(), 48u);
  EXPECT_EQ(first.schedule_lag.TotalCount(), 2u);
  // Only the lag of the transaction a free connection was waiting for is dispatch lag.
  EXPECT_EQ(first.dispatch_lag.TotalCount(), 1u);
  EXPECT_EQ(first.dispatch_lag.Min(), first.schedule_lag.Min());
  EXPECT_LT(first.dispatch_lag.Max(), kMillisecond);
  IntervalSnapshot second = recorder.Drain();
  EXPECT_EQ(second.Executed(), 0u);
  EXPECT_EQ(second.Errors(), 0u);
  EXPECT_EQ(second.Statements(), 0u);

  second.Add(first);
  second.Add(first);
  EXPECT_EQ(second.Executed(), 6u);
  EXPECT_EQ(second.Errors(), 2u);
  EXPECT_EQ(second.query_types[1].statements, 94u);
  EXPECT_EQ(second.Statements(), 96u);
}

TEST(IntervalRecorderTest, ConcurrentRecordingWhileDrainingLosesNothing) {
  IntervalRecorder recorder(3);
  constexpr int kThreads = 4, kPerThread = 100'000;
  std::atomic<int> running = kThreads;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        recorder.RecordSuccess(i % 3, 1'000 + i, 900 + i, static_cast<uint64_t>(i % 3 + 1));
        recorder.RecordScheduleLag(i % 7, i % 2 == 0);
        if (i % 1000 == 0) recorder.RecordError(t % 3, {db::ErrorClass::kFatal, "x", ""}, 5);
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
  // Per query type q, every thread's successes sent q + 1 statements each, and one thread's
  // errors (t % 3 == q) 5 each.
  uint64_t expected_total = 0;
  for (int q = 0; q < 3; ++q) {
    uint64_t successes = 0;
    for (int i = 0; i < kPerThread; ++i) successes += i % 3 == q;
    uint64_t error_threads = 0;
    for (int t = 0; t < kThreads; ++t) error_threads += t % 3 == q;
    const uint64_t expected = uint64_t{kThreads} * successes * static_cast<uint64_t>(q + 1) +
                              error_threads * (kPerThread / 1000) * 5;
    EXPECT_EQ(total.query_types[q].statements, expected) << "query type " << q;
    expected_total += expected;
  }
  EXPECT_EQ(total.Statements(), expected_total);
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

TEST(IntervalSnapshotWireTest, ReportRoundTripIsExact) {
  IntervalRecorder recorder(3);
  for (int i = 0; i < 1000; ++i) {
    recorder.RecordSuccess(i % 2 == 0 ? 0 : 2, 1'000 + i * 37, 900 + i, i % 2 == 0 ? 1 : 20);
  }
  recorder.RecordError(2, {db::ErrorClass::kConnection, "08006", "gone"}, 3);
  recorder.RecordError(2, {db::ErrorClass::kIgnored, "23505", "duplicate key"}, 19);
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
    EXPECT_EQ(decoded->query_types[q].statements, original.query_types[q].statements);
  }
  EXPECT_EQ(decoded->query_types[0].statements, 500u);
  EXPECT_EQ(decoded->query_types[2].statements, 500u * 20 + 3 + 19);
  EXPECT_EQ(decoded->schedule_lag, original.schedule_lag);
  EXPECT_EQ(decoded->dispatch_lag, original.dispatch_lag);
  EXPECT_EQ(decoded->dispatch_lag.TotalCount(), 1u);
  // An ignored error travels by its class and code, and is no error.
  EXPECT_EQ(decoded->Errors(), 1u);
  EXPECT_EQ(decoded->Ignored(), 1u);
  EXPECT_EQ(decoded->Completed(), 1'002u);
}

// A retry policy's counts travel with their query type, a query type that only retried included,
// and counts no interval can hold are refused.
TEST(IntervalSnapshotWireTest, RetryCountsTravelExactlyAndGarbageIsRefused) {
  IntervalRecorder recorder(3);
  recorder.RecordRetry(1, db::RetryCause::kDeadlock);
  recorder.RecordRetry(1, db::RetryCause::kDeadlock);
  recorder.RecordRetry(1, db::RetryCause::kLockTimeout);
  recorder.RecordCommittedAfterTries(1, 3);
  recorder.RecordFailedAfterRetries(1);
  const IntervalSnapshot original = recorder.Drain();
  EXPECT_TRUE(recorder.Drain().query_types[1].retry.empty());  // each lands in one drain
  v1::AgentReport report;
  SnapshotToReport(original, &report);
  ASSERT_EQ(report.query_types_size(), 1);
  absl::StatusOr<IntervalSnapshot> decoded = SnapshotFromReport(report, 3);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  const RetryTally& retry = decoded->query_types[1].retry;
  EXPECT_THAT(retry.retries, testing::ElementsAre(testing::Pair(db::RetryCause::kDeadlock, 2u),
                                                  testing::Pair(db::RetryCause::kLockTimeout, 1u)));
  EXPECT_THAT(retry.committed_by_tries, testing::ElementsAre(testing::Pair(3u, 1u)));
  EXPECT_EQ(retry.failed_after_retries, 1u);
  EXPECT_EQ(decoded->Retries(), 3u);

  v1::AgentReport unknown_cause = report;
  unknown_cause.mutable_query_types(0)->mutable_retries(0)->set_cause(
      static_cast<v1::RetryCause>(77));
  EXPECT_THAT(SnapshotFromReport(unknown_cause, 3).status().message(),
              testing::HasSubstr("unknown retry cause 77"));
  v1::AgentReport one_try = report;
  one_try.mutable_query_types(0)->mutable_committed_by_tries(0)->set_tries(1);
  EXPECT_THAT(SnapshotFromReport(one_try, 3).status().message(),
              testing::HasSubstr("committed after 1 tries"));
  v1::AgentReport huge = report;
  huge.mutable_query_types(0)->set_failed_after_retries(uint64_t{1} << 62);
  EXPECT_FALSE(SnapshotFromReport(huge, 3).ok());
}

// Rollbacks by the workload travel with their query type, even alone in an interval (recorded
// just after a drain took their transaction's success), each in one drain.
TEST(IntervalSnapshotWireTest, RollbacksByTheWorkloadTravelExactly) {
  IntervalRecorder recorder(2);
  recorder.RecordRolledBack(1);
  recorder.RecordRolledBack(1);
  const IntervalSnapshot original = recorder.Drain();
  EXPECT_EQ(original.query_types[1].rolled_back, 2u);
  EXPECT_EQ(recorder.Drain().query_types[1].rolled_back, 0u);
  v1::AgentReport report;
  SnapshotToReport(original, &report);
  ASSERT_EQ(report.query_types_size(), 1);
  absl::StatusOr<IntervalSnapshot> decoded = SnapshotFromReport(report, 2);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->query_types[1].rolled_back, 2u);
  report.mutable_query_types(0)->set_rolled_back(uint64_t{1} << 62);
  EXPECT_THAT(SnapshotFromReport(report, 2).status().message(),
              testing::HasSubstr("rollbacks by the workload in one interval"));
}

// Each connection's time lands in the interval it passed in, state by state, including a state
// it is still in when the interval closes: a call stuck across three drains counts in each.
TEST(IntervalRecorderTest, ConnectionTimeIsSplitByStateAndByInterval) {
  IntervalRecorder recorder(1);
  ConnectionClock& a = recorder.AddConnection(0);
  ConnectionClock& b = recorder.AddConnection(0);
  a.Enter(ConnectionState::kInDbCall, 100);  // stuck from 100 to 2'500
  b.Enter(ConnectionState::kIdle, 0);
  b.Enter(ConnectionState::kConnecting, 400);
  b.Enter(ConnectionState::kInAgent, 900);
  const ConnectionTime first = recorder.Drain(1'000).connection_time;
  EXPECT_EQ(first.in_agent, 100 + 100);
  EXPECT_EQ(first.in_db_call, 900);
  EXPECT_EQ(first.idle, 400);
  EXPECT_EQ(first.connecting, 500);
  EXPECT_EQ(first.Total(), 2 * 1'000);

  const ConnectionTime second = recorder.Drain(2'000).connection_time;
  EXPECT_EQ(second.in_db_call, 1'000) << "the stuck call counts in the interval it spans";
  EXPECT_EQ(second.in_agent, 1'000);
  EXPECT_EQ(second.Total(), 2 * 1'000);

  a.Enter(ConnectionState::kInAgent, 2'500);
  a.Enter(ConnectionState::kGone, 2'600);
  b.Enter(ConnectionState::kGone, 2'000);
  const ConnectionTime third = recorder.Drain(3'000).connection_time;
  EXPECT_EQ(third.in_db_call, 500);
  EXPECT_EQ(third.in_agent, 100) << "a worker that left counts no more time";
  EXPECT_EQ(third.Total(), 600);
}

// A worker's clock reading may be older than the drain's: its state's total then shrinks by
// what another state gains, and no time is counted twice or backwards.
TEST(IntervalRecorderTest, ConnectionTimeNeverGoesBackwards) {
  IntervalRecorder recorder(1);
  ConnectionClock& a = recorder.AddConnection(0);
  a.Enter(ConnectionState::kInDbCall, 0);
  EXPECT_EQ(recorder.Drain(1'000).connection_time.in_db_call, 1'000);
  a.Enter(ConnectionState::kInAgent, 900);  // read before the drain, stored after it
  const ConnectionTime next = recorder.Drain(2'000).connection_time;
  EXPECT_EQ(next.in_db_call, 0);
  EXPECT_EQ(next.in_agent, 1'100);
}

// Read while the worker changes state: every copy is consistent. Read at a time after all of
// the worker's, the states always add up to exactly that time; a torn copy (a state's total
// and the time since the change from different moments) would not.
TEST(IntervalRecorderTest, ReadingWhileTheWorkerChangesStateIsConsistent) {
  constexpr Nanos kEnd = 1'000'000;
  ConnectionClock clock(0);
  std::atomic<bool> done{false};
  std::thread worker([&] {
    for (Nanos t = 1; t < kEnd; ++t) {
      clock.Enter(t % 3 == 0 ? ConnectionState::kInDbCall : ConnectionState::kIdle, t);
    }
    done = true;
  });
  int torn = 0, reads = 0;
  while (!done.load()) {
    const ConnectionClock::Totals totals = clock.Read(kEnd);
    Nanos sum = 0;
    for (Nanos state_time : totals) sum += state_time;
    torn += sum != kEnd;
    ++reads;
  }
  worker.join();
  EXPECT_EQ(torn, 0) << "of " << reads << " reads";
}

TEST(IntervalSnapshotWireTest, ConnectionTimeTravelsInSeconds) {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  snapshot.connection_time = {
      .in_db_call = 1'500'000'000, .connecting = 250'000'000, .idle = 7, .in_agent = 3'000};
  v1::AgentReport report;
  SnapshotToReport(snapshot, &report);
  EXPECT_DOUBLE_EQ(report.connection_time().in_db_call_s(), 1.5);
  absl::StatusOr<IntervalSnapshot> decoded = SnapshotFromReport(report, 1);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->connection_time.in_db_call, 1'500'000'000);
  EXPECT_EQ(decoded->connection_time.connecting, 250'000'000);
  EXPECT_EQ(decoded->connection_time.in_agent, 3'000);
  report.mutable_connection_time()->set_idle_s(-1);
  EXPECT_FALSE(SnapshotFromReport(report, 1).ok());
}

TEST(IntervalSnapshotWireTest, ConnectionsOpenedTravelAndAddUp) {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  snapshot.connections_opened = 5;
  v1::AgentReport report;
  SnapshotToReport(snapshot, &report);
  EXPECT_EQ(report.connections_opened(), 5u);
  absl::StatusOr<IntervalSnapshot> decoded = SnapshotFromReport(report, 1);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  decoded->Add(snapshot);
  EXPECT_EQ(decoded->connections_opened, 10u);
  report.set_connections_opened(uint64_t{1} << 62);  // sums of such would wrap
  EXPECT_THAT(SnapshotFromReport(report, 1).status().message(),
              testing::HasSubstr("4611686018427387904 connections opened in one interval"));
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
  report.mutable_query_types(0)->clear_response_time();
  // Sums of such counts would wrap.
  report.mutable_query_types(0)->set_statements(uint64_t{1} << 62);
  EXPECT_THAT(SnapshotFromReport(report, 3).status().message(),
              testing::HasSubstr("query type 1: 4611686018427387904 statements"));
  report.mutable_query_types(0)->set_statements(1'000'000);
  EXPECT_TRUE(SnapshotFromReport(report, 3).ok());
  report.mutable_connect_time()->set_layout(9);
  EXPECT_THAT(SnapshotFromReport(report, 3).status().message(),
              testing::HasSubstr("connect time: histogram layout 9"));
}

TEST(IntervalSnapshotWireTest, ConnectTimesTravelOnlyWhenThereAreSome) {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  v1::AgentReport report;
  SnapshotToReport(snapshot, &report);
  EXPECT_FALSE(report.has_connect_time()) << "runs that connect once send none";
  snapshot.connect_time.Record(3 * kMillisecond);
  snapshot.connect_time.Record(5 * kMillisecond);
  SnapshotToReport(snapshot, &report);
  absl::StatusOr<IntervalSnapshot> decoded = SnapshotFromReport(report, 1);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->connect_time, snapshot.connect_time);
}

}  // namespace
}  // namespace dbload
