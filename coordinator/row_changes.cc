#include "coordinator/row_changes.h"

#include <functional>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "report/invariants.h"
#include "report/row_changes.h"
#include "workload/workload.h"

namespace dbload {

// The rows each query type of the plan's scenario says it adds or removes, by table
// (the workload's `changes`; empty for workloads that declare none).
std::map<std::string, std::map<std::string, int64_t>> DeclaredChanges(const v1::Plan& plan) {
  std::map<std::string, std::map<std::string, int64_t>> changes;  // query type → table → rows
  for (const v1::Scenario& scenario : plan.workload_spec().scenarios()) {
    if (scenario.name() != plan.scenario()) continue;
    for (const v1::QueryType& query_type : scenario.query_types()) {
      for (const auto& [table, rows] : query_type.changes())
        changes[query_type.name()][table] = rows;
    }
  }
  return changes;
}

namespace {

// `reads` on a session of its own, in a transaction rolled back, as every side session's reads:
// the database's commit count stays the load's and the connections' own (ReconcileCommits).
absl::Status ReadOnASessionOfItsOwn(db::Driver& driver, std::string_view what,
                                    const std::function<absl::Status(db::Session&)>& reads) {
  driver.ThreadStart();
  absl::Status status;
  if (absl::StatusOr<std::unique_ptr<db::Session>> session = driver.Connect(); !session.ok()) {
    status =
        absl::Status(session.status().code(), absl::StrCat("target: ", session.status().message()));
  } else {
    status = db::ReadRolledBack(**session, what, [&] { return reads(**session); });
  }
  driver.ThreadEnd();
  return status;
}

}  // namespace

// COUNT(*) of each table, on a session of its own (table names are plain identifiers: the
// workload parser checks them).
absl::StatusOr<std::map<std::string, int64_t>> CountRows(db::Driver& driver,
                                                         const std::set<std::string>& tables) {
  std::map<std::string, int64_t> counts;
  const absl::Status status =
      ReadOnASessionOfItsOwn(driver, "counting the rows", [&](db::Session& session) {
        for (const std::string& table : tables) {
          absl::StatusOr<std::vector<std::string>> rows =
              session.FetchColumn(absl::StrCat("SELECT COUNT(*) FROM ", table), 1);
          int64_t count = 0;
          if (!rows.ok() || rows->empty() || !absl::SimpleAtoi(rows->front(), &count)) {
            return absl::InternalError(absl::StrCat(
                "counting the rows of ", table, ": ",
                rows.ok() ? "no number returned" : std::string(rows.status().message())));
          }
          counts[table] = count;
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return counts;
}

absl::StatusOr<std::vector<std::string>> ReadValues(db::Driver& driver,
                                                    const std::vector<std::string>& queries) {
  std::vector<std::string> values;
  const absl::Status status =
      ReadOnASessionOfItsOwn(driver, "reading the invariants", [&](db::Session& session) {
        for (const std::string& sql : queries) {
          absl::StatusOr<std::vector<std::string>> rows = session.FetchColumn(sql, 1);
          if (!rows.ok() || rows->empty()) {
            return absl::InternalError(absl::StrCat(
                "`", sql,
                "`: ", rows.ok() ? "no row returned" : std::string(rows.status().message())));
          }
          values.push_back(rows->front());
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return values;
}

std::vector<v1::InvariantResult> PlannedInvariants(const v1::Plan& plan) {
  std::vector<v1::InvariantResult> invariants;
  const std::string& driver = plan.target().driver();
  if (driver != "postgresql" && driver != "mysql") return invariants;  // no rows to read
  // A workload file's, in the plan; or one built in code's (tpcc's consistency conditions).
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakePlanWorkload(plan);
  if (!workload.ok()) return invariants;  // the plan was refused before this
  for (const v1::Invariant& invariant : (*workload)->Invariants()) {
    const v1::DialectSql& sql = invariant.sql();
    const std::string& own = driver == "postgresql" ? sql.postgresql() : sql.mysql();
    v1::InvariantResult& result = invariants.emplace_back();
    result.set_name(invariant.name());
    result.set_sql(own.empty() ? sql.any() : own);
    result.set_expect(invariant.expect());
    result.set_unchanged(invariant.unchanged());
    result.set_source(invariant.source());
  }
  return invariants;
}

namespace {
// Equal as numbers when both are ("4000" and "4000.00" from a SUM), else as text.
bool SameReading(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  if (absl::SimpleAtod(a, &x) && absl::SimpleAtod(b, &y)) return x == y;
  return a == b;
}
}  // namespace

absl::Status CheckInvariants(std::vector<v1::InvariantResult> invariants,
                             const std::vector<std::string>& before,
                             const std::vector<std::string>& after, v1::RunReport& report) {
  for (size_t i = 0; i < invariants.size() && i < after.size(); ++i) {
    v1::InvariantResult& result = invariants[i];
    result.set_after(after[i]);
    if (result.unchanged()) {
      if (i < before.size()) result.set_before(before[i]);
      result.set_holds(i < before.size() && SameReading(before[i], after[i]));
    } else {
      result.set_holds(SameReading(result.expect(), after[i]));
    }
    *report.add_invariants() = std::move(result);
  }
  return InvariantViolations(report);
}

// Checks that the tables changed by exactly what the report's executed transactions declare,
// and records both in the report.
absl::Status CheckRowChanges(const std::map<std::string, std::map<std::string, int64_t>>& declared,
                             const std::map<std::string, int64_t>& before,
                             const std::map<std::string, int64_t>& after, v1::RunReport& report) {
  std::map<std::string, int64_t> expected;
  for (const auto& by_query_type : declared) {
    for (const auto& table_rows : by_query_type.second) expected[table_rows.first];  // 0 at least
  }
  for (const v1::QueryTypeReport& type : report.query_types()) {
    auto it = declared.find(type.name());
    if (it == declared.end()) continue;
    for (const auto& [table, rows] : it->second) {
      // The warm-up's transactions changed the tables too (the count before precedes it).
      expected[table] += static_cast<int64_t>(type.executed() + type.warmup_executed()) * rows;
    }
  }
  for (const auto& [table, rows] : expected) {
    v1::RowChange& change = *report.add_row_changes();
    change.set_table(table);
    change.set_before(before.at(table));
    change.set_after(after.at(table));
    change.set_expected(rows);
  }
  return RowChangesDisagreement(report);
}

}  // namespace dbload
