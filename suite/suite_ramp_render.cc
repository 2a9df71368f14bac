#include "suite/suite_ramp_render.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_html.h"
#include "suite/suite_ramp.h"
#include "suite/suite_ramp_words.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ramp::Compare;
using ramp::CompareLine;
using ramp::KneeLine;
using ramp::LevelCell;
using ramp::MissedWords;
using ramp::OutcomeWords;
using ramp::RampComparison;
using ramp::SearchLine;

constexpr char kNoData[] = "—";

// CPU in cores as top shows it, % of one core, one decimal in every row: "77.0 %".
std::string HumanCpu(double cores) { return absl::StrFormat("%.1f %%", cores * 100); }

std::string BytesPerSecond(double bytes_per_s) { return FormatBytes(bytes_per_s) + "/s"; }

std::vector<std::string> Header(const RampCase& c) {
  return {"step",         c.open_loop ? "target rate" : "clients",
          "throughput",   "p99",
          "SLO",          "CPU",
          "connections",  "disk writes",
          "rows inserted"};
}

std::vector<std::string> StepRow(const RampCase& c, const RampStep& s, bool* few_readings) {
  const v1::KneeStep& k = s.step;
  const bool completed = k.executed() + k.errors() > 0;
  std::vector<std::string> row = {
      s.refine ? absl::StrCat(s.number, " (refine)") : absl::StrCat(s.number),
      LevelCell(k.level(), c.open_loop), FormatPerSecond(k.achieved_rate()),
      completed ? FormatLatency(k.p99_ms()) : kNoData,
      k.met() ? "met" : absl::StrCat("missed: ", MissedWords(k, c.spec, c.open_loop))};
  const StepSaturation& sat = s.saturation;
  const bool few = sat.readings > 0 && sat.readings < kMinProbeReadings;
  auto cell = [&](const std::optional<double>& value, std::string (*format)(double)) {
    if (!value) return std::string(kNoData);
    if (few) *few_readings = true;
    return format(*value) + (few ? kFewReadingsMark : "");
  };
  row.push_back(cell(sat.cpu_cores, HumanCpu));
  row.push_back(cell(sat.connections, [](double v) { return FormatCount(v); }));
  row.push_back(cell(sat.written_bytes_per_s, BytesPerSecond));
  row.push_back(cell(sat.rows_inserted_per_s, FormatPerSecond));
  return row;
}

constexpr char kColumnsNote[] =
    "CPU: the server's processes, % of one core; connections: the highest reading in the step; "
    "disk writes: bytes the server wrote per second (PostgreSQL: buffers written, MariaDB/MySQL: "
    "Innodb_data_written); rows inserted: per second, by each server's own counter, which count "
    "differently (PostgreSQL tup_inserted, TOAST chunks included; MariaDB Handler_write, rows "
    "of every engine, internal temporary tables included; MySQL 8 Innodb_rows_inserted); —: the "
    "probe recorded no such value on this server.";

// What one run's table needs besides its rows.
struct RunNotes {
  bool few_readings = false;
  bool unplaced = false;  // a step with no interval at its level: no saturation figures
};

std::vector<std::vector<std::string>> RunTable(const RampCase& c, const RampRun& run,
                                               RunNotes* notes) {
  std::vector<std::vector<std::string>> table = {Header(c)};
  for (const RampStep& s : run.steps) {
    table.push_back(StepRow(c, s, &notes->few_readings));
    notes->unplaced = notes->unplaced || !s.found;
  }
  return table;
}

std::string RunHeading(const RampTarget& t, const RampRun& run) {
  return run.label.empty() ? t.name : absl::StrCat(t.name, " (", run.label, ")");
}

