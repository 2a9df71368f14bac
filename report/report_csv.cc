#include "report/report_csv.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"

namespace dbload {

std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

namespace {

constexpr const char* kColumns[] = {"scope",       "query_type",  "executed",         "errors",
                                    "wanted_rate", "actual_rate", "duration_s",       "min_ms",
                                    "mean_ms",     "max_ms",      "stddev_ms",        "p50_ms",
                                    "p75_ms",      "p90_ms",      "p95_ms",           "p99_ms",
                                    "p99.9_ms",    "p99.99_ms",   "generator_limited",
                                    "pool_limited", "database_stalled", "dispatch_lag_share"};

// After the columns above, per published percentile: pNN_samples_beyond, pNN_ci_low_ms and
// pNN_ci_high_ms (empty when the samples give no upper bound, or the report predates them); then
// few_samples, the percentiles resting on fewer than 10 samples beyond them ("p99.9 p99.99");
// ignored: transactions rolled back on an error the scenario ignores, as sysbench's "ignored
// errors" (in neither executed nor errors); last statements: what the transactions sent to the
// server, BEGIN, COMMIT and ROLLBACK included (sysbench's queries; ÷ duration_s is its QPS),
// empty in a report from before dbload counted them; then retries: tries again under the
// workload's retry policy, every cause; last rolled_back: of executed, the transactions the
// workload ended with ROLLBACK by design (tpcc's New-Orders on an unused item).
std::vector<std::string> Columns() {
  std::vector<std::string> columns(std::begin(kColumns), std::end(kColumns));
  for (const double p : kPublishedPercentiles) {
    const std::string name = absl::StrFormat("p%g", p);
    columns.push_back(absl::StrCat(name, "_samples_beyond"));
    columns.push_back(absl::StrCat(name, "_ci_low_ms"));
    columns.push_back(absl::StrCat(name, "_ci_high_ms"));
  }
  columns.push_back("few_samples");
  columns.push_back("ignored");
  columns.push_back("statements");
  columns.push_back("retries");
  columns.push_back("rolled_back");
  return columns;
}

std::string Number(double value, int decimals) { return absl::StrFormat("%.*f", decimals, value); }

// One row. `wanted_rate` < 0: unknown for this row (query types have no target of their own).
void AppendRow(std::string& out, const std::string& scope, const std::string& query_type,
               uint64_t executed, uint64_t errors, uint64_t ignored, uint64_t statements,
               bool statements_counted, double wanted_rate, double actual_rate, double duration_s,
               const v1::LatencySummary& s, bool generator_limited, bool pool_limited,
               bool database_stalled, double dispatch_lag_share, uint64_t retries,
               uint64_t rolled_back) {
  const std::vector<std::string> fields = {CsvField(scope),
                                           CsvField(query_type),
                                           absl::StrCat(executed),
                                           absl::StrCat(errors),
                                           wanted_rate < 0 ? "" : Number(wanted_rate, 3),
                                           Number(actual_rate, 3),
                                           Number(duration_s, 3),
                                           Number(s.min_ms(), 6),
                                           Number(s.mean_ms(), 6),
                                           Number(s.max_ms(), 6),
                                           Number(s.stddev_ms(), 6),
                                           Number(s.p50_ms(), 6),
                                           Number(s.p75_ms(), 6),
                                           Number(s.p90_ms(), 6),
                                           Number(s.p95_ms(), 6),
                                           Number(s.p99_ms(), 6),
                                           Number(s.p999_ms(), 6),
                                           Number(s.p9999_ms(), 6),
                                           generator_limited ? "true" : "false",
                                           pool_limited ? "true" : "false",
                                           database_stalled ? "true" : "false",
                                           Number(dispatch_lag_share, 4)};
  std::vector<std::string> basis, few;
  for (const double p : kPublishedPercentiles) {
    const v1::PercentileBasis* b = BasisOf(s, p);
    if (b == nullptr) {
      basis.insert(basis.end(), {"", "", ""});
      continue;
    }
    basis.push_back(absl::StrCat(b->samples_beyond()));
    basis.push_back(Number(b->ci_low_ms(), 6));
    basis.push_back(b->ci_high_open() ? "" : Number(b->ci_high_ms(), 6));
    if (b->few_samples()) few.push_back(absl::StrFormat("p%g", p));
  }
  basis.push_back(absl::StrJoin(few, " "));
  absl::StrAppend(&out, absl::StrJoin(fields, ","), ",", absl::StrJoin(basis, ","), ",", ignored,
                  ",", statements_counted ? absl::StrCat(statements) : "", ",", retries, ",",
                  rolled_back, "\r\n");
}

// The scope's transactions rolled back by design, over its query types.
template <typename Scope>
uint64_t RolledBack(const Scope& scope) {
  uint64_t rolled_back = 0;
  for (const v1::QueryTypeReport& q : scope.query_types()) rolled_back += q.rolled_back();
  return rolled_back;
}

// The "all" row and one per query type of a run or a stage. A query type's rate is its executed
// ÷ the scope's duration, as the report computes the scope's own actual rate.
template <typename Scope>
void AppendScope(std::string& out, const std::string& name, const Scope& scope, double duration_s,
                 bool statements_counted) {
  AppendRow(out, name, "all", scope.executed(), scope.errors(), scope.ignored(), scope.statements(),
            statements_counted, scope.wanted_rate(), scope.actual_rate(), duration_s,
            scope.response_time(), scope.generator_limited(), scope.pool_limited(),
            scope.database_stalled(), scope.dispatch_lag_share(), scope.retries(),
            RolledBack(scope));
  for (const v1::QueryTypeReport& q : scope.query_types()) {
    uint64_t retries = 0;
    for (const v1::RetryCount& retry : q.retries()) retries += retry.count();
    AppendRow(out, name, q.name(), q.executed(), q.errors(), q.ignored(), q.statements(),
              statements_counted, -1, duration_s > 0 ? q.executed() / duration_s : 0, duration_s,
              q.response_time(), scope.generator_limited(), scope.pool_limited(),
              scope.database_stalled(), scope.dispatch_lag_share(), retries, q.rolled_back());
  }
}

}  // namespace

std::string RenderReportCsv(const v1::RunReport& report) {
  std::string out = absl::StrCat(absl::StrJoin(Columns(), ","), "\r\n");
  // A run that sent something counted every statement of it (stages and query types with
  // none sent none); one whose transactions sent none is a report from before dbload counted
  // them.
  const bool statements_counted =
      report.statements() > 0 || report.executed() + report.errors() + report.ignored() == 0;
  AppendScope(out, "run", report, report.queries_duration_s(), statements_counted);
  for (const v1::StageReport& stage : report.stages()) {
    AppendScope(out, absl::StrCat("stage ", stage.index(), ": ", stage.name()), stage,
                stage.duration_s(), statements_counted);
  }
  return out;
}

}  // namespace dbload
