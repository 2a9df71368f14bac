#ifndef DBLOAD_WORKLOAD_OLTP_H_
#define DBLOAD_WORKLOAD_OLTP_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/random.h"
#include "workload/workload.h"

namespace dbload {

// sysbench 1.0.20's OLTP tables and defaults (oltp_common.lua), so that results compare.
// Scenarios, one per oltp_*.lua script and with its statements: point_select, read_only,
// read_write, write_only, update_index, update_non_index, delete, insert. One event is one
// transaction, recorded as one query type named after the scenario.
struct OltpOptions {
  int tables = 1;
  int64_t table_size = 10'000;
  // Range queries cover ids [id, id + range_size - 1].
  int64_t range_size = 100;
  // Statements per event of each group (sysbench's --point-selects … --delete-inserts); 0 drops
  // the group. point_select always runs one, whatever point_selects says, as sysbench does.
  int point_selects = 10;
  int simple_ranges = 1;
  int sum_ranges = 1;
  int order_ranges = 1;
  int distinct_ranges = 1;
  int index_updates = 1;
  int non_index_updates = 1;
  int delete_inserts = 1;
  // false drops the four range groups from read_only and read_write (--range-selects).
  bool range_selects = true;
  // true runs read_only, read_write and write_only in autocommit, without BEGIN/COMMIT.
  bool skip_trx = false;
  // --rand-type: "special" (sysbench's default), "uniform".
  std::string rand_type = "special";
  int rand_spec_pct = 1;
  int rand_spec_res = 75;
  int rand_spec_iter = 12;
  // Error codes after which a transaction is rolled back, counted as ignored (per code) and the
  // client goes on, as sysbench does: unset is sysbench's set for the target's dialect
  // (db::IgnoredErrors::SysbenchDefaults: 23505, 40P01, 40001 on PostgreSQL; 1213, 1020, 1205 on
  // MySQL, --mysql-ignore-errors' default); empty ignores nothing (every error keeps its class).
  // Option `ignore_errors`: "sysbench", "none", or codes separated by commas.
  std::optional<std::vector<std::string>> ignore_errors;
};

absl::StatusOr<OltpOptions> ParseOltpOptions(const std::map<std::string, std::string>& options);
std::unique_ptr<Workload> MakeOltpWorkload(OltpOptions options);

// sysbench's "special" distribution: rand_spec_res % of values fall uniformly into the central
// rand_spec_pct % of [low, high] (a hot spot); the rest are roughly gaussian over the whole
// range (a sum of rand_spec_iter uniforms).
int64_t SpecialDistribution(Random& random, int64_t low, int64_t high, const OltpOptions& options);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_OLTP_H_
