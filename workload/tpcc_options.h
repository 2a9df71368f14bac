#ifndef DBLOAD_WORKLOAD_TPCC_OPTIONS_H_
#define DBLOAD_WORKLOAD_TPCC_OPTIONS_H_

// The tpcc workload's options (workload/tpcc.h), apart, so that the report can read a run's
// without linking the workload.

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace dbload::tpcc {

struct TpccOptions {
  // The scale: the loaded data's and the terminals' (a run's must match its prepare's).
  int64_t warehouses = 1;
  // Clause 5.2.5's keying time before each transaction and think time after it, for closed
  // loops: a terminal then runs at most about 12.86 New-Orders a minute per warehouse of 10
  // terminals, and the report gives the efficiency against that. Off: no-wait mode.
  bool terminal_waits = false;
  // The foreign keys of clause 1.3 (stock to item and warehouse, district to warehouse, customer
  // to district, history to customer and district, orders to customer, new_order to orders,
  // order_line to orders and stock), added after the tables load: the servers then check every
  // insert against its parent, as a schema with them would. Off (the default, as in most
  // tools): keys and indexes only. A run's must match its prepare's.
  bool foreign_keys = false;
};

// Options `warehouses` (1 … kMaxWarehouses), `terminal_waits` and `foreign_keys` (true, false);
// any other is an error that names it.
inline constexpr int64_t kMaxWarehouses = 100'000;
absl::StatusOr<TpccOptions> ParseTpccOptions(const std::map<std::string, std::string>& options);

}  // namespace dbload::tpcc

#endif  // DBLOAD_WORKLOAD_TPCC_OPTIONS_H_
