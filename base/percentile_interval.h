#ifndef DBLOAD_BASE_PERCENTILE_INTERVAL_H_
#define DBLOAD_BASE_PERCENTILE_INTERVAL_H_

#include <cstdint>
#include <vector>

#include "base/histogram.h"

namespace dbload {

// A percentile resting on fewer samples beyond it than this is marked as too thin to trust.
inline constexpr uint64_t kFewSamplesBeyond = 10;

// The order-statistic ranks (1-based) bounding a distribution-free 95 % confidence interval of
// the q-quantile of n samples: the true quantile lies in [x_(lower), x_(upper)] with probability
// at least 0.95 whatever the distribution, because the number of samples below it is
// binomial(n, q). `lower` is the highest rank with P(B < lower) <= 2.5 % and `upper` the lowest
// with P(B >= upper) <= 2.5 % (B ~ binomial(n, q)). lower == 0: the samples give no lower bound;
// upper == n + 1: no upper bound (too few samples beyond the quantile).
struct RankInterval {
  uint64_t lower = 0;
  uint64_t upper = 0;
};
RankInterval QuantileRankInterval(uint64_t n, double q);

// One percentile of a histogram and what it rests on (all in nanoseconds).
struct PercentileBasis {
  double percentile = 0;
  int64_t value_ns = 0;         // Histogram::ValueAtPercentile
  uint64_t samples_beyond = 0;  // samples in buckets above the percentile's bucket
  int64_t ci_low_ns = 0;        // 0 when the samples give no lower bound
  int64_t ci_high_ns = 0;       // the maximum when ci_high_open
  bool ci_high_open = false;
  bool few_samples() const { return samples_beyond < kFewSamplesBeyond; }
};
// Every percentile of `percentiles` (each in (0, 100)) in one pass over the histogram's span.
// Empty for an empty histogram.
std::vector<PercentileBasis> DescribePercentiles(const Histogram& histogram,
                                                 const std::vector<double>& percentiles);

}  // namespace dbload

#endif  // DBLOAD_BASE_PERCENTILE_INTERVAL_H_
