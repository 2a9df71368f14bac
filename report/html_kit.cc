#include "report/html_kit.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

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

}  // namespace dbload
