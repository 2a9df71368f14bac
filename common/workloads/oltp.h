#ifndef DBLOAD_COMMON_WORKLOADS_OLTP_H_
#define DBLOAD_COMMON_WORKLOADS_OLTP_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/random.h"
#include "common/workload.h"

namespace dbload {

// sysbench 1.0.20's OLTP tables and defaults (oltp_common.lua), so that results compare.
struct OltpOptions {
  int tables = 1;
  int64_t table_size = 10'000;
  // --rand-type: "special" (sysbench's default), "uniform".
  std::string rand_type = "special";
  int rand_spec_pct = 1;
  int rand_spec_res = 75;
  int rand_spec_iter = 12;
};

absl::StatusOr<OltpOptions> ParseOltpOptions(const std::map<std::string, std::string>& options);
std::unique_ptr<Workload> MakeOltpWorkload(OltpOptions options);

// sysbench's "special" distribution: rand_spec_res % of values fall uniformly into the central
// rand_spec_pct % of [low, high] (a hot spot); the rest are roughly gaussian over the whole
// range (a sum of rand_spec_iter uniforms).
int64_t SpecialDistribution(Random& random, int64_t low, int64_t high, const OltpOptions& options);

}  // namespace dbload

#endif  // DBLOAD_COMMON_WORKLOADS_OLTP_H_
