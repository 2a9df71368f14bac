#include "report/report_html_charts.h"

#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/html_kit.h"

namespace dbload::report_html {


namespace {

// Where stages begin (and the warm-up ends) on the time axis: intervals are stamped at their
// end, so a stage begins where the previous interval ended.
std::vector<html::VerticalLine> TimeMarks(const v1::RunReport& r) {
  std::vector<html::VerticalLine> marks;
  for (int i = 1; i < r.intervals_size(); ++i) {
    const v1::IntervalSample& before = r.intervals(i - 1);
    const v1::IntervalSample& now = r.intervals(i);
    if (before.warmup() && !now.warmup()) {
      marks.push_back(
          {.x = before.elapsed_s(), .label = "end of warm-up", .css_class = "warmup-end"});
    }
    if (now.stage() != before.stage() && now.stage() > 0) {
      std::string name = absl::StrCat("stage ", now.stage());
      if (now.stage() <= static_cast<uint32_t>(r.stages_size())) {
        name = r.stages(now.stage() - 1).name();
      }
      marks.push_back({.x = before.elapsed_s(), .label = name, .css_class = "stage-boundary"});
    }
  }
  return marks;
}

// Probe values, one panel each: counters as per-second rates between readings, gauges as
// levels. Which is which comes from the report's saturation deltas; a value they do not name
// is drawn as a level (as read).
std::vector<html::ChartSpec> ProbePanels(const v1::RunReport& r) {
  std::map<std::string, bool> gauge;
  for (const auto& d : r.saturation()) gauge[absl::StrCat(d.source(), "/", d.name())] = d.gauge();
  for (const auto& s : r.stages()) {
    for (const auto& d : s.saturation()) gauge[absl::StrCat(d.source(), "/", d.name())] = d.gauge();
  }
  std::set<std::string> names;
  for (const auto& sample : r.probe_samples()) {
    for (const auto& [name, value] : sample.values()) names.insert(name);
  }
  std::vector<html::ChartSpec> panels;
  for (const std::string& name : names) {
    const auto known = gauge.find(name);
    const bool counter = known != gauge.end() && !known->second;
    html::Series series{.name = counter ? "per second" : "level", .x = {}, .y = {}};
    bool have_previous = false;
    double previous_t = 0, previous_v = 0;
    for (const auto& sample : r.probe_samples()) {
      const auto it = sample.values().find(name);
      if (it == sample.values().end()) continue;
      const double t = sample.elapsed_s(), v = it->second;
      if (!counter) {
        series.x.push_back(t);
        series.y.push_back(v);
      } else if (have_previous && t > previous_t && v >= previous_v) {
        // A counter that went back (a server restart) gives no rate for that gap.
        series.x.push_back(t);
        series.y.push_back((v - previous_v) / (t - previous_t));
      }
      have_previous = true;
      previous_t = t;
      previous_v = v;
    }
    panels.push_back({.title = absl::StrCat(name, counter ? " (per second)" : " (level)"),
                      .x_label = "elapsed (s)",
                      .y_label = counter ? "/s" : "",
                      .percentile_x = false,
                      .series = {std::move(series)},
                      .vlines = TimeMarks(r),
                      .empty = absl::StrCat(name, ": not enough readings for a rate")});
  }
  return panels;
}

}  // namespace

std::string ReportDataJson(const v1::RunReport& r) {
  html::Series target{.name = "target", .x = {}, .y = {}};
  html::Series achieved{.name = "achieved", .x = {}, .y = {}};
  html::Series p50{.name = "p50", .x = {}, .y = {}};
  html::Series p99{.name = "p99", .x = {}, .y = {}};
  html::Series p999{.name = "p99.9", .x = {}, .y = {}};
  bool any_target = false;
  for (const v1::IntervalSample& s : r.intervals()) {
    any_target |= s.target_rate() > 0;
    for (html::Series* series : {&target, &achieved, &p50, &p99, &p999}) {
      series->x.push_back(s.elapsed_s());
    }
    target.y.push_back(s.target_rate());
    achieved.y.push_back(s.achieved_rate());
    p50.y.push_back(s.p50_ms());
    p99.y.push_back(s.p99_ms());
    p999.y.push_back(s.p999_ms());
  }
  const std::vector<html::VerticalLine> marks = TimeMarks(r);
  html::ChartSpec rate{.title = "Achieved vs target rate",
                       .x_label = "elapsed (s)",
                       .y_label = "queries/s",
                       .percentile_x = false,
                       .series = {achieved},
                       .vlines = marks,
                       .empty = "No intervals in this report."};
  if (any_target) rate.series.push_back(target);
  html::ChartSpec latency{.title = "Response time over time (from intended start)",
                          .x_label = "elapsed (s)",
                          .y_label = "ms",
                          .percentile_x = false,
                          .series = {p50, p99, p999},
                          .vlines = marks,
                          .empty = "No intervals in this report."};
  html::ChartSpec spectrum{.title = "Response time by percentile (merged histogram)",
                           .x_label = "percentile",
                           .y_label = "ms",
                           .percentile_x = true,
                           .series = {},
                           .vlines = {},
                           .empty = "No response-time histogram in this report."};
  for (const v1::QueryTypeReport& q : r.query_types()) {
    absl::StatusOr<Histogram> h = Histogram::FromProto(q.response_histogram());
    if (!h.ok() || h->Empty()) continue;
    spectrum.series.push_back(html::SpectrumSeries(q.name(), PercentileSpectrum(*h)));
    // Right of this percentile fewer than kFewSamplesBeyond samples remain: the curve there is
    // a handful of samples, not a distribution.
    const double n = static_cast<double>(h->TotalCount());
    if (n > kFewSamplesBeyond) {
      spectrum.vlines.push_back({.x = 100 * (1 - static_cast<double>(kFewSamplesBeyond) / n),
                                 .label = r.query_types_size() > 1
                                              ? absl::StrCat("< 10 samples beyond (", q.name(), ")")
                                              : "< 10 samples beyond",
                                 .css_class = "few-samples"});
    }
  }
  std::string panels = "[";
  const std::vector<html::ChartSpec> probe = ProbePanels(r);
  for (size_t i = 0; i < probe.size(); ++i) {
    absl::StrAppend(&panels, i > 0 ? "," : "", html::ChartJson(probe[i]));
  }
  panels += "]";
  return absl::StrCat(
      "{\"charts\":{\"rate\":", html::ChartJson(rate), ",\"latency\":", html::ChartJson(latency),
      ",\"spectrum\":", html::ChartJson(spectrum), ",\"saturation\":", panels, "}}");
}

}  // namespace dbload::report_html
