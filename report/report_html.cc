#include "report/report_html.h"

#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"

namespace dbload {

namespace {
#include "report/report_html_assets.inc"
}  // namespace

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        if (c < 0x20) {
          absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
        } else if (c == 0xE2 && i + 2 < text.size() &&
                   static_cast<unsigned char>(text[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
                    static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
          // U+2028 / U+2029: valid in JSON, line terminators in older JavaScript.
          absl::StrAppend(&out,
                          static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029");
          i += 2;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "0";
  return absl::StrFormat("%.10g", value);
}

std::vector<std::pair<double, double>> PercentileSpectrum(const Histogram& histogram) {
  std::vector<std::pair<double, double>> points;
  const uint64_t count = histogram.TotalCount();
  if (count == 0) return points;
  // 5 points per halving of what lies above, as HdrHistogram's percentile output; bounded: a
  // count below 2^64 needs fewer than 5 × 64 steps.
  for (int k = 0; k < 5 * 64; ++k) {
    const double above = std::pow(0.5, k / 5.0);  // the fraction above the percentile
    if (above * static_cast<double>(count) < 1) break;
    const double percentile = 100.0 * (1 - above);
    points.emplace_back(percentile, histogram.ValueAtPercentile(percentile) / 1e6);
  }
  if (count > 1) {
    points.emplace_back(100.0 * (1 - 1.0 / static_cast<double>(count)), histogram.Max() / 1e6);
  }
  return points;
}

Histogram MergedResponseHistogram(
    const google::protobuf::RepeatedPtrField<v1::QueryTypeReport>& query_types) {
  Histogram merged;
  for (const v1::QueryTypeReport& q : query_types) {
    absl::StatusOr<Histogram> h = Histogram::FromProto(q.response_histogram());
    if (h.ok()) merged.Add(*h);
  }
  return merged;
}

namespace html {

std::string PageStart(absl::string_view title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
      // Nothing may be fetched: the page is whole as it is, and stays inert offline.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n",
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      HtmlEscape(title), "</title>\n<style>", kPageCss, "</style>\n<script>", kErrorScript,
      "</script>\n</head>\n<body>\n<div id=\"js-status\"></div>\n");
}

std::string PageEnd(const std::string& data_json) {
  return absl::StrCat("<script type=\"application/json\" id=\"report-data\">", data_json,
                      "</script>\n<script>", kChartScript, "</script>\n</body>\n</html>\n");
}

namespace {
std::string NumberArray(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", JsonNumber(values[i]));
  }
  return out + "]";
}
}  // namespace

std::string ChartJson(const ChartSpec& chart) {
  std::string out =
      absl::StrCat("{\"title\":", JsonQuote(chart.title), ",\"x_label\":", JsonQuote(chart.x_label),
                   ",\"y_label\":", JsonQuote(chart.y_label), ",\"x_scale\":",
                   chart.percentile_x ? "\"percentile\""
                   : chart.log2_x     ? "\"log2\""
                                      : "\"linear\"",
                   ",\"empty\":", JsonQuote(chart.empty), ",\"series\":[");
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    absl::StrAppend(&out, i > 0 ? "," : "", "{\"name\":", JsonQuote(s.name),
                    ",\"x\":", NumberArray(s.x), ",\"y\":", NumberArray(s.y));
    if (!s.lo.empty() && !s.hi.empty()) {
      absl::StrAppend(&out, ",\"lo\":", NumberArray(s.lo), ",\"hi\":", NumberArray(s.hi));
    }
    if (!s.flags.empty()) {
      absl::StrAppend(&out, ",\"flags\":[");
      for (size_t j = 0; j < s.flags.size(); ++j) {
        absl::StrAppend(&out, j > 0 ? "," : "", s.flags[j] ? "true" : "false");
      }
      absl::StrAppend(&out, "]");
    }
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, "],\"vlines\":[");
  for (size_t i = 0; i < chart.vlines.size(); ++i) {
    const VerticalLine& v = chart.vlines[i];
    absl::StrAppend(&out, i > 0 ? "," : "", "{\"x\":", JsonNumber(v.x),
                    ",\"label\":", JsonQuote(v.label), ",\"cls\":", JsonQuote(v.css_class), "}");
  }
  return out + "]}";
}

Series SpectrumSeries(std::string name, const std::vector<std::pair<double, double>>& spectrum) {
  Series series{.name = std::move(name), .x = {}, .y = {}};
  for (const auto& [percentile, ms] : spectrum) {
    series.x.push_back(percentile);
    series.y.push_back(ms);
  }
  return series;
}

std::string ChartDiv(absl::string_view name, absl::string_view empty_note) {
  return absl::StrCat("<div class=\"chart-box\" data-chart=\"", HtmlEscape(name),
                      "\" data-empty=\"", HtmlEscape(empty_note), "\"></div>\n");
}

}  // namespace html

namespace {

std::string Td(absl::string_view text) { return absl::StrCat("<td>", HtmlEscape(text), "</td>"); }
std::string TdText(absl::string_view text) {
  return absl::StrCat("<td class=\"text\">", HtmlEscape(text), "</td>");
}
std::string Th(absl::string_view text) { return absl::StrCat("<th>", HtmlEscape(text), "</th>"); }
std::string ThText(absl::string_view text) {
  return absl::StrCat("<th class=\"text\">", HtmlEscape(text), "</th>");
}
std::string MetaRow(absl::string_view name, absl::string_view value) {
  return absl::StrCat("<tr><th>", HtmlEscape(name), "</th><td>", HtmlEscape(value), "</td></tr>\n");
}
std::string Rate(double rate) { return absl::StrFormat("%.0f/s", rate); }
std::string Seconds(double s) { return absl::StrFormat("%.3f s", s); }

std::string LatencyHeader(absl::string_view first) {
  std::string row = absl::StrCat("<tr>", ThText(first));
  for (const char* name : {"count", "min", "mean", "max", "stddev", "p50", "p75", "p90", "p95",
                           "p99", "p99.9", "p99.99"}) {
    absl::StrAppend(&row, Th(name));
  }
  return row + "</tr>\n";
}

// A percentile's cell: its value, "*" and class "few" when it rests on too few samples, and what
// it rests on as the cell's title.
std::string PercentileTd(const v1::LatencySummary& s, double percentile, double ms) {
  const v1::PercentileBasis* b = BasisOf(s, percentile);
  if (b == nullptr) return Td(FormatMs(ms));
  return absl::StrCat("<td", b->few_samples() ? " class=\"few\"" : "", " title=\"",
                      HtmlEscape(absl::StrCat(b->samples_beyond(),
                                              b->samples_beyond() == 1 ? " sample" : " samples",
                                              " beyond; 95% interval ", FormatInterval(*b), " ms")),
                      "\">", HtmlEscape(FormatPercentileMs(s, percentile, ms)), "</td>");
}

std::string LatencyRow(absl::string_view name, const v1::LatencySummary& s) {
  std::string row = absl::StrCat("<tr>", TdText(name), Td(absl::StrCat(s.count())));
  for (double ms : {s.min_ms(), s.mean_ms(), s.max_ms(), s.stddev_ms()}) {
    absl::StrAppend(&row, Td(FormatMs(ms)));
  }
  const double values[] = {s.p50_ms(), s.p75_ms(),  s.p90_ms(),  s.p95_ms(),
                           s.p99_ms(), s.p999_ms(), s.p9999_ms()};
  for (size_t i = 0; i < kPublishedPercentiles.size(); ++i) {
    absl::StrAppend(&row, PercentileTd(s, kPublishedPercentiles[i], values[i]));
  }
  return row + "</tr>\n";
}

// What each percentile of a summary rests on: samples beyond it and its 95 % interval.
std::string PercentileBasisTable(absl::string_view title, const v1::LatencySummary& s) {
  if (s.percentiles_size() == 0) return "";
  std::string out = absl::StrCat("<h3>", HtmlEscape(title), "</h3>\n<table class=\"basis\">\n<tr>",
                                 Th("percentile"), Th("ms"), Th("samples beyond"),
                                 Th("95% interval (ms)"), ThText(""), "</tr>\n");
  for (const v1::PercentileBasis& b : s.percentiles()) {
    absl::StrAppend(&out, "<tr", b.few_samples() ? " class=\"few\"" : "", ">",
                    Td(absl::StrFormat("p%g", b.percentile())), Td(FormatMs(b.value_ms())),
                    Td(absl::StrCat(b.samples_beyond())), Td(FormatInterval(b)),
                    TdText(b.few_samples() ? "* too few samples beyond" : ""), "</tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
  return out;
}

std::string FewSamplesNote(bool any) {
  return any ? absl::StrCat("<p class=\"note\">", HtmlEscape(kFewSamplesNote), "</p>\n") : "";
}

std::string TargetText(const v1::Target& target) {
  const std::string where =
      target.socket().empty() ? absl::StrCat(target.host(), ":", target.port()) : target.socket();
  return absl::StrCat(target.driver(), " ", where,
                      target.database().empty() ? "" : absl::StrCat("/", target.database()));
}

std::string ManifestSection(const v1::RunManifest& m) {
  std::string out = "<h2>Manifest</h2>\n<table class=\"meta\">\n";
  if (!m.dbload_version().empty())
    absl::StrAppend(&out, MetaRow("dbload version", m.dbload_version()));
  if (!m.coordinator_host().empty())
    absl::StrAppend(&out, MetaRow("coordinator host", m.coordinator_host()));
  if (!m.server_product().empty()) absl::StrAppend(&out, MetaRow("server", m.server_product()));
  if (!m.server_version().empty())
    absl::StrAppend(&out, MetaRow("server version", m.server_version()));
  absl::StrAppend(&out, MetaRow("seed", absl::StrCat(m.seed())));
  absl::StrAppend(&out, "</table>\n");
  if (m.agents_size() > 0) {
    absl::StrAppend(&out, "<h3>Agents and hosts</h3>\n<table>\n<tr>", ThText("agent"),
                    ThText("host"), Th("cores"), ThText("version"), ThText("target dialed"),
                    "</tr>\n");
    for (const auto& agent : m.agents()) {
      absl::StrAppend(&out, "<tr>", TdText(agent.name()), TdText(agent.host()),
                      Td(absl::StrCat(agent.cores())), TdText(agent.version()),
                      TdText(agent.target_address()), "</tr>\n");
    }
    absl::StrAppend(&out, "</table>\n");
  }
  if (m.server_settings_size() > 0) {
    // Sorted: a proto map's order is unspecified.
    const std::map<std::string, std::string> settings(m.server_settings().begin(),
                                                      m.server_settings().end());
    absl::StrAppend(&out, "<h3>Server settings</h3>\n<table class=\"meta\">\n");
    for (const auto& [name, value] : settings) absl::StrAppend(&out, MetaRow(name, value));
    absl::StrAppend(&out, "</table>\n");
  }
  return out;
}

std::string SummarySection(const v1::RunReport& r) {
  std::string out = "<h2>Summary</h2>\n<table class=\"meta\">\n";
  absl::StrAppend(&out, MetaRow("Total test duration", Seconds(r.total_duration_s())));
  absl::StrAppend(&out, MetaRow("Queries duration", Seconds(r.queries_duration_s())));
  absl::StrAppend(&out, MetaRow("Executed queries", absl::StrCat(r.executed())));
  if (r.query_types_size() > 1) {
    for (const auto& q : r.query_types()) {
      absl::StrAppend(&out, MetaRow(absl::StrCat("  ", q.name()), absl::StrCat(q.executed())));
    }
  }
  if (const std::string statements = DescribeStatements(r.statements(), r.executed(), r.errors(),
                                                        r.ignored(), r.queries_duration_s());
      !statements.empty()) {
    absl::StrAppend(&out, MetaRow("Statements (sysbench's queries)", statements));
  }
  absl::StrAppend(&out, MetaRow("Errors", absl::StrCat(r.errors())));
  if (r.ignored() > 0) {
    absl::StrAppend(&out, MetaRow("Ignored errors (rolled back, not transactions, as sysbench's)",
                                  absl::StrCat(r.ignored())));
  }
  absl::StrAppend(&out, MetaRow("Wanted queries rate",
                                r.wanted_rate() > 0 ? Rate(r.wanted_rate())
                                                    : "as fast as the clients go (closed loop)"));
  absl::StrAppend(&out, MetaRow("Actual queries rate", Rate(r.actual_rate())));
  if (r.plan().load().has_open()) {
    absl::StrAppend(&out, MetaRow("Not started (no free connection before the end)",
                                  absl::StrCat(r.not_started())));
  }
  absl::StrAppend(&out, "</table>\n");
  if (r.generator_limited()) {
    absl::StrAppend(&out, "<p class=\"warn\">Generator-limited: ",
                    HtmlEscape(r.generator_limited_reason()), "</p>\n");
  }
  if (r.pool_limited()) {
    absl::StrAppend(&out, "<p>Pool-limited: ", HtmlEscape(r.pool_limited_reason()), "</p>\n");
  }
  if (r.database_stalled()) {
    absl::StrAppend(&out, "<p>Database-stalled: ", HtmlEscape(r.database_stalled_reason()),
                    "</p>\n");
  }
  if (const std::string share = DispatchLagShareSentence(r); !share.empty()) {
    absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(share), "</p>\n");
  }
  absl::StrAppend(&out, "<h3>Latency (ms)</h3>\n<table>\n", LatencyHeader(""),
                  LatencyRow("response time, from intended start", r.response_time()),
                  LatencyRow("service time, from actual start", r.service_time()),
                  LatencyRow("schedule lag", r.schedule_lag()));
  if (r.plan().load().has_open()) {
    absl::StrAppend(&out, LatencyRow("dispatch lag (a connection was free)", r.dispatch_lag()));
  }
  if (r.query_types_size() > 1) {
    for (const auto& q : r.query_types()) {
      absl::StrAppend(&out,
                      LatencyRow(absl::StrCat(q.name(), " response time"), q.response_time()));
    }
  }
  absl::StrAppend(&out, "</table>\n");
  bool few =
      RestsOnFewSamples(r.response_time(), 99.99) || RestsOnFewSamples(r.service_time(), 99.99) ||
      RestsOnFewSamples(r.schedule_lag(), 99.99) || RestsOnFewSamples(r.dispatch_lag(), 99.99);
  for (const auto& q : r.query_types()) few = few || RestsOnFewSamples(q.response_time(), 99.99);
  absl::StrAppend(
      &out, FewSamplesNote(few),
      PercentileBasisTable("What the response-time percentiles rest on", r.response_time()));
  bool any_errors = false;
  for (const auto& q : r.query_types()) any_errors |= q.error_counts_size() > 0;
  if (any_errors) {
    // Class "ignored": errors the scenario ignores as sysbench does, in no errors total.
    absl::StrAppend(&out, "<h3>Errors</h3>\n<table>\n<tr>", ThText("query type"), ThText("class"),
                    ThText("code"), Th("count"), "</tr>\n");
    for (const auto& q : r.query_types()) {
      for (const auto& e : q.error_counts()) {
        absl::StrAppend(&out, "<tr>", TdText(q.name()), TdText(e.error_class()), TdText(e.code()),
                        Td(absl::StrCat(e.count())), "</tr>\n");
      }
    }
    absl::StrAppend(&out, "</table>\n");
  }
  return out;
}

std::string StagesSection(const v1::RunReport& r) {
  if (r.stages_size() == 0) return "";
  const bool open = r.plan().load().has_open();
  std::string out = absl::StrCat(
      "<h2>Stages</h2>\n<p class=\"note\">Each from its own merged counts; response time in ms "
      "from the intended start.</p>\n<table class=\"stages\">\n<tr>",
      Th("#"), ThText("name"), Th("duration"), Th("executed"), Th(open ? "wanted/s" : "clients"),
      Th("actual/s"), Th("stmt/s"), Th("errors"), Th("mean"), Th("p50"), Th("p99"), Th("p99.9"),
      Th("max"), ThText("generator"), "</tr>\n");
  bool few = false;
  for (const v1::StageReport& s : r.stages()) {
    const std::string load =
        open ? absl::StrFormat("%.0f", s.wanted_rate()) : absl::StrCat("&lt;=", s.max_clients());
    absl::StrAppend(
        &out, "<tr", s.generator_limited() ? " class=\"generator-limited\"" : "", ">",
        Td(absl::StrCat(s.index())), TdText(s.name()),
        Td(absl::StrFormat("%.1f s", s.duration_s())), Td(absl::StrCat(s.executed())), "<td>", load,
        "</td>", Td(absl::StrFormat("%.0f", s.actual_rate())),
        Td(StatementsPerSecondCell(s.statements(), s.duration_s())), Td(absl::StrCat(s.errors())),
        Td(FormatMs(s.response_time().mean_ms())),
        PercentileTd(s.response_time(), 50, s.response_time().p50_ms()),
        PercentileTd(s.response_time(), 99, s.response_time().p99_ms()),
        PercentileTd(s.response_time(), 99.9, s.response_time().p999_ms()),
        Td(FormatMs(s.response_time().max_ms())),
        s.generator_limited()
            ? absl::StrCat("<td class=\"text warn\">&#9888; limited: ",
                           HtmlEscape(s.generator_limited_reason()), "</td>")
            : TdText(s.pool_limited() ? absl::StrCat("ok; pool-limited: ", s.pool_limited_reason())
                     : s.database_stalled()
                         ? absl::StrCat("ok; database-stalled: ", s.database_stalled_reason())
                         : "ok"),
        "</tr>\n");
    few = few || RestsOnFewSamples(s.response_time(), 99.9);
  }
  absl::StrAppend(&out, "</table>\n", FewSamplesNote(few));
  for (const v1::StageReport& s : r.stages()) {
    if (s.knee_steps_size() == 0) continue;
    absl::StrAppend(&out, "<h3>Knee search, stage ", s.index(), " (", HtmlEscape(s.name()), "): ",
                    s.knee() > 0 ? absl::StrFormat("highest level that met the SLO: %.6g", s.knee())
                                 : std::string("no step met the SLO"),
                    "</h3>\n<table>\n<tr>", Th("step"), Th("level"), ThText("SLO"), Th("judged"),
                    Th("executed"), Th("p99 ms"), Th("achieved/s"), ThText("missed"), "</tr>\n");
    for (int i = 0; i < s.knee_steps_size(); ++i) {
      const v1::KneeStep& k = s.knee_steps(i);
      absl::StrAppend(&out, "<tr>", Td(absl::StrCat(i + 1)), Td(absl::StrFormat("%.6g", k.level())),
                      TdText(k.met() ? "met" : "missed"), Td(Seconds(k.judged_s())),
                      Td(absl::StrCat(k.executed())), Td(FormatMs(k.p99_ms())),
                      Td(absl::StrFormat("%.0f", k.achieved_rate())), TdText(k.missed()),
                      "</tr>\n");
    }
    absl::StrAppend(&out, "</table>\n");
  }
  return out;
}

std::string DeltaCell(const v1::SaturationDelta* d) {
  if (d == nullptr) return "<td></td><td></td>";
  if (d->gauge()) {
    return absl::StrCat(Td(absl::StrFormat("%.6g", d->delta())),
                        Td(absl::StrFormat("%.6g – %.6g", d->min(), d->max())));
  }
  // A counter over too few readings: both its figures are marked (kFewReadingsNote).
  const std::string mark = FewProbeReadings(*d) ? kFewReadingsMark : "";
  return absl::StrCat(Td(absl::StrFormat("%.6g%s", d->delta(), mark)),
                      Td(absl::StrFormat("%.6g%s", d->per_query(), mark)));
}

std::string SaturationTable(const v1::RunReport& r) {
  // Rows: every value any scope has, in the order first seen (the run's first).
  std::vector<std::string> keys;
  std::set<std::string> seen;
  std::map<std::string, bool> gauge;
  const auto collect = [&](const google::protobuf::RepeatedPtrField<v1::SaturationDelta>& deltas) {
    for (const auto& d : deltas) {
      const std::string key = absl::StrCat(d.source(), "/", d.name());
      if (seen.insert(key).second) keys.push_back(key);
      gauge[key] = d.gauge();
    }
  };
  collect(r.saturation());
  for (const auto& s : r.stages()) collect(s.saturation());
  if (keys.empty()) return "";
  const auto find = [](const google::protobuf::RepeatedPtrField<v1::SaturationDelta>& deltas,
                       const std::string& key) -> const v1::SaturationDelta* {
    for (const auto& d : deltas) {
      if (absl::StrCat(d.source(), "/", d.name()) == key) return &d;
    }
    return nullptr;
  };
  std::string out = absl::StrCat(
      "<h3>Saturation deltas</h3>\n<p class=\"note\">Counters: the change over the span and per "
      "transaction executed (completed without error); gauges (levels): the last reading and "
      "the range.</p>\n");
  // Failed transactions' work is in the counters, not in the divisor: their share, apart.
  const auto share = [](uint64_t executed, uint64_t errors) {
    return absl::StrFormat("%.3g%%", executed + errors == 0
                                         ? 0.0
                                         : 100.0 * static_cast<double>(errors) /
                                               static_cast<double>(executed + errors));
  };
  bool failed = r.errors() > 0;
  std::string shares = absl::StrCat("run ", share(r.executed(), r.errors()));
  for (const auto& s : r.stages()) {
    failed = failed || s.errors() > 0;
    absl::StrAppend(&shares, ", stage ", s.index(), " ", share(s.executed(), s.errors()));
  }
  if (failed) {
    absl::StrAppend(&out, "<p class=\"note\">Failed transactions, as a share of those attempted: ",
                    HtmlEscape(shares), ". Their work is in the counters but not in the "
                    "per-transaction figures' divisor.</p>\n");
  }
  absl::StrAppend(&out, "<table class=\"saturation\">\n<tr>", ThText("value"), ThText("kind"),
                  "<th colspan=\"2\">run</th>");
  for (const auto& s : r.stages()) {
    absl::StrAppend(&out, "<th colspan=\"2\">", HtmlEscape(absl::StrCat(s.index(), ": ", s.name())),
                    "</th>");
  }
  absl::StrAppend(&out, "</tr>\n");
  bool few = false;
  const auto cell = [&few](const v1::SaturationDelta* d) {
    few = few || (d != nullptr && !d->gauge() && FewProbeReadings(*d));
    return DeltaCell(d);
  };
  for (const std::string& key : keys) {
    absl::StrAppend(&out, "<tr>", TdText(key), TdText(gauge[key] ? "gauge" : "counter"),
                    cell(find(r.saturation(), key)));
    for (const auto& s : r.stages()) absl::StrAppend(&out, cell(find(s.saturation(), key)));
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</table>\n");
  if (few) absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(kFewReadingsNote), "</p>\n");
  return out;
}

std::string ExplainBlock(const google::protobuf::RepeatedPtrField<v1::QueryPlan>& plans) {
  std::string out;
  for (const v1::QueryPlan& p : plans) {
    absl::StrAppend(&out, "<h3>", HtmlEscape(p.query_type()), "</h3>\n<pre class=\"statement\">",
                    HtmlEscape(p.statement()), "</pre>\n");
    // A transaction's plan can hold some statements' plans and another's error: show both.
    if (!p.error().empty()) {
      absl::StrAppend(&out, "<p class=\"warn\">EXPLAIN failed: ", HtmlEscape(p.error()), "</p>\n");
    }
    if (!p.plan().empty() || p.error().empty()) {
      absl::StrAppend(&out, "<pre class=\"plan\">", HtmlEscape(p.plan()), "</pre>\n");
    }
  }
  return out;
}

std::string ExplainSection(const v1::RunReport& r) {
  std::string out;
  if (r.explains_size() > 0) absl::StrAppend(&out, ExplainBlock(r.explains()));
  for (const auto& s : r.stages()) {
    if (s.explains_size() == 0) continue;
    absl::StrAppend(&out, "<h3>Stage ", s.index(), ": ", HtmlEscape(s.name()), "</h3>\n",
                    ExplainBlock(s.explains()));
  }
  if (out.empty()) return "";
  return absl::StrCat("<h2>EXPLAIN plans</h2>\n", out);
}

std::string AgentsAndRowsSection(const v1::RunReport& r) {
  std::string out;
  if (r.agents_size() > 0) {
    absl::StrAppend(&out, "<h2>Agents</h2>\n<table>\n<tr>", ThText("name"), Th("executed"),
                    Th("errors"), Th("measured"), Th("process CPU"), Th("p50 ms"), Th("p99 ms"),
                    Th("max ms"), ThText("ended by"), "</tr>\n");
    bool few = false;
    for (const auto& a : r.agents()) {
      absl::StrAppend(&out, "<tr>", TdText(a.name()), Td(absl::StrCat(a.executed())),
                      Td(absl::StrCat(a.errors())), Td(Seconds(a.measured_s())),
                      Td(Seconds(a.cpu_seconds())),
                      PercentileTd(a.response_time(), 50, a.response_time().p50_ms()),
                      PercentileTd(a.response_time(), 99, a.response_time().p99_ms()),
                      Td(FormatMs(a.response_time().max_ms())),
                      TdText(a.end_reason().empty() ? "(lost)" : a.end_reason()), "</tr>\n");
      few = few || RestsOnFewSamples(a.response_time(), 99);
    }
    absl::StrAppend(&out, "</table>\n", FewSamplesNote(few));
  }
  if (r.row_changes_size() > 0) {
    absl::StrAppend(&out, "<h2>Rows changed</h2>\n<table>\n<tr>", ThText("table"),
                    Th("counted by the database"), Th("as the transactions say"), ThText(""),
                    "</tr>\n");
    for (const auto& c : r.row_changes()) {
      const int64_t counted = c.after() - c.before();
      absl::StrAppend(&out, "<tr>", TdText(c.table()), Td(absl::StrFormat("%+d", counted)),
                      Td(absl::StrFormat("%+d", c.expected())),
                      TdText(counted == c.expected() ? "ok" : "MISMATCH"), "</tr>\n");
    }
    absl::StrAppend(&out, "</table>\n");
  }
  if (!r.row_changes_not_checked().empty()) {
    absl::StrAppend(&out, "<h2>Rows changed</h2>\n<p class=\"warn\">Not checked: ",
                    HtmlEscape(r.row_changes_not_checked()), "</p>\n");
  }
  return out;
}

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

// A degraded run: the lost agents, the bound on what they ran uncounted, the commit check.
std::string LostAgentsHtml(const v1::RunReport& r) {
  if (r.lost_agents_size() == 0) return "";
  std::string out = absl::StrCat("<p class=\"warn\">Degraded: ", r.lost_agents_size(),
                                 " agent(s) lost before their final report; what they ran after "
                                 "their last report is not counted.</p>\n<ul>\n");
  for (const v1::LostAgent& lost : r.lost_agents()) {
    absl::StrAppend(
        &out, "<li>", HtmlEscape(lost.name()), " (", HtmlEscape(lost.why()), "): ",
        lost.bound_known()
            ? absl::StrFormat("at most %d transactions uncounted if it stopped when lost, %d if "
                              "it ran until its dead-man timeout",
                              lost.unreported_if_stopped(), lost.unreported_max())
            : std::string("no bound"),
        " (", HtmlEscape(lost.bound_note()), ")</li>\n");
  }
  absl::StrAppend(&out, "</ul>\n");
  const v1::CommitReconciliation& c = r.commit_reconciliation();
  if (c.available()) {
    absl::StrAppend(
        &out, "<p>",
        HtmlEscape(absl::StrFormat("Commits: the database counted %d, the report %d + %d of the "
                                   "connections' set-up; difference %+d: %s (bound %d).",
                                   c.database_commits(), c.report_commits(), c.connection_commits(),
                                   c.difference(), c.verdict(), c.lost_bound())),
        "</p>\n");
  }
  return out;
}

}  // namespace

std::string RenderReportHtml(const v1::RunReport& r) {
  const std::string title = absl::StrCat("dbload report: ", r.plan().name());
  std::string out = html::PageStart(title);
  absl::StrAppend(&out, "<h1>", HtmlEscape(title), "</h1>\n<table class=\"meta\">\n");
  if (!r.run_id().empty()) absl::StrAppend(&out, MetaRow("Run", r.run_id()));
  if (!r.state().empty()) absl::StrAppend(&out, MetaRow("State", r.state()));
  absl::StrAppend(&out, MetaRow("Ended by", r.end_reason()));
  absl::StrAppend(&out, MetaRow("Started", r.started_at()));
  absl::StrAppend(&out, MetaRow("Target", TargetText(r.plan().target())));
  absl::StrAppend(
      &out, MetaRow("Workload", absl::StrCat(r.plan().workload(), " / ", r.plan().scenario())));
  absl::StrAppend(&out, MetaRow("dbload", r.dbload_version()));
  absl::StrAppend(&out, "</table>\n");
  absl::StrAppend(&out, LostAgentsHtml(r));
  if (r.has_manifest()) absl::StrAppend(&out, ManifestSection(r.manifest()));
  absl::StrAppend(&out, SummarySection(r), StagesSection(r));
  absl::StrAppend(&out, "<h2>Charts</h2>\n", html::ChartDiv("rate", "No intervals in this report."),
                  html::ChartDiv("latency", "No intervals in this report."),
                  html::ChartDiv("spectrum", "No response-time histogram in this report."));
  absl::StrAppend(&out, "<h2>Database saturation</h2>\n");
  if (!r.probe_error().empty()) {
    absl::StrAppend(&out, "<p class=\"warn\">Probe: ", HtmlEscape(r.probe_error()), "</p>\n");
  }
  absl::StrAppend(&out,
                  html::ChartDiv("saturation",
                                 "No database probe data in this report (the probe was "
                                 "off or read nothing)."),
                  SaturationTable(r), ExplainSection(r), AgentsAndRowsSection(r));
  absl::StrAppend(&out, html::PageEnd(ReportDataJson(r)));
  return out;
}

}  // namespace dbload
