#ifndef DBLOAD_CLI_COMMAND_PREPARE_H_
#define DBLOAD_CLI_COMMAND_PREPARE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "base/clock.h"
#include "cli/cli_common.h"

// What `dbload prepare` and `dbload cleanup` do to a loaded plan, for the suite's runs too.
namespace dbload::cli {

// Drops the tables the plan's prepare created; the exit code (the failure is printed).
int CleanupData(LoadedPlan& loaded, const std::string& source);

// Prepares the plan's data in `parallel` parts; `load_parts` (may be null) has agents load the
// parts between the set-up here and the rest (indexes, checks), and returns its exit code.
int PrepareData(LoadedPlan& loaded, const std::string& source, Clock& clock, uint32_t parallel,
                const std::function<int()>& load_parts);

}  // namespace dbload::cli

#endif  // DBLOAD_CLI_COMMAND_PREPARE_H_
