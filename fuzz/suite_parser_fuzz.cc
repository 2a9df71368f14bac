// libFuzzer target for suite files: any bytes must give a Suite or an error status; never a
// crash, an exception, a hang or unbounded memory. A suite that parses is also expanded into its
// runs and each run's plan (at most a few, so that a large expansion stays fast).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "suite/suite_parser.h"
#include "suite/suite_runs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<dbload::v1::Suite> suite = dbload::ParseSuite(input, "fuzz.yaml", {});
  if (!suite.ok()) return 0;
  const std::vector<dbload::v1::SuiteRun> runs = dbload::ExpandSuite(*suite);
  if (runs.size() > dbload::kMaxSuiteRuns) __builtin_trap();  // the parser bounds expansion
  for (size_t i = 0; i < runs.size() && i < 8; ++i) {
    // Every run of a suite the parser accepted has a plan.
    if (!dbload::PlanOfRun(*suite, runs[i]).ok()) __builtin_trap();
  }
  return 0;
}
