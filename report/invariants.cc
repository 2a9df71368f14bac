#include "report/invariants.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace dbload {

std::string DescribeInvariant(const v1::InvariantResult& invariant) {
  const std::string verdict = invariant.holds() ? "holds" : "BROKEN";
  const std::string written =
      invariant.source().empty() ? "" : absl::StrCat(", written at ", invariant.source());
  if (invariant.unchanged()) {
    return absl::StrCat(invariant.name(), ": ", verdict, ", `", invariant.sql(), "` was ",
                        invariant.before(), " before the load and ", invariant.after(),
                        " after (must not change", written, ")");
  }
  return absl::StrCat(invariant.name(), ": ", verdict, ", `", invariant.sql(), "` returned ",
                      invariant.after(), " after the load (must be ", invariant.expect(), written,
                      ")");
}

absl::Status InvariantViolations(const v1::RunReport& report) {
  std::vector<std::string> broken;
  for (const v1::InvariantResult& invariant : report.invariants()) {
    if (!invariant.holds()) broken.push_back(DescribeInvariant(invariant));
  }
  if (broken.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("an invariant of the workload is broken: ", absl::StrJoin(broken, "; ")));
}

}  // namespace dbload
