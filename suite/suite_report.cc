#include "suite/suite_report.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_html.h"
#include "suite/suite_document.h"
#include "suite/suite_ramp_render.h"

namespace dbload {
namespace {

using suite_report::CasesOf;
using suite_report::CaseView;
using suite_report::CategoryName;
using suite_report::CategoryOrder;
using suite_report::Document;
using suite_report::Headline;
using suite_report::SuiteDocument;
using suite_report::Table;

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
