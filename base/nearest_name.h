#ifndef DBLOAD_BASE_NEAREST_NAME_H_
#define DBLOAD_BASE_NEAREST_NAME_H_

// "Did you mean": the one known name close enough to a misspelt one (a field, a driver, an
// arrival), for the plan's checks on the proto and for the YAML readers of plans and suites.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace dbload {

// The candidate close enough to `name` to be what was meant, if exactly one is closest.
// Case-insensitive in `name`; candidates are lower case.
std::optional<absl::string_view> Nearest(absl::string_view name,
                                         const std::vector<absl::string_view>& candidates);

// As above, for callers that hold std::string names.
std::optional<std::string> NearestName(std::string_view name,
                                       const std::vector<std::string>& candidates);

}  // namespace dbload

#endif  // DBLOAD_BASE_NEAREST_NAME_H_
