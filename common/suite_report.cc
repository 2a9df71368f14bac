#include "common/suite_report.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/report.h"
#include "common/report_compare.h"
#include "common/report_html.h"
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

// The probe's values compared per query across targets: the common counters every database
// source gives (coordinator/db_probe.h), and the server's CPU.
const char* const kCommonCounters[] = {"commits",       "rollbacks",     "read_bytes",
                                       "written_bytes", "rows_inserted", "rows_updated",
                                       "rows_deleted",  "deadlocks",     "lock_waits"};

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
  if (run.discarded()) return {.measured = false, .status = "discarded (warm-up)"};
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
    std::set<double> points;
  };
  std::vector<CaseInfo> cases;
  const auto case_of = [&cases](const std::string& name) -> CaseInfo& {
    for (CaseInfo& c : cases) {
      if (c.name == name) return c;
    }
    cases.push_back({.name = name, .category = "", .closed_loop = false, .points = {}});
    return cases.back();
  };
  for (const v1::SuiteCase& c : index.suite().cases()) {
    CaseInfo& info = case_of(c.name());
    info.category = c.category();
    info.closed_loop = c.plan().load().has_closed();
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
                     .targets = {}};
      for (size_t t = 0; t < table.targets.size(); ++t) {
        const auto it = usable.find({c.name, point, t});
        if (it == usable.end()) {
          row.targets.emplace_back();
          continue;
        }
        std::vector<double> throughput, mean, p50, p99;
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
          p99.push_back(r->response_time().p99_ms());
          figures.generator_limited_runs += GeneratorLimited(*r);
          figures.database_stalled_runs += DatabaseStalled(*r);
          figures.max_dispatch_lag_share =
              std::max(figures.max_dispatch_lag_share, DispatchLagShare(*r));
          for (const v1::SaturationDelta& d : r->saturation()) {
            const std::string key = PerQueryKey(d);
            if (!key.empty()) per_query[key].push_back(d.per_query());
          }
        }
        figures.throughput = SpreadOf(throughput);
        figures.mean_ms = SpreadOf(mean);
        figures.p50_ms = SpreadOf(p50);
        figures.p99_ms = SpreadOf(p99);
        for (auto& [key, values] : per_query) figures.per_query[key] = SpreadOf(values);
        table.repetitions = std::max<uint32_t>(table.repetitions, figures.throughput.n);
        row.targets.push_back(std::move(figures));
      }
      table.points.push_back(std::move(row));
    }
  }
  return table;
}

