#ifndef DBLOAD_AGENT_INTERVAL_RECORDER_H_
#define DBLOAD_AGENT_INTERVAL_RECORDER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "db/driver.h"
#include "base/histogram.h"
#include "interval/interval_snapshot.h"

namespace dbload {

// What a connection (a worker and its session) is doing.
enum class ConnectionState : uint8_t {
  kInAgent,     // the agent's own work: taking an arrival, recording, making parameters
  kIdle,        // waiting for an arrival's time, think time or a pause
  kInDbCall,    // inside a transaction's database calls
  kConnecting,  // reconnecting after a connection error, backoff included
  kGone,        // the worker has left; no more time counts
};

// One worker's time in each state, written only by its worker at each change of state (a few
// relaxed stores, no lock, no allocation) and read by the drain at any moment: a sequence
// counter lets the reader take a consistent copy, including the time so far in the current
// state, so that a call stuck for seconds counts in every interval it spans.
class ConnectionClock {
 public:
  static constexpr int kStates = 5;
  using Totals = std::array<Nanos, kStates>;  // by ConnectionState

  explicit ConnectionClock(Nanos now) : since_(now) {}
  // From `now` on, the worker is in `state`. Called only by the worker.
  void Enter(ConnectionState state, Nanos now);
  // Each state's time from the start up to `now` (the current state's up to `now`).
  Totals Read(Nanos now) const;

 private:
  std::atomic<uint32_t> sequence_{0};  // odd while the worker is changing state
  std::atomic<uint8_t> state_{static_cast<uint8_t>(ConnectionState::kInAgent)};
  std::atomic<Nanos> since_;
  std::array<std::atomic<Nanos>, kStates> totals_{};
};

// Where workers record each completed transaction. Successful transactions cost three or four
// relaxed atomic increments and no lock; errors (rare, and carrying a code string) take a mutex.
// A reader drains everything recorded so far into an IntervalSnapshot while workers go on
// recording: each sample lands in exactly one drain.
//
// `statements`: what the transaction sent to the server (db::Session::statements_sent() after
// it less before), whatever its outcome. They land in exactly one drain too, though a drain
// that runs while a worker records may take a transaction's statements and its outcome in
// neighbouring intervals; totals over intervals are exact either way.
class IntervalRecorder {
 public:
  explicit IntervalRecorder(int query_type_count);

  void RecordSuccess(int query_type, Nanos response_time, Nanos service_time,
                     uint64_t statements) {
    QueryTypeSlot& slot = *slots_[query_type];
    slot.response_time.Record(response_time);
    slot.service_time.Record(service_time);
    slot.statements.fetch_add(statements, std::memory_order_relaxed);
  }
  // `had_free_connection`: a connection was waiting for the transaction (always so in a closed
  // loop); otherwise it queued for a busy one, and its lag is not the agent's lateness alone.
  // One record either way: the drain adds the two into the schedule lag.
  void RecordScheduleLag(Nanos lag, bool had_free_connection) {
    (had_free_connection ? dispatch_lag_ : queued_lag_).Record(lag);
  }
  // A connection opened for one transaction (LoadRunner::Options::connect_per_transaction).
  void RecordConnect(Nanos connect_time) { connect_time_.Record(connect_time); }
  void RecordError(int query_type, const db::DbError& error, uint64_t statements);
  // Under a retry policy (rare, so under the errors' mutex): a try again and its cause; a
  // transaction that committed after `tries` (> 1) tries; one that failed its last try.
  void RecordRetry(int query_type, db::RetryCause cause);
  void RecordCommittedAfterTries(int query_type, uint32_t tries);
  void RecordFailedAfterRetries(int query_type);
  // A transaction of RecordSuccess that the workload rolled back by design (rare, so under the
  // errors' mutex as well).
  void RecordRolledBack(int query_type);

  // What of one session's own work (db::Session::connections_opened, statements_prepared) a
  // recorder has been told; kept by the session's user.
  struct SessionWorkSeen {
    uint64_t connections_opened = 0;
    uint64_t statements_prepared = 0;
  };
  // Records `session`'s own work since `seen`, and updates `seen`.
  void RecordSessionWork(const db::Session& session, SessionWorkSeen& seen);
  // A clock for one more connection, in state kInAgent from `now`; it stays valid as long as
  // the recorder (a worker calls this once, when it starts its loop).
  ConnectionClock& AddConnection(Nanos now);

  int query_type_count() const { return static_cast<int>(slots_.size()); }
  // Returns a fresh snapshot holding everything recorded since the previous drain, and the
  // connections' time in each state since then up to `now`. Called by one thread.
  IntervalSnapshot Drain(Nanos now = 0);

 private:
  struct QueryTypeSlot {
    ConcurrentHistogram response_time;
    ConcurrentHistogram service_time;
    // On a cache line of its own: slots are small and allocated one after another, and every
    // transaction adds here (the histograms' counts are in arrays of their own).
    alignas(64) std::atomic<uint64_t> statements{0};
  };
  std::vector<std::unique_ptr<QueryTypeSlot>> slots_;
  ConcurrentHistogram dispatch_lag_;
  ConcurrentHistogram queued_lag_;
  ConcurrentHistogram connect_time_;
  std::atomic<uint64_t> connections_opened_{0};
  std::atomic<uint64_t> statements_prepared_{0};
  std::mutex errors_mu_;
  std::vector<std::map<std::pair<db::ErrorClass, std::string>, uint64_t>> errors_;
  std::vector<RetryTally> retries_;    // under errors_mu_ too
  std::vector<uint64_t> rolled_back_;  // under errors_mu_ too
  struct Connection {
    explicit Connection(Nanos now) : clock(now) {}
    ConnectionClock clock;
    ConnectionClock::Totals drained{};  // what the previous drains took (the drain's own)
  };
  std::mutex connections_mu_;  // adding a connection, and draining; never on the record path
  std::deque<Connection> connections_;
};

}  // namespace dbload

#endif  // DBLOAD_AGENT_INTERVAL_RECORDER_H_
