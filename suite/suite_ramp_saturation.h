#ifndef DBLOAD_SUITE_SUITE_RAMP_SATURATION_H_
#define DBLOAD_SUITE_SUITE_RAMP_SATURATION_H_

// The database's saturation over one step of a knee search (suite_ramp.h), from the probe
// readings a run report holds: its processes' CPU, connections, disk writes and rows inserted,
// summed reading by reading as the run report's stages are (coordinator/saturation.cc).

#include <cstdint>
#include <optional>

#include "dbload/v1/report.pb.h"

namespace dbload {

// The database's saturation over one step's seconds, from the run's probe readings (absent:
// the probe recorded no such value on this server).
struct StepSaturation {
  std::optional<double> cpu_cores;            // process/cpu_seconds per second (1 = one core)
  std::optional<double> connections;          // the highest connections reading in the step
  std::optional<double> written_bytes_per_s;  // SOURCE/written_bytes per second
  std::optional<double> rows_inserted_per_s;  // SOURCE/rows_inserted per second
  uint32_t readings = 0;  // probe readings the counters rest on (first and last included)
  double from_s = 0;      // the readings' span, on the run's clock
  double to_s = 0;
};

// The saturation over [start_s, end_s] of the run's clock: from the first reading at or after
// start_s to the first at or after end_s (the newest reading when none is after the end). No
// readings (readings == 0) when none is at or after start_s.
StepSaturation SaturationOver(const dbload::v1::RunReport& report, double start_s, double end_s);

}  // namespace dbload

#endif  // DBLOAD_SUITE_SUITE_RAMP_SATURATION_H_
