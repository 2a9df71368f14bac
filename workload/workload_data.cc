#include "workload/loader.h"

// The parts of loader.h that read or drop what a load left: the checks after loading and
// `dbload cleanup`; and SqlFor, which every step uses.

#include <algorithm>
#include <charconv>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "workload/load_state.h"

namespace dbload {
namespace {

using db::Dialect;
using db::Session;

absl::StatusOr<int64_t> CountOf(Session& session, const std::string& sql) {
  absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(sql, 1);
  if (!rows.ok()) return rows.status();
  int64_t value = 0;
  if (rows->empty() ||
      std::from_chars(rows->front().data(), rows->front().data() + rows->front().size(), value)
              .ec != std::errc()) {
    return absl::InternalError(absl::StrCat("`", sql, "` did not return one integer"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::string> SqlFor(const v1::DialectSql& sql, Dialect dialect,
                                   std::string_view what) {
  const std::string& own = dialect == Dialect::kMySql ? sql.mysql() : sql.postgresql();
  if (!own.empty()) return own;
  if (!sql.any().empty()) return sql.any();
  if (dialect == Dialect::kNoop) return sql.postgresql().empty() ? sql.mysql() : sql.postgresql();
  const std::string_view dialect_name = db::DialectName(dialect);
  return absl::InvalidArgumentError(
      absl::StrCat(absl::string_view(what.data(), what.size()), ": the workload has no SQL for ",
                   absl::string_view(dialect_name.data(), dialect_name.size())));
}

absl::Status ValidateWorkloadData(const v1::WorkloadSpec& spec, Session& session, Dialect dialect) {
  std::vector<std::string> failures;
  auto expect = [&](const std::string& what, const std::string& sql, int64_t wanted) {
    absl::StatusOr<int64_t> got = CountOf(session, sql);
    if (!got.ok()) {
      failures.push_back(absl::StrCat(what, ": ", got.status().message()));
    } else if (*got != wanted) {
      failures.push_back(absl::StrCat(what, ": expected ", wanted, ", got ", *got));
    }
  };
  for (const v1::Table& table : spec.tables()) {
    expect(absl::StrCat("rows of ", table.name()),
           absl::StrCat("SELECT COUNT(*) FROM ", table.name()), table.data().rows());
  }
  for (const v1::Check& check : spec.checks()) {
    absl::StatusOr<std::string> sql = SqlFor(check.sql(), dialect, check.name());
    if (!sql.ok()) continue;  // a check for the other dialect
    // Named with where it is written: its SQL ran only now, on the server.
    expect(check.source().empty() ? check.name()
                                  : absl::StrCat(check.source(), ": check ", check.name()),
           *sql, check.expect());
  }
  if (failures.empty()) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("validation of workload ", spec.name(),
                                          " failed: ", absl::StrJoin(failures, "; ")));
}

absl::Status DropWorkloadData(const v1::WorkloadSpec& spec, Session& session, Dialect dialect) {
  const LoadStateSql state_sql(spec.name(), dialect);
  absl::StatusOr<std::vector<std::string>> ours =
      session.FetchColumn(state_sql.SelectTables(), 100'000);
  if (!ours.ok()) {
    // No state table: dbload never loaded anything here, so there is nothing of ours to drop.
    return absl::OkStatus();
  }
  for (int t = spec.tables_size() - 1; t >= 0; --t) {
    const v1::Table& table = spec.tables(t);
    if (std::find(ours->begin(), ours->end(), table.name()) == ours->end()) continue;
    if (absl::Status status =
            StepStatus(session.ExecuteSql(absl::StrCat("DROP TABLE IF EXISTS ", table.name())),
                       absl::StrCat("dropping ", table.name()));
        !status.ok()) {
      return status;
    }
    if (absl::Status status = StepStatus(session.ExecuteSql(state_sql.DeleteTable(table.name())),
                                         "updating the load state");
        !status.ok()) {
      return status;
    }
  }
  absl::StatusOr<std::vector<std::string>> left =
      session.FetchColumn(absl::StrCat("SELECT tbl FROM ", kLoadStateTable), 1);
  if (left.ok() && left->empty()) session.ExecuteSql(absl::StrCat("DROP TABLE ", kLoadStateTable));
  return absl::OkStatus();
}

}  // namespace dbload
