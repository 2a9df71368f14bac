#ifndef DBLOAD_AGENT_INTERVAL_RECORDER_H_
#define DBLOAD_AGENT_INTERVAL_RECORDER_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/db/driver.h"
#include "common/histogram.h"
#include "common/interval_snapshot.h"

namespace dbload {

// Where workers record each completed transaction. Successful transactions cost two or three
// relaxed atomic increments and no lock; errors (rare, and carrying a code string) take a mutex.
// A reader drains everything recorded so far into an IntervalSnapshot while workers go on
// recording: each sample lands in exactly one drain.
class IntervalRecorder {
 public:
  explicit IntervalRecorder(int query_type_count);

  void RecordSuccess(int query_type, Nanos response_time, Nanos service_time) {
    QueryTypeSlot& slot = *slots_[query_type];
    slot.response_time.Record(response_time);
    slot.service_time.Record(service_time);
  }
  // `had_free_connection`: a connection was waiting for the transaction (always so in a closed
  // loop); otherwise it queued for a busy one, and its lag is not the agent's lateness alone.
  // One record either way: the drain adds the two into the schedule lag.
  void RecordScheduleLag(Nanos lag, bool had_free_connection) {
    (had_free_connection ? dispatch_lag_ : queued_lag_).Record(lag);
  }
  void RecordError(int query_type, const db::DbError& error);

  int query_type_count() const { return static_cast<int>(slots_.size()); }
  // Returns a fresh snapshot holding everything recorded since the previous drain.
  IntervalSnapshot Drain();

 private:
  struct QueryTypeSlot {
    ConcurrentHistogram response_time;
    ConcurrentHistogram service_time;
  };
  std::vector<std::unique_ptr<QueryTypeSlot>> slots_;
  ConcurrentHistogram dispatch_lag_;
  ConcurrentHistogram queued_lag_;
  std::mutex errors_mu_;
  std::vector<std::map<std::pair<db::ErrorClass, std::string>, uint64_t>> errors_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_INTERVAL_RECORDER_H_
