#ifndef DBLOAD_REPORT_HTML_KIT_H_
#define DBLOAD_REPORT_HTML_KIT_H_

// The HTML kit every page of dbload is built with (the run report, the comparison, the suite
// report): escaping, the page skeleton with its inline chart script, chart specs as JSON, and the
// percentile spectrum the charts draw.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/histogram.h"
#include "dbload/v1/report.pb.h"

namespace dbload {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string HtmlEscape(absl::string_view text);
// A JSON string literal that is also safe inside <script>: < > & and U+2028/9 as \uXXXX, so
// that no report string can end the script element.
std::string JsonQuote(absl::string_view text);
// A JSON number (non-finite values, which JSON cannot hold, as 0).
std::string JsonNumber(double value);

// The percentile spectrum of a histogram, as HdrHistogram plots it: (percentile, value in ms)
// at percentiles 1 − ½^(k/5), k = 0, 1, …, while fewer than all values lie above, then the
// maximum at 1 − 1/count. Empty for an empty histogram.
std::vector<std::pair<double, double>> PercentileSpectrum(const Histogram& histogram);
// The response-time histograms of a scope's query types, merged (empty when none decodes).
Histogram MergedResponseHistogram(
    const google::protobuf::RepeatedPtrField<dbload::v1::QueryTypeReport>& query_types);

// Pieces shared with the comparison page (report_compare).
namespace html {
// <!DOCTYPE html> … <body>, with the CSS, the policy and the script that reports chart errors.
std::string PageStart(absl::string_view title);
// The data element, the chart script and </body></html>. `data_json` is a JSON object; the
// script draws every element with a data-chart attribute from it.
std::string PageEnd(const std::string& data_json);

// What the chart script draws: lines over x (seconds, or percentiles on the 1/(1 − p) log
// axis), with vertical marks (stage boundaries). A chart without points shows `empty`.
struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  // Optional, one per point: a spread drawn through it (lo to hi), and a ring (a mark such as
  // generator-limited).
  std::vector<double> lo = {};
  std::vector<double> hi = {};
  std::vector<bool> flags = {};
};
struct VerticalLine {
  double x = 0;
  std::string label;
  std::string css_class = "stage-boundary";
};
struct ChartSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool percentile_x = false;
  std::vector<Series> series;
  std::vector<VerticalLine> vlines;
  std::string empty;
  // x on a log-2 axis (clients 4, 8, …, 256 equally apart), ticks at powers of 2; every x must
  // be > 0. Not with percentile_x.
  bool log2_x = false;
};
std::string ChartJson(const ChartSpec& chart);
// A spectrum as a series (x: percentile, y: ms).
Series SpectrumSeries(std::string name, const std::vector<std::pair<double, double>>& spectrum);
// A chart's place in the page: <div data-chart="NAME" data-empty="…"></div>.
std::string ChartDiv(absl::string_view name, absl::string_view empty_note);
}  // namespace html

}  // namespace dbload

#endif  // DBLOAD_REPORT_HTML_KIT_H_
