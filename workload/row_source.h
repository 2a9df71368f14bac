#ifndef DBLOAD_WORKLOAD_ROW_SOURCE_H_
#define DBLOAD_WORKLOAD_ROW_SOURCE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "db/driver.h"

namespace dbload {

// The rows of a table of a workload built in code (TableData.builtin_rows), made from their row
// numbers: for tables whose columns depend on each other (a district's customers, an order's
// lines) beyond what independent column generators say. The loader makes one per part and
// asks for its rows in order.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual const std::vector<std::string>& columns() const = 0;
  // Row `row` (1 … the table's rows), one value per column into `values`; text values point
  // into `texts` (as many strings), which the caller keeps until it has sent the row.
  virtual void Row(int64_t row, std::span<db::Value> values, std::span<std::string> texts) = 0;
};

// The source named `name` ("tpcc.customer"), its random values seeded by `seed` (the loader's,
// per part); an error names the unknown source.
absl::StatusOr<std::unique_ptr<RowSource>> MakeRowSource(const std::string& name, uint64_t seed);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_ROW_SOURCE_H_
