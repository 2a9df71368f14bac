// libFuzzer target for the plan parser: any bytes must give a Plan or an error status; never a
// crash, an exception, a hang or unbounded memory. Overrides are fuzzed too: the first line of
// the input, when it starts with "--set ", is split on spaces into overrides.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/durations.h"
#include "plan/plan_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  // Whole input as a plan.
  (void)dbload::ParsePlan(input, "fuzz.yaml");

  // "--set a=b c=d\n<plan>": exercises the override path editing on the same tree.
  constexpr std::string_view kPrefix = "--set ";
  if (input.substr(0, kPrefix.size()) == kPrefix) {
    const size_t line_end = input.find('\n');
    std::string_view line = input.substr(kPrefix.size(), line_end == std::string_view::npos
                                                             ? std::string_view::npos
                                                             : line_end - kPrefix.size());
    std::vector<std::string> overrides;
    while (!line.empty()) {
      const size_t space = line.find(' ');
      overrides.emplace_back(line.substr(0, space));
      if (space == std::string_view::npos) break;
      line.remove_prefix(space + 1);
    }
    const std::string_view plan =
        line_end == std::string_view::npos ? std::string_view() : input.substr(line_end + 1);
    (void)dbload::ParsePlan(plan, "fuzz.yaml", overrides);
  }

  // The duration grammar on its own, and its inverse.
  if (size <= 64) {
    absl::StatusOr<int64_t> nanos = dbload::ParseDurationNanos(input);
    if (nanos.ok()) {
      absl::StatusOr<int64_t> again =
          dbload::ParseDurationNanos(dbload::FormatDurationNanos(*nanos));
      if (!again.ok() || *again != *nanos) __builtin_trap();
    }
  }
  return 0;
}
