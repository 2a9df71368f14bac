#ifndef DBLOAD_BASE_BOUNDED_FILE_H_
#define DBLOAD_BASE_BOUNDED_FILE_H_

// Reading the small files a user names (plans, suites, a target's password file): bounded, so
// that a mistaken path (/dev/zero, a huge log) costs nothing, with errno-based messages that
// never include the content.

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace dbload {

// Reads at most `max_bytes + 1` bytes, so that the caller can tell "too large" from "exactly
// at the limit" without reading a huge (or endless) file whole. Errors name `what` and the path:
// "cannot read plan file /x.yaml: No such file or directory".
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, size_t max_bytes,
                                            std::string_view what);

}  // namespace dbload

#endif  // DBLOAD_BASE_BOUNDED_FILE_H_
