#ifndef DBLOAD_CLI_COMMANDS_H_
#define DBLOAD_CLI_COMMANDS_H_

#include <string>
#include <vector>

// The commands of `dbload`, one file each (or two closely related ones): each takes the
// arguments after its name, prints its output and messages itself, and returns the exit code
// (process/exit_codes.h). dbload_main.cc dispatches to them.
namespace dbload::cli {

using Args = std::vector<std::string>;

int RunCommand(const Args& args);                    // command_run.cc
int SubmitCommand(const Args& args);                 // command_run.cc
int PrepareCommand(const Args& args, bool cleanup);  // command_prepare.cc: prepare, cleanup
int WatchCommand(const Args& args);                  // command_remote.cc
int StopCommand(const Args& args);                   // command_remote.cc
int AgentsCommand(const Args& args);                 // command_remote.cc
int ReportCommand(const Args& args);                 // command_report.cc
int CompareCommand(const Args& args);                // command_report.cc
int SuiteCommand(const Args& args);                  // command_suite.cc: suite run|check|...
int SuiteReportCommand(const Args& args);            // command_suite.cc
int SuiteListCommand();                              // command_suite.cc
int WorkloadsCommand();                              // command_workloads.cc
int WorkloadCommand(const Args& args);               // command_workloads.cc: workload check

}  // namespace dbload::cli

#endif  // DBLOAD_CLI_COMMANDS_H_
