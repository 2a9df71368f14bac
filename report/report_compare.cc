#include "report/report_compare.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_html.h"

namespace dbload {

absl::StatusOr<ReportFile> LoadReportFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the file"));
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::UnavailableError(absl::StrCat(path, ": cannot read the file"));
  absl::StatusOr<v1::RunReport> report = ParseReportJson(json);
  if (!report.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", report.status().message()));
  }
  return ReportFile{.path = path, .report = *std::move(report)};
}

std::string ComparisonCase::Title() const {
  return query_type.empty() ? scope : absl::StrCat(scope, ", query type ", query_type);
}

namespace {

// Labels: plan names, unless two are equal; then file names, unless two of those are equal;
// then the paths as given.
std::vector<std::string> Labels(const std::vector<ReportFile>& reports) {
  const auto unique = [](const std::vector<std::string>& names) {
    return std::set<std::string>(names.begin(), names.end()).size() == names.size() &&
           std::none_of(names.begin(), names.end(), [](const auto& n) { return n.empty(); });
  };
  std::vector<std::string> names, files, paths;
  for (const ReportFile& r : reports) {
    names.push_back(r.report.plan().name());
    files.push_back(std::filesystem::path(r.path).filename().string());
    paths.push_back(r.path);
  }
  if (unique(names)) return names;
  if (unique(files)) return files;
  return paths;
}

template <typename Scope>
CaseNumbers ScopeNumbers(const Scope& scope) {
  return {.throughput = scope.actual_rate(),
          .mean_ms = scope.response_time().mean_ms(),
          .p50_ms = scope.response_time().p50_ms(),
          .p99_ms = scope.response_time().p99_ms(),
          .p999_ms = scope.response_time().p999_ms(),
          .executed = scope.executed(),
          .errors = scope.errors(),
          .response_time = scope.response_time()};
}

// A query type's numbers within a scope: its rate over the scope's duration.
std::optional<CaseNumbers> QueryTypeNumbers(
    const google::protobuf::RepeatedPtrField<v1::QueryTypeReport>& query_types,
    const std::string& name, double duration_s) {
  for (const v1::QueryTypeReport& q : query_types) {
    if (q.name() != name) continue;
    return CaseNumbers{.throughput = duration_s > 0 ? q.executed() / duration_s : 0,
                       .mean_ms = q.response_time().mean_ms(),
                       .p50_ms = q.response_time().p50_ms(),
                       .p99_ms = q.response_time().p99_ms(),
                       .p999_ms = q.response_time().p999_ms(),
                       .executed = q.executed(),
                       .errors = q.errors(),
                       .response_time = q.response_time()};
  }
  return std::nullopt;
}

const v1::StageReport* FindStage(const v1::RunReport& report, const std::string& name) {
  for (const v1::StageReport& stage : report.stages()) {
    if (stage.name() == name) return &stage;
  }
  return nullptr;
}

// Names in first-seen order over all reports.
template <typename Get>
std::vector<std::string> UnionOfNames(const std::vector<ReportFile>& reports, Get get) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const ReportFile& r : reports) {
    for (const std::string& name : get(r.report)) {
      if (seen.insert(name).second) names.push_back(name);
    }
  }
  return names;
}

std::vector<std::string> QueryTypeNames(
    const google::protobuf::RepeatedPtrField<v1::QueryTypeReport>& query_types) {
  std::vector<std::string> names;
  for (const auto& q : query_types) names.push_back(q.name());
  return names;
}

std::vector<std::string> StageNames(const v1::RunReport& report) {
  std::vector<std::string> names;
  for (const auto& s : report.stages()) names.push_back(s.name());
  return names;
}

