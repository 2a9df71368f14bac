#include "agent/interval_recorder.h"

namespace dbload {

IntervalRecorder::IntervalRecorder(int query_type_count) : errors_(query_type_count) {
  for (int i = 0; i < query_type_count; ++i) slots_.push_back(std::make_unique<QueryTypeSlot>());
}

void IntervalRecorder::RecordError(int query_type, const db::DbError& error) {
  std::lock_guard lock(errors_mu_);
  ++errors_[query_type][{error.error_class, error.code}];
}

IntervalSnapshot IntervalRecorder::Drain() {
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i]->response_time.DrainInto(snapshot.query_types[i].response_time);
    slots_[i]->service_time.DrainInto(snapshot.query_types[i].service_time);
  }
  dispatch_lag_.DrainInto(snapshot.dispatch_lag);
  queued_lag_.DrainInto(snapshot.schedule_lag);
  snapshot.schedule_lag.Add(snapshot.dispatch_lag);
  std::lock_guard lock(errors_mu_);
  for (size_t i = 0; i < slots_.size(); ++i) snapshot.query_types[i].errors.swap(errors_[i]);
  return snapshot;
}

}  // namespace dbload
