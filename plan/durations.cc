#include "plan/durations.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/quote.h"

namespace dbload {

absl::StatusOr<int64_t> ParseDurationNanos(std::string_view duration) {
  const absl::string_view text(duration.data(), duration.size());
  auto syntax_error = [text] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a duration such as 250ms, 5s or 1m30s (units ns, us, ms, s, m, "
                     "h; a bare integer means seconds), got ",
                     Quote(text)));
  };
  auto too_long = [text] {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a duration of at most 2562047h, got ", Quote(text)));
  };
  constexpr int64_t kSecond = 1'000'000'000;
  constexpr unsigned __int128 kLimit = std::numeric_limits<int64_t>::max();
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };

  absl::string_view rest = text;
  const bool negative = !rest.empty() && rest.front() == '-';
  if (negative) rest.remove_prefix(1);
  if (rest.empty()) return syntax_error();
  const bool bare_integer = std::all_of(rest.begin(), rest.end(), is_digit);

  unsigned __int128 total = 0;
  while (!rest.empty()) {
    size_t length = 0;
    while (length < rest.size() && is_digit(rest[length])) ++length;
    if (length == 0) return syntax_error();
    const absl::string_view whole = rest.substr(0, length);
    rest.remove_prefix(length);
    absl::string_view fraction;
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      length = 0;
      while (length < rest.size() && is_digit(rest[length])) ++length;
      if (length == 0) return syntax_error();
      fraction = rest.substr(0, length);
      rest.remove_prefix(length);
    }
    length = 0;
    while (length < rest.size() && !is_digit(rest[length]) && rest[length] != '.') ++length;
    const absl::string_view unit = rest.substr(0, length);
    rest.remove_prefix(length);

    int64_t unit_nanos = 0;
    if (unit.empty() && bare_integer) unit_nanos = kSecond;
    if (unit == "ns") unit_nanos = 1;
    if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") unit_nanos = 1'000;
    if (unit == "ms") unit_nanos = 1'000'000;
    if (unit == "s") unit_nanos = kSecond;
    if (unit == "m") unit_nanos = 60 * kSecond;
    if (unit == "h") unit_nanos = 3600 * kSecond;
    if (unit_nanos == 0) return syntax_error();

    unsigned __int128 whole_value = 0;
    for (char digit : whole) {
      whole_value = whole_value * 10 + static_cast<unsigned>(digit - '0');
      if (whole_value > kLimit) return too_long();
    }
    total += whole_value * static_cast<unsigned __int128>(unit_nanos);
    // 18 fraction digits resolve a nanosecond of an hour; later digits cannot matter.
    unsigned __int128 fraction_value = 0;
    unsigned __int128 scale = 1;
    for (char digit : fraction.substr(0, 18)) {
      fraction_value = fraction_value * 10 + static_cast<unsigned>(digit - '0');
      scale *= 10;
    }
    total += fraction_value * static_cast<unsigned __int128>(unit_nanos) / scale;
    if (total > kLimit) return too_long();
  }
  const int64_t magnitude = static_cast<int64_t>(total);
  return negative ? -magnitude : magnitude;
}

std::string FormatDurationNanos(int64_t nanos) {
  if (nanos == 0) return "0s";
  // The magnitude of INT64_MIN does not fit in int64_t.
  const uint64_t magnitude =
      nanos < 0 ? uint64_t{0} - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  static constexpr std::pair<uint64_t, absl::string_view> kUnits[] = {
      {3'600'000'000'000, "h"}, {60'000'000'000, "m"}, {1'000'000'000, "s"},
      {1'000'000, "ms"},        {1'000, "us"},         {1, "ns"}};
  for (const auto& [unit_nanos, unit] : kUnits) {
    if (magnitude % unit_nanos == 0) {
      return absl::StrCat(nanos < 0 ? "-" : "", magnitude / unit_nanos, unit);
    }
  }
  return absl::StrCat(nanos, "ns");  // not reached: every value is a whole number of ns
}

}  // namespace dbload
