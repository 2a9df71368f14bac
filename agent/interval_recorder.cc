#include "agent/interval_recorder.h"

#include <algorithm>
#include <utility>

namespace dbload {

IntervalRecorder::IntervalRecorder(int query_type_count)
    : errors_(query_type_count), retries_(query_type_count), rolled_back_(query_type_count) {
  for (int i = 0; i < query_type_count; ++i) slots_.push_back(std::make_unique<QueryTypeSlot>());
}

void IntervalRecorder::RecordError(int query_type, const db::DbError& error,
                                   uint64_t statements) {
  slots_[query_type]->statements.fetch_add(statements, std::memory_order_relaxed);
  std::lock_guard lock(errors_mu_);
  ++errors_[query_type][{error.error_class, error.code}];
}

void IntervalRecorder::RecordRetry(int query_type, db::RetryCause cause) {
  std::lock_guard lock(errors_mu_);
  ++retries_[query_type].retries[cause];
}

void IntervalRecorder::RecordCommittedAfterTries(int query_type, uint32_t tries) {
  std::lock_guard lock(errors_mu_);
  ++retries_[query_type].committed_by_tries[tries];
}

void IntervalRecorder::RecordFailedAfterRetries(int query_type) {
  std::lock_guard lock(errors_mu_);
  ++retries_[query_type].failed_after_retries;
}

void IntervalRecorder::RecordRolledBack(int query_type) {
  std::lock_guard lock(errors_mu_);
  ++rolled_back_[query_type];
}

void ConnectionClock::Enter(ConnectionState state, Nanos now) {
  const uint32_t sequence = sequence_.load(std::memory_order_relaxed);
  sequence_.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::atomic<Nanos>& total = totals_[state_.load(std::memory_order_relaxed)];
  total.store(total.load(std::memory_order_relaxed) +
                  std::max<Nanos>(0, now - since_.load(std::memory_order_relaxed)),
              std::memory_order_relaxed);
  since_.store(now, std::memory_order_relaxed);
  state_.store(static_cast<uint8_t>(state), std::memory_order_relaxed);
  sequence_.store(sequence + 2, std::memory_order_release);
}

ConnectionClock::Totals ConnectionClock::Read(Nanos now) const {
  Totals totals;
  for (;;) {
    const uint32_t before = sequence_.load(std::memory_order_acquire);
    if (before % 2 != 0) continue;  // the worker is between two stores: a few nanoseconds
    for (int i = 0; i < kStates; ++i) totals[i] = totals_[i].load(std::memory_order_relaxed);
    const uint8_t state = state_.load(std::memory_order_relaxed);
    const Nanos since = since_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence_.load(std::memory_order_relaxed) != before) continue;
    totals[state] += std::max<Nanos>(0, now - since);
    return totals;
  }
}

ConnectionClock& IntervalRecorder::AddConnection(Nanos now) {
  std::lock_guard lock(connections_mu_);
  return connections_.emplace_back(now).clock;
}

void IntervalRecorder::RecordSessionWork(const db::Session& session, SessionWorkSeen& seen) {
  const uint64_t opened = session.connections_opened();
  const uint64_t prepared = session.statements_prepared();
  connections_opened_.fetch_add(opened - seen.connections_opened, std::memory_order_relaxed);
  statements_prepared_.fetch_add(prepared - seen.statements_prepared, std::memory_order_relaxed);
  seen = {.connections_opened = opened, .statements_prepared = prepared};
}

IntervalSnapshot IntervalRecorder::Drain(Nanos now) {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i]->response_time.DrainInto(snapshot.query_types[i].response_time);
    slots_[i]->service_time.DrainInto(snapshot.query_types[i].service_time);
    snapshot.query_types[i].statements =
        slots_[i]->statements.exchange(0, std::memory_order_relaxed);
  }
  dispatch_lag_.DrainInto(snapshot.dispatch_lag);
  queued_lag_.DrainInto(snapshot.schedule_lag);
  snapshot.schedule_lag.Add(snapshot.dispatch_lag);
  connect_time_.DrainInto(snapshot.connect_time);
  snapshot.connections_opened = connections_opened_.exchange(0, std::memory_order_relaxed);
  snapshot.statements_prepared = statements_prepared_.exchange(0, std::memory_order_relaxed);
  {
    std::lock_guard lock(connections_mu_);
    for (Connection& connection : connections_) {
      const ConnectionClock::Totals totals = connection.clock.Read(now);
      ConnectionClock::Totals delta{};
      for (int i = 0; i < ConnectionClock::kStates; ++i) {
        // The worker's clock reading of a change may be a little older than `now`: a state's
        // total then dips below what an earlier drain counted for it, by as much as another
        // state gained. Never count time twice or backwards.
        delta[i] = std::max<Nanos>(0, totals[i] - connection.drained[i]);
        connection.drained[i] = std::max(connection.drained[i], totals[i]);
      }
      ConnectionTime& time = snapshot.connection_time;
      time.in_agent += delta[static_cast<int>(ConnectionState::kInAgent)];
      time.idle += delta[static_cast<int>(ConnectionState::kIdle)];
      time.in_db_call += delta[static_cast<int>(ConnectionState::kInDbCall)];
      time.connecting += delta[static_cast<int>(ConnectionState::kConnecting)];
    }
  }
  std::lock_guard lock(errors_mu_);
  for (size_t i = 0; i < slots_.size(); ++i) {
    snapshot.query_types[i].errors.swap(errors_[i]);
    std::swap(snapshot.query_types[i].retry, retries_[i]);
    snapshot.query_types[i].rolled_back = std::exchange(rolled_back_[i], 0);
  }
  return snapshot;
}

}  // namespace dbload
