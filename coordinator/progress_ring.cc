#include "coordinator/progress_ring.h"

#include <algorithm>
#include <utility>

namespace dbload {

void ProgressRing::Push(v1::RunProgress progress) {
  kept_messages_.push_back(std::move(progress));
  if (kept_messages_.size() > kept_) kept_messages_.pop_front();
  ++count_;
}

std::vector<v1::RunProgress> ProgressRing::Since(uint64_t& next) const {
  std::vector<v1::RunProgress> batch;
  const uint64_t first = count_ - kept_messages_.size();
  next = std::max(next, first);  // a watcher too slow to keep up skips what is gone
  for (; next < count_; ++next) batch.push_back(kept_messages_[next - first]);
  return batch;
}

}  // namespace dbload
