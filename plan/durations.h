#ifndef DBLOAD_PLAN_DURATIONS_H_
#define DBLOAD_PLAN_DURATIONS_H_

// Durations as plans, flags and messages write them. On the text alone: the agent and the
// coordinator read and print them without any YAML.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dbload {

// Durations: "250ms", "5s", "1m", "1m30s", "2h", "100us" (or "100µs"), "1500ns", "1.5s"; a bare
// integer means seconds ("30"). A leading '-' gives a negative duration, which callers reject
// where it makes no sense (with a better message than a syntax error would give).
absl::StatusOr<int64_t> ParseDurationNanos(std::string_view duration);

// Renders nanoseconds in the largest unit that divides them exactly ("1500ms", "2h", "-5s"):
// ParseDurationNanos(FormatDurationNanos(x)) == x.
std::string FormatDurationNanos(int64_t nanos);

}  // namespace dbload

#endif  // DBLOAD_PLAN_DURATIONS_H_
