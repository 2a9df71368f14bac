#ifndef DBLOAD_WORKLOAD_PARAM_GENERATOR_H_
#define DBLOAD_WORKLOAD_PARAM_GENERATOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "db/driver.h"
#include "base/random.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// Where a generator stands in the run: its worker's slot (for run-unique sequences) and its
// own random stream.
struct GeneratorPlace {
  uint64_t seed = 0;        // already mixed for this worker and this parameter
  uint32_t slot_index = 0;  // 0 … slot_count-1 across the whole run (all agents)
  uint32_t slot_count = 1;
};

// One call: what varies from call to call besides the generator's own state.
struct GeneratorCall {
  int64_t row = 0;  // while loading: the row number (1 … rows); 0 in scenarios
};

// Produces the values of one bound parameter (or one loaded column). One instance per worker
// and parameter, so nothing here is shared between threads. Next() allocates nothing once
// `text` has grown to the longest value.
class ParamGenerator {
 public:
  virtual ~ParamGenerator() = default;
  // The next value. Text values are written into `text`, which the caller owns and keeps
  // alive (and untouched) until the value has been used; the returned Value points into it.
  // Fixed text (`constant`, `choice`) points into the generator itself instead, which saves
  // the copy and stays valid as long as the generator does.
  virtual db::Value Next(const GeneratorCall& call, std::string& text) = 0;
};

// Builds a generator from its spec. Kinds that need the engine's state (`captured`, `sample`)
// are not made here: they are an InvalidArgument error naming the kind. Specs that cannot
// work (min > max, an empty choice, a negative stddev …) are InvalidArgument errors too, but
// the workload parser checks those first with the file's line numbers.
absl::StatusOr<std::unique_ptr<ParamGenerator>> MakeParamGenerator(
    const dbload::v1::Generator& spec, const GeneratorPlace& place);

// The spec's problem, if any, as "uniform.max: must be >= min (1), got 0": a field path
// relative to the generator and what is wrong. OK for the engine's kinds too.
absl::Status CheckGeneratorSpec(const dbload::v1::Generator& spec);

// sysbench 1.0.20's "special" distribution over [low, high] (its rand_special, with int64
// instead of uint32): res % of the draws fall uniformly into the central pct % of the range (a
// hot spot), the rest are roughly gaussian over the whole range (a sum of `iter` uniforms).
// Callers pass pct in 1 … 100, res in 0 … 99 and iter >= 1.
int64_t SysbenchSpecial(Random& random, int64_t low, int64_t high, int pct, int res, int iter);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_PARAM_GENERATOR_H_
