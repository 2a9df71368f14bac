// The `dbload` command: the table of its commands and the dispatch to them (one file each, in
// commands.h). Subcommands parse their own arguments; every failure is reported as one line
// naming what was wrong and where, and the exit code says what happened:
// 0 success, 1 a run that ended with a fatal database error, 2 bad input or set-up failure,
// 3 aborted by the plan's abort rules, 4 degraded (the run finished but lost an agent before its
// final report; a suite with a degraded run and nothing worse), 5 an invariant of the workload
// broken, 130 interrupted.
#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "process/exit_codes.h"

namespace dbload::cli {
namespace {

// `dbload NAME ARGS...` runs the command of NAME with ARGS; kUsage describes them.
constexpr std::pair<std::string_view, int (*)(const Args&)> kCommands[] = {
    {"run", RunCommand},
    {"prepare", [](const Args& args) { return PrepareCommand(args, /*cleanup=*/false); }},
    {"cleanup", [](const Args& args) { return PrepareCommand(args, /*cleanup=*/true); }},
    {"report", ReportCommand},
    {"compare", CompareCommand},
    {"submit", SubmitCommand},
    {"watch", WatchCommand},
    {"stop", StopCommand},
    {"agents", AgentsCommand},
    {"workloads", [](const Args&) { return WorkloadsCommand(); }},
    {"suite", SuiteCommand},
    {"suites", [](const Args&) { return SuiteListCommand(); }},
    {"workload", WorkloadCommand},
};

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  // --help or -h anywhere after a command asks for that command's usage, whatever else is given.
  if (std::find_if(args.begin(), args.end(),
                   [](const std::string& arg) { return arg == "--help" || arg == "-h"; }) !=
          args.end() ||
      (command == "help" && !args.empty())) {
    std::vector<std::string> words;
    if (command != "help") words.push_back(command);
    for (const std::string& arg : args) {
      if (words.size() == 2 || absl::StartsWith(arg, "-")) break;
      words.push_back(arg);
    }
    const std::string usage = words.empty() ? "" : CommandUsage(words);
    if (usage.empty()) {
      std::cerr << "dbload: unknown command '" << (words.empty() ? command : words[0]) << "'\n\n"
                << kUsage;
      return kExitUsage;
    }
    std::cout << usage;
    return kExitOk;
  }
  for (const auto& [name, run] : kCommands) {
    if (command == name) return run(args);
  }
  if (command == "version" || command == "--version") {
    std::cout << "dbload " << DBLOAD_VERSION_STRING << "\n";
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return kExitOk;
  }
  std::cerr << "dbload: unknown command '" << command << "'\n\n" << kUsage;
  return kExitUsage;
}

}  // namespace
}  // namespace dbload::cli

int main(int argc, char** argv) { return dbload::cli::Main(argc, argv); }