std::vector<std::string> NoteLines(const RunNotes& notes) {
  std::vector<std::string> lines;
  if (notes.few_readings) lines.push_back(kFewReadingsNote);
  if (notes.unplaced) {
    lines.push_back("A step without saturation figures had no interval at its level.");
  }
  return lines;
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  std::vector<std::string> escaped;
  for (const std::string& cell : cells) escaped.push_back(MarkdownEscape(cell));
  return absl::StrCat("| ", absl::StrJoin(escaped, " | "), " |\n");
}

std::string Td(const std::string& text, bool left = false) {
  return absl::StrCat("<td", left ? " class=\"text\"" : "", ">", HtmlEscape(text), "</td>");
}
std::string Th(const std::string& text, bool left = false) {
  return absl::StrCat("<th", left ? " class=\"text\"" : "", ">", HtmlEscape(text), "</th>");
}

// Throughput and p99 against the level, one series per target (its first measured run, steps in
// level order), each target's knee marked.
std::pair<html::ChartSpec, html::ChartSpec> RampCharts(const RampCase& c) {
  const std::string x_label = c.open_loop ? "target rate (/s)" : "clients";
  html::ChartSpec throughput{.title = absl::StrCat("Throughput vs ", x_label, ": ", c.name),
                             .x_label = x_label,
                             .y_label = "throughput (/s)",
                             .percentile_x = false,
                             .series = {},
                             .vlines = {},
                             .empty = "No measured run of this case."};
  html::ChartSpec p99{.title = absl::StrCat("p99 vs ", x_label, ": ", c.name),
                      .x_label = x_label,
                      .y_label = "p99 (ms)",
                      .percentile_x = false,
                      .series = {},
                      .vlines = {},
                      .empty = "No measured run of this case."};
  for (const RampTarget& t : c.targets) {
    if (t.runs.empty()) continue;
    const RampRun& run = t.runs.front();
    std::vector<const v1::KneeStep*> steps;
    for (const RampStep& s : run.steps) steps.push_back(&s.step);
    std::sort(steps.begin(), steps.end(),
              [](const v1::KneeStep* a, const v1::KneeStep* b) { return a->level() < b->level(); });
    html::Series rate{.name = t.name, .x = {}, .y = {}};
    html::Series latency{.name = t.name, .x = {}, .y = {}};
    for (const v1::KneeStep* s : steps) {
      rate.x.push_back(s->level());
      rate.y.push_back(s->achieved_rate());
      if (s->executed() + s->errors() == 0) continue;  // no p99 to draw
      latency.x.push_back(s->level());
      latency.y.push_back(s->p99_ms());
    }
    throughput.series.push_back(std::move(rate));
    p99.series.push_back(std::move(latency));
    if (run.outcome == KneeOutcome::kKnee) {
      const double knee = run.steps[run.reference].step.level();
      const html::VerticalLine line{
          .x = knee,
          .label = absl::StrCat("knee ", t.name, " ", LevelCell(knee, c.open_loop)),
          .css_class = "stage-boundary"};
      throughput.vlines.push_back(line);
      p99.vlines.push_back(line);
    }
  }
  if (c.spec.p99_ns() > 0) {
    // The SLO's p99 limit as a flat line, so that the chart shows where steps crossed it.
    double low = 0, high = 0;
    bool any = false;
    for (const html::Series& s : p99.series) {
      for (double x : s.x) {
        low = any ? std::min(low, x) : x;
        high = any ? std::max(high, x) : x;
        any = true;
      }
    }
    if (any) {
      const double limit = static_cast<double>(c.spec.p99_ns()) / 1e6;
      p99.series.push_back({.name = absl::StrCat("SLO p99 ", FormatSpan(limit / 1e3)),
                            .x = {low, high},
                            .y = {limit, limit}});
    }
  }
  return {throughput, p99};
}

}  // namespace

