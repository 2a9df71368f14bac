#include "base/percentile_interval.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "base/histogram.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

// The ranks from P(B <= j), B ~ binomial(n, q), summed term by term in long double from j = 0
// (each term from lgamma): an independent, slow reference.
RankInterval Reference(uint64_t n, double q) {
  RankInterval r{0, n + 1};
  bool upper = false;
  long double cdf = 0;
  for (int64_t j = 0; j <= static_cast<int64_t>(n); ++j) {
    const long double log_term = std::lgamma(static_cast<long double>(n) + 1) -
                                 std::lgamma(static_cast<long double>(j) + 1) -
                                 std::lgamma(static_cast<long double>(n - j) + 1) +
                                 j * std::log(static_cast<long double>(q)) +
                                 (n - j) * std::log1p(-static_cast<long double>(q));
    cdf += std::exp(log_term);
    if (cdf <= 0.025L) r.lower = j + 1;
    if (!upper && cdf >= 0.975L) {
      r.upper = j + 1;
      upper = true;
    }
  }
  return r;
}

TEST(QuantileRankIntervalTest, KnownAnswersOfTheTables) {
  // The median of 100 samples: x_(40) to x_(61) (the published order-statistic tables).
  RankInterval r = QuantileRankInterval(100, 0.5);
  EXPECT_EQ(r.lower, 40u);
  EXPECT_EQ(r.upper, 61u);
  r = QuantileRankInterval(20, 0.5);
  EXPECT_EQ(r.lower, 6u);
  EXPECT_EQ(r.upper, 15u);
  r = QuantileRankInterval(100, 0.9);
  EXPECT_EQ(r.lower, 84u);
  EXPECT_EQ(r.upper, 96u);
  r = QuantileRankInterval(1000, 0.99);
  EXPECT_EQ(r.lower, 983u);
  EXPECT_EQ(r.upper, 997u);
}

TEST(QuantileRankIntervalTest, TooFewSamplesGiveNoBound) {
  // 5 samples: neither side of a median, and nothing above a p99.
  RankInterval r = QuantileRankInterval(5, 0.5);
  EXPECT_EQ(r.lower, 0u);
  EXPECT_EQ(r.upper, 6u);
  r = QuantileRankInterval(5, 0.99);
  EXPECT_EQ(r.lower, 4u);
  EXPECT_EQ(r.upper, 6u);
  r = QuantileRankInterval(100, 0.99);
  EXPECT_EQ(r.lower, 97u);
  EXPECT_EQ(r.upper, 101u);
  r = QuantileRankInterval(0, 0.5);
  EXPECT_EQ(r.lower, 0u);
  EXPECT_EQ(r.upper, 1u);
}

TEST(QuantileRankIntervalTest, ExactPartMatchesTermByTermSums) {
  for (const uint64_t n : {1, 2, 3, 7, 10, 33, 100, 250, 1000, 5100}) {
    for (const double q : {0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999}) {
      const RankInterval got = QuantileRankInterval(n, q);
      const RankInterval want = Reference(n, q);
      EXPECT_EQ(got.lower, want.lower) << "n=" << n << " q=" << q;
      EXPECT_EQ(got.upper, want.upper) << "n=" << n << " q=" << q;
    }
  }
}

TEST(QuantileRankIntervalTest, NormalApproximationWithinOneRankOfExact) {
  // n·q·(1−q) >= 10^4 takes the normal approximation: one rank off the exact sums at most.
  for (const auto& [n, q] : std::vector<std::pair<uint64_t, double>>{
           {40000, 0.5}, {50000, 0.75}, {200000, 0.95}, {1100000, 0.99}}) {
    const RankInterval got = QuantileRankInterval(n, q);
    const RankInterval want = Reference(n, q);
    EXPECT_LE(std::llabs(static_cast<int64_t>(got.lower) - static_cast<int64_t>(want.lower)), 1)
        << "n=" << n << " q=" << q;
    EXPECT_LE(std::llabs(static_cast<int64_t>(got.upper) - static_cast<int64_t>(want.upper)), 1)
        << "n=" << n << " q=" << q;
  }
}

TEST(QuantileRankIntervalTest, LargeCountsStayCheapAndOrdered) {
  const RankInterval r = QuantileRankInterval(uint64_t{1} << 40, 0.9999);
  const double mean = static_cast<double>(uint64_t{1} << 40) * 0.9999;
  EXPECT_LT(static_cast<double>(r.lower), mean);
  EXPECT_GT(static_cast<double>(r.upper), mean);
  // A thin tail of many samples (n·q·(1−q) < 10^4) is summed exactly without underflow.
  const RankInterval thin = QuantileRankInterval(50'000'000, 0.99999);
  EXPECT_LT(thin.lower, 49'999'500u);
  EXPECT_GT(thin.upper, 49'999'500u);
  EXPECT_LE(thin.upper, 50'000'000u);
}

