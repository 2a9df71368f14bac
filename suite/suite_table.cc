#include "suite/suite_table.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "proto/run_outcome.h"
#include "report/invariants.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_html.h"
#include "suite/suite_index.h"
#include "suite/suite_ramp.h"

namespace dbload {

absl::StatusOr<LoadedSuite> LoadSuite(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "suite.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": cannot read the file"));
  absl::StatusOr<v1::SuiteIndex> index = ParseSuiteIndexJson(json);
  if (!index.ok()) {
    return absl::Status(index.status().code(), absl::StrCat(path, ": ", index.status().message()));
  }
  LoadedSuite suite;
  suite.index = *std::move(index);
  for (const v1::SuiteRun& run : suite.index.runs()) {
    if (run.report().empty()) {
      suite.reports.emplace_back();
      suite.problems.push_back("no report");
      continue;
    }
    const std::string report_path = (std::filesystem::path(dir) / run.report()).string();
    absl::StatusOr<ReportFile> file = LoadReportFile(report_path);
    if (!file.ok()) {
      suite.reports.emplace_back();
      suite.problems.push_back(absl::StrCat("report unreadable: ", file.status().message()));
      continue;
    }
    suite.reports.push_back(std::move(file->report));
    suite.problems.emplace_back();
  }
  return suite;
}

Spread SpreadOf(std::vector<double> values) {
  Spread spread;
  spread.n = values.size();
  if (values.empty()) return spread;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  spread.median =
      values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  spread.min = values.front();
  spread.max = values.back();
  return spread;
}

bool NoClearWinner(const Spread& baseline, const Spread& value) {
  const double spread = std::max(baseline.max - baseline.min, value.max - value.min);
  return spread > 0 && std::abs(value.median - baseline.median) < spread;
}

namespace {

bool GeneratorLimited(const v1::RunReport& report) {
  if (report.generator_limited()) return true;
  return std::any_of(report.stages().begin(), report.stages().end(),
                     [](const v1::StageReport& s) { return s.generator_limited(); });
}

bool DatabaseStalled(const v1::RunReport& report) {
  if (report.database_stalled()) return true;
  return std::any_of(report.stages().begin(), report.stages().end(),
                     [](const v1::StageReport& s) { return s.database_stalled(); });
}

double DispatchLagShare(const v1::RunReport& report) {
  double share = report.dispatch_lag_share();
  for (const v1::StageReport& s : report.stages()) share = std::max(share, s.dispatch_lag_share());
  return share;
}

std::string GeneratorLimitedReason(const v1::RunReport& report) {
  if (report.generator_limited()) return report.generator_limited_reason();
  for (const v1::StageReport& s : report.stages()) {
    if (s.generator_limited()) {
      return absl::StrCat("stage ", s.name(), ": ", s.generator_limited_reason());
    }
  }
  return "";
}

// The probe's values compared per query across targets: the common counters (one meaning on
// every server that gives them, coordinator/db_probe.h; commits and rollbacks only PostgreSQL
// gives), and the server's CPU.
const char* const kCommonCounters[] = {"commits", "rollbacks", "read_bytes", "written_bytes",
                                       "deadlocks"};

std::string PerQueryKey(const v1::SaturationDelta& d) {
  if (d.gauge()) return "";
  if (d.source() == "process") return d.name() == "cpu_seconds" ? "process/cpu_seconds" : "";
  if (d.source() == "haproxy") return "";
  for (const char* name : kCommonCounters) {
    if (d.name() == name) return name;
  }
  return "";
}

RunStatus StatusOf(const v1::SuiteRun& run, const v1::RunReport* report,
                   const std::string& problem) {
  if (run.discarded()) {
    // A warm-up that did not finish says so, as suite.json does: it is not a discarded result.
    const v1::SuiteRunState state = SuiteRunStateOf(run);
    const bool finished =
        state == v1::SUITE_RUN_STATE_FINISHED || state == v1::SUITE_RUN_STATE_DEGRADED;
    return {.measured = false,
            .status = finished ? "discarded (warm-up)"
                               : absl::StrCat(run.state().empty() ? "no state" : run.state(),
                                              " (warm-up)")};
  }
  if (SuiteRunStateOf(run) != v1::SUITE_RUN_STATE_FINISHED) {
    std::string status = run.state().empty() ? "no state" : run.state();
    // A run whose data broke the workload's invariants says which (its figures do not count).
    if (report != nullptr) {
      if (const absl::Status broken = InvariantViolations(*report); !broken.ok()) {
        absl::StrAppend(&status, ": ", broken.message());
      }
    }
    return {.measured = false, .status = std::move(status)};
  }
  if (!problem.empty()) return {.measured = false, .status = problem};
  if (report == nullptr || report->format_version() == 0) {
    return {.measured = false, .status = "no report"};
  }
  if (RunStateOf(*report) != v1::RUN_STATE_FINISHED) {
    return {.measured = false,
            .status =
                absl::StrCat("report state: ", report->state().empty() ? "none" : report->state())};
  }
  if (GeneratorLimited(*report)) {
    return {
        .measured = true,
        .status = absl::StrCat("measured, GENERATOR-LIMITED: ", GeneratorLimitedReason(*report))};
  }
  return {.measured = true, .status = "measured"};
}

}  // namespace

bool PointFigures::P99FewSamples() const {
  return has_p99_basis && p99_samples_beyond < kFewSamplesBeyond;
}

SuiteTable BuildSuiteTable(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                           const std::vector<std::string>& problems) {
  SuiteTable table;
  const auto target_index = [&table](const std::string& name) {
    const auto it = std::find(table.targets.begin(), table.targets.end(), name);
    if (it != table.targets.end()) return static_cast<size_t>(it - table.targets.begin());
    table.targets.push_back(name);
    return table.targets.size() - 1;
  };
  for (const v1::SuiteTarget& t : index.suite().targets()) target_index(t.name());

  // Cases in the suite's order (then any the runs name that the suite does not), each with its
  // declared points and any point a run has.
  struct CaseInfo {
    std::string name, category;
    bool closed_loop = false;
    bool has_points = false;
    bool ramp = false;
    std::set<double> points;
  };
  std::vector<CaseInfo> cases;
  const auto case_of = [&cases](const std::string& name) -> CaseInfo& {
    for (CaseInfo& c : cases) {
      if (c.name == name) return c;
    }
    cases.push_back({.name = name, .category = "", .points = {}});
    return cases.back();
  };
  for (const v1::SuiteCase& c : index.suite().cases()) {
    CaseInfo& info = case_of(c.name());
    info.category = c.category();
    info.closed_loop = c.plan().load().has_closed();
    info.has_points = c.points_size() > 0;
    info.ramp = IsRampCase(c);
    for (double p : c.points()) info.points.insert(p);
    if (c.points_size() == 0) info.points.insert(0);
  }

  // Per (case, point, target): the usable runs' reports.
  std::map<std::tuple<std::string, double, size_t>, std::vector<const v1::RunReport*>> usable;
  for (int i = 0; i < index.runs_size(); ++i) {
    const v1::SuiteRun& run = index.runs(i);
    const v1::RunReport* report = i < static_cast<int>(reports.size()) ? &reports[i] : nullptr;
    const std::string problem = i < static_cast<int>(problems.size()) ? problems[i] : "";
    table.runs.push_back(StatusOf(run, report, problem));
    const size_t target = target_index(run.target());
    CaseInfo& info = case_of(run.case_name());
    info.points.insert(run.point());
    if (table.runs.back().measured)
      usable[{run.case_name(), run.point(), target}].push_back(report);
  }

  for (const CaseInfo& c : cases) {
    for (double point : c.points) {
      SuitePoint row{.case_name = c.name,
                     .category = c.category,
                     .point = point,
                     .closed_loop = c.closed_loop,
                     .has_points = c.has_points,
                     .ramp = c.ramp,
                     .targets = {}};
      for (size_t t = 0; t < table.targets.size(); ++t) {
        const auto it = usable.find({c.name, point, t});
        if (it == usable.end()) {
          row.targets.emplace_back();
          continue;
        }
        std::vector<double> throughput, mean, p50, p95, p99, qps, tpmc;
        bool statements_known = true;
        std::map<std::string, std::vector<double>> per_query;
        PointFigures figures;
        figures.has_p99_basis = true;
        for (const v1::RunReport* r : it->second) {
          const v1::PercentileBasis* basis = BasisOf(r->response_time(), 99);
          if (basis == nullptr) {
            figures.has_p99_basis = false;
          } else if (figures.has_p99_basis) {
            const bool first = p99.empty();
            figures.p99_samples_beyond =
                first ? basis->samples_beyond()
                      : std::min(figures.p99_samples_beyond, basis->samples_beyond());
            figures.p99_ci_low_ms =
                first ? basis->ci_low_ms() : std::min(figures.p99_ci_low_ms, basis->ci_low_ms());
            figures.p99_ci_high_ms =
                first ? basis->ci_high_ms() : std::max(figures.p99_ci_high_ms, basis->ci_high_ms());
            figures.p99_ci_high_open = figures.p99_ci_high_open || basis->ci_high_open();
          }
          throughput.push_back(r->actual_rate());
          mean.push_back(r->response_time().mean_ms());
          p50.push_back(r->response_time().p50_ms());
          p95.push_back(r->response_time().p95_ms());
          p99.push_back(r->response_time().p99_ms());
          // 0 statements: not counted (never invented), unless the run ran nothing.
          if (r->statements() == 0 || r->queries_duration_s() <= 0) {
            statements_known = false;
          } else {
            qps.push_back(static_cast<double>(r->statements()) / r->queries_duration_s());
          }
          if (const std::optional<double> new_orders = TpmC(*r)) tpmc.push_back(*new_orders);
          figures.generator_limited_runs += GeneratorLimited(*r);
          figures.database_stalled_runs += DatabaseStalled(*r);
          figures.max_dispatch_lag_share =
              std::max(figures.max_dispatch_lag_share, DispatchLagShare(*r));
          for (const v1::SaturationDelta& d : r->saturation()) {
            const std::string key = PerQueryKey(d);
            if (key.empty()) continue;
            per_query[key].push_back(d.per_query());
            if (FewProbeReadings(d)) figures.few_readings.insert(key);
          }
        }
        figures.throughput = SpreadOf(throughput);
        figures.mean_ms = SpreadOf(mean);
        figures.p50_ms = SpreadOf(p50);
        figures.p95_ms = SpreadOf(p95);
        figures.p99_ms = SpreadOf(p99);
        figures.has_qps = statements_known && !qps.empty();
        if (figures.has_qps) figures.qps = SpreadOf(qps);
        figures.has_tpmc = !tpmc.empty() && tpmc.size() == it->second.size();
        if (figures.has_tpmc) figures.tpmc = SpreadOf(tpmc);
        for (auto& [key, values] : per_query) figures.per_query[key] = SpreadOf(values);
        table.repetitions = std::max<uint32_t>(table.repetitions, figures.throughput.n);
        row.targets.push_back(std::move(figures));
      }
      table.points.push_back(std::move(row));
    }
  }
  return table;
}

std::vector<bool> SuiteTable::Measured() const {
  std::vector<bool> measured;
  for (const RunStatus& run : runs) measured.push_back(run.measured);
  return measured;
}

}  // namespace dbload
