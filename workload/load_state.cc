#include "workload/load_state.h"

#include <charconv>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "db/dialect_sql.h"
#include "workload/loader.h"

namespace dbload {
namespace {

using Phase = LoadPosition::Phase;

// Past the steps a list does not have (a table without indexes, or an "index:N" written by a
// dbload that ran after_load under that phase).
LoadPosition Settled(const v1::Table& table, LoadPosition at) {
  if (at.phase == Phase::kIndexes && at.step >= table.indexes_size()) {
    at = {Phase::kAfterLoad, 0};
  }
  if (at.phase == Phase::kAfterLoad && at.step >= table.after_load_size()) {
    at = {Phase::kAnalyze, 0};
  }
  return at;
}

}  // namespace

absl::Status StepStatus(const db::ExecOutcome& outcome, absl::string_view doing) {
  if (outcome.ok()) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(doing, ": ", outcome.error->message, " [", outcome.error->code, "]"));
}

std::string PhaseText(LoadPosition at) {
  switch (at.phase) {
    case Phase::kLoading:
      return "loading";
    case Phase::kIndexes:
      return absl::StrCat("index:", at.step);
    case Phase::kAfterLoad:
      return absl::StrCat("after_load:", at.step);
    case Phase::kAnalyze:
      return "analyze";
    case Phase::kDone:
      return "done";
  }
  return "done";
}

absl::StatusOr<LoadPosition> ParsePhase(const v1::Table& table, absl::string_view text) {
  if (text == "loading") return LoadPosition{Phase::kLoading, 0};
  if (text == "analyze") return LoadPosition{Phase::kAnalyze, 0};
  if (text == "done") return LoadPosition{Phase::kDone, 0};
  for (auto [prefix, phase] :
       {std::pair{"index:", Phase::kIndexes}, std::pair{"after_load:", Phase::kAfterLoad}}) {
    int step = 0;
    if (absl::ConsumePrefix(&text, prefix) &&
        std::from_chars(text.data(), text.data() + text.size(), step).ec == std::errc() &&
        step >= 0) {
      return Settled(table, {phase, step});
    }
  }
  return absl::DataLossError(absl::StrCat(kLoadStateTable, " records an unknown phase '", text,
                                          "' for ", table.name(),
                                          "; run `dbload cleanup` and prepare again"));
}

LoadPosition Following(const v1::Table& table, LoadPosition at) {
  switch (at.phase) {
    case Phase::kLoading:
      return Settled(table, {Phase::kIndexes, 0});
    case Phase::kIndexes:
    case Phase::kAfterLoad:
      return Settled(table, {at.phase, at.step + 1});
    case Phase::kAnalyze:
    case Phase::kDone:
      return {Phase::kDone, 0};
  }
  return {Phase::kDone, 0};
}

LoadStateSql::LoadStateSql(absl::string_view workload, db::Dialect dialect)
    : workload_(db::QuoteText(workload, dialect)), dialect_(dialect) {}

std::string LoadStateSql::Literal(absl::string_view text) const {
  return db::QuoteText(text, dialect_);
}

std::string LoadStateSql::Where(absl::string_view table) const {
  return absl::StrCat(" WHERE workload = ", workload_, " AND tbl = ", Literal(table));
}

std::string LoadStateSql::CreateTable() {
  return absl::StrCat(
      "CREATE TABLE IF NOT EXISTS ", kLoadStateTable,
      " (workload VARCHAR(200) NOT NULL, tbl VARCHAR(200) NOT NULL, part INTEGER NOT "
      "NULL, parts INTEGER NOT NULL, rows_done BIGINT NOT NULL, phase VARCHAR(40) NOT "
      "NULL, PRIMARY KEY (workload, tbl, part))");
}

std::string LoadStateSql::RecordNewLoad(absl::string_view table, int parts) const {
  std::string insert = absl::StrCat("INSERT INTO ", kLoadStateTable,
                                    " (workload, tbl, part, parts, rows_done, phase) VALUES");
  const std::string table_literal = Literal(table);
  for (int part = -1; part < parts; ++part) {
    absl::StrAppend(&insert, part == -1 ? " " : ", ", "(", workload_, ", ", table_literal, ", ",
                    part, ", ", parts, ", 0, 'loading')");
  }
  return insert;
}

std::string LoadStateSql::SelectPhase(absl::string_view table) const {
  return absl::StrCat("SELECT CONCAT(phase, '|', parts) FROM ", kLoadStateTable, Where(table),
                      " AND part = -1");
}

std::string LoadStateSql::SetPhase(absl::string_view table, absl::string_view phase) const {
  return absl::StrCat("UPDATE ", kLoadStateTable, " SET phase = ", Literal(phase), Where(table),
                      " AND part = -1");
}

std::string LoadStateSql::SelectParts(absl::string_view table) const {
  return absl::StrCat("SELECT CONCAT(part, '|', rows_done) FROM ", kLoadStateTable, Where(table),
                      " AND part >= 0 ORDER BY part");
}

std::string LoadStateSql::SetRowsDone(absl::string_view table, int part, int64_t rows_done) const {
  return absl::StrCat("UPDATE ", kLoadStateTable, " SET rows_done = ", rows_done, Where(table),
                      " AND part = ", part);
}

std::string LoadStateSql::SelectTables() const {
  return absl::StrCat("SELECT tbl FROM ", kLoadStateTable, " WHERE workload = ", workload_,
                      " AND part = -1");
}

std::string LoadStateSql::DeleteTable(absl::string_view table) const {
  return absl::StrCat("DELETE FROM ", kLoadStateTable, Where(table));
}

}  // namespace dbload
