#ifndef DBLOAD_WORKLOAD_LOADER_H_
#define DBLOAD_WORKLOAD_LOADER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "db/driver.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// What `dbload prepare` does with a workload's tables (WorkloadSpec.tables and .checks), for
// every workload: the YAML ones and oltp alike.

struct PrepareProgress {
  std::string table;
  uint64_t rows_done = 0;  // over all parts of the table
  uint64_t rows_total = 0;
  std::string note;  // instead of rows: something the user should know (free space, resuming)
};
using ProgressCallback = std::function<void(const PrepareProgress&)>;

struct LoadOptions {
  // Connections loading at once. Each table's rows are split into this many contiguous parts,
  // each loaded on its own connection; a resumed load keeps the split it started with.
  int parallel = 1;
  // Loading split across agents: one side sets up (records the parts and creates the tables),
  // each agent then loads its parts, and a last kAll finds the parts done and builds the
  // indexes and validates.
  enum class Stage {
    kAll,         // everything, on this machine
    kSetUpOnly,   // record the load and its `parallel` parts, create the tables; load nothing
    kPartsOnly,   // load parts first_part … first_part + part_count - 1 of each table, only
  };
  Stage stage = Stage::kAll;
  int first_part = 0;
  int part_count = 0;
  // Asked between batches: true stops the load (what was committed stays; a rerun resumes).
  std::function<bool()> should_stop;
};
inline constexpr int kMaxLoadParallel = 64;

// The table where the loader keeps how far loading got: per workload and table one row for the
// table (part -1: its phase) and one per part (the rows that part has committed). Its presence
// is also how dbload knows which tables it created: loading refuses to write into a table that
// has no row here, and dropping removes only tables that have one.
inline constexpr char kLoadStateTable[] = "dbload_load_state";

// Creates each table, fills it in batches (each batch commits together with its part's
// watermark, so an interrupted load resumes at the exact row with no duplicate and no gap),
// builds the indexes, runs after_load, vacuums and analyzes, then validates row counts and the
// spec's checks. Every step is recorded in kLoadStateTable as it completes (on PostgreSQL in
// the step's own transaction), so a prepare killed at any instant resumes where it was; a lock
// per workload and database makes a resumed prepare wait until the server has finished what
// the killed one left running. Tables already complete are skipped. Progress may be called
// from several threads, never at once.
absl::Status LoadWorkloadData(const dbload::v1::WorkloadSpec& spec, db::Driver& driver,
                              const LoadOptions& options, const ProgressCallback& progress);

// Fault injection for tests: with DBLOAD_TEST_KILL_AT=POINT in its environment, the process
// raises SIGKILL on itself (after a line on stderr) when the loader reaches POINT, so that a
// test can kill prepare at an exact step. Nothing sets it outside tests; unset, it costs one
// getenv. POINT is one of (T a table, K a step of its list from 0, N a batch from 1):
//   create:T:before|after       the table's load recorded, CREATE TABLE not run | run
//   load:T:N                    after this process committed its N-th batch of T
//   load:T:end                  every row committed, the index phase not yet recorded
//   index:T:K:before|after      index step K not run | run, its completion not yet recorded
//   after_load:T:K:before|after the same for after_load step K
//   analyze:T:before|after      VACUUM (ANALYZE) / ANALYZE TABLE not run | run, not recorded
//   check:before|after          the checks not run | passed
inline constexpr char kTestKillAtVariable[] = "DBLOAD_TEST_KILL_AT";

// Row counts and the spec's checks; the error lists every failed check.
absl::Status ValidateWorkloadData(const dbload::v1::WorkloadSpec& spec, db::Session& session,
                                  db::Dialect dialect);

// Drops the spec's tables that kLoadStateTable says dbload created, children first. `dialect`
// is the session's (the names go into kLoadStateTable's statements as its literals).
absl::Status DropWorkloadData(const dbload::v1::WorkloadSpec& spec, db::Session& session,
                              db::Dialect dialect);

// The SQL text of `sql` for `dialect` (its own text, else `any`), or an error naming `what`.
absl::StatusOr<std::string> SqlFor(const dbload::v1::DialectSql& sql, db::Dialect dialect,
                                   std::string_view what);

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_LOADER_H_
