#ifndef DBLOAD_WORKLOAD_LOAD_STATE_H_
#define DBLOAD_WORKLOAD_LOAD_STATE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "db/driver.h"
#include "dbload/v1/workload.pb.h"

namespace dbload {

// How far the loader got with a workload's tables, as kLoadStateTable (loader.h) records it:
// the phases of one table, and the statements that read and write its rows.

// Where a table's preparation got, as its row in kLoadStateTable records it (column phase):
// "loading", "index:K", "after_load:K" (steps before K are done), "analyze", "done".
struct LoadPosition {
  enum class Phase { kLoading, kIndexes, kAfterLoad, kAnalyze, kDone };
  Phase phase = Phase::kLoading;
  int step = 0;
};

// The text of the phase column for `at`, and back; an unknown text is a DataLoss error naming
// the table. Steps past the end of a table's lists settle on the next phase.
std::string PhaseText(LoadPosition at);
absl::StatusOr<LoadPosition> ParsePhase(const v1::Table& table, absl::string_view text);

// The phase after `at`, skipping steps the table does not have.
LoadPosition Following(const v1::Table& table, LoadPosition at);

// An outcome as a status whose message says what was being done: the loader's files' one way
// of reporting a failed statement.
absl::Status StepStatus(const db::ExecOutcome& outcome, absl::string_view doing);

// The statements on kLoadStateTable for one workload. Workload and table names go in as string
// literals of the session's dialect (db::QuoteText).
class LoadStateSql {
 public:
  LoadStateSql(absl::string_view workload, db::Dialect dialect);

  // The table itself, if it is not there yet.
  static std::string CreateTable();
  // One row for `table` (part -1, phase "loading") and one per part, none of them done.
  std::string RecordNewLoad(absl::string_view table, int parts) const;
  // One row, "phase|parts", when the table's load is recorded.
  std::string SelectPhase(absl::string_view table) const;
  std::string SetPhase(absl::string_view table, absl::string_view phase) const;
  // A row "part|rows_done" per part, in part order.
  std::string SelectParts(absl::string_view table) const;
  std::string SetRowsDone(absl::string_view table, int part, int64_t rows_done) const;
  // The workload's tables that have a recorded load, one per row.
  std::string SelectTables() const;
  // Forgets `table`'s load (its row and its parts').
  std::string DeleteTable(absl::string_view table) const;

 private:
  std::string Literal(absl::string_view text) const;
  std::string Where(absl::string_view table) const;

  std::string workload_;  // as a literal
  db::Dialect dialect_;
};

}  // namespace dbload

#endif  // DBLOAD_WORKLOAD_LOAD_STATE_H_