namespace {

struct Metric {
  const char* label;  // row label
  const char* what;   // in ratio phrases
  bool higher_is_better;
  Spread PointFigures::*field;
  std::string (*format)(double);
  bool p99 = false;  // the response-time p99, with what it rests on
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

constexpr char kWithinIntervals[] = "within the 95% confidence intervals";

std::string FormatRate(double v) { return absl::StrFormat("%.0f", v); }

const Metric kMetrics[] = {
    {"throughput (/s)", "throughput", true, &PointFigures::throughput, FormatRate},
    {"mean (ms)", "mean latency", false, &PointFigures::mean_ms, FormatMs},
    {"p99 (ms)", "p99 latency", false, &PointFigures::p99_ms, FormatMs, true},
};

// The median, and with several runs their spread: "21338 [20960–21500]".
std::string FigureText(const Spread& s, std::string (*format)(double)) {
  if (s.n <= 1) return format(s.median);
  return absl::StrCat(format(s.median), " [", format(s.min), "–", format(s.max), "]");
}

// "4.87× higher", "1.02× higher, no clear winner", or "" (no ratio).
std::string RatioText(const Spread& base, const Spread& value) {
  const std::string words = RatioWords(base.median, value.median);
  if (words.empty()) return "";
  return NoClearWinner(base, value) ? absl::StrCat(words, ", no clear winner") : words;
}

std::string Cell(const Metric& m, const std::optional<PointFigures>& base,
                 const std::optional<PointFigures>& value, bool is_baseline) {
  if (!value) return "—";
  std::string cell = FigureText((*value).*m.field, m.format);
  if (FewSamples(m, *value)) cell += "*";
  if (is_baseline || !base) return cell;
  const Spread& b = (*base).*m.field;
  const Spread& v = (*value).*m.field;
  std::string ratio = RatioText(b, v);
  if (!ratio.empty() && RatioWords(b.median, v.median) != "same" &&
      BothWithinIntervals(m, *base, *value)) {
    ratio = kWithinIntervals;
  }
  return ratio.empty() ? cell : absl::StrCat(cell, " (", ratio, ")");
}

// Whether a point shows a p99 resting on too few samples (for the note under it).
bool AnyFewSamples(const SuitePoint& p) {
  for (const auto& f : p.targets) {
    if (f && f->P99FewSamples()) return true;
  }
  return false;
}

std::string RunsCell(const std::optional<PointFigures>& f) {
  if (!f) return "none";
  std::string cell = absl::StrCat(f->throughput.n);
  if (f->generator_limited_runs > 0) {
    absl::StrAppend(&cell, " (", f->generator_limited_runs, " GENERATOR-LIMITED)");
  }
  if (f->database_stalled_runs > 0) {
    absl::StrAppend(&cell, " (", f->database_stalled_runs, " DATABASE-STALLED)");
  }
  // Shown from 1 %: below that the generator's lateness is lost in the p99's own error.
  if (f->max_dispatch_lag_share >= 0.01) {
    absl::StrAppend(&cell, absl::StrFormat(" (dispatch lag up to %.0f%% of p99)",
                                           f->max_dispatch_lag_share * 100));
  }
  return cell;
}

std::string PointText(const SuitePoint& p) {
  if (p.point == 0) return "the plan's load";
  if (!p.closed_loop) return absl::StrFormat("%.6g/s", p.point);
  return p.point == 1 ? "1 client" : absl::StrFormat("%.6g clients", p.point);
}

std::string PointTitle(const SuitePoint& p) {
  return absl::StrCat(p.case_name, p.category.empty() ? "" : absl::StrCat(" (", p.category, ")"),
                      ", ", PointText(p));
}

// "TARGET vs BASELINE: 4.87× lower throughput, …", or "" when either has no figures.
std::string SummaryLine(const SuiteTable& t, const SuitePoint& p, size_t i,
                        std::string (*escape)(absl::string_view)) {
  if (!p.targets[0] || !p.targets[i]) return "";
  std::vector<std::string> phrases;
  for (const Metric& m : kMetrics) {
    const Spread& base = (*p.targets[0]).*m.field;
    const Spread& value = (*p.targets[i]).*m.field;
    std::string phrase = RatioPhrase(base.median, value.median, m.what);
    if (RatioWords(base.median, value.median) != "same" &&
        BothWithinIntervals(m, *p.targets[0], *p.targets[i])) {
      phrase = absl::StrCat(m.what, " ", kWithinIntervals);
    } else if (NoClearWinner(base, value)) {
      absl::StrAppend(&phrase, " (no clear winner)");
    }
    if (FewSamples(m, *p.targets[0]) || FewSamples(m, *p.targets[i])) phrase += "*";
    phrases.push_back(std::move(phrase));
  }
  std::string line = absl::StrCat(escape(t.targets[i]), " vs ", escape(t.targets[0]), ": ",
                                  absl::StrJoin(phrases, ", "));
  if (p.targets[0]->generator_limited_runs > 0 || p.targets[i]->generator_limited_runs > 0) {
    absl::StrAppend(&line, " — GENERATOR-LIMITED runs in these figures");
  }
  return line;
}

// The summary by category: per case, each target at its best throughput point.
struct CategoryRow {
  std::string category;
  std::vector<std::string> cases;
  // Per compared target (index ≥ 1): per metric, the ratios value / baseline over the cases.
  std::vector<std::vector<std::vector<double>>> ratios;
  std::vector<size_t> no_clear_winner;    // per target: cases with no clear throughput winner
  std::vector<size_t> generator_limited;  // per target: cases whose figures include one
  std::vector<size_t> compared;           // per target: cases with figures on both sides
  // Per target: cases whose p99 lay inside both 95 % intervals (left out of the p99 range).
  std::vector<size_t> p99_within;
  // Per target: where the best throughput was, for the cases with several points ("insert
  // users at 2 clients (mariadb) and 4 clients (postgresql)").
  std::vector<std::vector<std::string>> best_points;
};

std::vector<CategoryRow> Categories(const SuiteTable& t) {
  // Per case, per target: the point with the best median throughput.
  std::vector<std::string> case_order;
  std::map<std::string, std::string> category_of;
  std::map<std::string, std::vector<const PointFigures*>> best;
  std::map<std::string, std::vector<const SuitePoint*>> best_at;
  std::map<std::string, size_t> points_of;
  for (const SuitePoint& p : t.points) {
    if (!best.contains(p.case_name)) {
      case_order.push_back(p.case_name);
      category_of[p.case_name] = p.category;
      best[p.case_name].assign(t.targets.size(), nullptr);
      best_at[p.case_name].assign(t.targets.size(), nullptr);
    }
    ++points_of[p.case_name];
    std::vector<const PointFigures*>& b = best[p.case_name];
    for (size_t i = 0; i < t.targets.size(); ++i) {
      if (p.targets[i] &&
          (b[i] == nullptr || p.targets[i]->throughput.median > b[i]->throughput.median)) {
        b[i] = &*p.targets[i];
        best_at[p.case_name][i] = &p;
      }
    }
  }
  // Categories in the order WORKLOADS.md gives them, then others as first seen.
  std::vector<std::string> order = {"inserts", "selects",      "updates",
                                    "deletes", "transactions", "mixed"};
  for (const std::string& name : case_order) {
    const std::string& category = category_of[name];
    if (std::find(order.begin(), order.end(), category) == order.end()) order.push_back(category);
  }
  std::vector<CategoryRow> rows;
  for (const std::string& category : order) {
    CategoryRow row{.category = category.empty() ? "(no category)" : category,
                    .cases = {},
                    .ratios = std::vector<std::vector<std::vector<double>>>(
                        t.targets.size(), std::vector<std::vector<double>>(std::size(kMetrics))),
                    .no_clear_winner = std::vector<size_t>(t.targets.size(), 0),
                    .generator_limited = std::vector<size_t>(t.targets.size(), 0),
                    .compared = std::vector<size_t>(t.targets.size(), 0),
                    .p99_within = std::vector<size_t>(t.targets.size(), 0),
                    .best_points = std::vector<std::vector<std::string>>(t.targets.size())};
    for (const std::string& name : case_order) {
      if (category_of[name] != category) continue;
      row.cases.push_back(name);
      const std::vector<const PointFigures*>& b = best[name];
      for (size_t i = 1; i < t.targets.size(); ++i) {
        if (b[0] == nullptr || b[i] == nullptr) continue;
        ++row.compared[i];
        if (points_of[name] > 1) {
          const SuitePoint* at_base = best_at[name][0];
          const SuitePoint* at_value = best_at[name][i];
          row.best_points[i].push_back(
              at_base->point == at_value->point
                  ? absl::StrCat(name, " at ", PointText(*at_base), " on both")
                  : absl::StrCat(name, " at ", PointText(*at_value), " (", t.targets[i], ") and ",
                                 PointText(*at_base), " (", t.targets[0], ")"));
        }
        for (size_t m = 0; m < std::size(kMetrics); ++m) {
          if (BothWithinIntervals(kMetrics[m], *b[0], *b[i])) {
            ++row.p99_within[i];
            continue;
          }
          const double base = (b[0]->*kMetrics[m].field).median;
          const double value = (b[i]->*kMetrics[m].field).median;
          if (base > 0 && value > 0) row.ratios[i][m].push_back(value / base);
        }
        row.no_clear_winner[i] += NoClearWinner(b[0]->throughput, b[i]->throughput);
        row.generator_limited[i] +=
            b[0]->generator_limited_runs > 0 || b[i]->generator_limited_runs > 0;
      }
    }
    if (!row.cases.empty()) rows.push_back(std::move(row));
  }
  return rows;
}

// The range of ratios as the published summaries say one: "1.52×–4.87× higher throughput",
// "from 2.00× lower to 1.50× higher throughput", "4.87× higher throughput" (one case or all
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

// A metric's range over a category's cases for target i; the p99 of cases inside both
// intervals is left out of it (CategoryNotes counts them).
std::string CategoryPhrase(const CategoryRow& row, size_t i, size_t m) {
  if (kMetrics[m].p99 && row.ratios[i][m].empty() && row.p99_within[i] > 0) {
    return absl::StrCat(kMetrics[m].what, " ", kWithinIntervals);
  }
  return RangePhrase(row.ratios[i][m], kMetrics[m].what);
}

std::string CategoryNotes(const CategoryRow& row, size_t i) {
  std::vector<std::string> notes;
  if (row.p99_within[i] > 0 && row.p99_within[i] < row.compared[i]) {
    notes.push_back(absl::StrCat("p99 ", kWithinIntervals, " in ", row.p99_within[i], " of ",
                                 row.compared[i], " cases (left out of its range)"));
  }
  if (!row.best_points[i].empty()) {
    notes.push_back(absl::StrCat("best throughput: ", absl::StrJoin(row.best_points[i], ", ")));
  }
  if (row.compared[i] < row.cases.size()) {
    notes.push_back(absl::StrCat(row.cases.size() - row.compared[i], " of ", row.cases.size(),
                                 " cases without figures on both sides"));
  }
  if (row.no_clear_winner[i] > 0) {
    notes.push_back(absl::StrCat("no clear winner on throughput in ", row.no_clear_winner[i],
                                 " of ", row.compared[i], " cases"));
  }
  if (row.generator_limited[i] > 0) {
    notes.push_back(absl::StrCat("GENERATOR-LIMITED runs in ", row.generator_limited[i], " of ",
                                 row.compared[i], " cases"));
  }
  return absl::StrJoin(notes, "; ");
}

std::string NoEscape(absl::string_view text) { return std::string(text); }

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
  return absl::StrFormat("%.6g", run.point());
}

std::string RepetitionText(const v1::SuiteRun& run) {
  return run.discarded() || run.repetition() == 0 ? "warm-up" : absl::StrCat(run.repetition());
}

// The lines every format opens with, as plain text (escaped by the caller).
std::vector<std::string> Preamble(const v1::SuiteIndex& index, const SuiteTable& t) {
  std::vector<std::string> lines;
  lines.push_back(
      absl::StrCat("Started ", index.started_at().empty() ? "?" : index.started_at(), ", ",
                   index.finished_at().empty() ? "not finished"
                                               : absl::StrCat("finished ", index.finished_at())));
  if (!t.targets.empty()) {
    lines.push_back(absl::StrCat("Baseline: ", t.targets[0],
                                 " (the first target); every ratio is a target against it."));
  }
  size_t discarded = 0, measured = 0, left_out = 0;
  for (int i = 0; i < index.runs_size(); ++i) {
    if (index.runs(i).discarded()) {
      ++discarded;
    } else if (t.runs[i].measured) {
      ++measured;
    } else {
      ++left_out;
    }
  }
  lines.push_back(absl::StrCat("Runs: ", index.runs_size(), " (", measured, " measured, ",
                               discarded, " discarded warm-up, ", left_out,
                               " missing or not finished); only measured runs enter the figures."));
  if (t.repetitions > 1) {
    lines.push_back(absl::StrCat(
        "Repetitions: up to ", t.repetitions,
        " measured runs per case, point and target; each figure is their median with the spread "
        "[min–max]; a "
        "difference between targets smaller than the spread of either is marked \"no clear "
        "winner\"."));
  }
  lines.push_back(
      "GENERATOR-LIMITED marks figures from runs in which the generator, not the database, may "
      "have set the pace.");
  return lines;
}

std::vector<std::vector<std::string>> RunRows(const v1::SuiteIndex& index, const SuiteTable& t) {
  std::vector<std::vector<std::string>> rows = {
      {"#", "target", "case", "point", "repetition", "status", "report"}};
  for (int i = 0; i < index.runs_size(); ++i) {
    const v1::SuiteRun& run = index.runs(i);
    rows.push_back({absl::StrCat(i + 1), run.target(), run.case_name(), PointLabel(run, index),
                    RepetitionText(run), t.runs[i].status, run.report()});
  }
  return rows;
}

std::string RenderText(const v1::SuiteIndex& index, const SuiteTable& t) {
  std::string out = absl::StrCat("dbload suite report: ", index.suite().name(), "\n");
  for (const std::string& line : Preamble(index, t)) absl::StrAppend(&out, line, "\n");
  // The runs table, left-aligned throughout: a tidy list, not numbers to compare.
  absl::StrAppend(&out, "\nRuns\n");
  for (const auto& row : RunRows(index, t)) {
    absl::StrAppend(&out, "  ", absl::StrJoin(row, " | "), "\n");
  }
  absl::StrAppend(&out, "\nPer case\n");
  for (const SuitePoint& p : t.points) {
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> header = {""};
    for (const std::string& target : t.targets) header.push_back(target);
    table.push_back(header);
    for (const Metric& m : kMetrics) {
      std::vector<std::string> line = {m.label};
      for (size_t i = 0; i < t.targets.size(); ++i) {
        line.push_back(Cell(m, p.targets[0], p.targets[i], i == 0));
      }
      table.push_back(line);
    }
    std::vector<std::string> runs = {"runs"};
    for (size_t i = 0; i < t.targets.size(); ++i) runs.push_back(RunsCell(p.targets[i]));
    table.push_back(runs);
    absl::StrAppend(&out, "\n", PointTitle(p), "\n", FormatTextTable(table));
    for (size_t i = 1; i < t.targets.size(); ++i) {
      const std::string line = SummaryLine(t, p, i, NoEscape);
      if (!line.empty()) absl::StrAppend(&out, "  ", line, "\n");
    }
    if (AnyFewSamples(p)) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
  }
  if (t.targets.size() < 2) return out;
  absl::StrAppend(&out,
                  "\nSummary by category (each case at each target's best throughput; "
                  "ratios against ",
                  t.targets[0], ")\n");
  for (const CategoryRow& row : Categories(t)) {
    absl::StrAppend(&out, "  ", row.category, " (", row.cases.size(),
                    row.cases.size() == 1 ? " case: " : " cases: ", absl::StrJoin(row.cases, ", "),
                    ")\n");
    for (size_t i = 1; i < t.targets.size(); ++i) {
      std::vector<std::string> phrases;
      for (size_t m = 0; m < std::size(kMetrics); ++m) {
        phrases.push_back(CategoryPhrase(row, i, m));
      }
      const std::string notes = CategoryNotes(row, i);
      absl::StrAppend(&out, "    ", t.targets[i], " vs ", t.targets[0], ": ",
                      row.compared[i] == 0 ? "no case with figures on both sides"
                                           : absl::StrJoin(phrases, ", "),
                      notes.empty() ? "" : absl::StrCat(" (", notes, ")"), "\n");
    }
  }
  return out;
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  return absl::StrCat("| ", absl::StrJoin(cells, " | "), " |\n");
}

std::string RenderMarkdown(const v1::SuiteIndex& index, const SuiteTable& t) {
  std::string out =
      absl::StrCat("## dbload suite report: ", MarkdownEscape(index.suite().name()), "\n\n");
  for (const std::string& line : Preamble(index, t)) {
    absl::StrAppend(&out, "- ", MarkdownEscape(line), "\n");
  }
  absl::StrAppend(&out, "\n### Runs\n\n");
  const std::vector<std::vector<std::string>> runs = RunRows(index, t);
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<std::string> cells;
    for (const std::string& cell : runs[r]) cells.push_back(MarkdownEscape(cell));
    absl::StrAppend(&out, MarkdownRow(cells));
    if (r == 0) absl::StrAppend(&out, "|---:|---|---|---|---|---|---|\n");
  }
  absl::StrAppend(&out, "\n### Per case\n");
  for (const SuitePoint& p : t.points) {
    absl::StrAppend(&out, "\n#### ", MarkdownEscape(PointTitle(p)), "\n\n| metric |");
    for (const std::string& target : t.targets)
      absl::StrAppend(&out, " ", MarkdownEscape(target), " |");
    absl::StrAppend(&out, "\n|---|");
    for (size_t i = 0; i < t.targets.size(); ++i) absl::StrAppend(&out, "---:|");
    absl::StrAppend(&out, "\n");
    for (const Metric& m : kMetrics) {
      std::vector<std::string> cells = {m.label};
      for (size_t i = 0; i < t.targets.size(); ++i) {
        cells.push_back(Cell(m, p.targets[0], p.targets[i], i == 0));
      }
      absl::StrAppend(&out, MarkdownRow(cells));
    }
    std::vector<std::string> cells = {"runs"};
    for (size_t i = 0; i < t.targets.size(); ++i) cells.push_back(RunsCell(p.targets[i]));
    absl::StrAppend(&out, MarkdownRow(cells));
    std::string lines;
    for (size_t i = 1; i < t.targets.size(); ++i) {
      const std::string line = SummaryLine(t, p, i, MarkdownEscape);
      if (!line.empty()) absl::StrAppend(&lines, "- ", line, "\n");
    }
    if (!lines.empty()) absl::StrAppend(&out, "\n", lines);
    if (AnyFewSamples(p)) absl::StrAppend(&out, "\n", MarkdownEscape(kFewSamplesNote), "\n");
  }
  if (t.targets.size() < 2) return out;
  absl::StrAppend(&out,
                  "\n### Summary by category\n\nEach case at each target's best throughput; "
                  "ratios against **",
                  MarkdownEscape(t.targets[0]), "**.\n\n| category | cases | target |");
  for (const Metric& m : kMetrics) absl::StrAppend(&out, " ", m.what, " |");
  absl::StrAppend(&out, " notes |\n|---|---|---|---|---|---|---|\n");
  for (const CategoryRow& row : Categories(t)) {
    std::vector<std::string> names;
    for (const std::string& name : row.cases) names.push_back(MarkdownEscape(name));
    for (size_t i = 1; i < t.targets.size(); ++i) {
      std::vector<std::string> cells = {MarkdownEscape(row.category), absl::StrJoin(names, ", "),
                                        MarkdownEscape(t.targets[i])};
      for (size_t m = 0; m < std::size(kMetrics); ++m) {
        cells.push_back(row.compared[i] == 0 ? "—" : CategoryPhrase(row, i, m));
      }
      cells.push_back(CategoryNotes(row, i));
      absl::StrAppend(&out, MarkdownRow(cells));
    }
  }
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

// Green when the target beats the baseline on this metric, red when it loses; neither when
// equal or when the difference is within the spread.
std::string RatioCss(const Metric& m, const std::optional<PointFigures>& base,
                     const std::optional<PointFigures>& value) {
  if (!base || !value) return "";
  const Spread& b = (*base).*m.field;
  const Spread& v = (*value).*m.field;
  const std::string words = RatioWords(b.median, v.median);
  if (words.empty() || words == "same" || NoClearWinner(b, v) ||
      BothWithinIntervals(m, *base, *value)) {
    return "";
  }
  return (v.median > b.median) == m.higher_is_better ? "better" : "worse";
}

std::string HtmlPointSection(const SuiteTable& t, const SuitePoint& p) {
  std::string out = absl::StrCat("<h3>", HtmlEscape(PointText(p)), "</h3>\n");
  // Bars: throughput per target, against the best of them.
  double top = 0;
  for (const auto& f : p.targets) {
    if (f) top = std::max(top, f->throughput.max);
  }
  absl::StrAppend(&out, "<table class=\"suite-case\">\n<tr>", Th("target", true),
                  Th("throughput", true));
  for (const Metric& m : kMetrics) absl::StrAppend(&out, Th(m.label));
  absl::StrAppend(&out, Th("runs"), "</tr>\n");
  for (size_t i = 0; i < t.targets.size(); ++i) {
    const std::optional<PointFigures>& f = p.targets[i];
    const bool limited = f && f->generator_limited_runs > 0;
    absl::StrAppend(&out, "<tr", limited ? " class=\"generator-limited\"" : "", ">",
                    Td(absl::StrCat(t.targets[i], i == 0 ? " (baseline)" : ""), "text"));
    if (f && top > 0) {
      absl::StrAppend(
          &out, "<td class=\"bar-cell\"><div class=\"bar", limited ? " limited" : "",
          "\" style=\"width:", absl::StrFormat("%.1f", 100 * f->throughput.median / top),
          "%\" title=\"", HtmlEscape(FigureText(f->throughput, FormatRate)), "\"></div></td>");
    } else {
      absl::StrAppend(&out, "<td class=\"bar-cell\"></td>");
    }
    for (const Metric& m : kMetrics) {
      absl::StrAppend(&out, Td(Cell(m, p.targets[0], f, i == 0), RatioCss(m, p.targets[0], f)));
    }
    absl::StrAppend(&out, Td(RunsCell(f), limited ? "warn" : ""), "</tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
  for (size_t i = 1; i < t.targets.size(); ++i) {
    const std::string line = SummaryLine(t, p, i, NoEscape);
    if (!line.empty()) absl::StrAppend(&out, "<p class=\"summary\">", HtmlEscape(line), "</p>\n");
  }
  if (AnyFewSamples(p)) {
    absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(kFewSamplesNote), "</p>\n");
  }
  // The probe's counters per query, side by side.
  std::vector<std::string> keys;
  for (const auto& f : p.targets) {
    if (!f) continue;
    for (const auto& [key, spread] : f->per_query) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  if (!keys.empty()) {
    std::sort(keys.begin(), keys.end());
    absl::StrAppend(&out, "<table class=\"saturation\">\n<tr>",
                    Th("per query executed (probe)", true));
    for (const std::string& target : t.targets) absl::StrAppend(&out, Th(target));
    absl::StrAppend(&out, "</tr>\n");
    for (const std::string& key : keys) {
      absl::StrAppend(&out, "<tr>", Td(key, "text"));
      for (size_t i = 0; i < t.targets.size(); ++i) {
        const std::optional<PointFigures>& f = p.targets[i];
        if (!f || !f->per_query.contains(key)) {
          absl::StrAppend(&out, Td("—"));
          continue;
        }
        const Spread& s = f->per_query.at(key);
        const auto g = [](double v) { return absl::StrFormat("%.6g", v); };
        // A spread only where the repetitions differ: most counters are the same in every run.
        absl::StrAppend(&out,
                        Td(s.n <= 1 || s.max == s.min
                               ? g(s.median)
                               : absl::StrCat(g(s.median), " [", g(s.min), "–", g(s.max), "]")));
      }
      absl::StrAppend(&out, "</tr>\n");
    }
    absl::StrAppend(&out, "</table>\n");
  }
  return out;
}

// The two charts of one case: throughput vs load point, and latency (p50, p99) vs achieved
// throughput, one line per target (and percentile), points in load order.
std::pair<html::ChartSpec, html::ChartSpec> CaseCharts(
    const SuiteTable& t, const std::vector<const SuitePoint*>& points) {
  const bool closed = !points.empty() && points.front()->closed_loop;
  html::ChartSpec throughput{
      .title = absl::StrCat("Throughput vs ", closed ? "clients" : "target rate"),
      .x_label = closed ? "clients" : "target rate (/s)",
      .y_label = "queries/s",
      .percentile_x = false,
      .series = {},
      .vlines = {},
      .empty = "No measured run of this case."};
  html::ChartSpec latency{.title = "Response time vs achieved throughput",
                          .x_label = "achieved throughput (/s)",
                          .y_label = "ms",
                          .percentile_x = false,
                          .series = {},
                          .vlines = {},
                          .empty = "No measured run of this case."};
  for (size_t i = 0; i < t.targets.size(); ++i) {
    html::Series rate{.name = t.targets[i], .x = {}, .y = {}};
    html::Series p50{.name = absl::StrCat(t.targets[i], " p50"), .x = {}, .y = {}};
    html::Series p99{.name = absl::StrCat(t.targets[i], " p99"), .x = {}, .y = {}};
    for (const SuitePoint* p : points) {
      const std::optional<PointFigures>& f = p->targets[i];
      if (!f) continue;
      const bool limited = f->generator_limited_runs > 0;
      rate.x.push_back(p->point);
      rate.y.push_back(f->throughput.median);
      rate.lo.push_back(f->throughput.min);
      rate.hi.push_back(f->throughput.max);
      rate.flags.push_back(limited);
      for (auto [series, spread] : {std::pair{&p50, &f->p50_ms}, std::pair{&p99, &f->p99_ms}}) {
        series->x.push_back(f->throughput.median);
        series->y.push_back(spread->median);
        series->lo.push_back(spread->min);
        series->hi.push_back(spread->max);
        series->flags.push_back(limited);
      }
    }
    throughput.series.push_back(std::move(rate));
    latency.series.push_back(std::move(p50));
    latency.series.push_back(std::move(p99));
  }
  return {throughput, latency};
}

std::string RenderHtml(const v1::SuiteIndex& index, const SuiteTable& t) {
  const std::string title = absl::StrCat("dbload suite report: ", index.suite().name());
  std::string out = html::PageStart(title);
  absl::StrAppend(&out, "<h1>", HtmlEscape(title), "</h1>\n");
  for (const std::string& line : Preamble(index, t)) {
    absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(line), "</p>\n");
  }
  absl::StrAppend(&out, "<h2>Runs</h2>\n<table class=\"runs\">\n");
  const std::vector<std::vector<std::string>> runs = RunRows(index, t);
  for (size_t r = 0; r < runs.size(); ++r) {
    const bool limited =
        r > 0 && t.runs[r - 1].status.find("GENERATOR-LIMITED") != std::string::npos;
    absl::StrAppend(&out, "<tr",
                    r == 0                   ? ""
                    : limited                ? " class=\"generator-limited\""
                    : t.runs[r - 1].measured ? ""
                                             : " class=\"left-out\"",
                    ">");
    for (const std::string& cell : runs[r]) {
      absl::StrAppend(&out, r == 0 ? Th(cell, true) : Td(cell, "text"));
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");

  std::string charts;
  std::vector<std::string> case_order;
  for (const SuitePoint& p : t.points) {
    if (std::find(case_order.begin(), case_order.end(), p.case_name) == case_order.end()) {
      case_order.push_back(p.case_name);
    }
  }
  absl::StrAppend(&out, "<h2>Per case</h2>\n");
  for (size_t c = 0; c < case_order.size(); ++c) {
    std::vector<const SuitePoint*> points;
    for (const SuitePoint& p : t.points) {
      if (p.case_name == case_order[c]) points.push_back(&p);
    }
    const std::string& category = points.front()->category;
    absl::StrAppend(&out, "<h2 class=\"case\">", HtmlEscape(case_order[c]),
                    category.empty() ? "" : absl::StrCat(" (", HtmlEscape(category), ")"),
                    "</h2>\n");
    const auto [throughput, latency] = CaseCharts(t, points);
    const std::string tname = absl::StrCat("case-", c + 1, "-throughput");
    const std::string lname = absl::StrCat("case-", c + 1, "-latency");
    absl::StrAppend(&out, html::ChartDiv(tname, throughput.empty),
                    html::ChartDiv(lname, latency.empty));
    absl::StrAppend(&charts, charts.empty() ? "" : ",", JsonQuote(tname), ":",
                    html::ChartJson(throughput), ",", JsonQuote(lname), ":",
                    html::ChartJson(latency));
    for (const SuitePoint* p : points) absl::StrAppend(&out, HtmlPointSection(t, *p));
  }

  if (t.targets.size() >= 2) {
    absl::StrAppend(&out,
                    "<h2>Summary by category</h2>\n<p class=\"note\">Each case at each target's "
                    "best throughput; ratios against ",
                    HtmlEscape(t.targets[0]), ".</p>\n<table class=\"summary\">\n<tr>",
                    Th("category", true), Th("cases", true), Th("target", true));
    for (const Metric& m : kMetrics) absl::StrAppend(&out, Th(m.what, true));
    absl::StrAppend(&out, Th("notes", true), "</tr>\n");
    for (const CategoryRow& row : Categories(t)) {
      for (size_t i = 1; i < t.targets.size(); ++i) {
        absl::StrAppend(&out, "<tr>", Td(row.category, "text"),
                        Td(absl::StrJoin(row.cases, ", "), "text"), Td(t.targets[i], "text"));
        for (size_t m = 0; m < std::size(kMetrics); ++m) {
          absl::StrAppend(&out, Td(row.compared[i] == 0 ? "—" : CategoryPhrase(row, i, m), "text"));
        }
        absl::StrAppend(&out, Td(CategoryNotes(row, i), "text"), "</tr>\n");
      }
    }
    absl::StrAppend(&out, "</table>\n");
  }
  absl::StrAppend(&out, html::PageEnd(absl::StrCat("{\"charts\":{", charts, "}}")));
  return out;
}

}  // namespace

std::string RenderSuiteReport(const v1::SuiteIndex& index,
                              const std::vector<v1::RunReport>& reports, SuiteFormat format,
                              const std::vector<std::string>& problems) {
  const SuiteTable table = BuildSuiteTable(index, reports, problems);
  switch (format) {
    case SuiteFormat::kMarkdown:
      return RenderMarkdown(index, table);
    case SuiteFormat::kHtml:
      return RenderHtml(index, table);
    case SuiteFormat::kText:
      break;
  }
  return RenderText(index, table);
}

}  // namespace dbload
