#include "common/interval_snapshot.h"

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

}  // namespace dbload
