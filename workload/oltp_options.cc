// ParseOltpOptions (oltp.h): a plan's workload_options for oltp, named as sysbench's flags,
// checked and turned into OltpOptions.

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/field_error.h"
#include "workload/oltp.h"

namespace dbload {
namespace {

// "sysbench": the dialect's set (nullopt); "none": nothing; else codes separated by commas, each
// a SQLSTATE or an errno as the server gives it. sysbench's "all" is refused: it would ignore a
// missing table or a syntax error for the whole run.
absl::StatusOr<std::optional<std::vector<std::string>>> ParseIgnoredCodes(
    const std::string& value) {
  const auto error = [&](absl::string_view why) {
    return FieldError("workload_options.ignore_errors",
                      absl::StrCat(why,
                                   " (expected 'sysbench', 'none' or error codes separated by "
                                   "commas, such as '23505,40P01'), got '",
                                   value, "'"));
  };
  using Codes = std::optional<std::vector<std::string>>;
  if (value == "sysbench") return Codes();
  if (value == "none") return Codes(std::vector<std::string>{});
  if (value == "all") return error("'all' is not supported: it would ignore every error");
  std::vector<std::string> codes;
  for (absl::string_view code : absl::StrSplit(value, ',')) {
    code = absl::StripAsciiWhitespace(code);
    // SQLSTATEs are 5 characters of digits and capitals, MySQL errnos 4 or 5 digits.
    constexpr size_t kMaxCodeLength = 5;
    const bool well_formed = !code.empty() && code.size() <= kMaxCodeLength &&
                             std::all_of(code.begin(), code.end(), [](char c) {
                               return absl::ascii_isdigit(c) || absl::ascii_isupper(c);
                             });
    if (!well_formed) return error(absl::StrCat("'", code, "' is not an error code"));
    codes.emplace_back(code);
  }
  return Codes(std::move(codes));
}

}  // namespace

absl::StatusOr<OltpOptions> ParseOltpOptions(const std::map<std::string, std::string>& options) {
  OltpOptions parsed;
  // Statements of one kind per event: 0 leaves the group out, as in sysbench.
  constexpr int64_t kMaxPerEvent = 1'000;
  struct CountOption {
    std::string_view name;
    int OltpOptions::*field;
  };
  static constexpr CountOption kCounts[] = {
      {"point_selects", &OltpOptions::point_selects},
      {"simple_ranges", &OltpOptions::simple_ranges},
      {"sum_ranges", &OltpOptions::sum_ranges},
      {"order_ranges", &OltpOptions::order_ranges},
      {"distinct_ranges", &OltpOptions::distinct_ranges},
      {"index_updates", &OltpOptions::index_updates},
      {"non_index_updates", &OltpOptions::non_index_updates},
      {"delete_inserts", &OltpOptions::delete_inserts},
  };
  for (const auto& option : options) {
    // Named copies: clang does not let lambdas capture structured bindings.
    const std::string& key = option.first;
    const std::string& value = option.second;
    int64_t number = 0;
    const bool numeric = absl::SimpleAtoi(value, &number);
    auto need_range = [&](int64_t min, int64_t max) -> absl::Status {
      if (!numeric || number < min || number > max) {
        return FieldError(
            absl::StrCat("workload_options.", key),
            absl::StrCat("expected an integer from ", min, " to ", max, ", got '", value, "'"));
      }
      return absl::OkStatus();
    };
    auto need_positive = [&](int64_t max) { return need_range(1, max); };
    auto need_bool = [&](bool& out) -> absl::Status {
      if (value != "true" && value != "false") {
        return FieldError(absl::StrCat("workload_options.", key),
                          absl::StrCat("expected 'true' or 'false', got '", value, "'"));
      }
      out = value == "true";
      return absl::OkStatus();
    };
    const auto count =
        std::find_if(std::begin(kCounts), std::end(kCounts),
                     [&](const CountOption& candidate) { return candidate.name == key; });
    absl::Status status;
    if (count != std::end(kCounts)) {
      status = need_range(0, kMaxPerEvent);
      parsed.*(count->field) = static_cast<int>(number);
    } else if (key == "tables") {
      status = need_positive(10'000);
      parsed.tables = static_cast<int>(number);
    } else if (key == "table_size") {
      status = need_positive(int64_t{2'000'000'000});
      parsed.table_size = number;
    } else if (key == "range_size") {
      status = need_positive(int64_t{2'000'000'000});
      parsed.range_size = number;
    } else if (key == "range_selects") {
      status = need_bool(parsed.range_selects);
    } else if (key == "skip_trx") {
      status = need_bool(parsed.skip_trx);
    } else if (key == "rand_type") {
      if (value != "special" && value != "uniform") {
        status = FieldError("workload_options.rand_type",
                            absl::StrCat("expected 'special' or 'uniform', got '", value, "'"));
      }
      parsed.rand_type = value;
    } else if (key == "ignore_errors") {
      absl::StatusOr<std::optional<std::vector<std::string>>> codes = ParseIgnoredCodes(value);
      if (codes.ok()) {
        parsed.ignore_errors = *std::move(codes);
      } else {
        status = codes.status();
      }
    } else if (key == "rand_spec_pct") {
      status = need_positive(100);
      parsed.rand_spec_pct = static_cast<int>(number);
    } else if (key == "rand_spec_res") {
      status = need_positive(99);
      parsed.rand_spec_res = static_cast<int>(number);
    } else if (key == "rand_spec_iter") {
      status = need_positive(1'000);
      parsed.rand_spec_iter = static_cast<int>(number);
    } else {
      status = FieldError(absl::StrCat("workload_options.", key),
                          "unknown option of workload oltp (known: tables, table_size, "
                          "range_size, point_selects, simple_ranges, sum_ranges, order_ranges, "
                          "distinct_ranges, index_updates, non_index_updates, delete_inserts, "
                          "range_selects, skip_trx, rand_type, rand_spec_pct, rand_spec_res, "
                          "rand_spec_iter, ignore_errors)");
    }
    if (!status.ok()) return status;
  }
  return parsed;
}

}  // namespace dbload
