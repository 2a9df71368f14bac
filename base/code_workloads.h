#ifndef DBLOAD_BASE_CODE_WORKLOADS_H_
#define DBLOAD_BASE_CODE_WORKLOADS_H_

namespace dbload {

// What other components know of the workloads built in code (workload/oltp.h,
// workload/tpcc.h): their names, and tpcc's ceiling. In base, free of dependencies, because the
// YAML side (dbload_workload_parser, which lets a plan naming one through unchanged), the engine
// (dbload_workload, which builds them), plan validation and the reports (tpcc's own checks and
// figures) must agree on them without linking each other.
inline constexpr char kOltpWorkloadName[] = "oltp";
inline constexpr char kTpccWorkloadName[] = "tpcc";
// tpcc's standard mix, the scenario tpmC is defined for (its others run one transaction each).
inline constexpr char kTpccStandardMix[] = "standard";

// The most New-Orders per minute a TPC-C warehouse's 10 terminals can complete with the keying
// and think times of clause 5.2.5 (tpcc's option terminal_waits).
inline constexpr double kTpccMaxTpmCPerWarehouse = 12.86;

}  // namespace dbload

#endif  // DBLOAD_BASE_CODE_WORKLOADS_H_
