#include "base/histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <atomic>
#include <limits>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace layout = histogram_layout;

// The exact nearest-rank percentile of sorted samples.
int64_t ExactPercentile(const std::vector<int64_t>& sorted, double percentile) {
  size_t rank = static_cast<size_t>(std::ceil(percentile / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void ExpectPercentilesMatch(std::vector<int64_t> samples) {
  Histogram histogram;
  for (int64_t s : samples) histogram.Record(s);
  std::sort(samples.begin(), samples.end());
  ASSERT_EQ(histogram.TotalCount(), samples.size());
  for (double p : {1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    const int64_t exact = ExactPercentile(samples, p);
    const int64_t reported = histogram.ValueAtPercentile(p);
    // Reported is the top of the exact sample's bucket: never below, at most 1/1024 above.
    EXPECT_GE(reported, exact) << "p" << p;
    EXPECT_LE(reported - exact, std::max<int64_t>(0, exact / 1024)) << "p" << p;
  }
  EXPECT_LE(histogram.Min(), samples.front());
  EXPECT_GE(histogram.Min(), samples.front() - samples.front() / 1024);
  EXPECT_GE(histogram.Max(), samples.back());
  EXPECT_LE(histogram.Max(), samples.back() + samples.back() / 1024);
  long double sum = 0;
  for (int64_t s : samples) sum += s;
  const double exact_mean = static_cast<double>(sum / samples.size());
  EXPECT_NEAR(histogram.Mean(), exact_mean, exact_mean * 0.001);
  long double sq = 0;
  for (int64_t s : samples) sq += (s - exact_mean) * (s - exact_mean);
  const double exact_stddev = std::sqrt(static_cast<double>(sq / samples.size()));
  EXPECT_NEAR(histogram.Stddev(), exact_stddev, exact_stddev * 0.002 + 1);
}

TEST(HistogramLayoutTest, IndexIsContinuousAndRelativeErrorIsBelowOneInThousand) {
  EXPECT_EQ(layout::IndexOf(0), 0);
  EXPECT_EQ(layout::IndexOf(2047), 2047);
  EXPECT_EQ(layout::IndexOf(2048), 2048);
  EXPECT_EQ(layout::IndexOf(layout::kMaxValue), layout::kBucketCount - 1);
  EXPECT_EQ(layout::IndexOf(-5), 0);
  EXPECT_EQ(layout::IndexOf(layout::kMaxValue * 4), layout::kBucketCount - 1);
  for (int i = 1; i < layout::kBucketCount; ++i) {
    ASSERT_EQ(layout::LowestValueAt(i), layout::HighestValueAt(i - 1) + 1) << i;
    ASSERT_EQ(layout::IndexOf(layout::LowestValueAt(i)), i);
    ASSERT_EQ(layout::IndexOf(layout::HighestValueAt(i)), i);
    const int64_t width = layout::HighestValueAt(i) - layout::LowestValueAt(i) + 1;
    // From 1 µs up, a bucket is at most 1/1024 of its lowest value wide.
    if (layout::LowestValueAt(i) >= 1000) {
      ASSERT_LE((width - 1) * 1024, layout::LowestValueAt(i)) << i;
    }
  }
  // One hour fits.
  EXPECT_LT(3600LL * 1'000'000'000LL, layout::kMaxValue);
}

TEST(HistogramTest, EmptyHistogramReportsZeros) {
  Histogram histogram;
  EXPECT_TRUE(histogram.Empty());
  EXPECT_EQ(histogram.ValueAtPercentile(99), 0);
  EXPECT_EQ(histogram.Min(), 0);
  EXPECT_EQ(histogram.Max(), 0);
  EXPECT_EQ(histogram.Mean(), 0);
}

TEST(HistogramTest, UniformPercentilesMatchSortedSamples) {
  std::mt19937_64 random(1);
  std::uniform_int_distribution<int64_t> microseconds(1'000, 50'000'000);
  std::vector<int64_t> samples(200'000);
  for (auto& s : samples) s = microseconds(random);
  ExpectPercentilesMatch(samples);
}

TEST(HistogramTest, BimodalPercentilesMatchSortedSamples) {
  std::mt19937_64 random(2);
  std::normal_distribution<double> fast(300'000, 20'000), slow(40'000'000, 5'000'000);
  std::bernoulli_distribution is_slow(0.02);
  std::vector<int64_t> samples(200'000);
  for (auto& s : samples) {
    s = std::max<int64_t>(1'000, is_slow(random) ? slow(random) : fast(random));
  }
  ExpectPercentilesMatch(samples);
}

TEST(HistogramTest, HeavyTailedPercentilesMatchSortedSamples) {
  std::mt19937_64 random(3);
  std::lognormal_distribution<double> heavy(13.0, 2.0);  // median ~0.4 ms, tail to minutes
  std::vector<int64_t> samples(200'000);
  for (auto& s : samples) s = std::clamp<int64_t>(heavy(random), 1'000, 3600LL * 1'000'000'000);
  ExpectPercentilesMatch(samples);
}

TEST(HistogramTest, AddingHistogramsEqualsRecordingEverySampleInOne) {
  std::mt19937_64 random(4);
  std::lognormal_distribution<double> latency(12.0, 1.5);
  Histogram all, parts[3];
  for (int i = 0; i < 300'000; ++i) {
    const int64_t value = static_cast<int64_t>(latency(random));
    all.Record(value);
    parts[i % 3].Record(value);
  }
  Histogram merged;
  for (const auto& part : parts) merged.Add(part);
  EXPECT_EQ(merged, all);
  EXPECT_EQ(merged.ValueAtPercentile(99.9), all.ValueAtPercentile(99.9));
  EXPECT_EQ(merged.TotalCount(), 300'000u);
}

TEST(HistogramTest, ProtoRoundTripIsLosslessAndSparse) {
  Histogram histogram;
  for (int64_t v : {int64_t{1'500}, int64_t{1'500}, int64_t{1'501}, int64_t{250'000},
                    int64_t{9'000'000'000}}) histogram.Record(v);
  dbload::v1::Histogram proto;
  histogram.ToProto(&proto);
  EXPECT_EQ(proto.counts_size(), 4);
  auto decoded = Histogram::FromProto(proto);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, histogram);
  // Sparse: a handful of buckets costs a handful of bytes.
  EXPECT_LT(proto.ByteSizeLong(), 40u);
}

// Adding an encoding straight into a histogram is the same as decoding it and adding that:
// below, inside and above the span the histogram already has.
TEST(HistogramTest, AddingAnEncodingEqualsAddingItsDecodedHistogram) {
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> latency(13.0, 2.0);
  Histogram into;
  Histogram expected;
  for (int round = 0; round < 5; ++round) {
    Histogram delta;
    for (int i = 0; i < 500; ++i) delta.Record(static_cast<int64_t>(latency(random)) >> round);
    dbload::v1::Histogram proto;
    delta.ToProto(&proto);
    ASSERT_EQ(Histogram::CheckProto(proto).value(), delta.TotalCount());
    into.AddProto(proto);
    expected.Add(delta);
    EXPECT_EQ(into, expected) << "round " << round;
  }
  into.AddProto(dbload::v1::Histogram());  // an empty encoding adds nothing
  EXPECT_EQ(into, expected);
}

TEST(HistogramTest, DecoderRejectsMalformedInputWithAReason) {
  dbload::v1::Histogram proto;
  proto.set_layout(7);
  EXPECT_THAT(Histogram::FromProto(proto).status().message(), testing::HasSubstr("layout 7"));

  proto.set_layout(layout::kVersion);
  proto.add_index_gaps(3);
  EXPECT_THAT(Histogram::FromProto(proto).status().message(), testing::HasSubstr("counts"));

  proto.add_counts(0);
  EXPECT_THAT(Histogram::FromProto(proto).status().message(), testing::HasSubstr("count 0"));

  proto.set_counts(0, 5);
  proto.add_index_gaps(0);
  proto.add_counts(1);
  EXPECT_THAT(Histogram::FromProto(proto).status().message(), testing::HasSubstr("repeats"));

  proto.set_index_gaps(1, layout::kBucketCount);
  EXPECT_THAT(Histogram::FromProto(proto).status().message(), testing::HasSubstr("beyond"));

  proto.set_index_gaps(1, 1);
  proto.set_counts(1, std::numeric_limits<uint64_t>::max());
  EXPECT_THAT(Histogram::FromProto(proto).status().message(), testing::HasSubstr("overflow"));
}

// The buffer outside [min, max] is scratch (see Histogram): a reused histogram must read as if
// it were new, whatever it held before.
std::vector<int64_t> SpreadValues(int64_t from, int64_t to, int64_t step) {
  std::vector<int64_t> values;
  for (int64_t v = from; v < to; v += step) values.push_back(v);
  return values;
}

TEST(HistogramTest, ResetHistogramReadsLikeANewOne) {
  Histogram reused;
  for (int64_t v : SpreadValues(1, 50'000'000, 9'973)) reused.Record(v);
  reused.Reset();
  EXPECT_TRUE(reused.Empty());
  EXPECT_EQ(reused, Histogram());
  // Narrower than before, then below and above the new span, then across the old one.
  Histogram fresh;
  for (int64_t v : {300'000, 200'000, 400'000, 7, 90'000'000, 1'234'567}) {
    reused.Record(v);
    fresh.Record(v);
    ASSERT_EQ(reused, fresh) << v;
  }
  uint64_t total = 0;
  for (int i = 0; i < layout::kBucketCount; ++i) {
    ASSERT_EQ(reused.CountAtIndex(i), fresh.CountAtIndex(i)) << i;
    total += reused.CountAtIndex(i);
  }
  EXPECT_EQ(total, 6u);
  EXPECT_EQ(reused.Mean(), fresh.Mean());
  EXPECT_EQ(reused.ValueAtPercentile(50), fresh.ValueAtPercentile(50));
}

TEST(HistogramTest, EmptyHistogramReadsZeroEverywhere) {
  const Histogram empty;
  for (int i = 0; i < layout::kBucketCount; ++i) ASSERT_EQ(empty.CountAtIndex(i), 0u) << i;
  Histogram target;
  target.Add(empty);
  EXPECT_TRUE(target.Empty());
  dbload::v1::Histogram proto;
  empty.ToProto(&proto);
  EXPECT_EQ(proto.counts_size(), 0);
  ASSERT_TRUE(Histogram::FromProto(proto).ok());
  EXPECT_TRUE(Histogram::FromProto(proto)->Empty());
}

TEST(HistogramTest, CopiesAndMovesKeepEverySample) {
  Histogram original;
  for (int64_t v : SpreadValues(5'000, 3'000'000, 1'009)) original.Record(v);
  Histogram copy(original);
  EXPECT_EQ(copy, original);
  Histogram assigned;
  assigned.Record(1);  // a different span: assignment replaces it
  assigned = original;
  EXPECT_EQ(assigned, original);
  Histogram moved(std::move(copy));
  EXPECT_EQ(moved, original);
  EXPECT_TRUE(copy.Empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, reusable
  copy.Record(42);
  EXPECT_EQ(copy.TotalCount(), 1u);
  EXPECT_EQ(copy.CountAtIndex(layout::IndexOf(42)), 1u);
  assigned = std::move(moved);
  EXPECT_EQ(assigned, original);
  EXPECT_TRUE(moved.Empty());  // NOLINT(bugprone-use-after-move)
}

TEST(HistogramTest, AddWidensTheSpanBothWays) {
  Histogram sum, expected, low, high;
  sum.Record(1'000'000);
  expected.Record(1'000'000);
  for (int64_t v : {3, 900}) {
    low.Record(v);
    expected.Record(v);
  }
  for (int64_t v : {int64_t{5'000'000'000}, int64_t{70'000'000}}) {
    high.Record(v);
    expected.Record(v);
  }
  sum.Add(low);
  sum.Add(high);
  EXPECT_EQ(sum, expected);
}

TEST(ConcurrentHistogramTest, DrainIntoAReusedOrNonEmptyHistogramIsExact) {
  ConcurrentHistogram concurrent;
  Histogram out, expected;
  // A wide span first, then Reset: everything beyond the new span is stale scratch.
  for (int64_t v : SpreadValues(1, 80'000'000, 7'919)) out.Record(v);
  out.Reset();
  out.Record(2'000'000);
  expected.Record(2'000'000);
  // Below, inside and far above out's span, with gaps wider than the drain's zero-ahead run.
  for (int64_t v : SpreadValues(10, 300, 7)) { concurrent.Record(v); expected.Record(v); }
  for (int64_t v : SpreadValues(1'500'000, 2'500'000, 3'001)) { concurrent.Record(v); expected.Record(v); }
  for (int64_t v : SpreadValues(40'000'000, 4'000'000'000, 9'999'991)) { concurrent.Record(v); expected.Record(v); }
  concurrent.DrainInto(out);
  EXPECT_EQ(out, expected);
  for (int i = 0; i < layout::kBucketCount; ++i) {
    ASSERT_EQ(out.CountAtIndex(i), expected.CountAtIndex(i)) << i;
  }
}

TEST(ConcurrentHistogramTest, DrainMovesEverySampleExactlyOnce) {
  ConcurrentHistogram concurrent;
  Histogram expected;
  for (int64_t v = 1; v < 5'000'000; v += 997) {
    concurrent.Record(v);
    expected.Record(v);
  }
  Histogram drained;
  concurrent.DrainInto(drained);
  EXPECT_EQ(drained, expected);
  Histogram again;
  concurrent.DrainInto(again);
  EXPECT_TRUE(again.Empty());
}

TEST(ConcurrentHistogramTest, ConcurrentRecordersAndDrainsLoseNothing) {
  ConcurrentHistogram concurrent;
  constexpr int kThreads = 4, kPerThread = 200'000;
  std::atomic<int> running = kThreads;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) concurrent.Record(1'000 + (i % 5'000) * (t + 1));
      running.fetch_sub(1);
    });
  }
  Histogram drained;
  while (running.load() > 0) concurrent.DrainInto(drained);
  for (auto& thread : threads) thread.join();
  concurrent.DrainInto(drained);
  EXPECT_EQ(drained.TotalCount(), uint64_t{kThreads} * kPerThread);
}

}  // namespace
}  // namespace dbload
