#include "tests/harness/dbload_processes.h"

#include <string_view>
#include <utility>

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined (the path of the dbload executable)"
#endif

namespace dbload::testing {

ProcessResult RunDbload(std::vector<std::string> args, std::chrono::milliseconds timeout) {
  args.insert(args.begin(), DBLOAD_BINARY);
  return RunProcess(args, timeout);
}

std::string ListeningAddress(Child& coordinator, std::chrono::milliseconds timeout) {
  coordinator.PumpUntil([](const std::string& out) { return out.find('\n') != std::string::npos; },
                        timeout);
  const std::string& out = coordinator.out();
  const size_t end = out.find('\n');
  if (end == std::string::npos) return "";
  constexpr std::string_view kPrefix = "listening on ";
  const std::string_view first_line = std::string_view(out).substr(0, end);
  if (!first_line.starts_with(kPrefix)) return "";
  return std::string(first_line.substr(kPrefix.size()));
}

}  // namespace dbload::testing
