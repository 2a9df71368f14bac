#include "agent/interval_recorder.h"

namespace dbload {

uint64_t QueryTypeInterval::ErrorCount() const {
  uint64_t total = 0;
  for (const auto& [key, count] : errors) total += count;
  return total;
}

uint64_t IntervalSnapshot::Executed() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.response_time.TotalCount();
  return total;
}

uint64_t IntervalSnapshot::Errors() const {
  uint64_t total = 0;
  for (const auto& q : query_types) total += q.ErrorCount();
  return total;
}

void IntervalSnapshot::Add(const IntervalSnapshot& other) {
  if (query_types.size() < other.query_types.size()) query_types.resize(other.query_types.size());
  for (size_t i = 0; i < other.query_types.size(); ++i) {
    query_types[i].response_time.Add(other.query_types[i].response_time);
    query_types[i].service_time.Add(other.query_types[i].service_time);
    for (const auto& [key, count] : other.query_types[i].errors) query_types[i].errors[key] += count;
  }
  schedule_lag.Add(other.schedule_lag);
}

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
  schedule_lag_.DrainInto(snapshot.schedule_lag);
  std::lock_guard lock(errors_mu_);
  for (size_t i = 0; i < slots_.size(); ++i) snapshot.query_types[i].errors.swap(errors_[i]);
  return snapshot;
}

}  // namespace dbload
