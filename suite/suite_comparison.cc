#include "suite/suite_comparison.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"

namespace dbload::suite_report {

// The cases without points: what the shop comparison publishes per case.
const Metric kCaseMetrics[3] = {
    {"throughput", "throughput", true, &PointFigures::throughput, FormatPerSecond},
    {"mean", "mean latency", false, &PointFigures::mean_ms, FormatLatency},
    {"p99", "p99 latency", false, &PointFigures::p99_ms, FormatLatency, true},
};
// The sweeps: what sysbench studies publish per thread count.
const Metric kSweepMetrics[4] = {
    {"TPS", "TPS", true, &PointFigures::throughput, FormatCount},
    {"QPS", "QPS", true, &PointFigures::qps, FormatCount, false, true},
    {"p95", "p95 latency", false, &PointFigures::p95_ms, FormatLatency},
    {"p99", "p99 latency", false, &PointFigures::p99_ms, FormatLatency, true},
};
const Metric kTpccSweepMetrics[5] = {
    {"tpmC", "tpmC", true, &PointFigures::tpmc, FormatCount, false, false, true},
    kSweepMetrics[0],
    kSweepMetrics[1],
    kSweepMetrics[2],
    kSweepMetrics[3],
};

std::span<const Metric> SweepMetricsOf(const CaseView& c) {
  for (const SuitePoint* p : c.points) {
    for (const std::optional<PointFigures>& f : p->targets) {
      if (f && f->has_tpmc) return kTpccSweepMetrics;
    }
  }
  return kSweepMetrics;
}

namespace {

// Both medians of the runs' p99 lie inside both targets' 95 % intervals: no difference shown.
bool BothWithinIntervals(const Metric& m, const PointFigures& base, const PointFigures& value) {
  if (!m.p99 || !base.has_p99_basis || !value.has_p99_basis) return false;
  const auto inside = [](double ms, const PointFigures& f) {
    return ms >= f.p99_ci_low_ms && (f.p99_ci_high_open || ms <= f.p99_ci_high_ms);
  };
  return inside(base.p99_ms.median, value) && inside(value.p99_ms.median, base);
}

bool FewSamples(const Metric& m, const PointFigures& f) { return m.p99 && f.P99FewSamples(); }
bool Known(const Metric& m, const PointFigures& f) {
  return (!m.qps || f.has_qps) && (!m.tpmc || f.has_tpmc);
}

constexpr char kWithinIntervals[] = "within the 95% confidence intervals";

// The headlines: throughput and mean latency, as the shop source's summary.
const Metric kHeadlineMetrics[] = {kCaseMetrics[0], kCaseMetrics[1]};

// The median, and with several runs their spread: "21,338 [20,960–21,500]".
std::string FigureText(const Spread& s, std::string (*format)(double)) {
  if (s.n <= 1) return format(s.median);
  return absl::StrCat(format(s.median), " [", format(s.min), "–", format(s.max), "]");
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

}  // namespace

// A table cell: the figure ("*" when its p99 rests on too few samples), "—" where there is none.
std::string Cell(const Metric& m, const std::optional<PointFigures>& f) {
  if (!f || !Known(m, *f)) return "—";
  return absl::StrCat(FigureText((*f).*m.field, m.format), FewSamples(m, *f) ? "*" : "");
}

std::string PhrasesOf(std::span<const Metric> metrics, const PointFigures& base,
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

}  // namespace dbload::suite_report
