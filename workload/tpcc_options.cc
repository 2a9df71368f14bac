#include "workload/tpcc_options.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/field_error.h"

namespace dbload::tpcc {

absl::StatusOr<TpccOptions> ParseTpccOptions(const std::map<std::string, std::string>& options) {
  TpccOptions parsed;
  for (const auto& [key, value] : options) {
    if (key == "terminal_waits" || key == "foreign_keys") {
      if (value != "true" && value != "false") {
        return FieldError(absl::StrCat("workload_options.", key),
                          absl::StrCat("expected 'true' or 'false', got '", value, "'"));
      }
      (key == "terminal_waits" ? parsed.terminal_waits : parsed.foreign_keys) = value == "true";
      continue;
    }
    if (key != "warehouses") {
      return FieldError(
          absl::StrCat("workload_options.", key),
          "unknown option of workload tpcc (known: warehouses, terminal_waits, foreign_keys)");
    }
    if (!absl::SimpleAtoi(value, &parsed.warehouses) || parsed.warehouses < 1 ||
        parsed.warehouses > kMaxWarehouses) {
      return FieldError(
          "workload_options.warehouses",
          absl::StrCat("expected an integer from 1 to ", kMaxWarehouses, ", got '", value, "'"));
    }
  }
  return parsed;
}

}  // namespace dbload::tpcc
