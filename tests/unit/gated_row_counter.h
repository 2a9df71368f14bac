#ifndef DBLOAD_TESTS_UNIT_GATED_ROW_COUNTER_H_
#define DBLOAD_TESTS_UNIT_GATED_ROW_COUNTER_H_

// A row counter (coordinator/row_changes.h) whose counts the test answers one at a time, for
// unit tests of what waits for a count: each count blocks on the counting thread until the test
// gives its answer, and the test can wait until the check was told that the count is in. It
// must outlive the check, and a test answers every count it starts: a check that goes waits
// for its count.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "coordinator/row_changes.h"

namespace dbload {

class GatedRowCounter {
 public:
  using Counts = std::map<std::string, int64_t>;

  RowCounter counter() {
    return [this](const std::set<std::string>& tables) -> absl::StatusOr<Counts> {
      std::unique_lock lock(mu_);
      asked_.push_back(tables);
      cv_.wait(lock, [this] { return !answers_.empty(); });
      absl::StatusOr<Counts> answer = answers_.front();
      answers_.pop_front();
      return answer;
    };
  }
  // What the check calls once a count is in.
  std::function<void()> on_counted() {
    return [this] {
      std::lock_guard lock(mu_);
      ++counted_;
      cv_.notify_all();
    };
  }

  // Lets the next count return `answer`.
  void Answer(absl::StatusOr<Counts> answer) {
    std::lock_guard lock(mu_);
    answers_.push_back(std::move(answer));
    cv_.notify_all();
  }
  // Waits (up to 10 s) until `n` counts are in; false if they are not.
  bool WaitCounted(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return counted_ >= n; });
  }
  // The tables each count was asked for, so far.
  std::deque<std::set<std::string>> asked() {
    std::lock_guard lock(mu_);
    return asked_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<absl::StatusOr<Counts>> answers_;
  std::deque<std::set<std::string>> asked_;
  int counted_ = 0;
};

}  // namespace dbload

#endif  // DBLOAD_TESTS_UNIT_GATED_ROW_COUNTER_H_