std::string RenderRampText(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                           const std::vector<bool>& measured) {
  std::string out;
  for (const RampCase& c : BuildRampCases(index, reports, measured)) {
    absl::StrAppend(&out, "\nRamp: ", c.name, c.category.empty() ? "" : " (" + c.category + ")",
                    "\n  ", SearchLine(c), "\n");
    RunNotes notes;
    for (const RampTarget& t : c.targets) {
      if (t.runs.empty()) {
        absl::StrAppend(&out, "\n  ", t.name, ": no measured run\n");
        continue;
      }
      for (const RampRun& run : t.runs) {
        absl::StrAppend(&out, "\n  ", RunHeading(t, run), "\n");
        if (!run.steps.empty()) absl::StrAppend(&out, FormatTextTable(RunTable(c, run, &notes)));
        absl::StrAppend(&out, "  ", KneeLine(c, run), "\n");
      }
    }
    absl::StrAppend(&out, "\n");
    for (size_t i = 1; i < c.targets.size(); ++i) {
      absl::StrAppend(&out, "  ", CompareLine(c, i), "\n");
    }
    absl::StrAppend(&out, "  ", kColumnsNote, "\n");
    for (const std::string& line : NoteLines(notes)) absl::StrAppend(&out, "  ", line, "\n");
  }
  return out;
}

std::string RenderRampMarkdown(const v1::SuiteIndex& index,
                               const std::vector<v1::RunReport>& reports,
                               const std::vector<bool>& measured) {
  std::string out;
  for (const RampCase& c : BuildRampCases(index, reports, measured)) {
    absl::StrAppend(&out, "\n### Ramp: ", MarkdownEscape(c.name),
                    c.category.empty() ? "" : " (" + MarkdownEscape(c.category) + ")", "\n\n",
                    MarkdownEscape(SearchLine(c)), "\n");
    RunNotes notes;
    for (const RampTarget& t : c.targets) {
      absl::StrAppend(&out, "\n#### ", MarkdownEscape(t.name), "\n");
      if (t.runs.empty()) {
        absl::StrAppend(&out, "\nNo measured run.\n");
        continue;
      }
      for (const RampRun& run : t.runs) {
        if (!run.label.empty()) absl::StrAppend(&out, "\n", MarkdownEscape(run.label), ":\n");
        if (!run.steps.empty()) {
          const auto table = RunTable(c, run, &notes);
          absl::StrAppend(&out, "\n", MarkdownRow(table[0]),
                          "|---:|---:|---:|---:|:---|---:|---:|---:|---:|\n");
          for (size_t r = 1; r < table.size(); ++r) absl::StrAppend(&out, MarkdownRow(table[r]));
        }
        absl::StrAppend(&out, "\n", MarkdownEscape(KneeLine(c, run)), "\n");
      }
    }
    if (c.targets.size() > 1) absl::StrAppend(&out, "\n");
    for (size_t i = 1; i < c.targets.size(); ++i) {
      absl::StrAppend(&out, "- ", MarkdownEscape(CompareLine(c, i)), "\n");
    }
    absl::StrAppend(&out, "\n", MarkdownEscape(kColumnsNote), "\n");
    for (const std::string& line : NoteLines(notes)) {
      absl::StrAppend(&out, "\n", MarkdownEscape(line), "\n");
    }
  }
  return out;
}

