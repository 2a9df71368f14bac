#ifndef DBLOAD_CLI_USAGE_H_
#define DBLOAD_CLI_USAGE_H_

#include <string>
#include <vector>

namespace dbload::cli {

// `dbload --help`: every command, its arguments, --allow-target, the exit codes.
extern const char kUsage[];

// The usage of one command, cut from kUsage so that `dbload COMMAND --help` can never disagree
// with `dbload --help`. `words`: the command and what may follow it (`suite run`); empty when
// no entry names the command.
std::string CommandUsage(const std::vector<std::string>& words);

}  // namespace dbload::cli

#endif  // DBLOAD_CLI_USAGE_H_
