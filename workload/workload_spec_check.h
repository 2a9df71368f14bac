#ifndef DBLOAD_WORKLOAD_WORKLOAD_SPEC_CHECK_H_
#define DBLOAD_WORKLOAD_WORKLOAD_SPEC_CHECK_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// The workload parser's second half: what a WorkloadSpec read from YAML must hold (plain names,
// SQL for every step, placeholders matching params, generator specs, captures read after they
// are made, the plan's limits), checked after conversion so that every rule sees the whole
// spec. Internal to dbload_workload_parser.

// "tables.0" and "name" → "tables.0.name"; "" and "name" → "name".
inline std::string JoinPath(absl::string_view parent, absl::string_view key) {
  return parent.empty() ? std::string(key) : absl::StrCat(parent, ".", key);
}

// An InvalidArgument error at the file position the field `path` was read from.
using ErrorAtPath = std::function<absl::Status(const std::string& path, absl::string_view message)>;

// Checks `spec` and fills in what its defaults leave open (a table's load batch); the first
// problem comes back through `error_at`.
absl::Status CheckWorkloadSpec(v1::WorkloadSpec& spec, const ErrorAtPath& error_at);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_WORKLOAD_SPEC_CHECK_H_
