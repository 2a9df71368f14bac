#ifndef DBLOAD_WORKLOAD_OLTP_NAME_H_
#define DBLOAD_WORKLOAD_OLTP_NAME_H_

namespace dbload {

// The one workload built in code (workload/oltp.h). Its own header, free of dependencies, because
// the YAML side (dbload_workload_parser, which lets a plan naming it through unchanged) and the
// engine (dbload_workload, which builds it) must agree on it without linking each other.
inline constexpr char kOltpWorkloadName[] = "oltp";

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_OLTP_NAME_H_
