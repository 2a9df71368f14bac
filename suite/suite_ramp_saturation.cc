#include "suite/suite_ramp_saturation.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

// The key of a database value in ProbeSample.values: "postgresql/NAME" or "mysql/NAME", whichever
// the probe recorded ("" when neither).
// Whether any of the run's probe readings holds `key`.
bool Recorded(const v1::RunReport& report, const std::string& key) {
  for (const v1::ProbeSample& sample : report.probe_samples()) {
    if (sample.values().count(key) > 0) return true;
  }
  return false;
}

std::string DatabaseKey(const v1::RunReport& report, const std::string& name) {
  for (const char* source : {"postgresql", "mysql"}) {
    const std::string key = absl::StrCat(source, "/", name);
    if (Recorded(report, key)) return key;
  }
  return "";
}

// Rows inserted have no common name (the servers count them differently: coordinator/
// db_probe.h), so the column reads each server's own counter: PostgreSQL's tup_inserted, MySQL
// 8's Innodb_rows_inserted, else MariaDB's Handler_write.
std::string RowsInsertedKey(const v1::RunReport& report) {
  for (const char* key :
       {"postgresql/tup_inserted", "mysql/Innodb_rows_inserted", "mysql/Handler_write"}) {
    if (Recorded(report, key)) return key;
  }
  return "";
}

// A counter's increase per second over readings [first, last], reading by reading as
// coordinator/saturation.cc sums it (a reset counts the new value from zero; a smaller dip
// counts nothing until the counter passes its highest reading again).
std::optional<double> CounterRate(const v1::RunReport& report, const std::string& key, size_t first,
                                  size_t last) {
  if (key.empty()) return std::nullopt;
  std::optional<double> previous;
  double first_s = 0, last_s = 0, sum = 0;
  for (size_t i = first; i <= last; ++i) {
    const v1::ProbeSample& sample = report.probe_samples(static_cast<int>(i));
    auto it = sample.values().find(key);
    if (it == sample.values().end()) continue;
    const double value = it->second;
    if (!previous) {
      previous = value;
      first_s = sample.elapsed_s();
      continue;
    }
    last_s = sample.elapsed_s();
    if (value >= *previous) {
      sum += value - *previous;
      previous = value;
    } else if (value < *previous / 2) {  // coordinator/db_probe.h CounterWasReset
      sum += value;
      previous = value;
    }
  }
  if (!previous || !(last_s > first_s)) return std::nullopt;
  return sum / (last_s - first_s);
}

// A gauge's highest reading among those taken in the step: (first, last], or the one reading
// when the span has only one.
std::optional<double> GaugeMax(const v1::RunReport& report, const std::string& key, size_t first,
                               size_t last) {
  if (key.empty()) return std::nullopt;
  std::optional<double> high;
  for (size_t i = last > first ? first + 1 : first; i <= last; ++i) {
    const v1::ProbeSample& sample = report.probe_samples(static_cast<int>(i));
    auto it = sample.values().find(key);
    if (it == sample.values().end()) continue;
    high = high ? std::max(*high, it->second) : it->second;
  }
  return high;
}

}  // namespace

StepSaturation SaturationOver(const v1::RunReport& report, double start_s, double end_s) {
  StepSaturation out;
  const int n = report.probe_samples_size();
  // As coordinator/saturation.cc bounds a stage: the first reading at or after each bound (the
  // newest reading when none is after the end).
  int first = -1, last = -1;
  for (int i = 0; i < n; ++i) {
    if (first < 0 && report.probe_samples(i).elapsed_s() >= start_s) first = i;
    if (last < 0 && report.probe_samples(i).elapsed_s() >= end_s) last = i;
  }
  if (first < 0) return out;
  if (last < 0) last = n - 1;
  const size_t a = static_cast<size_t>(first), b = static_cast<size_t>(last);
  out.readings = static_cast<uint32_t>(b - a + 1);
  out.from_s = report.probe_samples(first).elapsed_s();
  out.to_s = report.probe_samples(last).elapsed_s();
  out.cpu_cores = CounterRate(report, "process/cpu_seconds", a, b);
  out.written_bytes_per_s = CounterRate(report, DatabaseKey(report, "written_bytes"), a, b);
  out.rows_inserted_per_s = CounterRate(report, RowsInsertedKey(report), a, b);
  out.connections = GaugeMax(report, DatabaseKey(report, "connections"), a, b);
  return out;
}

}  // namespace dbload
