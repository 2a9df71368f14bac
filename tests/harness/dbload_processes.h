#ifndef DBLOAD_TESTS_HARNESS_DBLOAD_PROCESSES_H_
#define DBLOAD_TESTS_HARNESS_DBLOAD_PROCESSES_H_

#include <chrono>
#include <string>
#include <vector>

#include "tests/harness/child_process.h"

namespace dbload::testing {

// `dbload ARGS...` (the executable of this build) run to its end, killed after `timeout`, so
// that a hung dbload fails its case instead of the whole binary.
ProcessResult RunDbload(std::vector<std::string> args,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

// The address a dbload-coordinator started with `--listen HOST:0` says it listens on: the rest
// of its first line "listening on ADDRESS", waited for up to `timeout`. "" when its first line
// says something else or does not come in time (callers fail with the child's output).
std::string ListeningAddress(Child& coordinator,
                             std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace dbload::testing

#endif  // DBLOAD_TESTS_HARNESS_DBLOAD_PROCESSES_H_
