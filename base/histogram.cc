#include "base/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace dbload {

namespace layout = histogram_layout;

namespace {
// Mid-point of a bucket: the best single value to stand for its samples in mean and stddev.
double MidValueAt(int index) {
  return (static_cast<double>(layout::LowestValueAt(index)) +
          static_cast<double>(layout::HighestValueAt(index))) /
         2.0;
}
}  // namespace

Histogram::Histogram(const Histogram& other) { *this = other; }

Histogram& Histogram::operator=(const Histogram& other) {
  if (this == &other) return *this;
  Reset();
  Add(other);  // copies only the valid span
  return *this;
}

Histogram::Histogram(Histogram&& other) noexcept
    : counts_(std::move(other.counts_)),
      total_count_(other.total_count_),
      min_index_(other.min_index_),
      max_index_(other.max_index_) {
  other.total_count_ = 0;
  other.min_index_ = layout::kBucketCount;
  other.max_index_ = -1;
}

Histogram& Histogram::operator=(Histogram&& other) noexcept {
  if (this == &other) return *this;
  counts_ = std::move(other.counts_);
  total_count_ = other.total_count_;
  min_index_ = other.min_index_;
  max_index_ = other.max_index_;
  other.total_count_ = 0;
  other.min_index_ = layout::kBucketCount;
  other.max_index_ = -1;
  return *this;
}

void Histogram::Widen(int low, int high) {
  // for_overwrite: no zeroing of 270 KB; the span below is the only part ever read.
  if (counts_ == nullptr) counts_ = std::make_unique_for_overwrite<uint64_t[]>(layout::kBucketCount);
  if (max_index_ < 0) {
    std::fill(counts_.get() + low, counts_.get() + high + 1, uint64_t{0});
    min_index_ = low;
    max_index_ = high;
    return;
  }
  if (low < min_index_) {
    std::fill(counts_.get() + low, counts_.get() + min_index_, uint64_t{0});
    min_index_ = low;
  }
  if (high > max_index_) {
    std::fill(counts_.get() + max_index_ + 1, counts_.get() + high + 1, uint64_t{0});
    max_index_ = high;
  }
}

void Histogram::Add(const Histogram& other) {
  if (other.Empty()) return;
  // The ends of other's span hold samples, so the merged span is exactly the union.
  Widen(other.min_index_, other.max_index_);
  for (int i = other.min_index_; i <= other.max_index_; ++i) counts_[i] += other.counts_[i];
  total_count_ += other.total_count_;
}

void Histogram::Reset() {
  // Nothing to clear: the span is all that is ever read, and it is zeroed as it grows again.
  total_count_ = 0;
  min_index_ = layout::kBucketCount;
  max_index_ = -1;
}

int64_t Histogram::Min() const { return Empty() ? 0 : layout::LowestValueAt(min_index_); }

int64_t Histogram::Max() const { return Empty() ? 0 : layout::HighestValueAt(max_index_); }

double Histogram::Mean() const {
  if (Empty()) return 0;
  long double sum = 0;
  for (int i = min_index_; i <= max_index_; ++i) {
    if (counts_[i] != 0) sum += static_cast<long double>(counts_[i]) * MidValueAt(i);
  }
  return static_cast<double>(sum / total_count_);
}

double Histogram::Stddev() const {
  if (Empty()) return 0;
  const double mean = Mean();
  long double sum_sq = 0;
  for (int i = min_index_; i <= max_index_; ++i) {
    if (counts_[i] == 0) continue;
    const double dev = MidValueAt(i) - mean;
    sum_sq += static_cast<long double>(counts_[i]) * dev * dev;
  }
  return std::sqrt(static_cast<double>(sum_sq / total_count_));
}

uint64_t Histogram::RankOfPercentile(double percentile) const {
  // Nearest rank: the smallest sample with at least percentile % of samples at or below it.
  const uint64_t rank =
      static_cast<uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(total_count_)));
  return std::clamp<uint64_t>(rank, 1, std::max<uint64_t>(total_count_, 1));
}

std::vector<Histogram::RankedBucket> Histogram::BucketsAtRanks(
    const std::vector<uint64_t>& ascending_ranks) const {
  std::vector<RankedBucket> out;
  out.reserve(ascending_ranks.size());
  uint64_t seen = 0;
  int i = min_index_;
  for (const uint64_t rank : ascending_ranks) {
    // The bucket that reached the previous rank may hold this one too: advance only past it.
    while (i <= max_index_ && seen + counts_[i] < rank) seen += counts_[i++];
    if (i > max_index_) {  // a rank beyond the samples: the last bucket
      out.push_back({max_index_, total_count_});
      continue;
    }
    out.push_back({i, seen + counts_[i]});
  }
  return out;
}

int64_t Histogram::ValueAtPercentile(double percentile) const {
  if (Empty()) return 0;
  if (percentile <= 0) return Min();
  if (percentile >= 100) return Max();
  const uint64_t rank = RankOfPercentile(percentile);
  uint64_t seen = 0;
  for (int i = min_index_; i <= max_index_; ++i) {
    seen += counts_[i];
    if (seen >= rank) return layout::HighestValueAt(i);
  }
  return Max();
}

