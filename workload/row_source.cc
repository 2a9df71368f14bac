#include "workload/row_source.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "workload/tpcc_data.h"

namespace dbload {

absl::StatusOr<std::unique_ptr<RowSource>> MakeRowSource(const std::string& name, uint64_t seed) {
  const std::string tpcc = absl::StrCat(kTpccWorkloadName, ".");
  if (std::string_view(name).starts_with(tpcc)) {
    if (std::unique_ptr<RowSource> source =
            tpcc::MakeTpccRowSource(std::string_view(name).substr(tpcc.size()), seed)) {
      return source;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("data.builtin_rows: no built-in row source '",
                                                 name,
                                                 "' (a workload built in code names "
                                                 "its own tables' sources, e.g. tpcc.customer)"));
}

}  // namespace dbload
