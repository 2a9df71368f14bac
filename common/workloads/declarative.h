#ifndef DBLOAD_COMMON_WORKLOADS_DECLARATIVE_H_
#define DBLOAD_COMMON_WORKLOADS_DECLARATIVE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/workload.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// A workload written in YAML (a WorkloadSpec, see common/workload_parser.h): its scenarios run
// on generic workers that bind generated parameters to prepared statements, and its data is
// loaded by the resumable loader below.
std::unique_ptr<Workload> MakeDeclarativeWorkload(dbload::v1::WorkloadSpec spec);

// The SQL text of `sql` for `dialect` (its own text, else `any`), or an error naming `what`.
absl::StatusOr<std::string> SqlFor(const dbload::v1::DialectSql& sql, db::Dialect dialect,
                                   std::string_view what);

// The table where the loader keeps, per workload and table, how far loading got. Its presence
// is also how dbload knows which tables it created: prepare refuses to write into a table that
// has no row here, and cleanup drops only tables that have one.
inline constexpr char kLoadStateTable[] = "dbload_load_state";

// Loads the spec's tables on `session`: creates each table, fills it in batches (each batch
// commits together with its watermark in kLoadStateTable, so an interrupted load resumes at
// the exact row), builds the indexes, runs after_load, then validates row counts and the
// spec's checks. Tables already complete are skipped.
absl::Status LoadWorkloadData(const dbload::v1::WorkloadSpec& spec, db::Session& session,
                              db::Dialect dialect,
                              const std::function<void(const PrepareProgress&)>& progress);

// Row counts and the spec's checks; the error lists every failed check.
absl::Status ValidateWorkloadData(const dbload::v1::WorkloadSpec& spec, db::Session& session,
                                  db::Dialect dialect);

// Drops the spec's tables that kLoadStateTable says dbload created, children first.
absl::Status DropWorkloadData(const dbload::v1::WorkloadSpec& spec, db::Session& session);

}  // namespace dbload

#endif  // DBLOAD_COMMON_WORKLOADS_DECLARATIVE_H_
