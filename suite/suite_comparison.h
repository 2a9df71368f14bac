#ifndef DBLOAD_SUITE_SUITE_COMPARISON_H_
#define DBLOAD_SUITE_SUITE_COMPARISON_H_

// The suite report's figures in words: cells, ratios between targets at the same load point,
// the headlines and the summary by category. Internal to the suite report (suite_document.h
// builds on it); the public entry is suite_report.h.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "suite/suite_table.h"

namespace dbload::suite_report {

// One figure of PointFigures as the report shows it.
struct Metric {
  const char* header;  // the column's word after the target's name: "TPS", "throughput"
  const char* what;    // in ratio phrases: "TPS", "mean latency"
  bool higher_is_better;
  Spread PointFigures::*field;
  std::string (*format)(double);
  bool p99 = false;  // the response-time p99, with what it rests on
  bool qps = false;  // known only where the runs counted statements
  bool tpmc = false;  // known only for runs of workload tpcc
};

// A case's points (one when the case has none), as BuildSuiteTable ordered them.
struct CaseView {
  std::string name, category;
  bool closed_loop = false, has_points = false, ramp = false;
  std::vector<const SuitePoint*> points;  // ascending
};

// One headline: the category (for the renderer to emphasize) and the rest of the line.
struct Headline {
  std::string category;
  std::string text;
};

// The summary by category: one row per group and compared target.
struct SummaryRow {
  std::string category, cases, target;
  std::vector<std::string> metrics;  // per kCaseMetrics entry
  std::string notes;
};

// The cases without points: what the shop comparison publishes per case (throughput, mean,
// p99).
extern const Metric kCaseMetrics[3];
// The sweeps: what sysbench studies publish per thread count (TPS, QPS, p95, p99).
extern const Metric kSweepMetrics[4];
// A sweep of workload tpcc: tpmC first, then the same.
extern const Metric kTpccSweepMetrics[5];
// The metrics of a sweep's table and ratios: kTpccSweepMetrics where a figure has tpmC.
std::span<const Metric> SweepMetricsOf(const CaseView& c);

// A table cell: the figure ("*" when its p99 rests on too few samples), "—" where there is none.
std::string Cell(const Metric& m, const std::optional<PointFigures>& f);
// Each metric of `value` against `base` in words ("4.87× lower throughput", "p99 latency within
// the 95% confidence intervals", "1.02× higher TPS (no clear winner)"), joined by commas.
std::string PhrasesOf(std::span<const Metric> metrics, const PointFigures& base,
                      const PointFigures& value);
bool AnyFewSamples(const SuitePoint& p);
// "the plan's load", "1 client", "8 clients", "500/s".
std::string PointText(const SuitePoint& p);
// What limited or shaped a target's figures at a point, for the notes under a table.
std::vector<std::string> FigureNotes(const SuiteTable& t, const SuitePoint& p);

std::vector<CaseView> CasesOf(const SuiteTable& t);
// Categories in the order WORKLOADS.md gives them, then others as first seen.
std::vector<std::string> CategoryOrder(const std::vector<CaseView>& cases);
std::string CategoryName(const std::string& category);

// Per category and compared target, ratios only between figures at the same load point.
std::vector<Headline> Headlines(const SuiteTable& t, const std::vector<CaseView>& cases);
std::vector<SummaryRow> SummaryRows(const SuiteTable& t, const std::vector<CaseView>& cases);

}  // namespace dbload::suite_report

#endif  // DBLOAD_SUITE_SUITE_COMPARISON_H_
