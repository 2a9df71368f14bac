// libFuzzer target for workload files: any bytes must give a WorkloadSpec or an error status;
// never a crash, an exception, a hang or unbounded memory. A spec that parses is also turned
// into statements for both dialects and a worker (the engine's reading of what the parser
// accepted).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "workload/workload_parser.h"
#include "workload/declarative.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<dbload::v1::WorkloadSpec> spec = dbload::ParseWorkload(input, "fuzz.yaml", {});
  if (!spec.ok()) return 0;
  std::unique_ptr<dbload::Workload> workload = dbload::MakeDeclarativeWorkload(*spec);
  for (const std::string& name : workload->ScenarioNames()) {
    absl::StatusOr<std::unique_ptr<dbload::Scenario>> scenario = workload->MakeScenario(name);
    if (!scenario.ok()) __builtin_trap();  // listed scenarios must exist
    (void)(*scenario)->Statements(dbload::db::Dialect::kPostgreSql);
    (void)(*scenario)->Statements(dbload::db::Dialect::kMySql);
    std::unique_ptr<dbload::ScenarioWorker> worker = (*scenario)->NewWorker({.run_seed = 1});
    for (int i = 0; i < 4; ++i) (void)worker->NextQueryType();
  }
  return 0;
}
