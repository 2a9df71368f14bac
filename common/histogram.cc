#include "common/histogram.h"

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

Histogram::Histogram()
    : counts_(layout::kBucketCount, 0), min_index_(layout::kBucketCount), max_index_(-1) {}

void Histogram::Add(const Histogram& other) {
  for (int i = other.min_index_; i <= other.max_index_; ++i) RecordAtIndex(i, other.counts_[i]);
}

void Histogram::Reset() {
  if (max_index_ >= 0) std::fill(counts_.begin() + min_index_, counts_.begin() + max_index_ + 1, 0);
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

int64_t Histogram::ValueAtPercentile(double percentile) const {
  if (Empty()) return 0;
  if (percentile <= 0) return Min();
  if (percentile >= 100) return Max();
  // Nearest rank: the smallest sample with at least percentile % of samples at or below it.
  uint64_t rank = static_cast<uint64_t>(
      std::ceil(percentile / 100.0 * static_cast<double>(total_count_)));
  if (rank == 0) rank = 1;
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

absl::StatusOr<Histogram> Histogram::FromProto(const dbload::v1::Histogram& proto) {
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
  Histogram result;
  int64_t index = 0;
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
    if (count > std::numeric_limits<uint64_t>::max() - result.total_count_) {
      return absl::InvalidArgumentError("histogram total count overflows 64 bits");
    }
    result.RecordAtIndex(static_cast<int>(index), count);
  }
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
  for (int i = 0; i < layout::kBucketCount; ++i) {
    // A relaxed load first: most buckets are empty, and a plain read is far cheaper than an
    // exchange on a cache line the recorders may own.
    if (counts_[i].load(std::memory_order_relaxed) == 0) continue;
    out.RecordAtIndex(i, counts_[i].exchange(0, std::memory_order_relaxed));
  }
}

}  // namespace dbload