std::string Listed(const std::vector<std::string>& names) {
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<Comparison> CompareReports(const std::vector<ReportFile>& reports) {
  if (reports.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("a comparison needs at least 2 reports, got ", reports.size()));
  }
  const v1::RunReport& baseline = reports[0].report;
  const std::vector<std::string> base_types = QueryTypeNames(baseline.query_types());
  const std::vector<std::string> base_stages = StageNames(baseline);
  for (size_t i = 1; i < reports.size(); ++i) {
    const std::vector<std::string> types = QueryTypeNames(reports[i].report.query_types());
    const std::vector<std::string> stages = StageNames(reports[i].report);
    const auto shares = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
      return std::any_of(a.begin(), a.end(), [&b](const std::string& name) {
        return std::find(b.begin(), b.end(), name) != b.end();
      });
    };
    if (!shares(types, base_types) && !shares(stages, base_stages)) {
      return absl::InvalidArgumentError(absl::StrCat(
          reports[i].path, " has nothing in common with the baseline ", reports[0].path,
          ": no query type and no stage name in both (query types: ", Listed(types), " vs ",
          Listed(base_types), "; stages: ", Listed(stages), " vs ", Listed(base_stages), ")"));
    }
  }

  Comparison comparison;
  comparison.labels = Labels(reports);
  for (const ReportFile& r : reports) comparison.paths.push_back(r.path);
  const bool by_query_type = std::any_of(reports.begin(), reports.end(), [](const ReportFile& r) {
    if (r.report.query_types_size() > 1) return true;
    return std::any_of(r.report.stages().begin(), r.report.stages().end(),
                       [](const v1::StageReport& s) { return s.query_types_size() > 1; });
  });

  ComparisonCase run{.scope = "whole run", .query_type = "", .numbers = {}};
  for (const ReportFile& r : reports) run.numbers.push_back(ScopeNumbers(r.report));
  comparison.cases.push_back(std::move(run));
  if (by_query_type) {
    for (const std::string& type : UnionOfNames(
             reports, [](const v1::RunReport& r) { return QueryTypeNames(r.query_types()); })) {
      ComparisonCase c{.scope = "whole run", .query_type = type, .numbers = {}};
      for (const ReportFile& r : reports) {
        c.numbers.push_back(
            QueryTypeNumbers(r.report.query_types(), type, r.report.queries_duration_s()));
      }
      comparison.cases.push_back(std::move(c));
    }
  }
  for (const std::string& name : UnionOfNames(reports, StageNames)) {
    const std::string scope = absl::StrCat("stage ", name);
    ComparisonCase all{.scope = scope, .query_type = "", .numbers = {}};
    for (const ReportFile& r : reports) {
      const v1::StageReport* stage = FindStage(r.report, name);
      all.numbers.push_back(stage == nullptr ? std::nullopt
                                             : std::optional<CaseNumbers>(ScopeNumbers(*stage)));
    }
    comparison.cases.push_back(std::move(all));
    if (!by_query_type) continue;
    for (const std::string& type : UnionOfNames(reports, [&name](const v1::RunReport& r) {
           const v1::StageReport* stage = FindStage(r, name);
           return stage == nullptr ? std::vector<std::string>{}
                                   : QueryTypeNames(stage->query_types());
         })) {
      ComparisonCase c{.scope = scope, .query_type = type, .numbers = {}};
      for (const ReportFile& r : reports) {
        const v1::StageReport* stage = FindStage(r.report, name);
        c.numbers.push_back(
            stage == nullptr ? std::nullopt
                             : QueryTypeNumbers(stage->query_types(), type, stage->duration_s()));
      }
      comparison.cases.push_back(std::move(c));
    }
  }
  return comparison;
}

std::string RatioWords(double baseline, double value) {
  if (baseline <= 0 || value <= 0) return "";
  const double ratio = value / baseline;
  const std::string higher = absl::StrFormat("%.2f", ratio);
  const std::string lower = absl::StrFormat("%.2f", 1 / ratio);
  if (higher == "1.00" || lower == "1.00") return "same";
  return ratio > 1 ? absl::StrCat(higher, "× higher") : absl::StrCat(lower, "× lower");
}

std::string RatioPhrase(double baseline, double value, const std::string& what) {
  const std::string words = RatioWords(baseline, value);
  if (!words.empty()) return absl::StrCat(words, " ", what);
  if (baseline <= 0 && value <= 0) return absl::StrCat("same ", what, " (0)");
  return absl::StrCat(what, ": not comparable (0 in ",
                      baseline <= 0 ? "the baseline" : "this report", ")");
}

bool WithinIntervals(const v1::PercentileBasis& a, const v1::PercentileBasis& b) {
  const auto inside = [](double value, const v1::PercentileBasis& interval) {
    return value >= interval.ci_low_ms() &&
           (interval.ci_high_open() || value <= interval.ci_high_ms());
  };
  return inside(a.value_ms(), b) && inside(b.value_ms(), a);
}

