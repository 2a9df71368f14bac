#include "report/row_changes.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dbload {

absl::Status RowChangesDisagreement(const v1::RunReport& report) {
  std::vector<std::string> mismatches;
  for (const v1::RowChange& change : report.row_changes()) {
    const int64_t counted = change.after() - change.before();
    if (counted == change.expected()) continue;
    mismatches.push_back(
        absl::StrFormat("%s changed by %+d rows, the executed transactions say %+d", change.table(),
                        counted, change.expected()));
  }
  if (mismatches.empty()) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrCat("the database disagrees with the report: ", absl::StrJoin(mismatches, "; ")));
}

}  // namespace dbload
