#include "suite/suite_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_html.h"
#include "suite/suite_ramp.h"
#include "google/protobuf/util/json_util.h"

namespace dbload {

namespace {
constexpr uint32_t kSuiteIndexFormatVersion = 1;
}  // namespace

absl::StatusOr<v1::SuiteIndex> ParseSuiteIndexJson(const std::string& json) {
  v1::SuiteIndex index;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &index);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a dbload suite index: ", status.ToString()));
  }
  if (index.format_version() != kSuiteIndexFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("suite index format version ", index.format_version(), " is not supported"));
  }
  return index;
}

absl::StatusOr<LoadedSuite> LoadSuite(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "suite.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": cannot read the file"));
  absl::StatusOr<v1::SuiteIndex> index = ParseSuiteIndexJson(json);
  if (!index.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", index.status().message()));
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
    const bool finished = run.state() == "finished" || run.state() == "degraded";
    return {.measured = false,
            .status = finished ? "discarded (warm-up)"
                               : absl::StrCat(run.state().empty() ? "no state" : run.state(),
                                              " (warm-up)")};
  }
  if (run.state() != "finished") {
    return {.measured = false, .status = run.state().empty() ? "no state" : run.state()};
  }
  if (!problem.empty()) return {.measured = false, .status = problem};
  if (report == nullptr || report->format_version() == 0) {
    return {.measured = false, .status = "no report"};
  }
  if (report->state() != "finished") {
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
        std::vector<double> throughput, mean, p50, p95, p99, qps;
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

namespace {

// Figures and their words ---------------------------------------------------------------------

struct Metric {
  const char* header;  // the column's word after the target's name: "TPS", "throughput"
  const char* what;    // in ratio phrases: "TPS", "mean latency"
  bool higher_is_better;
  Spread PointFigures::*field;
  std::string (*format)(double);
  bool p99 = false;  // the response-time p99, with what it rests on
  bool qps = false;  // known only where the runs counted statements
};

// Both medians of the runs' p99 lie inside both targets' 95 % intervals: no difference shown.
bool BothWithinIntervals(const Metric& m, const PointFigures& base, const PointFigures& value) {
  if (!m.p99 || !base.has_p99_basis || !value.has_p99_basis) return false;
  const auto inside = [](double ms, const PointFigures& f) {
    return ms >= f.p99_ci_low_ms && (f.p99_ci_high_open || ms <= f.p99_ci_high_ms);
  };
  return inside(base.p99_ms.median, value) && inside(value.p99_ms.median, base);
}

bool FewSamples(const Metric& m, const PointFigures& f) { return m.p99 && f.P99FewSamples(); }
bool Known(const Metric& m, const PointFigures& f) { return !m.qps || f.has_qps; }

constexpr char kWithinIntervals[] = "within the 95% confidence intervals";

// The cases without points: what the shop comparison publishes per case.
const Metric kCaseMetrics[] = {
    {"throughput", "throughput", true, &PointFigures::throughput, FormatPerSecond},
    {"mean", "mean latency", false, &PointFigures::mean_ms, FormatLatency},
    {"p99", "p99 latency", false, &PointFigures::p99_ms, FormatLatency, true},
};
// The sweeps: what sysbench studies publish per thread count.
const Metric kSweepMetrics[] = {
    {"TPS", "TPS", true, &PointFigures::throughput, FormatCount},
    {"QPS", "QPS", true, &PointFigures::qps, FormatCount, false, true},
    {"p95", "p95 latency", false, &PointFigures::p95_ms, FormatLatency},
    {"p99", "p99 latency", false, &PointFigures::p99_ms, FormatLatency, true},
};
// The headlines: throughput and mean latency, as the shop source's summary.
const Metric kHeadlineMetrics[] = {kCaseMetrics[0], kCaseMetrics[1]};

// The median, and with several runs their spread: "21,338 [20,960–21,500]".
std::string FigureText(const Spread& s, std::string (*format)(double)) {
  if (s.n <= 1) return format(s.median);
  return absl::StrCat(format(s.median), " [", format(s.min), "–", format(s.max), "]");
}

// A table cell: the figure ("*" when its p99 rests on too few samples), "—" where there is none.
std::string Cell(const Metric& m, const std::optional<PointFigures>& f) {
  if (!f || !Known(m, *f)) return "—";
  return absl::StrCat(FigureText((*f).*m.field, m.format), FewSamples(m, *f) ? "*" : "");
}

// One metric of `value` against `base` in words: "4.87× lower throughput", "p99 latency within
// the 95% confidence intervals", "1.02× higher TPS (no clear winner)", "*" for a thin p99; ""
// where either side lacks the figure.
std::string MetricPhrase(const Metric& m, const PointFigures& base, const PointFigures& value) {
  if (!Known(m, base) || !Known(m, value)) return "";
  const Spread& b = base.*m.field;
  const Spread& v = value.*m.field;
  std::string phrase = RatioPhrase(b.median, v.median, m.what);
  if (RatioWords(b.median, v.median) != "same" && BothWithinIntervals(m, base, value)) {
    phrase = absl::StrCat(m.what, " ", kWithinIntervals);
  } else if (NoClearWinner(b, v)) {
    absl::StrAppend(&phrase, " (no clear winner)");
  }
  if (FewSamples(m, base) || FewSamples(m, value)) phrase += "*";
  return phrase;
}

template <size_t N>
std::string PhrasesOf(const Metric (&metrics)[N], const PointFigures& base,
                      const PointFigures& value) {
  std::vector<std::string> phrases;
  for (const Metric& m : metrics) {
    std::string phrase = MetricPhrase(m, base, value);
    if (!phrase.empty()) phrases.push_back(std::move(phrase));
  }
  return absl::StrJoin(phrases, ", ");
}

bool AnyFewSamples(const SuitePoint& p) {
  for (const auto& f : p.targets) {
    if (f && f->P99FewSamples()) return true;
  }
  return false;
}

std::string PointText(const SuitePoint& p) {
  if (p.point == 0) return "the plan's load";
  if (!p.closed_loop) return FormatPerSecond(p.point);
  return p.point == 1 ? "1 client" : absl::StrCat(FormatCount(p.point), " clients");
}

// What limited or shaped a target's figures at a point, for the notes under a table.
std::vector<std::string> FigureNotes(const SuiteTable& t, const SuitePoint& p) {
  std::vector<std::string> notes;
  for (size_t i = 0; i < t.targets.size(); ++i) {
    const std::optional<PointFigures>& f = p.targets[i];
    if (!f) continue;
    std::vector<std::string> what;
    if (f->generator_limited_runs > 0) {
      what.push_back(absl::StrCat(f->generator_limited_runs, " of ", f->throughput.n,
                                  " runs GENERATOR-LIMITED"));
    }
    if (f->database_stalled_runs > 0) {
      what.push_back(absl::StrCat(f->database_stalled_runs, " of ", f->throughput.n,
                                  " runs DATABASE-STALLED"));
    }
    // Shown from 1 %: below that the generator's lateness is lost in the p99's own error.
    if (f->max_dispatch_lag_share >= 0.01) {
      what.push_back(
          absl::StrFormat("dispatch lag up to %.0f%% of p99", f->max_dispatch_lag_share * 100));
    }
    if (!what.empty()) {
      notes.push_back(
          absl::StrCat(t.targets[i], " at ", PointText(p), ": ", absl::StrJoin(what, ", ")));
    }
  }
  return notes;
}

// Cases and categories ------------------------------------------------------------------------

struct CaseView {
  std::string name, category;
  bool closed_loop = false, has_points = false, ramp = false;
  std::vector<const SuitePoint*> points;  // ascending
};

std::vector<CaseView> CasesOf(const SuiteTable& t) {
  std::vector<CaseView> cases;
  for (const SuitePoint& p : t.points) {
    if (cases.empty() || cases.back().name != p.case_name) {
      cases.push_back({.name = p.case_name,
                       .category = p.category,
                       .closed_loop = p.closed_loop,
                       .has_points = p.has_points,
                       .ramp = p.ramp,
                       .points = {}});
    }
    cases.back().points.push_back(&p);
  }
  return cases;
}

// Categories in the order WORKLOADS.md gives them, then others as first seen.
std::vector<std::string> CategoryOrder(const std::vector<CaseView>& cases) {
  std::vector<std::string> order = {"inserts", "selects",      "updates",
                                    "deletes", "transactions", "mixed"};
  for (const CaseView& c : cases) {
    if (std::find(order.begin(), order.end(), c.category) == order.end()) {
      order.push_back(c.category);
    }
  }
  return order;
}

std::string CategoryName(const std::string& category) {
  return category.empty() ? "(no category)" : category;
}

// The cases of one category compared alike: those without points (each at its plan's load), or
// those with points (each point against the same point).
struct CategoryGroup {
  std::string category;
  bool with_points = false;
  std::vector<const CaseView*> cases;
};

std::vector<CategoryGroup> Groups(const std::vector<CaseView>& cases) {
  std::vector<CategoryGroup> groups;
  for (const std::string& category : CategoryOrder(cases)) {
    for (bool with_points : {false, true}) {
      CategoryGroup g{.category = category, .with_points = with_points, .cases = {}};
      for (const CaseView& c : cases) {
        if (!c.ramp && c.category == category && c.has_points == with_points) {
          g.cases.push_back(&c);
        }
      }
      if (!g.cases.empty()) groups.push_back(std::move(g));
    }
  }
  return groups;
}

// A compared target against the baseline over a group: per metric the ratios value / baseline
// of every pair of figures at the same point.
struct GroupComparison {
  std::vector<std::vector<double>> ratios;  // per kCaseMetrics entry
  size_t pairs = 0;                         // (case, point) with figures on both sides
  size_t cases_compared = 0;                // cases with at least one such pair
  size_t p99_within = 0;                    // pairs whose p99 lay inside both intervals (left out)
  size_t no_clear_winner = 0;               // pairs without a clear throughput winner
  size_t limited = 0;                       // pairs whose figures include a GENERATOR-LIMITED run
  bool few_samples = false;                 // some p99 behind the range rests on too few samples
  // Per case with points: each side's best throughput and where.
  std::vector<std::string> best;
};

std::string BestThroughput(const SuiteTable& t, const CaseView& c, size_t i) {
  const auto best_of = [&c](size_t target) -> const SuitePoint* {
    const SuitePoint* best = nullptr;
    for (const SuitePoint* p : c.points) {
      const std::optional<PointFigures>& f = p->targets[target];
      if (f &&
          (best == nullptr || f->throughput.median > best->targets[target]->throughput.median)) {
        best = p;
      }
    }
    return best;
  };
  const SuitePoint* value = best_of(i);
  const SuitePoint* base = best_of(0);
  if (value == nullptr || base == nullptr) return "";
  return absl::StrCat(t.targets[i], " ", FormatPerSecond(value->targets[i]->throughput.median),
                      " at ", PointText(*value), ", ", t.targets[0], " ",
                      FormatPerSecond(base->targets[0]->throughput.median), " at ",
                      PointText(*base));
}

GroupComparison Compare(const SuiteTable& t, const CategoryGroup& g, size_t i) {
  GroupComparison out;
  out.ratios.resize(std::size(kCaseMetrics));
  for (const CaseView* c : g.cases) {
    bool compared = false;
    for (const SuitePoint* p : c->points) {
      if (!p->targets[0] || !p->targets[i]) continue;
      const PointFigures& base = *p->targets[0];
      const PointFigures& value = *p->targets[i];
      compared = true;
      ++out.pairs;
      for (size_t m = 0; m < std::size(kCaseMetrics); ++m) {
        const Metric& metric = kCaseMetrics[m];
        if (BothWithinIntervals(metric, base, value)) {
          ++out.p99_within;
          continue;
        }
        out.few_samples = out.few_samples || FewSamples(metric, base) || FewSamples(metric, value);
        const double b = (base.*metric.field).median, v = (value.*metric.field).median;
        if (b > 0 && v > 0) out.ratios[m].push_back(v / b);
      }
      out.no_clear_winner += NoClearWinner(base.throughput, value.throughput);
      out.limited += base.generator_limited_runs > 0 || value.generator_limited_runs > 0;
    }
    out.cases_compared += compared;
    if (g.with_points) {
      const std::string best = BestThroughput(t, *c, i);
      if (!best.empty()) {
        out.best.push_back(g.cases.size() == 1 ? best : absl::StrCat(c->name, ": ", best));
      }
    }
  }
  return out;
}

// The range of ratios as the published summaries say one: "1.52×–4.87× higher throughput",
// "from 2.00× lower to 1.50× higher throughput", "4.87× higher throughput" (one pair or all
// equal), "same throughput".
std::string RangePhrase(const std::vector<double>& ratios, const std::string& what) {
  if (ratios.empty()) return absl::StrCat(what, ": not comparable");
  const auto [lo_it, hi_it] = std::minmax_element(ratios.begin(), ratios.end());
  const double lo = *lo_it, hi = *hi_it;
  const std::string lo_words = RatioWords(1, lo), hi_words = RatioWords(1, hi);
  if (lo_words == hi_words) return absl::StrCat(lo_words, " ", what);
  const bool lo_up = lo_words == "same" || lo > 1;
  const bool hi_down = hi_words == "same" || hi < 1;
  if (lo_up) return absl::StrFormat("%.2f×–%.2f× higher %s", lo, hi, what);
  if (hi_down) return absl::StrFormat("%.2f×–%.2f× lower %s", 1 / hi, 1 / lo, what);
  return absl::StrCat("from ", lo_words, " to ", hi_words, " ", what);
}

std::string MetricRange(const GroupComparison& c, size_t m) {
  if (kCaseMetrics[m].p99 && c.ratios[m].empty() && c.p99_within > 0) {
    return absl::StrCat(kCaseMetrics[m].what, " ", kWithinIntervals);
  }
  return absl::StrCat(RangePhrase(c.ratios[m], kCaseMetrics[m].what),
                      kCaseMetrics[m].p99 && c.few_samples ? "*" : "");
}

// "4 cases, each at the plan's load", "1 case at 6 points (4–256 clients), each against the
// same point".
std::string GroupScope(const CategoryGroup& g) {
  std::string scope = absl::StrCat(g.cases.size(), g.cases.size() == 1 ? " case" : " cases");
  if (!g.with_points) return absl::StrCat(scope, ", each at the plan's load");
  std::set<double> points;
  const SuitePoint* lo = nullptr;
  const SuitePoint* hi = nullptr;
  for (const CaseView* c : g.cases) {
    for (const SuitePoint* p : c->points) {
      points.insert(p->point);
      if (lo == nullptr || p->point < lo->point) lo = p;
      if (hi == nullptr || p->point > hi->point) hi = p;
    }
  }
  const std::string range =
      lo == hi ? PointText(*lo)
               : absl::StrCat(lo->closed_loop ? FormatCount(lo->point) : PointText(*lo), "–",
                              PointText(*hi));
  return absl::StrCat(scope, " at ", points.size(), points.size() == 1 ? " point" : " points", " (",
                      range, "), each against the same point");
}

std::string GroupNotes(const GroupComparison& c, const CategoryGroup& g, bool with_best) {
  std::vector<std::string> notes;
  if (c.p99_within > 0 && c.p99_within < c.pairs) {
    notes.push_back(absl::StrCat("p99 ", kWithinIntervals, " in ", c.p99_within, " of ", c.pairs,
                                 g.with_points ? " points" : " cases", " (left out of its range)"));
  }
  if (with_best && !c.best.empty()) {
    notes.push_back(absl::StrCat("best throughput: ", absl::StrJoin(c.best, "; ")));
  }
  if (c.cases_compared < g.cases.size()) {
    notes.push_back(absl::StrCat(g.cases.size() - c.cases_compared, " of ", g.cases.size(),
                                 " cases without figures on both sides"));
  }
  if (c.no_clear_winner > 0) {
    notes.push_back(absl::StrCat("no clear winner on throughput in ", c.no_clear_winner, " of ",
                                 c.pairs, g.with_points ? " points" : " cases"));
  }
  if (c.limited > 0) {
    notes.push_back(absl::StrCat("GENERATOR-LIMITED runs in ", c.limited, " of ", c.pairs,
                                 g.with_points ? " points" : " cases"));
  }
  return absl::StrJoin(notes, "; ");
}

// One headline: the category (for the renderer to emphasize) and the rest of the line.
struct Headline {
  std::string category;
  std::string text;
};

std::vector<Headline> Headlines(const SuiteTable& t, const std::vector<CaseView>& cases) {
  std::vector<Headline> lines;
  if (t.targets.size() < 2) return lines;
  for (const CategoryGroup& g : Groups(cases)) {
    for (size_t i = 1; i < t.targets.size(); ++i) {
      const GroupComparison c = Compare(t, g, i);
      std::string text = absl::StrCat(" (", GroupScope(g), "): ");
      if (c.pairs == 0) {
        absl::StrAppend(&text, t.targets[i], " vs ", t.targets[0],
                        ": no case with figures on both sides");
      } else {
        std::vector<std::string> phrases;
        bool plain_ratios = true;  // every phrase reads "N× higher/lower …"
        for (size_t m = 0; m < std::size(kHeadlineMetrics); ++m) {
          phrases.push_back(MetricRange(c, m));
          plain_ratios = plain_ratios && absl::StrContains(phrases.back(), "×") &&
                         !absl::StartsWith(phrases.back(), "from ");
        }
        // "mariadb 4.87× lower throughput, … than postgresql", as the shop source says it;
        // "mariadb vs postgresql: same throughput, …" where "than" would not read.
        absl::StrAppend(&text, plain_ratios
                                   ? absl::StrCat(t.targets[i], " ", absl::StrJoin(phrases, ", "),
                                                  " than ", t.targets[0])
                                   : absl::StrCat(t.targets[i], " vs ", t.targets[0], ": ",
                                                  absl::StrJoin(phrases, ", ")));
        // The best throughput of each side, at its own point, said as such (one case only:
        // the summary by category has them all).
        if (g.with_points && g.cases.size() == 1 && !c.best.empty()) {
          absl::StrAppend(&text, "; best throughput: ", c.best.front());
        }
      }
      const std::string notes = GroupNotes(c, g, /*with_best=*/false);
      if (!notes.empty()) absl::StrAppend(&text, " (", notes, ")");
      lines.push_back({.category = CategoryName(g.category), .text = std::move(text)});
    }
  }
  return lines;
}

// The summary by category: one row per group and compared target.
struct SummaryRow {
  std::string category, cases, target;
  std::vector<std::string> metrics;  // per kCaseMetrics entry
  std::string notes;
};

std::vector<SummaryRow> SummaryRows(const SuiteTable& t, const std::vector<CaseView>& cases) {
  std::vector<SummaryRow> rows;
  for (const CategoryGroup& g : Groups(cases)) {
    std::vector<std::string> names;
    for (const CaseView* c : g.cases) names.push_back(c->name);
    std::string what = absl::StrJoin(names, ", ");
    if (g.with_points) absl::StrAppend(&what, " (", GroupScope(g), ")");
    for (size_t i = 1; i < t.targets.size(); ++i) {
      const GroupComparison c = Compare(t, g, i);
      SummaryRow row{.category = CategoryName(g.category),
                     .cases = what,
                     .target = t.targets[i],
                     .metrics = {},
                     .notes = GroupNotes(c, g, /*with_best=*/true)};
      for (size_t m = 0; m < std::size(kCaseMetrics); ++m) {
        row.metrics.push_back(c.pairs == 0 ? "—" : MetricRange(c, m));
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// Machine, servers and how the suite ran ------------------------------------------------------

// The values one target's runs gave, each with how many runs gave it: one value as it is,
// several as such ("differs across runs: 15.4 (3 runs), 15.5 (1 run)").
std::string Distinct(const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, size_t>> seen;
  for (const std::string& v : values) {
    auto it = std::find_if(seen.begin(), seen.end(), [&v](const auto& s) { return s.first == v; });
    if (it == seen.end()) {
      seen.push_back({v, 1});
    } else {
      ++it->second;
    }
  }
  if (seen.empty()) return "";
  if (seen.size() == 1) return seen.front().first;
  std::vector<std::string> parts;
  for (const auto& [value, n] : seen) {
    parts.push_back(
        absl::StrCat(value.empty() ? "(none)" : value, " (", n, n == 1 ? " run)" : " runs)"));
  }
  return absl::StrCat("differs across runs: ", absl::StrJoin(parts, ", "));
}

// The settings that shape results, per product, as coordinator/db_probe.cc records them; the
// MySQL family's sizes are bytes.
struct KeySetting {
  const char* name;
  bool bytes;
};
const KeySetting kPostgresSettings[] = {{"shared_buffers", false},
                                        {"max_connections", false},
                                        {"synchronous_commit", false},
                                        {"fsync", false},
                                        {"full_page_writes", false},
                                        {"wal_level", false},
                                        {"work_mem", false},
                                        {"effective_cache_size", false},
                                        {"max_wal_size", false},
                                        {"checkpoint_timeout", false},
                                        {"default_transaction_isolation", false}};
const KeySetting kMySqlSettings[] = {{"innodb_buffer_pool_size", true},
                                     {"innodb_flush_log_at_trx_commit", false},
                                     {"innodb_log_file_size", true},
                                     {"innodb_doublewrite", false},
                                     {"sync_binlog", false},
                                     {"log_bin", false},
                                     {"max_connections", false}};

std::string SettingValue(const KeySetting& s, const std::string& value) {
  double bytes = 0;
  if (s.bytes && absl::SimpleAtod(value, &bytes)) return FormatBytes(bytes);
  return value;
}

std::string ServerText(const v1::RunManifest& m) {
  if (m.server_product().empty() && m.server_version().empty()) return "";
  // PostgreSQL's version() is a sentence; its server_version setting is the version.
  const auto it = m.server_settings().find("server_version");
  const std::string version = it != m.server_settings().end() ? it->second : m.server_version();
  if (absl::StartsWith(version, m.server_product())) return version;
  return absl::StrCat(m.server_product(), " ", version);
}

std::string AgentsText(const v1::RunReport& r) {
  const v1::RunManifest& m = r.manifest();
  if (m.agents_size() == 0) return "";
  std::vector<std::string> hosts;
  for (const auto& a : m.agents()) {
    const std::string host = absl::StrCat(a.host().empty() ? "?" : a.host(), " (", a.cores(),
                                          a.cores() == 1 ? " core)" : " cores)");
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return absl::StrCat(m.agents_size(), m.agents_size() == 1 ? " agent on " : " agents on ",
                      absl::StrJoin(hosts, ", "));
}

// One line per target: server, key settings, agents, dbload.
std::vector<std::pair<std::string, std::string>> MachineLines(
    const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports, const SuiteTable& t) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const std::string& target : t.targets) {
    std::vector<const v1::RunReport*> runs;
    for (int i = 0; i < index.runs_size() && i < static_cast<int>(reports.size()); ++i) {
      if (index.runs(i).target() == target && reports[i].format_version() != 0 &&
          reports[i].has_manifest()) {
        runs.push_back(&reports[i]);
      }
    }
    if (runs.empty()) {
      lines.push_back({target, "not recorded (no run report with a manifest)"});
      continue;
    }
    const auto over_runs = [&runs](auto get) {
      std::vector<std::string> values;
      for (const v1::RunReport* r : runs) values.push_back(get(*r));
      return Distinct(values);
    };
    std::vector<std::string> parts;
    const std::string server =
        over_runs([](const v1::RunReport& r) { return ServerText(r.manifest()); });
    parts.push_back(server.empty() ? "server not recorded" : server);
    bool mysql = false;
    for (const v1::RunReport* r : runs) {
      mysql = mysql || r->manifest().server_product() == "MariaDB" ||
              r->manifest().server_product() == "MySQL";
    }
    std::vector<std::string> settings;
    const auto add_settings = [&](const auto& list) {
      for (const KeySetting& s : list) {
        bool present = false;
        for (const v1::RunReport* r : runs)
          present = present || r->manifest().server_settings().contains(s.name);
        if (!present) continue;
        settings.push_back(absl::StrCat(s.name, " ", over_runs([&s](const v1::RunReport& r) {
                                          const auto it =
                                              r.manifest().server_settings().find(s.name);
                                          return it == r.manifest().server_settings().end()
                                                     ? std::string("(not recorded)")
                                                     : SettingValue(s, it->second);
                                        })));
      }
    };
    if (mysql) {
      add_settings(kMySqlSettings);
    } else {
      add_settings(kPostgresSettings);
    }
    if (!settings.empty()) parts.push_back(absl::StrJoin(settings, ", "));
    const std::string agents = over_runs(AgentsText);
    if (!agents.empty()) parts.push_back(absl::StrCat("load from ", agents));
    const std::string coordinator =
        over_runs([](const v1::RunReport& r) { return r.manifest().coordinator_host(); });
    if (!coordinator.empty()) parts.push_back(absl::StrCat("coordinator on ", coordinator));
    const std::string version = over_runs([](const v1::RunReport& r) {
      return r.manifest().dbload_version().empty() ? r.dbload_version()
                                                   : r.manifest().dbload_version();
    });
    if (!version.empty()) parts.push_back(absl::StrCat("dbload ", version));
    lines.push_back({target, absl::StrJoin(parts, "; ")});
  }
  return lines;
}

std::string LoadText(const v1::SuiteCase& c) {
  const v1::Plan& plan = c.plan();
  const bool closed = plan.load().has_closed();
  std::string text = closed ? "closed loop" : "open loop";
  if (plan.stages_size() > 0) {
    bool knee = false;
    for (const v1::Stage& s : plan.stages()) knee = knee || s.has_knee();
    absl::StrAppend(&text, ", ", plan.stages_size(), plan.stages_size() == 1 ? " stage" : " stages",
                    knee ? " (a knee search)" : "");
  } else if (c.points_size() > 0) {
    std::vector<std::string> points;
    for (double p : c.points()) points.push_back(FormatCount(p));
    absl::StrAppend(&text, " at ", absl::StrJoin(points, ", "), closed ? " clients" : "/s");
  } else if (closed) {
    absl::StrAppend(&text, " at ", plan.load().closed().clients(),
                    plan.load().closed().clients() == 1 ? " client" : " clients");
  } else {
    absl::StrAppend(&text, " at ", FormatPerSecond(plan.load().open().rate()));
  }
  if (closed && plan.load().closed().think_time_ns() > 0) {
    absl::StrAppend(&text, ", think time ",
                    FormatLatency(static_cast<double>(plan.load().closed().think_time_ns()) / 1e6));
  }
  return text;
}

std::string StopText(const v1::Plan& plan) {
  const double duration_s = static_cast<double>(plan.stop().duration_ns()) / 1e9;
  std::string text;
  if (plan.stop().queries() > 0 && duration_s > 0) {
    text = absl::StrCat("stops at ", FormatCount(static_cast<double>(plan.stop().queries())),
                        " transactions or after ", FormatSpan(duration_s));
  } else if (plan.stop().queries() > 0) {
    text = absl::StrCat("stops at ", FormatCount(static_cast<double>(plan.stop().queries())),
                        " transactions");
  } else if (duration_s > 0) {
    text = absl::StrCat(FormatSpan(duration_s), " per run");
  } else if (plan.stages_size() > 0) {
    text = "as long as its stages last";
  }
  if (plan.warmup_ns() > 0) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", "of which the first ",
                    FormatSpan(static_cast<double>(plan.warmup_ns()) / 1e9),
                    " warm up (not measured)");
  }
  return text;
}

std::string Factor(double x) {
  return x == 0 || x == 1 ? "none" : absl::StrCat("×", FormatCount(x));
}

// The lines of "How it ran", as plain text (escaped by the caller).
std::vector<std::string> HowItRan(const v1::SuiteIndex& index, const SuiteTable& t) {
  std::vector<std::string> lines;
  lines.push_back(
      absl::StrCat("Started ", index.started_at().empty() ? "?" : index.started_at(), ", ",
                   index.finished_at().empty() ? "not finished"
                                               : absl::StrCat("finished ", index.finished_at())));
  lines.push_back(absl::StrCat("Scale (--scale, rates and totals): ", Factor(index.scale()),
                               "; time scale (--time-scale): ", Factor(index.time_scale())));
  lines.push_back(
      absl::StrCat("Settings changed (--set): ",
                   index.overrides_size() == 0 ? "none" : absl::StrJoin(index.overrides(), ", ")));
  const v1::SuiteSettings& s = index.suite().settings();
  const uint32_t repetitions = std::max<uint32_t>(1, s.repetitions());
  lines.push_back(absl::StrCat(
      "Repetitions: ", repetitions, repetitions == 1 ? " measured run" : " measured runs",
      " per case, point and target; warm-up runs: ",
      s.warmup_runs() == 0 ? "none" : absl::StrCat(s.warmup_runs(), " before them, discarded"),
      "; prepare: ", s.prepare().empty() ? "once" : s.prepare(),
      s.cleanup() ? ", cleanup after each target" : ""));
  size_t discarded = 0, measured = 0, left_out = 0;
  for (int i = 0; i < index.runs_size(); ++i) {
    if (t.runs[i].measured) {
      ++measured;
    } else if (index.runs(i).discarded()) {
      ++discarded;
    } else {
      ++left_out;
    }
  }
  lines.push_back(absl::StrCat("Runs: ", index.runs_size(), " (", measured, " measured, ",
                               discarded, " warm-up, ", left_out,
                               " missing or not finished); only measured runs enter the figures."));
  if (!t.targets.empty()) {
    lines.push_back(absl::StrCat("Baseline: ", t.targets[0],
                                 " (the first target); every ratio is a target against it, at "
                                 "the same load point."));
  }
  if (t.repetitions > 1) {
    lines.push_back(
        "Each figure is the median of its measured runs with their spread [min–max]; a "
        "difference between targets smaller than the spread of either is marked \"no clear "
        "winner\".");
  }
  lines.push_back(
      "GENERATOR-LIMITED marks figures from runs in which the generator, not the database, may "
      "have set the pace.");
  return lines;
}

// Per case: its workload, load and stop rule.
std::vector<std::string> CaseLines(const v1::SuiteIndex& index) {
  std::vector<std::string> lines;
  for (const v1::SuiteCase& c : index.suite().cases()) {
    const std::string stop = StopText(c.plan());
    lines.push_back(absl::StrCat(c.name(),
                                 c.category().empty() ? "" : absl::StrCat(" (", c.category(), ")"),
                                 ": ", c.plan().workload(), "/", c.plan().scenario(), ", ",
                                 LoadText(c), stop.empty() ? "" : absl::StrCat("; ", stop)));
  }
  return lines;
}

// The tables, as rows of cells (plain text), shared by the three renderers --------------------

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned
  // Per column: the cells are dbload's own figures and words (no user-written name), which
  // Markdown shows as they are: "1,050 [1,000–1,100]", "8.00 ms*". Every other cell is escaped.
  std::vector<bool> generated;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row_css;  // per row, HTML only ("" or a class)
};

std::vector<const CaseView*> Sweeps(const std::vector<CaseView>& cases) {
  std::vector<const CaseView*> out;
  for (const CaseView& c : cases) {
    if (c.has_points && !c.ramp) out.push_back(&c);
  }
  return out;
}

Table SweepTable(const SuiteTable& t, const CaseView& c) {
  Table table;
  table.header.push_back(c.closed_loop ? "clients" : "rate");
  table.numeric.push_back(true);
  for (const std::string& target : t.targets) {
    for (const Metric& m : kSweepMetrics) {
      table.header.push_back(absl::StrCat(target, " ", m.header));
      table.numeric.push_back(true);
    }
  }
  table.generated.assign(table.header.size(), true);
  for (const SuitePoint* p : c.points) {
    std::vector<std::string> row = {FormatCount(p->point)};
    bool limited = false;
    for (size_t i = 0; i < t.targets.size(); ++i) {
      for (const Metric& m : kSweepMetrics) row.push_back(Cell(m, p->targets[i]));
      limited = limited || (p->targets[i] && p->targets[i]->generator_limited_runs > 0);
    }
    table.rows.push_back(std::move(row));
    table.row_css.push_back(limited ? "generator-limited" : "");
  }
  return table;
}

// Under a sweep's table: per point and compared target, the ratios at that point.
std::vector<std::string> SweepRatioLines(const SuiteTable& t, const CaseView& c) {
  std::vector<std::string> lines;
  for (const SuitePoint* p : c.points) {
    for (size_t i = 1; i < t.targets.size(); ++i) {
      if (!p->targets[0] || !p->targets[i]) continue;
      lines.push_back(absl::StrCat("at ", PointText(*p), ": ", t.targets[i], " vs ", t.targets[0],
                                   ": ", PhrasesOf(kSweepMetrics, *p->targets[0], *p->targets[i])));
    }
  }
  return lines;
}

std::vector<const CaseView*> PlainCases(const std::vector<CaseView>& cases) {
  std::vector<const CaseView*> out;
  for (const std::string& category : CategoryOrder(cases)) {
    for (const CaseView& c : cases) {
      if (!c.has_points && !c.ramp && c.category == category) out.push_back(&c);
    }
  }
  return out;
}

Table CasesTable(const SuiteTable& t, const std::vector<const CaseView*>& cases) {
  Table table;
  table.header = {"case", "category"};
  table.numeric = {false, false};
  for (const std::string& target : t.targets) {
    for (const Metric& m : kCaseMetrics) {
      table.header.push_back(absl::StrCat(target, " ", m.header));
      table.numeric.push_back(true);
    }
  }
  for (size_t i = 1; i < t.targets.size(); ++i) {
    table.header.push_back(absl::StrCat(t.targets[i], " vs ", t.targets[0]));
    table.numeric.push_back(false);
  }
  table.generated.assign(table.header.size(), true);
  table.generated[0] = table.generated[1] = false;  // the case and its category
  for (const CaseView* c : cases) {
    for (const SuitePoint* p : c->points) {
      std::vector<std::string> row = {c->name, CategoryName(c->category)};
      bool limited = false;
      for (size_t i = 0; i < t.targets.size(); ++i) {
        for (const Metric& m : kCaseMetrics) row.push_back(Cell(m, p->targets[i]));
        limited = limited || (p->targets[i] && p->targets[i]->generator_limited_runs > 0);
      }
      for (size_t i = 1; i < t.targets.size(); ++i) {
        row.push_back(p->targets[0] && p->targets[i]
                          ? PhrasesOf(kCaseMetrics, *p->targets[0], *p->targets[i])
                          : "—");
      }
      table.rows.push_back(std::move(row));
      table.row_css.push_back(limited ? "generator-limited" : "");
    }
  }
  return table;
}

Table SummaryTable(const std::vector<SummaryRow>& rows) {
  Table table;
  table.header = {"category", "cases", "target"};
  for (const Metric& m : kCaseMetrics) table.header.push_back(m.what);
  table.header.push_back("notes");
  table.numeric.assign(table.header.size(), false);
  table.generated.assign(table.header.size(), true);
  table.generated[0] = table.generated[1] = table.generated[2] = false;
  table.generated.back() = false;  // notes name cases and targets
  for (const SummaryRow& row : rows) {
    std::vector<std::string> cells = {row.category, row.cases, row.target};
    for (const std::string& m : row.metrics) cells.push_back(m);
    cells.push_back(row.notes);
    table.rows.push_back(std::move(cells));
    table.row_css.push_back("");
  }
  return table;
}

// A per-transaction figure in its unit: bytes, the server's CPU time, or a count.
std::string CounterValue(const std::string& key, double v) {
  if (absl::EndsWith(key, "_bytes")) return FormatBytes(v);
  if (key == "process/cpu_seconds") return FormatLatency(v * 1e3);
  return FormatCount(v);
}

// The probe's counters per transaction: one row per case, point and counter, targets side by
// side. `*few` is set when a figure carries kFewReadingsMark.
Table CountersTable(const SuiteTable& t, const std::vector<CaseView>& cases, bool* few) {
  Table table;
  table.header = {"case", "point", "counter"};
  table.numeric = {false, true, false};
  for (const std::string& target : t.targets) {
    table.header.push_back(target);
    table.numeric.push_back(true);
  }
  table.generated.assign(table.header.size(), true);
  table.generated[0] = table.generated[2] = false;
  *few = false;
  for (const CaseView& c : cases) {
    if (c.ramp) continue;
    for (const SuitePoint* p : c.points) {
      std::vector<std::string> keys;
      for (const auto& f : p->targets) {
        if (!f) continue;
        for (const auto& [key, spread] : f->per_query) {
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
      }
      std::sort(keys.begin(), keys.end());
      for (const std::string& key : keys) {
        std::vector<std::string> row = {c.name, p->point == 0 ? "plan's load" : PointText(*p), key};
        for (const auto& f : p->targets) {
          if (!f || !f->per_query.contains(key)) {
            row.push_back("—");
            continue;
          }
          const Spread& s = f->per_query.at(key);
          const auto v = [&key](double x) { return CounterValue(key, x); };
          // A spread only where the repetitions differ: most counters are the same in every run.
          std::string cell = s.n <= 1 || s.max == s.min
                                 ? v(s.median)
                                 : absl::StrCat(v(s.median), " [", v(s.min), "–", v(s.max), "]");
          if (f->few_readings.contains(key)) {
            absl::StrAppend(&cell, kFewReadingsMark);
            *few = true;
          }
          row.push_back(std::move(cell));
        }
        table.rows.push_back(std::move(row));
        table.row_css.push_back("");
      }
    }
  }
  return table;
}

std::string PointLabel(const v1::SuiteRun& run, const v1::SuiteIndex& index) {
  for (const v1::SuiteCase& c : index.suite().cases()) {
    if (c.name() == run.case_name()) {
      return PointText({.case_name = "",
                        .category = "",
                        .point = run.point(),
                        .closed_loop = c.plan().load().has_closed(),
                        .targets = {}});
    }
  }
  return FormatCount(run.point());
}

std::string RepetitionText(const v1::SuiteRun& run) {
  return run.discarded() || run.repetition() == 0 ? "warm-up" : absl::StrCat(run.repetition());
}

Table RunsTable(const v1::SuiteIndex& index, const SuiteTable& t) {
  Table table;
  table.header = {"#", "target", "case", "point", "repetition", "status", "report"};
  table.numeric = {true, false, false, false, false, false, false};
  table.generated.assign(table.header.size(), false);
  for (int i = 0; i < index.runs_size(); ++i) {
    const v1::SuiteRun& run = index.runs(i);
    table.rows.push_back({absl::StrCat(i + 1), run.target(), run.case_name(),
                          PointLabel(run, index), RepetitionText(run), t.runs[i].status,
                          run.report()});
    table.row_css.push_back(t.runs[i].status.find("GENERATOR-LIMITED") != std::string::npos
                                ? "generator-limited"
                            : t.runs[i].measured ? ""
                                                 : "left-out");
  }
  return table;
}

// Everything a renderer draws, in order.
struct SuiteDocument {
  std::string name;
  std::vector<Headline> headlines;
  std::vector<std::string> ramp_headlines;
  std::vector<std::pair<std::string, std::string>> machine;
  std::vector<std::string> how, case_lines;
  struct Sweep {
    const CaseView* c;
    Table table;
    std::vector<std::string> ratios, notes;
    bool few_samples = false;
  };
  std::vector<Sweep> sweeps;
  std::vector<const CaseView*> plain;
  Table cases;
  std::vector<std::string> case_notes;
  bool cases_few_samples = false;
  Table summary;
  bool compare = false;  // two targets or more
  Table counters;
  bool counters_few = false;
  Table runs;
};

SuiteDocument Document(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                       const SuiteTable& t, const std::vector<CaseView>& cases) {
  SuiteDocument d;
  d.name = index.suite().name();
  d.compare = t.targets.size() >= 2;
  d.headlines = Headlines(t, cases);
  d.ramp_headlines = RampHeadlines(index, reports, t.Measured());
  d.machine = MachineLines(index, reports, t);
  d.how = HowItRan(index, t);
  d.case_lines = CaseLines(index);
  for (const CaseView* c : Sweeps(cases)) {
    SuiteDocument::Sweep sweep{.c = c,
                               .table = SweepTable(t, *c),
                               .ratios = SweepRatioLines(t, *c),
                               .notes = {},
                               .few_samples = false};
    for (const SuitePoint* p : c->points) {
      for (std::string& note : FigureNotes(t, *p)) sweep.notes.push_back(std::move(note));
      sweep.few_samples = sweep.few_samples || AnyFewSamples(*p);
    }
    d.sweeps.push_back(std::move(sweep));
  }
  d.plain = PlainCases(cases);
  d.cases = CasesTable(t, d.plain);
  for (const CaseView* c : d.plain) {
    for (const SuitePoint* p : c->points) {
      for (std::string& note : FigureNotes(t, *p)) {
        d.case_notes.push_back(absl::StrCat(c->name, ": ", note));
      }
      d.cases_few_samples = d.cases_few_samples || AnyFewSamples(*p);
    }
  }
  d.summary = SummaryTable(SummaryRows(t, cases));
  d.counters = CountersTable(t, cases, &d.counters_few);
  d.runs = RunsTable(index, t);
  return d;
}

// Text ----------------------------------------------------------------------------------------

// Characters, not bytes: "×", "µ" and "—" take one column.
size_t Width(absl::string_view text) {
  size_t width = 0;
  for (const char c : text) width += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return width;
}

// Aligned columns, numbers to the right, words to the left, two spaces apart.
std::string TextTable(const Table& table) {
  std::vector<std::vector<std::string>> rows = {table.header};
  for (const auto& row : table.rows) rows.push_back(row);
  std::vector<size_t> widths(table.header.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], Width(row[i]));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      const std::string pad(widths[i] - Width(row[i]), ' ');
      absl::StrAppend(&line, " ", table.numeric[i] ? pad + row[i] : row[i] + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string RenderText(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                       const SuiteTable& t, const SuiteDocument& d) {
  std::string out = absl::StrCat("dbload suite report: ", d.name, "\n\nHeadlines\n");
  for (const Headline& h : d.headlines) absl::StrAppend(&out, "  - ", h.category, h.text, "\n");
  for (const std::string& h : d.ramp_headlines) absl::StrAppend(&out, "  - ", h, "\n");
  if (d.headlines.empty() && d.ramp_headlines.empty()) {
    absl::StrAppend(&out, "  - ", d.compare ? "no comparable figures" : "one target: no comparison",
                    "\n");
  }
  absl::StrAppend(&out, "\nMachine and servers\n");
  for (const auto& [target, line] : d.machine)
    absl::StrAppend(&out, "  - ", target, ": ", line, "\n");
  absl::StrAppend(&out, "\nHow it ran\n");
  for (const std::string& line : d.how) absl::StrAppend(&out, "  - ", line, "\n");
  for (const std::string& line : d.case_lines) absl::StrAppend(&out, "  - ", line, "\n");
  for (const auto& s : d.sweeps) {
    absl::StrAppend(&out, "\nSweep: ", s.c->name, "\n", TextTable(s.table));
    for (const std::string& line : s.ratios) absl::StrAppend(&out, "  ", line, "\n");
    for (const std::string& line : s.notes) absl::StrAppend(&out, "  ", line, "\n");
    if (s.few_samples) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
  }
  if (!d.plain.empty()) {
    absl::StrAppend(&out, "\nCases\n", TextTable(d.cases));
    for (const std::string& line : d.case_notes) absl::StrAppend(&out, "  ", line, "\n");
    if (d.cases_few_samples) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
  }
  if (d.compare && !d.summary.rows.empty()) {
    absl::StrAppend(&out, "\nSummary by category (ratios against ", t.targets[0],
                    ", each at the same load point)\n", TextTable(d.summary));
  }
  const std::string ramp = RenderRampText(index, reports, t.Measured());
  if (!ramp.empty()) absl::StrAppend(&out, "\n", ramp);
  if (!d.counters.rows.empty()) {
    absl::StrAppend(&out, "\nDatabase counters per transaction (the probe's)\n",
                    TextTable(d.counters));
    if (d.counters_few) absl::StrAppend(&out, "  ", kFewReadingsNote, "\n");
  }
  absl::StrAppend(&out, "\nRuns\n", TextTable(d.runs));
  return out;
}

// Markdown ------------------------------------------------------------------------------------

std::string MarkdownTable(const Table& table) {
  const auto row = [&table](const std::vector<std::string>& cells, bool header) {
    std::vector<std::string> escaped;
    for (size_t i = 0; i < cells.size(); ++i) {
      escaped.push_back(!header && table.generated[i] ? cells[i] : MarkdownEscape(cells[i]));
    }
    return absl::StrCat("| ", absl::StrJoin(escaped, " | "), " |\n");
  };
  std::string out = row(table.header, /*header=*/true);
  absl::StrAppend(&out, "|");
  for (bool numeric : table.numeric) absl::StrAppend(&out, numeric ? "---:|" : "---|");
  absl::StrAppend(&out, "\n");
  for (const auto& cells : table.rows) absl::StrAppend(&out, row(cells, /*header=*/false));
  return out;
}

std::string MarkdownList(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) absl::StrAppend(&out, "- ", MarkdownEscape(line), "\n");
  return out;
}

std::string RenderMarkdown(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                           const SuiteTable& t, const SuiteDocument& d) {
  std::string out =
      absl::StrCat("## dbload suite report: ", MarkdownEscape(d.name), "\n\n### Headlines\n\n");
  for (const Headline& h : d.headlines) {
    absl::StrAppend(&out, "- **", MarkdownEscape(h.category), "**", MarkdownEscape(h.text), "\n");
  }
  absl::StrAppend(&out, MarkdownList(d.ramp_headlines));
  if (d.headlines.empty() && d.ramp_headlines.empty()) {
    absl::StrAppend(&out, "- ", d.compare ? "no comparable figures" : "one target: no comparison",
                    "\n");
  }
  absl::StrAppend(&out, "\n### Machine and servers\n\n");
  for (const auto& [target, line] : d.machine) {
    absl::StrAppend(&out, "- **", MarkdownEscape(target), "**: ", MarkdownEscape(line), "\n");
  }
  absl::StrAppend(&out, "\n### How it ran\n\n", MarkdownList(d.how), MarkdownList(d.case_lines));
  for (const auto& s : d.sweeps) {
    absl::StrAppend(&out, "\n### Sweep: ", MarkdownEscape(s.c->name), "\n\n",
                    MarkdownTable(s.table));
    if (!s.ratios.empty() || !s.notes.empty()) {
      absl::StrAppend(&out, "\n", MarkdownList(s.ratios), MarkdownList(s.notes));
    }
    if (s.few_samples) absl::StrAppend(&out, "\n", MarkdownEscape(kFewSamplesNote), "\n");
  }
  if (!d.plain.empty()) {
    absl::StrAppend(&out, "\n### Cases\n\n", MarkdownTable(d.cases));
    if (!d.case_notes.empty()) absl::StrAppend(&out, "\n", MarkdownList(d.case_notes));
    if (d.cases_few_samples) absl::StrAppend(&out, "\n", MarkdownEscape(kFewSamplesNote), "\n");
  }
  if (d.compare && !d.summary.rows.empty()) {
    absl::StrAppend(&out, "\n### Summary by category\n\nRatios against **",
                    MarkdownEscape(t.targets[0]), "**, each at the same load point.\n\n",
                    MarkdownTable(d.summary));
  }
  const std::string ramp = RenderRampMarkdown(index, reports, t.Measured());
  if (!ramp.empty()) absl::StrAppend(&out, "\n", ramp);
  if (!d.counters.rows.empty()) {
    absl::StrAppend(&out,
                    "\n### Database counters per transaction\n\nThe probe's counters over each "
                    "run, per transaction executed (the median over repetitions).\n\n",
                    MarkdownTable(d.counters));
    if (d.counters_few) absl::StrAppend(&out, "\n", MarkdownEscape(kFewReadingsNote), "\n");
  }
  absl::StrAppend(&out, "\n### Runs\n\n", MarkdownTable(d.runs));
  return out;
}

// HTML ----------------------------------------------------------------------------------------

std::string Td(absl::string_view text, absl::string_view css = "") {
  return absl::StrCat("<td", css.empty() ? "" : absl::StrCat(" class=\"", css, "\""), ">",
                      HtmlEscape(text), "</td>");
}
std::string Th(absl::string_view text, bool left = false) {
  return absl::StrCat("<th", left ? " class=\"text\"" : "", ">", HtmlEscape(text), "</th>");
}

std::string HtmlTable(const Table& table, absl::string_view css) {
  std::string out = absl::StrCat("<table class=\"", css, "\">\n<thead><tr>");
  for (size_t i = 0; i < table.header.size(); ++i) {
    absl::StrAppend(&out, Th(table.header[i], !table.numeric[i]));
  }
  absl::StrAppend(&out, "</tr></thead>\n<tbody>\n");
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::string& css_row = table.row_css[r];
    absl::StrAppend(&out, "<tr", css_row.empty() ? "" : absl::StrCat(" class=\"", css_row, "\""),
                    ">");
    for (size_t i = 0; i < table.rows[r].size(); ++i) {
      absl::StrAppend(&out, Td(table.rows[r][i], table.numeric[i] ? "" : "text"));
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  return out + "</tbody>\n</table>\n";
}

std::string HtmlList(const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string out = "<ul>\n";
  for (const std::string& line : lines) absl::StrAppend(&out, "<li>", HtmlEscape(line), "</li>\n");
  return out + "</ul>\n";
}

std::string HtmlNote(absl::string_view text) {
  return absl::StrCat("<p class=\"note\">", HtmlEscape(text), "</p>\n");
}

// A sweep's two charts: TPS and p95 against clients (log-2 axis) or rate, one line per target,
// repetitions as spread bars, generator-limited points ringed.
std::pair<html::ChartSpec, html::ChartSpec> SweepCharts(const SuiteTable& t, const CaseView& c) {
  const std::string x = c.closed_loop ? "clients" : "target rate (/s)";
  html::ChartSpec tps{.title = absl::StrCat("TPS vs ", c.closed_loop ? "clients" : "target rate"),
                      .x_label = x,
                      .y_label = "transactions/s",
                      .percentile_x = false,
                      .series = {},
                      .vlines = {},
                      .empty = "No measured run of this case.",
                      .log2_x = c.closed_loop};
  html::ChartSpec p95{.title = absl::StrCat("p95 vs ", c.closed_loop ? "clients" : "target rate"),
                      .x_label = x,
                      .y_label = "ms",
                      .percentile_x = false,
                      .series = {},
                      .vlines = {},
                      .empty = "No measured run of this case.",
                      .log2_x = c.closed_loop};
  for (size_t i = 0; i < t.targets.size(); ++i) {
    html::Series rate{.name = t.targets[i], .x = {}, .y = {}};
    html::Series latency{.name = t.targets[i], .x = {}, .y = {}};
    for (const SuitePoint* p : c.points) {
      const std::optional<PointFigures>& f = p->targets[i];
      if (!f) continue;
      const bool limited = f->generator_limited_runs > 0;
      for (auto [series, spread] :
           {std::pair{&rate, &f->throughput}, std::pair{&latency, &f->p95_ms}}) {
        series->x.push_back(p->point);
        series->y.push_back(spread->median);
        series->lo.push_back(spread->min);
        series->hi.push_back(spread->max);
        series->flags.push_back(limited);
      }
    }
    tps.series.push_back(std::move(rate));
    p95.series.push_back(std::move(latency));
  }
  return {tps, p95};
}

// Per category, the cases without points as bars: throughput and mean latency per target,
// scaled to the longest bar of the category (no chart axis: each case is its own load).
std::string CategoryBars(const SuiteTable& t, const std::vector<const CaseView*>& plain) {
  std::string out;
  std::vector<CaseView> copies;
  for (const CaseView* c : plain) copies.push_back(*c);
  for (const std::string& category : CategoryOrder(copies)) {
    std::vector<const CaseView*> cases;
    for (const CaseView* c : plain) {
      if (c->category == category) cases.push_back(c);
    }
    if (cases.empty()) continue;
    double top_rate = 0, top_mean = 0;
    for (const CaseView* c : cases) {
      for (const auto& f : c->points.front()->targets) {
        if (!f) continue;
        top_rate = std::max(top_rate, f->throughput.median);
        top_mean = std::max(top_mean, f->mean_ms.median);
      }
    }
    absl::StrAppend(&out, "<h3>", HtmlEscape(CategoryName(category)),
                    "</h3>\n<table class=\"bars\">\n<thead><tr>", Th("case", true),
                    Th("target", true), Th("throughput", true), Th("mean latency", true),
                    "</tr></thead>\n<tbody>\n");
    for (const CaseView* c : cases) {
      for (size_t i = 0; i < t.targets.size(); ++i) {
        const std::optional<PointFigures>& f = c->points.front()->targets[i];
        const bool limited = f && f->generator_limited_runs > 0;
        absl::StrAppend(&out, "<tr>", Td(i == 0 ? c->name : "", "text"), Td(t.targets[i], "text"));
        using Format = std::string (*)(double);
        for (auto [value, top, format] :
             {std::tuple<double, double, Format>{f ? f->throughput.median : 0.0, top_rate,
                                                 FormatPerSecond},
              std::tuple<double, double, Format>{f ? f->mean_ms.median : 0.0, top_mean,
                                                 FormatLatency}}) {
          if (!f || top <= 0) {
            absl::StrAppend(&out, Td("—", "bar-cell"));
            continue;
          }
          absl::StrAppend(&out, "<td class=\"bar-cell\"><div class=\"bar series-", i % 8,
                          limited ? " limited" : "",
                          "\" style=\"width:", absl::StrFormat("%.1f", 80 * value / top),
                          "%\"></div><span>", HtmlEscape(format(value)), "</span></td>");
        }
        absl::StrAppend(&out, "</tr>\n");
      }
    }
    absl::StrAppend(&out, "</tbody>\n</table>\n");
  }
  return out;
}

std::string Section(absl::string_view title, absl::string_view body) {
  return absl::StrCat("<section class=\"print-page\">\n<h2>", HtmlEscape(title), "</h2>\n", body,
                      "</section>\n");
}

std::string RenderHtml(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                       const SuiteTable& t, const SuiteDocument& d) {
  const std::string title = absl::StrCat("dbload suite report: ", d.name);
  std::string out = html::PageStart(title);
  absl::StrAppend(&out, "<h1>", HtmlEscape(title),
                  "</h1>\n<h2>Headlines</h2>\n<ul class=\"headlines\">\n");
  for (const Headline& h : d.headlines) {
    absl::StrAppend(&out, "<li><strong>", HtmlEscape(h.category), "</strong>", HtmlEscape(h.text),
                    "</li>\n");
  }
  for (const std::string& h : d.ramp_headlines)
    absl::StrAppend(&out, "<li>", HtmlEscape(h), "</li>\n");
  if (d.headlines.empty() && d.ramp_headlines.empty()) {
    absl::StrAppend(&out, "<li>", d.compare ? "no comparable figures" : "one target: no comparison",
                    "</li>\n");
  }
  absl::StrAppend(&out, "</ul>\n<h2>Machine and servers</h2>\n<ul>\n");
  for (const auto& [target, line] : d.machine) {
    absl::StrAppend(&out, "<li><strong>", HtmlEscape(target), "</strong>: ", HtmlEscape(line),
                    "</li>\n");
  }
  absl::StrAppend(&out, "</ul>\n<h2>How it ran</h2>\n", HtmlList(d.how), HtmlList(d.case_lines));

  std::string charts;
  for (size_t s = 0; s < d.sweeps.size(); ++s) {
    const auto& sweep = d.sweeps[s];
    const auto [tps, p95] = SweepCharts(t, *sweep.c);
    const std::string tname = absl::StrCat("sweep-", s + 1, "-tps");
    const std::string pname = absl::StrCat("sweep-", s + 1, "-p95");
    absl::StrAppend(&charts, charts.empty() ? "" : ",", JsonQuote(tname), ":", html::ChartJson(tps),
                    ",", JsonQuote(pname), ":", html::ChartJson(p95));
    std::string body =
        absl::StrCat(html::ChartDiv(tname, tps.empty), html::ChartDiv(pname, p95.empty),
                     HtmlTable(sweep.table, "sweep"));
    for (const std::string& line : sweep.ratios) {
      absl::StrAppend(&body, "<p class=\"summary\">", HtmlEscape(line), "</p>\n");
    }
    for (const std::string& line : sweep.notes) {
      absl::StrAppend(&body, "<p class=\"warn\">", HtmlEscape(line), "</p>\n");
    }
    if (sweep.few_samples) absl::StrAppend(&body, HtmlNote(kFewSamplesNote));
    absl::StrAppend(&out, Section(absl::StrCat("Sweep: ", sweep.c->name), body));
  }
  if (!d.plain.empty()) {
    std::string body = HtmlTable(d.cases, "cases");
    for (const std::string& line : d.case_notes) {
      absl::StrAppend(&body, "<p class=\"warn\">", HtmlEscape(line), "</p>\n");
    }
    if (d.cases_few_samples) absl::StrAppend(&body, HtmlNote(kFewSamplesNote));
    absl::StrAppend(&body, CategoryBars(t, d.plain));
    absl::StrAppend(&out, Section("Cases", body));
  }
  if (d.compare && !d.summary.rows.empty()) {
    absl::StrAppend(&out,
                    Section("Summary by category",
                            absl::StrCat(HtmlNote(absl::StrCat("Ratios against ", t.targets[0],
                                                               ", each at the same load point.")),
                                         HtmlTable(d.summary, "summary"))));
  }
  const std::string ramp = RenderRampHtml(index, reports, t.Measured(), &charts);
  if (!ramp.empty())
    absl::StrAppend(&out, "<section class=\"print-page\">\n", ramp, "</section>\n");
  if (!d.counters.rows.empty()) {
    absl::StrAppend(
        &out, Section("Database counters per transaction",
                      absl::StrCat(HtmlNote("The probe's counters over each run, per transaction "
                                            "executed (the median over repetitions)."),
                                   HtmlTable(d.counters, "saturation"),
                                   d.counters_few ? HtmlNote(kFewReadingsNote) : "")));
  }
  absl::StrAppend(&out, Section("Runs", HtmlTable(d.runs, "runs")));
  absl::StrAppend(&out, html::PageEnd(absl::StrCat("{\"charts\":{", charts, "}}")));
  return out;
}

}  // namespace

std::string RenderSuiteReport(const v1::SuiteIndex& index,
                              const std::vector<v1::RunReport>& reports, SuiteFormat format,
                              const std::vector<std::string>& problems) {
  const SuiteTable table = BuildSuiteTable(index, reports, problems);
  const std::vector<CaseView> cases = CasesOf(table);
  const SuiteDocument document = Document(index, reports, table, cases);
  switch (format) {
    case SuiteFormat::kMarkdown:
      return RenderMarkdown(index, reports, table, document);
    case SuiteFormat::kHtml:
      return RenderHtml(index, reports, table, document);
    case SuiteFormat::kText:
      break;
  }
  return RenderText(index, reports, table, document);
}

}  // namespace dbload