namespace {

struct Metric {
  const char* name;  // as a row label
  const char* what;  // in ratio phrases; nullptr: no ratio (errors)
  bool higher_is_better;
  double (*get)(const CaseNumbers&);
  std::string (*format)(double);
  double percentile = 0;  // the response-time percentile it is (0: not a percentile)
};

std::string FormatRate(double v) { return absl::StrFormat("%.0f", v); }
std::string FormatCount(double v) { return absl::StrFormat("%.0f", v); }

const Metric kMetrics[] = {
    {"throughput (/s)", "throughput", true, [](const CaseNumbers& n) { return n.throughput; },
     FormatRate},
    {"mean (ms)", "mean latency", false, [](const CaseNumbers& n) { return n.mean_ms; }, FormatMs},
    {"p50 (ms)", "p50 latency", false, [](const CaseNumbers& n) { return n.p50_ms; }, FormatMs, 50},
    {"p99 (ms)", "p99 latency", false, [](const CaseNumbers& n) { return n.p99_ms; }, FormatMs, 99},
    {"p99.9 (ms)", "p99.9 latency", false, [](const CaseNumbers& n) { return n.p999_ms; }, FormatMs,
     99.9},
    {"errors", nullptr, false, [](const CaseNumbers& n) { return static_cast<double>(n.errors); },
     FormatCount},
};

constexpr char kWithinIntervals[] = "within the 95% confidence intervals";

// A percentile metric whose two values lie inside both reports' intervals: no difference shown.
bool BothWithinIntervals(const Metric& metric, const CaseNumbers& base, const CaseNumbers& value) {
  if (metric.percentile == 0) return false;
  const v1::PercentileBasis* a = BasisOf(base.response_time, metric.percentile);
  const v1::PercentileBasis* b = BasisOf(value.response_time, metric.percentile);
  return a != nullptr && b != nullptr && WithinIntervals(*a, *b);
}

bool FewSamples(const Metric& metric, const CaseNumbers& n) {
  return metric.percentile > 0 && RestsOnFewSamples(n.response_time, metric.percentile);
}

// The ratio of a compared report's value to the baseline's in words ("" when there is none).
std::string Difference(const Metric& metric, const CaseNumbers& base, const CaseNumbers& value) {
  const std::string words = RatioWords(metric.get(base), metric.get(value));
  if (words.empty() || words == "same") return words;
  return BothWithinIntervals(metric, base, value) ? kWithinIntervals : words;
}

// A cell: the value ("*": resting on too few samples), and for a compared report its ratio to
// the baseline in parentheses.
std::string Cell(const Metric& metric, const std::optional<CaseNumbers>& base,
                 const std::optional<CaseNumbers>& value, bool is_baseline) {
  if (!value) return "—";
  std::string cell = metric.format(metric.get(*value));
  if (FewSamples(metric, *value)) cell += "*";
  if (is_baseline || !base || metric.what == nullptr) return cell;
  const std::string words = Difference(metric, *base, *value);
  return words.empty() ? cell : absl::StrCat(cell, " (", words, ")");
}

// Whether the case shows a percentile resting on too few samples (for the note under it).
bool AnyFewSamples(const ComparisonCase& row) {
  for (const Metric& m : kMetrics) {
    for (const auto& n : row.numbers) {
      if (n && FewSamples(m, *n)) return true;
    }
  }
  return false;
}

// "LABEL vs BASELINE: 4.87× higher throughput, …; errors 0 vs 3", or "" when either lacks it.
// `label` formats the labels (escaping for Markdown).
std::string SummaryLine(const Comparison& c, const ComparisonCase& row, size_t i,
                        std::string (*label)(absl::string_view) = nullptr) {
  if (!row.numbers[0] || !row.numbers[i]) return "";
  std::vector<std::string> phrases;
  for (const Metric& m : kMetrics) {
    if (m.what == nullptr) continue;
    const CaseNumbers& base = *row.numbers[0];
    const CaseNumbers& value = *row.numbers[i];
    std::string phrase = Difference(m, base, value) == kWithinIntervals
                             ? absl::StrCat(m.what, " ", kWithinIntervals)
                             : RatioPhrase(m.get(base), m.get(value), m.what);
    if (FewSamples(m, base) || FewSamples(m, value)) phrase += "*";
    phrases.push_back(std::move(phrase));
  }
  const auto name = [label](const std::string& text) {
    return label == nullptr ? text : label(text);
  };
  return absl::StrCat(name(c.labels[i]), " vs ", name(c.labels[0]), ": ",
                      absl::StrJoin(phrases, ", "), "; errors ", row.numbers[i]->errors, " vs ",
                      row.numbers[0]->errors);
}

size_t DisplayWidth(absl::string_view text) {
  // "×" and "—" are one column but more bytes: count the bytes that start a character.
  size_t width = 0;
  for (const char ch : text) width += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return width;
}

}  // namespace

