#ifndef DBLOAD_WORKLOAD_TPCC_DATA_H_
#define DBLOAD_WORKLOAD_TPCC_DATA_H_

// TPC-C's nine tables (revision 5.11, clause 1.3) and their initial population (clause 4.3.3.1)
// as a data spec for the resumable loader: each table's rows are made in code from their row
// numbers (TableData.builtin_rows "tpcc.<table>", workload/row_source.h), so that a table loads
// in parallel parts, split by warehouse, and resumes where it stopped.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/code_workloads.h"
#include "dbload/v1/workload.pb.h"
#include "workload/row_source.h"
#include "workload/tpcc_random.h"

namespace dbload::tpcc {

// Per warehouse (clause 4.3.3.1); ITEM has kItems in all.
inline constexpr int64_t kItems = 100'000;
inline constexpr int64_t kDistrictsPerWarehouse = 10;
inline constexpr int64_t kCustomersPerDistrict = 3'000;
inline constexpr int64_t kOrdersPerDistrict = 3'000;
inline constexpr int64_t kFirstNewOrder = 2'101;  // orders 2,101 … 3,000 are not delivered

// The C values of every load (clause 2.1.6: a run-time constant, chosen once at random; fixed
// here so that a run knows the C_LAST its load used, for clause 2.1.6.1, without reading it).
inline constexpr NURandConstants kLoadConstants = {
    .last_name = 157, .customer_id = 259, .item_id = 7'911};

// O_OL_CNT of an order, 5 … 15: the same for the order and for its lines, whichever part and
// whichever attempt of a resumed load makes them.
int OrderLineCount(int64_t warehouse, int64_t district, int64_t order);

// The spec of `warehouses` warehouses: the tables in load order, their keys and the two
// secondary indexes (customer by last name, orders by customer), with `foreign_keys` clause
// 1.3's ten foreign keys (each added after its table's key, its parents loaded before it), and
// checks: the consistency conditions (ConsistencyChecks) and what clause 4.3.3.1 fixes beyond
// the row counts.
v1::WorkloadSpec DataSpec(int64_t warehouses, bool foreign_keys = false);

// One of clause 1.3's foreign keys: constraint `name` on `table` (`columns`) to `parent`.
struct ForeignKey {
  std::string table;
  std::string name;
  std::string columns;
  std::string parent;
  std::string parent_columns;
};
// The ten, in the order DataSpec adds them.
std::vector<ForeignKey> ForeignKeys();

// The specification's consistency conditions 1–4 (clause 3.3.2.1–3.3.2.4), each a query that
// counts the warehouses or districts violating it (0 when it holds): after loading (DataSpec's
// checks) and after a run.
std::vector<v1::Check> ConsistencyChecks();

// The source of table `table` ("customer" for "tpcc.customer"); null for a name it lacks.
std::unique_ptr<RowSource> MakeTpccRowSource(std::string_view table, uint64_t seed);

}  // namespace dbload::tpcc

#endif  // DBLOAD_WORKLOAD_TPCC_DATA_H_
