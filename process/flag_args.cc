#include "process/flag_args.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dbload {

FlagArg SplitFlagArg(std::string_view arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string_view::npos) return {.name = std::string(arg)};
  return {.name = std::string(arg.substr(0, eq)), .value = std::string(arg.substr(eq + 1))};
}

absl::StatusOr<std::string> TakeFlagValue(const FlagArg& flag, const std::vector<std::string>& args,
                                          size_t& i) {
  if (flag.value.has_value()) return *flag.value;
  if (i + 1 >= args.size()) {
    return absl::InvalidArgumentError(absl::StrCat(flag.name, " needs a value"));
  }
  return args[++i];
}

}  // namespace dbload
