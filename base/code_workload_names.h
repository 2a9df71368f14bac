#ifndef DBLOAD_BASE_CODE_WORKLOAD_NAMES_H_
#define DBLOAD_BASE_CODE_WORKLOAD_NAMES_H_

namespace dbload {

// The names of the workloads built in code (workload/oltp.h, workload/tpcc.h). In base, free of
// dependencies, because the YAML side (dbload_workload_parser, which lets a plan naming one
// through unchanged), the engine (dbload_workload, which builds them), plan validation and the
// reports (tpcc's own checks and figures) must agree on them without linking each other.
inline constexpr char kOltpWorkloadName[] = "oltp";
inline constexpr char kTpccWorkloadName[] = "tpcc";

}  // namespace dbload

#endif  // DBLOAD_BASE_CODE_WORKLOAD_NAMES_H_
