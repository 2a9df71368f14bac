#include "agent/pacer.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace dbload {
namespace {

TEST(UniformPacerTest, ArrivalsAreEvenlySpacedWithoutDrift) {
  // 3 per second does not divide a second into whole nanoseconds.
  UniformPacer pacer(1'000, 3.0);
  Nanos last = pacer.Next();
  EXPECT_EQ(last, 1'000);
  for (int i = 1; i <= 3'000; ++i) last = pacer.Next();
  // After 3000 periods of 1/3 s: exactly 1000 s later (picosecond bookkeeping, no drift).
  EXPECT_EQ(last, 1'000 + 1'000 * kSecond);
}

TEST(UniformPacerTest, StaysOnTheNanosecondGridForDays) {
  // The offset base + k * period is kept in a double: still exact to the nanosecond after
  // 3,000,000 periods of 1/3 s (1,000,000 s, 11.6 days), and at a rate with a long fraction.
  UniformPacer third(0, 3.0);
  Nanos last = 0;
  for (int i = 0; i <= 3'000'000; ++i) last = third.Next();
  EXPECT_EQ(last, 1'000'000 * kSecond);
  UniformPacer odd(5, 7'000.0);  // 142857.142857… ns apart
  for (int64_t k = 0; k <= 7'000'000; ++k) last = odd.Next();
  EXPECT_EQ(last, 5 + 1'000 * kSecond);
}

TEST(UniformPacerTest, PhaseDelaysTheFirstArrivalByAFractionOfAPeriod) {
  UniformPacer pacer(0, 1'000.0, 0.25);
  EXPECT_EQ(pacer.Next(), 250 * kMicrosecond);
  EXPECT_EQ(pacer.Next(), 1'250 * kMicrosecond);
}

TEST(UniformPacerTest, RateChangeCausesNeitherBurstNorGap) {
  UniformPacer pacer(0, 1'000.0);  // 1 ms apart
  std::vector<Nanos> times;
  for (int i = 0; i < 5; ++i) times.push_back(pacer.Next());
  pacer.SetRate(100.0);  // 10 ms apart from the last arrival on
  for (int i = 0; i < 3; ++i) times.push_back(pacer.Next());
  pacer.SetRate(10'000.0);
  for (int i = 0; i < 3; ++i) times.push_back(pacer.Next());
  const std::vector<Nanos> expected = {0, 1, 2, 3, 4, 14, 24, 34};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(times[i], expected[i] * kMillisecond);
  EXPECT_EQ(times[8], 34 * kMillisecond + 100 * kMicrosecond);
  EXPECT_EQ(times[10], 34 * kMillisecond + 300 * kMicrosecond);
}

TEST(PoissonPacerTest, GapsHaveTheRightMeanAndAreExponential) {
  PoissonPacer pacer(0, 10'000.0, 7);
  constexpr int kArrivals = 200'000;
  Nanos previous = pacer.Next();
  int below_mean = 0;
  const Nanos first = previous;
  for (int i = 1; i < kArrivals; ++i) {
    const Nanos next = pacer.Next();
    ASSERT_GT(next, previous);
    below_mean += (next - previous) < 100 * kMicrosecond;
    previous = next;
  }
  const double mean_gap = static_cast<double>(previous - first) / (kArrivals - 1);
  EXPECT_NEAR(mean_gap, 100'000.0, 1'000.0);
  // P(gap < mean) = 1 - 1/e for an exponential distribution.
  EXPECT_NEAR(below_mean / static_cast<double>(kArrivals), 1 - std::exp(-1.0), 0.01);
}

TEST(PoissonPacerTest, SameSeedSameArrivals) {
  PoissonPacer a(0, 500.0, 42), b(0, 500.0, 42), c(0, 500.0, 43);
  bool all_same_as_c = true;
  for (int i = 0; i < 100; ++i) {
    const Nanos next = a.Next();
    EXPECT_EQ(next, b.Next());
    all_same_as_c &= next == c.Next();
  }
  EXPECT_FALSE(all_same_as_c);
}

TEST(PoissonPacerTest, RateChangeAppliesToTheNextGap) {
  PoissonPacer pacer(0, 1.0, 3);  // mean gap 1 s
  Nanos last = 0;
  for (int i = 0; i < 10; ++i) last = pacer.Next();
  pacer.SetRate(1'000'000.0);  // mean gap 1 µs
  const Nanos after = pacer.Next();
  EXPECT_GT(after, last);
  EXPECT_LT(after - last, 50 * kMicrosecond);  // no leftover of the old 1 s gaps
}

}  // namespace
}  // namespace dbload
