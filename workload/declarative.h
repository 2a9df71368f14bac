#ifndef DBLOAD_WORKLOAD_DECLARATIVE_H_
#define DBLOAD_WORKLOAD_DECLARATIVE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "workload/workload.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// A workload written in YAML (a WorkloadSpec, see workload/workload_parser.h): its scenarios run
// on generic workers that bind generated parameters to prepared statements; its data is loaded
// by workload/loader.
std::unique_ptr<Workload> MakeDeclarativeWorkload(dbload::v1::WorkloadSpec spec);

// A query type's retry policy: its own `retry` if it has one (max_tries set), else its
// scenario's; `on` empty means every cause.
RetryPolicy RetryPolicyOf(const dbload::v1::Retry& query_type, const dbload::v1::Retry& scenario);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_DECLARATIVE_H_