std::string RenderRampHtml(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                           const std::vector<bool>& measured, std::string* charts) {
  std::string out;
  const std::vector<RampCase> cases = BuildRampCases(index, reports, measured);
  for (size_t n = 0; n < cases.size(); ++n) {
    const RampCase& c = cases[n];
    absl::StrAppend(&out, "<h2 class=\"case\">Ramp: ", HtmlEscape(c.name),
                    c.category.empty() ? "" : " (" + HtmlEscape(c.category) + ")", "</h2>\n",
                    "<p class=\"note\">", HtmlEscape(SearchLine(c)), "</p>\n");
    const auto [throughput, p99] = RampCharts(c);
    const std::string tname = absl::StrCat("ramp-", n + 1, "-throughput");
    const std::string pname = absl::StrCat("ramp-", n + 1, "-p99");
    absl::StrAppend(&out, html::ChartDiv(tname, throughput.empty),
                    html::ChartDiv(pname, p99.empty));
    if (charts != nullptr) {
      absl::StrAppend(charts, charts->empty() ? "" : ",", JsonQuote(tname), ":",
                      html::ChartJson(throughput), ",", JsonQuote(pname), ":",
                      html::ChartJson(p99));
    }
    RunNotes notes;
    for (const RampTarget& t : c.targets) {
      absl::StrAppend(&out, "<h3>", HtmlEscape(t.name), "</h3>\n");
      if (t.runs.empty()) {
        absl::StrAppend(&out, "<p>No measured run.</p>\n");
        continue;
      }
      for (const RampRun& run : t.runs) {
        if (!run.label.empty()) absl::StrAppend(&out, "<p>", HtmlEscape(run.label), ":</p>\n");
        if (!run.steps.empty()) {
          const auto table = RunTable(c, run, &notes);
          absl::StrAppend(&out, "<table class=\"ramp\">\n<tr>");
          for (size_t k = 0; k < table[0].size(); ++k) {
            absl::StrAppend(&out, Th(table[0][k], k == 4));
          }
          absl::StrAppend(&out, "</tr>\n");
          for (size_t r = 1; r < table.size(); ++r) {
            const bool missed = !run.steps[r - 1].step.met();
            absl::StrAppend(&out, missed ? "<tr class=\"worse\">" : "<tr>");
            for (size_t k = 0; k < table[r].size(); ++k) {
              absl::StrAppend(&out, Td(table[r][k], k == 4));
            }
            absl::StrAppend(&out, "</tr>\n");
          }
          absl::StrAppend(&out, "</table>\n");
        }
        absl::StrAppend(&out, "<p><strong>", HtmlEscape(KneeLine(c, run)), "</strong></p>\n");
      }
    }
    for (size_t i = 1; i < c.targets.size(); ++i) {
      absl::StrAppend(&out, "<p>", HtmlEscape(CompareLine(c, i)), "</p>\n");
    }
    absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(kColumnsNote), "</p>\n");
    for (const std::string& line : NoteLines(notes)) {
      absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(line), "</p>\n");
    }
  }
  return out;
}

std::vector<std::string> RampHeadlines(const v1::SuiteIndex& index,
                                       const std::vector<v1::RunReport>& reports,
                                       const std::vector<bool>& measured) {
  std::vector<std::string> lines;
  for (const RampCase& c : BuildRampCases(index, reports, measured)) {
    if (c.targets.empty()) continue;
    if (c.targets.size() == 1) {
      lines.push_back(
          absl::StrCat(c.name, ": ", OutcomeWords(c, c.targets[0]), " (", c.targets[0].name, ")"));
      continue;
    }
    for (size_t i = 1; i < c.targets.size(); ++i) {
      const RampTarget& o = c.targets[i];
      const RampTarget& b = c.targets[0];
      const std::string ow = OutcomeWords(c, o), bw = OutcomeWords(c, b);
      std::string outcomes;
      if (ow == bw) {
        outcomes = absl::StrCat(ow, " (", o.name, " and ", b.name, ")");
      } else if (ow.rfind("knee at ", 0) == 0 && bw.rfind("knee at ", 0) == 0) {
        outcomes = absl::StrCat(ow, " (", o.name, ") and ", bw.substr(8), " (", b.name, ")");
      } else {
        outcomes = absl::StrCat(ow, " (", o.name, ") and ", bw, " (", b.name, ")");
      }
      const RampComparison cmp = Compare(c, i);
      std::string line = absl::StrCat(c.name, ": ", outcomes);
      if (cmp.comparable) {
        absl::StrAppend(&line, "; ",
                        cmp.both_knees ? "at the knees " : "at the highest steps that met the SLO ",
                        o.name, " ", cmp.ratios);
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace dbload