TEST(DescribePercentilesTest, ExactValuesGiveTheOrderStatistics) {
  // 1..100 ns are exact buckets: x_(k) = k.
  Histogram h;
  for (int v = 1; v <= 100; ++v) h.Record(v);
  const std::vector<PercentileBasis> b = DescribePercentiles(h, {50, 90, 99});
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].value_ns, 50);
  EXPECT_EQ(b[0].samples_beyond, 50u);
  EXPECT_EQ(b[0].ci_low_ns, 40);
  EXPECT_EQ(b[0].ci_high_ns, 61);
  EXPECT_FALSE(b[0].ci_high_open);
  EXPECT_FALSE(b[0].few_samples());
  EXPECT_EQ(b[1].value_ns, 90);
  EXPECT_EQ(b[1].samples_beyond, 10u);
  EXPECT_EQ(b[1].ci_low_ns, 84);
  EXPECT_EQ(b[1].ci_high_ns, 96);
  EXPECT_FALSE(b[1].few_samples());
  // p99 of 100: one sample beyond, no upper bound: marked.
  EXPECT_EQ(b[2].value_ns, 99);
  EXPECT_EQ(b[2].samples_beyond, 1u);
  EXPECT_EQ(b[2].ci_low_ns, 97);
  EXPECT_TRUE(b[2].ci_high_open);
  EXPECT_EQ(b[2].ci_high_ns, 100);
  EXPECT_TRUE(b[2].few_samples());
}

TEST(DescribePercentilesTest, FiveSamplesMarkEveryTail) {
  Histogram h;
  for (int v : {100, 200, 300, 400, 500}) h.Record(v);
  const std::vector<PercentileBasis> b = DescribePercentiles(h, {50, 99});
  EXPECT_EQ(b[0].value_ns, 300);
  EXPECT_EQ(b[0].samples_beyond, 2u);
  EXPECT_EQ(b[0].ci_low_ns, 0);  // no lower bound from 5 samples
  EXPECT_TRUE(b[0].ci_high_open);
  EXPECT_TRUE(b[0].few_samples());
  EXPECT_EQ(b[1].value_ns, 500);
  EXPECT_EQ(b[1].samples_beyond, 0u);
  EXPECT_EQ(b[1].ci_low_ns, 400);
  EXPECT_TRUE(b[1].few_samples());
}

TEST(DescribePercentilesTest, BucketsBoundTheIntervalAndTiesCountAsNotBeyond) {
  // Above 2,047 ns buckets are wider than one value: the interval takes the lowest value of the
  // lower rank's bucket and the highest of the upper's, and samples in the percentile's own
  // bucket are not beyond it.
  Histogram h;
  h.RecordMany(1'000'000, 900);  // 1 ms
  h.RecordMany(5'000'000, 95);   // 5 ms
  h.RecordMany(9'000'000, 5);    // 9 ms
  const std::vector<PercentileBasis> b = DescribePercentiles(h, {50, 99, 99.9});
  namespace layout = histogram_layout;
  const int one = layout::IndexOf(1'000'000), five = layout::IndexOf(5'000'000),
            nine = layout::IndexOf(9'000'000);
  EXPECT_EQ(b[0].value_ns, layout::HighestValueAt(one));
  EXPECT_EQ(b[0].samples_beyond, 100u);
  EXPECT_EQ(b[0].ci_low_ns, layout::LowestValueAt(one));
  EXPECT_EQ(b[0].ci_high_ns, layout::HighestValueAt(one));
  EXPECT_EQ(b[1].value_ns, layout::HighestValueAt(five));
  EXPECT_EQ(b[1].samples_beyond, 5u);
  EXPECT_TRUE(b[1].few_samples());
  EXPECT_EQ(b[1].ci_low_ns, layout::LowestValueAt(five));    // rank 983
  EXPECT_EQ(b[1].ci_high_ns, layout::HighestValueAt(nine));  // rank 997
  EXPECT_EQ(b[2].value_ns, layout::HighestValueAt(nine));
  EXPECT_EQ(b[2].samples_beyond, 0u);
  EXPECT_TRUE(b[2].ci_high_open);
}

TEST(DescribePercentilesTest, AgreesWithValueAtPercentile) {
  Histogram h;
  uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    h.Record(static_cast<int64_t>((x >> 33) % 50'000'000));
  }
  const std::vector<double> ps = {50, 75, 90, 95, 99, 99.9, 99.99};
  const std::vector<PercentileBasis> b = DescribePercentiles(h, ps);
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(b[i].value_ns, h.ValueAtPercentile(ps[i])) << ps[i];
    EXPECT_LE(b[i].ci_low_ns, b[i].value_ns) << ps[i];
    EXPECT_GE(b[i].ci_high_ns, b[i].value_ns) << ps[i];
  }
  EXPECT_TRUE(DescribePercentiles(Histogram(), ps).empty());
}

}  // namespace
}  // namespace dbload