void Histogram::ToProto(dbload::v1::Histogram* out) const {
  out->Clear();
  out->set_layout(layout::kVersion);
  int previous = 0;
  for (int i = min_index_; i <= max_index_; ++i) {
    if (counts_[i] == 0) continue;
    out->add_index_gaps(static_cast<uint32_t>(i - previous));
    out->add_counts(counts_[i]);
    previous = i;
  }
}

absl::StatusOr<uint64_t> Histogram::CheckProto(const dbload::v1::Histogram& proto) {
  if (proto.layout() != layout::kVersion) {
    return absl::InvalidArgumentError(absl::StrCat("histogram layout ", proto.layout(),
                                                   " is not supported (expected ",
                                                   layout::kVersion, ")"));
  }
  if (proto.index_gaps_size() != proto.counts_size()) {
    return absl::InvalidArgumentError(absl::StrCat("histogram has ", proto.index_gaps_size(),
                                                   " bucket indices but ", proto.counts_size(),
                                                   " counts"));
  }
  int64_t index = 0;
  uint64_t total = 0;
  for (int k = 0; k < proto.counts_size(); ++k) {
    const uint32_t gap = proto.index_gaps(k);
    if (k > 0 && gap == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram bucket #", k, " repeats the previous bucket index"));
    }
    index += gap;
    if (index >= layout::kBucketCount) {
      return absl::InvalidArgumentError(absl::StrCat("histogram bucket #", k, " has index ", index,
                                                     ", beyond the last (",
                                                     layout::kBucketCount - 1, ")"));
    }
    const uint64_t count = proto.counts(k);
    if (count == 0) {
      return absl::InvalidArgumentError(absl::StrCat("histogram bucket #", k, " has count 0"));
    }
    if (count > std::numeric_limits<uint64_t>::max() - total) {
      return absl::InvalidArgumentError("histogram total count overflows 64 bits");
    }
    total += count;
  }
  return total;
}

void Histogram::AddProto(const dbload::v1::Histogram& proto) {
  const int buckets = proto.counts_size();
  if (buckets == 0) return;
  // The gaps are ascending from the first index: the last index is their sum.
  int last = 0;
  for (int k = 0; k < buckets; ++k) last += static_cast<int>(proto.index_gaps(k));
  Widen(static_cast<int>(proto.index_gaps(0)), last);
  int index = 0;
  for (int k = 0; k < buckets; ++k) {
    index += static_cast<int>(proto.index_gaps(k));
    counts_[index] += proto.counts(k);
    total_count_ += proto.counts(k);
  }
}

absl::StatusOr<Histogram> Histogram::FromProto(const dbload::v1::Histogram& proto) {
  if (absl::StatusOr<uint64_t> checked = CheckProto(proto); !checked.ok()) {
    return checked.status();
  }
  Histogram result;
  result.AddProto(proto);
  return result;
}

bool Histogram::operator==(const Histogram& other) const {
  if (total_count_ != other.total_count_ || min_index_ != other.min_index_ ||
      max_index_ != other.max_index_) {
    return false;
  }
  for (int i = min_index_; i <= max_index_; ++i) {
    if (counts_[i] != other.counts_[i]) return false;
  }
  return true;
}

ConcurrentHistogram::ConcurrentHistogram()
    : counts_(std::make_unique<std::atomic<uint32_t>[]>(layout::kBucketCount)) {}

void ConcurrentHistogram::DrainInto(Histogram& out) {
  // Buckets above out's span are zeroed ahead in runs of kZeroAhead (out's buffer beyond its
  // span is scratch, so writing zeros there is harmless): a drain of thousands of distinct
  // buckets then zeroes each once instead of widening the span one bucket at a time.
  constexpr int kZeroAhead = 256;
  int zeroed_through = out.max_index_;  // out's buffer holds valid counts up to here
  for (int i = 0; i < layout::kBucketCount; ++i) {
    // A relaxed load first: most buckets are empty, and a plain read is far cheaper than an
    // exchange on a cache line the recorders may own.
    if (counts_[i].load(std::memory_order_relaxed) == 0) continue;
    const uint64_t n = counts_[i].exchange(0, std::memory_order_relaxed);
    if (n == 0) continue;
    if (out.max_index_ < 0 || i < out.min_index_) {
      out.Widen(i, i);  // the first sample, or below a span out already had
      zeroed_through = std::max(zeroed_through, out.max_index_);
    } else if (i > out.max_index_) {
      if (i > zeroed_through) {
        zeroed_through = std::min(layout::kBucketCount - 1, i + kZeroAhead);
        std::fill(out.counts_.get() + out.max_index_ + 1, out.counts_.get() + zeroed_through + 1,
                  uint64_t{0});
      }
      out.max_index_ = i;
    }
    out.counts_[i] += n;
    out.total_count_ += n;
  }
}

}  // namespace dbload
