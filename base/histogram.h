#ifndef DBLOAD_BASE_HISTOGRAM_H_
#define DBLOAD_BASE_HISTOGRAM_H_

#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dbload/v1/histogram.pb.h"

namespace dbload {

// The one histogram layout of dbload (HdrHistogram-style log-linear): values are nanoseconds;
// 0..2047 ns are exact, above that every power of two is split into 1024 equal sub-buckets, so
// any recorded value is known to within 1/1024 (< 0.1 %) of itself. The top tracked value is
// 2^42 - 1 ns (~73 minutes); larger values are recorded there (never dropped).
//
// The index is computed with one count-leading-zeros and two shifts, no floating point:
//   b = max(0, bit_width(v | 2047) - 11);  index = b * 1024 + (v >> b).
namespace histogram_layout {
inline constexpr uint32_t kVersion = 1;
inline constexpr int kSubBucketHalfBits = 10;
inline constexpr int64_t kMaxValue = (int64_t{1} << 42) - 1;
inline constexpr int kBucketCount = 31 * 1024 + 2048;

inline constexpr int IndexOf(int64_t value) {
  const uint64_t v = value < 0 ? 0 : (value > kMaxValue ? kMaxValue : value);
  const int shift = std::bit_width(v | 2047) - (kSubBucketHalfBits + 1);
  return (shift << kSubBucketHalfBits) + static_cast<int>(v >> shift);
}
inline constexpr int ShiftAt(int index) {
  return index < 2048 ? 0 : (index >> kSubBucketHalfBits) - 1;
}
inline constexpr int64_t LowestValueAt(int index) {
  const int shift = ShiftAt(index);
  return static_cast<int64_t>(index - (shift << kSubBucketHalfBits)) << shift;
}
inline constexpr int64_t HighestValueAt(int index) {
  return LowestValueAt(index) + (int64_t{1} << ShiftAt(index)) - 1;
}
}  // namespace histogram_layout

// A histogram owned by one thread at a time: recording, merging, statistics, serialization.
//
// Storage is lazy and only the used span is ever initialised. An empty histogram owns no
// buffer (constructing, copying and destroying one is free); the first sample allocates the
// 33,792-bucket array *uninitialised*, and only buckets in [min_index_, max_index_] are valid:
// whenever a sample widens that span, the newly covered buckets are zeroed. So Reset() is O(1)
// and a drain, decode or merge touches only the span that holds samples (typically a few
// thousand buckets, not 270 KB). Reads outside the span return 0. The record path is
// unchanged: one range test (taken only when the span widens), an add and a total.
class Histogram {
 public:
  Histogram() = default;
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);
  Histogram(Histogram&& other) noexcept;
  Histogram& operator=(Histogram&& other) noexcept;
  ~Histogram() = default;

  void Record(int64_t value_ns) { RecordAtIndex(histogram_layout::IndexOf(value_ns), 1); }
  void RecordMany(int64_t value_ns, uint64_t count) {
    RecordAtIndex(histogram_layout::IndexOf(value_ns), count);
  }
  void RecordAtIndex(int index, uint64_t count) {
    if (count == 0) return;
    // Empty: min_index_ = kBucketCount > any index, so the first sample always widens.
    if (index < min_index_ || index > max_index_) [[unlikely]] Widen(index, index);
    counts_[index] += count;
    total_count_ += count;
  }

  // Lossless: afterwards this holds exactly the samples of both.
  void Add(const Histogram& other);
  // Empties the histogram and keeps its buffer for reuse; O(1).
  void Reset();

  uint64_t TotalCount() const { return total_count_; }
  bool Empty() const { return total_count_ == 0; }
  // Min and Max are the bounds of the lowest and highest non-empty buckets; 0 when empty.
  int64_t Min() const;
  int64_t Max() const;
  double Mean() const;
  double Stddev() const;
  // The value at or below which `percentile` % of the samples lie (nearest rank), reported as
  // the highest value of its bucket, so it is never below the exact sample. 0 when empty.
  int64_t ValueAtPercentile(double percentile) const;
  // The rank (1-based) of the sample ValueAtPercentile reports: nearest rank, at least 1.
  uint64_t RankOfPercentile(double percentile) const;

  // Where the samples of given ranks lie: for each rank (1-based, ascending, at most
  // TotalCount()), the bucket holding that sample and how many samples lie in it and below it.
  // One pass over the span however many ranks are asked for.
  struct RankedBucket {
    int index = 0;
    uint64_t at_or_below = 0;
  };
  std::vector<RankedBucket> BucketsAtRanks(const std::vector<uint64_t>& ascending_ranks) const;

  uint64_t CountAtIndex(int index) const {
    return index < min_index_ || index > max_index_ ? 0 : counts_[index];
  }

  // Sparse encoding: only non-zero buckets.
  void ToProto(dbload::v1::Histogram* out) const;
  // Rejects anything malformed (wrong layout, unsorted or out-of-range buckets, zero counts,
  // mismatched lengths, overflowing totals) with an error saying what.
  static absl::StatusOr<Histogram> FromProto(const dbload::v1::Histogram& proto);
  // FromProto's checks alone; the total count of a well-formed encoding.
  static absl::StatusOr<uint64_t> CheckProto(const dbload::v1::Histogram& proto);
  // Adds an encoding that CheckProto accepted straight into this histogram (lossless, like
  // Add): the cost is the buckets it lists, with no histogram decoded on the way. This is how
  // the coordinator merges agents' reports.
  void AddProto(const dbload::v1::Histogram& proto);

  bool operator==(const Histogram& other) const;

 private:
  // Makes [low, high] part of the valid span (allocating the buffer if needed) and zeroes the
  // buckets it adds. The slow path of RecordAtIndex; also used to pre-size merges and decodes.
  void Widen(int low, int high);
  friend class ConcurrentHistogram;  // DrainInto writes into the span directly

  std::unique_ptr<uint64_t[]> counts_;  // kBucketCount entries once allocated; see above
  uint64_t total_count_ = 0;
  int min_index_ = histogram_layout::kBucketCount;
  int max_index_ = -1;
};

// A histogram that many threads record into at once without a lock: one relaxed atomic
// increment per sample. A reader drains it into a Histogram while recording goes on; every
// sample lands in exactly one drain (the exchange either sees an increment or leaves it).
//
// Counts are 32-bit because the histogram is drained every interval (1 s); even at 10^9
// samples per second into one bucket it would not wrap.
class ConcurrentHistogram {
 public:
  ConcurrentHistogram();

  void Record(int64_t value_ns) {
    counts_[histogram_layout::IndexOf(value_ns)].fetch_add(1, std::memory_order_relaxed);
  }
  // Moves every count recorded so far into `out` and zeroes it here.
  void DrainInto(Histogram& out);

 private:
  std::unique_ptr<std::atomic<uint32_t>[]> counts_;
};

}  // namespace dbload

#endif  // DBLOAD_BASE_HISTOGRAM_H_
