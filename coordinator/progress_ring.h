#ifndef DBLOAD_COORDINATOR_PROGRESS_RING_H_
#define DBLOAD_COORDINATOR_PROGRESS_RING_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "dbload/v1/control.pb.h"

namespace dbload {

// The progress messages a run keeps for its watchers (Control.Watch): the newest `kept`, each
// numbered in the order pushed, so that a watcher that connects late or reads slowly goes on
// where it was and skips only what is gone. Memory stays flat whatever the run's length. Not
// thread-safe: its owner guards it (and wakes the watchers).
class ProgressRing {
 public:
  // Two minutes of intervals by default.
  static constexpr size_t kDefaultKept = 120;
  explicit ProgressRing(size_t kept = kDefaultKept) : kept_(kept) {}

  void Push(dbload::v1::RunProgress progress);
  // How many were ever pushed: the number the next one gets.
  uint64_t count() const { return count_; }
  // The messages numbered `next` and after (from the oldest kept when `next` is gone), and
  // `next` moved past them.
  std::vector<dbload::v1::RunProgress> Since(uint64_t& next) const;

 private:
  size_t kept_;
  std::deque<dbload::v1::RunProgress> kept_messages_;
  uint64_t count_ = 0;  // kept_messages_.front() is number count_ - size
};

}  // namespace dbload

#endif  // DBLOAD_COORDINATOR_PROGRESS_RING_H_
