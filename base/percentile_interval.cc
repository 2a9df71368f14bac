#include "base/percentile_interval.h"

#include <algorithm>
#include <cmath>

namespace dbload {

namespace {

constexpr double kTail = 0.025;           // each side of a 95 % interval
constexpr double kZ = 1.959963984540054;  // the standard normal's 97.5 % quantile

// Beyond this variance n·q·(1−q) (a standard deviation of 100 ranks) the normal approximation
// with continuity correction is used: the binomial's skewness is then below 0.01 and the ranks
// it gives differ from the exact ones by at most one, far inside a histogram bucket. Below it the
// tails are summed exactly over the ranks that carry any probability (terms down to 1e-18, a few
// thousand at most), so small n and thin tails (p99.99 of a few thousand samples), where the
// normal approximation is wrong, are exact.
constexpr double kNormalFromVariance = 1e4;

RankInterval Clamp(double lower, double upper, uint64_t n) {
  const double top = static_cast<double>(n) + 1;
  return {static_cast<uint64_t>(std::clamp(lower, 0.0, top)),
          static_cast<uint64_t>(std::clamp(upper, 0.0, top))};
}

}  // namespace

RankInterval QuantileRankInterval(uint64_t n, double q) {
  if (n == 0 || q <= 0 || q >= 1) return {0, n + 1};
  const double nd = static_cast<double>(n);
  const double variance = nd * q * (1 - q);
  // With CDF(j) = P(B <= j): lower = 1 + the largest j with CDF(j) <= 2.5 %, upper = 1 + the
  // smallest j with CDF(j) >= 97.5 %. Then P(lower <= B < upper) >= 95 %, and B >= rank r is
  // "x_(r) is at or below the quantile".
  if (variance >= kNormalFromVariance) {
    // Normal approximation with continuity correction: CDF(j) ≈ Φ((j + 0.5 − nq) / σ).
    const double sd = std::sqrt(variance);
    return Clamp(std::floor(nd * q - 0.5 - kZ * sd) + 1, std::ceil(nd * q - 0.5 + kZ * sd) + 1, n);
  }
  // Exact: the probabilities of B from its mode outwards (never underflowing at the mode), by
  // the ratio of neighbouring terms, until they are negligible.
  const uint64_t mode = std::min<uint64_t>(n, static_cast<uint64_t>(std::floor((nd + 1) * q)));
  const double md = static_cast<double>(mode);
  const double at_mode =
      std::exp(std::lgamma(nd + 1) - std::lgamma(md + 1) - std::lgamma(nd - md + 1) +
               md * std::log(q) + (nd - md) * std::log1p(-q));
  constexpr double kNegligible = 1e-18;
  const double odds = q / (1 - q);
  std::vector<double> below;  // P(B = mode − 1), P(B = mode − 2), …
  for (uint64_t k = mode; k > 0;) {
    const double p = (below.empty() ? at_mode : below.back()) * static_cast<double>(k) /
                     (static_cast<double>(n - k + 1) * odds);
    --k;
    if (p < kNegligible) break;
    below.push_back(p);
  }
  std::vector<double> pmf(below.rbegin(), below.rend());
  const uint64_t first = mode - below.size();
  pmf.push_back(at_mode);
  for (uint64_t k = mode; k < n; ++k) {
    const double p = pmf.back() * static_cast<double>(n - k) / static_cast<double>(k + 1) * odds;
    if (p < kNegligible) break;
    pmf.push_back(p);
  }
  double total = 0;
  for (const double p : pmf) total += p;
  // Ranks below `first` carry no probability: CDF(first − 1) = 0, so lower >= first.
  double lower = static_cast<double>(first), upper = static_cast<double>(n) + 1;
  double cdf = 0;
  bool upper_found = false;
  for (size_t i = 0; i < pmf.size(); ++i) {
    cdf += pmf[i] / total;
    const double j = static_cast<double>(first + i);
    if (cdf <= kTail) lower = j + 1;
    if (!upper_found && cdf >= 1 - kTail) {
      upper = j + 1;
      upper_found = true;
    }
  }
  return Clamp(lower, upper, n);
}

std::vector<PercentileBasis> DescribePercentiles(const Histogram& h,
                                                 const std::vector<double>& percentiles) {
  std::vector<PercentileBasis> out;
  const uint64_t n = h.TotalCount();
  if (n == 0) return out;
  // Three ranks per percentile (its own, the interval's two ends), read in one pass.
  std::vector<uint64_t> ranks;
  std::vector<RankInterval> intervals;
  for (const double p : percentiles) {
    const RankInterval interval = QuantileRankInterval(n, p / 100);
    intervals.push_back(interval);
    ranks.push_back(h.RankOfPercentile(p));
    if (interval.lower >= 1) ranks.push_back(interval.lower);
    if (interval.upper <= n) ranks.push_back(interval.upper);
  }
  std::vector<uint64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const std::vector<Histogram::RankedBucket> buckets = h.BucketsAtRanks(sorted);
  const auto at = [&](uint64_t rank) {
    return buckets[std::lower_bound(sorted.begin(), sorted.end(), rank) - sorted.begin()];
  };
  for (size_t i = 0; i < percentiles.size(); ++i) {
    PercentileBasis basis;
    basis.percentile = percentiles[i];
    const Histogram::RankedBucket own = at(h.RankOfPercentile(percentiles[i]));
    basis.value_ns = histogram_layout::HighestValueAt(own.index);
    basis.samples_beyond = n - own.at_or_below;
    const RankInterval& interval = intervals[i];
    // The lowest value of the lower rank's bucket and the highest of the upper's: the interval
    // holds the exact order statistics whatever the bucket width.
    if (interval.lower >= 1) {
      basis.ci_low_ns = histogram_layout::LowestValueAt(at(interval.lower).index);
    }
    basis.ci_high_open = interval.upper > n;
    basis.ci_high_ns =
        basis.ci_high_open ? h.Max() : histogram_layout::HighestValueAt(at(interval.upper).index);
    out.push_back(basis);
  }
  return out;
}

}  // namespace dbload