std::string MarkdownEscape(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n' || c == '\r') {
      out.push_back(' ');
    } else if (absl::string_view("\\`*_[]<>|~").find(c) != absl::string_view::npos) {
      out.push_back('\\');
      out.push_back(c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string FormatTextTable(const std::vector<std::vector<std::string>>& table) {
  std::vector<size_t> widths;
  for (const auto& line : table) {
    if (widths.size() < line.size()) widths.resize(line.size(), 0);
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(line[i]));
  }
  std::string out;
  for (const auto& line : table) {
    std::string text = " ";
    for (size_t i = 0; i < line.size(); ++i) {
      const std::string pad(widths[i] - DisplayWidth(line[i]), ' ');
      absl::StrAppend(&text, " ", i == 0 ? line[i] + pad : pad + line[i]);
    }
    absl::StrAppend(&out, text, "\n");
  }
  return out;
}

std::string RenderComparisonText(const Comparison& c) {
  std::string out =
      absl::StrCat("Comparison of ", c.labels.size(), " reports (baseline: ", c.labels[0], ")\n");
  for (size_t i = 0; i < c.labels.size(); ++i) {
    absl::StrAppend(&out, "  ", c.labels[i], ": ", c.paths[i], i == 0 ? " (baseline)" : "", "\n");
  }
  for (const ComparisonCase& row : c.cases) {
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> header = {""};
    for (const std::string& label : c.labels) header.push_back(label);
    table.push_back(header);
    for (const Metric& m : kMetrics) {
      std::vector<std::string> line = {m.name};
      for (size_t i = 0; i < c.labels.size(); ++i) {
        line.push_back(Cell(m, row.numbers[0], row.numbers[i], i == 0));
      }
      table.push_back(line);
    }
    absl::StrAppend(&out, "\n", row.Title(), "\n", FormatTextTable(table));
    for (size_t i = 1; i < c.labels.size(); ++i) {
      const std::string summary = SummaryLine(c, row, i);
      if (!summary.empty()) absl::StrAppend(&out, "  ", summary, "\n");
    }
    if (AnyFewSamples(row)) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
  }
  return out;
}

std::string RenderComparisonMarkdown(const Comparison& c) {
  std::string out =
      absl::StrCat("## dbload comparison\n\nBaseline: **", MarkdownEscape(c.labels[0]), "**\n\n");
  for (size_t i = 0; i < c.labels.size(); ++i) {
    absl::StrAppend(&out, "- **", MarkdownEscape(c.labels[i]), "**: ", MarkdownEscape(c.paths[i]),
                    i == 0 ? " (baseline)" : "", "\n");
  }
  for (const ComparisonCase& row : c.cases) {
    absl::StrAppend(&out, "\n### ", MarkdownEscape(row.Title()), "\n\n| metric |");
    for (const std::string& label : c.labels)
      absl::StrAppend(&out, " ", MarkdownEscape(label), " |");
    absl::StrAppend(&out, "\n|---|");
    for (size_t i = 0; i < c.labels.size(); ++i) absl::StrAppend(&out, "---:|");
    absl::StrAppend(&out, "\n");
    for (const Metric& m : kMetrics) {
      absl::StrAppend(&out, "| ", m.name, " |");
      for (size_t i = 0; i < c.labels.size(); ++i) {
        absl::StrAppend(&out, " ", Cell(m, row.numbers[0], row.numbers[i], i == 0), " |");
      }
      absl::StrAppend(&out, "\n");
    }
    std::string summaries;
    for (size_t i = 1; i < c.labels.size(); ++i) {
      const std::string summary = SummaryLine(c, row, i, MarkdownEscape);
      if (!summary.empty()) absl::StrAppend(&summaries, "- ", summary, "\n");
    }
    if (!summaries.empty()) absl::StrAppend(&out, "\n", summaries);
    if (AnyFewSamples(row)) absl::StrAppend(&out, "\n", MarkdownEscape(kFewSamplesNote), "\n");
  }
  return out;
}

std::string RenderComparisonHtml(const Comparison& c, const std::vector<ReportFile>& reports) {
  std::string out = html::PageStart("dbload comparison");
  absl::StrAppend(&out,
                  "<h1>dbload comparison</h1>\n<table>\n<tr><th class=\"text\">report</th>"
                  "<th class=\"text\">file</th><th class=\"text\">plan</th>"
                  "<th class=\"text\">run</th><th class=\"text\">started</th>"
                  "<th class=\"text\">ended by</th></tr>\n");
  for (size_t i = 0; i < reports.size(); ++i) {
    const v1::RunReport& r = reports[i].report;
    absl::StrAppend(&out, "<tr><td class=\"text\">", HtmlEscape(c.labels[i]),
                    i == 0 ? " (baseline)" : "", "</td><td class=\"text\">",
                    HtmlEscape(reports[i].path), "</td><td class=\"text\">",
                    HtmlEscape(r.plan().name()), "</td><td class=\"text\">", HtmlEscape(r.run_id()),
                    "</td><td class=\"text\">", HtmlEscape(r.started_at()),
                    "</td><td class=\"text\">", HtmlEscape(r.end_reason()), "</td></tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
  for (const ComparisonCase& row : c.cases) {
    absl::StrAppend(&out, "<h2>", HtmlEscape(row.Title()),
                    "</h2>\n<table class=\"comparison\">\n<tr><th class=\"text\">metric</th>");
    for (const std::string& label : c.labels)
      absl::StrAppend(&out, "<th>", HtmlEscape(label), "</th>");
    absl::StrAppend(&out, "</tr>\n");
    for (const Metric& m : kMetrics) {
      absl::StrAppend(&out, "<tr><td class=\"text\">", HtmlEscape(m.name), "</td>");
      for (size_t i = 0; i < c.labels.size(); ++i) {
        std::string css;
        if (i > 0 && m.what != nullptr && row.numbers[0] && row.numbers[i]) {
          const double base = m.get(*row.numbers[0]), value = m.get(*row.numbers[i]);
          const std::string words = Difference(m, *row.numbers[0], *row.numbers[i]);
          if (!words.empty() && words != "same" && words != kWithinIntervals) {
            css = (value > base) == m.higher_is_better ? " class=\"better\"" : " class=\"worse\"";
          }
        }
        absl::StrAppend(&out, "<td", css, ">",
                        HtmlEscape(Cell(m, row.numbers[0], row.numbers[i], i == 0)), "</td>");
      }
      absl::StrAppend(&out, "</tr>\n");
    }
    absl::StrAppend(&out, "</table>\n");
    for (size_t i = 1; i < c.labels.size(); ++i) {
      const std::string summary = SummaryLine(c, row, i);
      if (!summary.empty())
        absl::StrAppend(&out, "<p class=\"summary\">", HtmlEscape(summary), "</p>\n");
    }
    if (AnyFewSamples(row)) {
      absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(kFewSamplesNote), "</p>\n");
    }
  }
  html::ChartSpec rate{.title = "Achieved rate over time",
                       .x_label = "elapsed (s)",
                       .y_label = "queries/s",
                       .percentile_x = false,
                       .series = {},
                       .vlines = {},
                       .empty = "No intervals in these reports."};
  html::ChartSpec spectrum{.title = "Response time by percentile (whole run, merged histogram)",
                           .x_label = "percentile",
                           .y_label = "ms",
                           .percentile_x = true,
                           .series = {},
                           .vlines = {},
                           .empty = "No response-time histograms in these reports."};
  for (size_t i = 0; i < reports.size(); ++i) {
    html::Series series{.name = c.labels[i], .x = {}, .y = {}};
    for (const v1::IntervalSample& s : reports[i].report.intervals()) {
      series.x.push_back(s.elapsed_s());
      series.y.push_back(s.achieved_rate());
    }
    rate.series.push_back(std::move(series));
    spectrum.series.push_back(html::SpectrumSeries(
        c.labels[i], PercentileSpectrum(MergedResponseHistogram(reports[i].report.query_types()))));
  }
  absl::StrAppend(
      &out, "<h2>Charts</h2>\n", html::ChartDiv("compare-rate", "No intervals in these reports."),
      html::ChartDiv("compare-spectrum", "No response-time histograms in these reports."));
  absl::StrAppend(
      &out, html::PageEnd(absl::StrCat("{\"charts\":{\"compare-rate\":", html::ChartJson(rate),
                                       ",\"compare-spectrum\":", html::ChartJson(spectrum), "}}")));
  return out;
}

}  // namespace dbload
