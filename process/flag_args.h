#ifndef DBLOAD_PROCESS_FLAG_ARGS_H_
#define DBLOAD_PROCESS_FLAG_ARGS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace dbload {

// One command-line argument of the three binaries, which all take `--name value` and
// `--name=value` alike: split at its first '='.
struct FlagArg {
  std::string name;                  // "--name" (the whole argument when it has no '=')
  std::optional<std::string> value;  // what follows '=', when given that way
};

FlagArg SplitFlagArg(std::string_view arg);

// The value of `flag`: the one after '=', or else the next argument (args[i + 1], advancing
// `i`). Without either: InvalidArgument "NAME needs a value" (callers prefix their own name).
absl::StatusOr<std::string> TakeFlagValue(const FlagArg& flag, const std::vector<std::string>& args,
                                          size_t& i);

}  // namespace dbload

#endif  // DBLOAD_PROCESS_FLAG_ARGS_H_
