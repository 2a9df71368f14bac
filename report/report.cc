#include "report/report.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "db/driver.h"
#include "base/percentile_interval.h"
#include "plan/stage_program.h"
#include "google/protobuf/util/json_util.h"

namespace dbload {


namespace {

double Ms(double nanos) { return nanos / 1e6; }

// ISO 8601 duration with millisecond precision, as the shop comparison prints it: PT10.173S.
std::string IsoDuration(double seconds) { return absl::StrFormat("PT%.3fS", seconds); }

void AppendLatencyBlock(std::string& out, const std::string& title,
                        const v1::LatencySummary& s) {
  absl::StrAppend(&out, title, " (ms): Min ", FormatMs(s.min_ms()), "  Max ", FormatMs(s.max_ms()),
                  "  Mean ", FormatMs(s.mean_ms()), "  Stddev ", FormatMs(s.stddev_ms()), "\n");
  const auto p = [&s](double percentile, double ms) {
    return FormatPercentileMs(s, percentile, ms);
  };
  absl::StrAppend(&out, "  Percentile 50: ", p(50, s.p50_ms()), "  75: ", p(75, s.p75_ms()),
                  "  90: ", p(90, s.p90_ms()), "  95: ", p(95, s.p95_ms()),
                  "  99: ", p(99, s.p99_ms()), "  99.9: ", p(99.9, s.p999_ms()),
                  "  99.99: ", p(99.99, s.p9999_ms()), "\n");
  if (s.percentiles_size() == 0) return;  // a report from before dbload recorded the basis
  absl::StrAppend(&out, absl::StrFormat("    %-10s %10s %14s  %s\n", "percentile", "ms",
                                        "samples beyond", "95% interval (ms)"));
  for (const v1::PercentileBasis& b : s.percentiles()) {
    absl::StrAppend(
        &out, absl::StrFormat("    %-10s %10s %14d  %s%s\n", absl::StrFormat("%g", b.percentile()),
                              FormatMs(b.value_ms()), b.samples_beyond(), FormatInterval(b),
                              b.few_samples() ? "  *" : ""));
  }
  if (RestsOnFewSamples(s, 99.99)) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
}

std::string DescribeLoad(const v1::Plan& plan) {
  if (plan.load().has_closed()) {
    std::string text =
        plan.stages_size() > 0
            ? absl::StrCat("closed loop, ", plan.stages_size(), " stages")
            : absl::StrCat("closed loop, ", plan.load().closed().clients(), " clients");
    if (plan.load().closed().think_time_ns() > 0) {
      absl::StrAppend(&text, ", think time ", FormatMs(plan.load().closed().think_time_ns() / 1e6),
                      " ms");
    }
    return text;
  }
  return absl::StrCat("open loop, ",
                      plan.load().open().arrival() == v1::OpenLoad::POISSON ? "Poisson" : "uniform",
                      " arrivals, ", plan.target().pool(), " connections",
                      plan.stages_size() > 0 ? absl::StrCat(", ", plan.stages_size(), " stages")
                                             : "");
}

}  // namespace

std::string DescribeStatements(uint64_t statements, uint64_t executed, uint64_t errors,
                               uint64_t ignored, double seconds) {
  if (statements == 0) return "";
  std::string text = absl::StrCat(statements);
  std::vector<std::string> parts;
  if (const uint64_t transactions = executed + errors + ignored; transactions > 0) {
    parts.push_back(absl::StrFormat(
        "%.1f per transaction%s",
        static_cast<double>(statements) / static_cast<double>(transactions),
        errors + ignored > 0 ? ", failed and ignored ones included" : ""));
  }
  if (seconds > 0) {
    parts.push_back(absl::StrFormat("%.1f/s", static_cast<double>(statements) / seconds));
  }
  if (!parts.empty()) absl::StrAppend(&text, " (", absl::StrJoin(parts, ", "), ")");
  return text;
}

std::string StatementsPerSecondCell(uint64_t statements, double seconds) {
  if (statements == 0 || seconds <= 0) return "-";
  return absl::StrFormat("%.0f", static_cast<double>(statements) / seconds);
}

namespace {

std::string DescribeTarget(const v1::Target& target) {
  std::string where = target.socket().empty()
                          ? absl::StrCat(target.host(), ":", target.port())
                          : target.socket();
  return absl::StrCat(target.driver(), " ", where,
                      target.database().empty() ? "" : absl::StrCat("/", target.database()));
}

}  // namespace

std::string FormatMs(double ms) {
  if (ms >= 100) return absl::StrFormat("%.1f", ms);
  if (ms >= 1) return absl::StrFormat("%.3f", ms);
  return absl::StrFormat("%.4f", ms);
}

const v1::PercentileBasis* BasisOf(const v1::LatencySummary& summary, double percentile) {
  for (const v1::PercentileBasis& b : summary.percentiles()) {
    if (std::fabs(b.percentile() - percentile) < 1e-9) return &b;
  }
  return nullptr;
}

bool RestsOnFewSamples(const v1::LatencySummary& summary, double percentile) {
  const v1::PercentileBasis* b = BasisOf(summary, percentile);
  return b != nullptr && b->few_samples();
}

std::string FormatPercentileMs(const v1::LatencySummary& summary, double percentile,
                               double value_ms) {
  return absl::StrCat(FormatMs(value_ms), RestsOnFewSamples(summary, percentile) ? "*" : "");
}

std::string FormatInterval(const v1::PercentileBasis& b) {
  return absl::StrCat(
      "[", FormatMs(b.ci_low_ms()), ", ",
      b.ci_high_open() ? absl::StrCat(">", FormatMs(b.ci_high_ms())) : FormatMs(b.ci_high_ms()),
      "]");
}

namespace {

// Three significant figures in plain notation: "123", "12.3", "1.23", "0.00123"; trailing zeros
// of a fraction dropped only where `trim` ("0.0006", not "0.000600").
std::string ThreeFigures(double v, bool trim) {
  if (v == 0 || !std::isfinite(v)) return "0";
  const double a = std::fabs(v);
  // Decimals for three significant figures, from the rounded magnitude (9.996 is "10.0").
  int exponent = static_cast<int>(std::floor(std::log10(a)));
  if (std::round(a / std::pow(10.0, exponent - 2)) >= 1000) ++exponent;
  const int decimals = std::clamp(2 - exponent, 0, 12);
  std::string out = absl::StrFormat("%.*f", decimals, v);
  if (trim && out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

std::string WithThousands(double v) {
  const double rounded = std::round(std::fabs(v));
  std::string digits = absl::StrFormat("%.0f", rounded);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 && rounded > 0 ? "-" + out : out;
}

}  // namespace

std::string FormatLatency(double ms) {
  const double a = std::fabs(ms);
  if (a == 0 || !std::isfinite(ms)) return "0 ms";
  if (a < 0.0009995) return absl::StrCat(ThreeFigures(ms * 1e6, false), " ns");
  if (a < 0.9995) return absl::StrCat(ThreeFigures(ms * 1e3, false), " µs");
  if (a < 999.5) return absl::StrCat(ThreeFigures(ms, false), " ms");
  return absl::StrCat(ThreeFigures(ms / 1e3, false), " s");
}

std::string FormatBytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a < 999.5)
    return absl::StrCat(a < 1 ? ThreeFigures(bytes, true) : WithThousands(bytes), " B");
  const char* const units[] = {"kB", "MB", "GB", "TB", "PB"};
  double value = bytes / 1000;
  size_t unit = 0;
  while (std::fabs(value) >= 999.5 && unit + 1 < std::size(units)) {
    value /= 1000;
    ++unit;
  }
  return absl::StrCat(ThreeFigures(value, false), " ", units[unit]);
}

std::string FormatCount(double value) {
  if (!std::isfinite(value)) return "0";
  if (std::fabs(value) >= 999.5) return WithThousands(value);
  return ThreeFigures(value, true);
}

std::string FormatPerSecond(double per_second) {
  return absl::StrCat(FormatCount(per_second), "/s");
}

std::string FormatSpan(double seconds) {
  // Below a second as a plan writes it, without trailing zeros: "50 ms", "2.5 ms", "800 µs".
  if (seconds * 1e3 < 0.9995) return absl::StrCat(ThreeFigures(seconds * 1e6, true), " µs");
  if (seconds < 0.9995) return absl::StrCat(ThreeFigures(seconds * 1e3, true), " ms");
  const double whole = std::round(seconds);
  if (std::fabs(seconds - whole) > 1e-6 || whole < 60 || static_cast<int64_t>(whole) % 60 != 0) {
    return absl::StrCat(ThreeFigures(seconds, true), " s");
  }
  const int64_t minutes = static_cast<int64_t>(whole) / 60;
  if (minutes < 60) return absl::StrCat(minutes, " min");
  return minutes % 60 == 0 ? absl::StrCat(minutes / 60, " h")
                           : absl::StrCat(minutes / 60, " h ", minutes % 60, " min");
}

v1::LatencySummary Summarize(const Histogram& h) {
  v1::LatencySummary s;
  s.set_count(h.TotalCount());
  if (h.Empty()) return s;
  s.set_min_ms(Ms(h.Min()));
  s.set_max_ms(Ms(h.Max()));
  s.set_mean_ms(Ms(h.Mean()));
  s.set_stddev_ms(Ms(h.Stddev()));
  // Every percentile, its samples beyond and its interval in one pass over the histogram.
  const std::vector<PercentileBasis> bases = DescribePercentiles(h, kPublishedPercentiles);
  s.set_p50_ms(Ms(bases[0].value_ns));
  s.set_p75_ms(Ms(bases[1].value_ns));
  s.set_p90_ms(Ms(bases[2].value_ns));
  s.set_p95_ms(Ms(bases[3].value_ns));
  s.set_p99_ms(Ms(bases[4].value_ns));
  s.set_p999_ms(Ms(bases[5].value_ns));
  s.set_p9999_ms(Ms(bases[6].value_ns));
  for (const PercentileBasis& b : bases) {
    v1::PercentileBasis* out = s.add_percentiles();
    out->set_percentile(b.percentile);
    out->set_value_ms(Ms(b.value_ns));
    out->set_samples_beyond(b.samples_beyond);
    out->set_ci_low_ms(Ms(b.ci_low_ns));
    out->set_ci_high_ms(Ms(b.ci_high_ns));
    out->set_ci_high_open(b.ci_high_open);
    out->set_few_samples(b.few_samples());
  }
  return s;
}

RunReportBuilder::RunReportBuilder(const v1::Plan& plan, std::vector<std::string> query_types)
    : plan_(plan),
      query_types_(std::move(query_types)),
      stage_measured_(plan.stages_size()),
      stage_max_clients_(plan.stages_size(), 0) {
  measured_.query_types.resize(query_types_.size());
  for (IntervalSnapshot& stage : stage_measured_) stage.query_types.resize(query_types_.size());
}

v1::IntervalSample RunReportBuilder::AddInterval(const IntervalInfo& info,
                                                 const IntervalSnapshot& snapshot) {
  Histogram response;
  for (const auto& q : snapshot.query_types) response.Add(q.response_time);
  v1::IntervalSample sample;
  sample.set_elapsed_s(info.elapsed_s);
  sample.set_target_rate(info.target_rate);
  sample.set_achieved_rate(info.length_s > 0 ? snapshot.Executed() / info.length_s : 0);
  sample.set_executed(snapshot.Executed());
  sample.set_errors(snapshot.Errors());
  sample.set_ignored(snapshot.Ignored());
  sample.set_statements(snapshot.Statements());
  sample.set_p50_ms(Ms(response.ValueAtPercentile(50)));
  sample.set_p99_ms(Ms(response.ValueAtPercentile(99)));
  sample.set_p999_ms(Ms(response.ValueAtPercentile(99.9)));
  sample.set_schedule_lag_p99_ms(Ms(snapshot.schedule_lag.ValueAtPercentile(99)));
  sample.set_dispatch_lag_p99_ms(Ms(snapshot.dispatch_lag.ValueAtPercentile(99)));
  sample.set_length_s(info.length_s);
  sample.set_warmup(info.warmup);
  sample.set_stage(info.stage);
  sample.set_clients(info.clients);
  sample.set_max_agent_cpu(info.max_agent_cpu);
  if (snapshot.connection_time.Total() > 0) {
    ConnectionTimeToProto(snapshot.connection_time, sample.mutable_connection_time());
  }
  samples_.push_back(sample);
  if (!info.warmup) {
    measured_.Add(snapshot);
    if (info.stage > 0 && info.stage <= stage_measured_.size()) {
      stage_measured_[info.stage - 1].Add(snapshot);
      uint32_t& peak = stage_max_clients_[info.stage - 1];
      peak = std::max(peak, info.clients);
    }
  }
  return sample;
}

namespace {

// Query types, totals and latency summaries of merged counts, into a run's or a stage's report.
template <typename Report>
void FillMeasured(const IntervalSnapshot& measured, const std::vector<std::string>& names,
                  Report& report) {
  report.set_executed(measured.Executed());
  report.set_errors(measured.Errors());
  report.set_ignored(measured.Ignored());
  report.set_statements(measured.Statements());
  Histogram response, service;
  for (size_t i = 0; i < names.size(); ++i) {
    const QueryTypeInterval& q = measured.query_types[i];
    response.Add(q.response_time);
    service.Add(q.service_time);
    v1::QueryTypeReport* out = report.add_query_types();
    out->set_name(names[i]);
    out->set_executed(q.response_time.TotalCount());
    out->set_errors(q.ErrorCount());
    out->set_ignored(q.IgnoredCount());
    out->set_statements(q.statements);
    for (const auto& [key, count] : q.errors) {
      v1::ErrorCount* e = out->add_error_counts();
      e->set_error_class(std::string(db::ErrorClassName(key.first)));
      e->set_code(key.second);
      e->set_count(count);
    }
    *out->mutable_response_time() = Summarize(q.response_time);
    *out->mutable_service_time() = Summarize(q.service_time);
    q.response_time.ToProto(out->mutable_response_histogram());
    q.service_time.ToProto(out->mutable_service_histogram());
  }
  *report.mutable_response_time() = Summarize(response);
  *report.mutable_service_time() = Summarize(service);
  *report.mutable_schedule_lag() = Summarize(measured.schedule_lag);
  *report.mutable_dispatch_lag() = Summarize(measured.dispatch_lag);
}

}  // namespace

v1::RunReport RunReportBuilder::Finish(double measured_s, double outside_queries_s,
                                       uint64_t not_started, std::string end_reason,
                                       std::string started_at,
                                       const std::vector<double>& stage_seconds) const {
  v1::RunReport report;
  report.set_format_version(kReportFormatVersion);
  report.set_dbload_version(DBLOAD_VERSION_STRING);
  *report.mutable_plan() = plan_;
  report.set_started_at(std::move(started_at));
  report.set_total_duration_s(measured_s);
  report.set_queries_duration_s(measured_s - outside_queries_s);
  FillMeasured(measured_, query_types_, report);
  const bool open = plan_.load().has_open();
  if (open && plan_.stages_size() == 0) report.set_wanted_rate(plan_.load().open().rate());
  report.set_actual_rate(report.queries_duration_s() > 0
                             ? report.executed() / report.queries_duration_s()
                             : 0);
  for (int i = 0; i < plan_.stages_size(); ++i) {
    const v1::Stage& stage = plan_.stages(i);
    v1::StageReport& out = *report.add_stages();
    out.set_name(stage.name().empty() ? absl::StrCat("stage ", i + 1) : stage.name());
    out.set_index(static_cast<uint32_t>(i + 1));
    const double seconds = static_cast<size_t>(i) < stage_seconds.size() ? stage_seconds[i] : 0;
    out.set_duration_s(seconds);
    FillMeasured(stage_measured_[i], query_types_, out);
    if (open) {
      const Nanos length = StageLength(stage);
      out.set_wanted_rate(
          MeanLevel(stage.rate(), length > 0 ? length : static_cast<Nanos>(seconds * 1e9), false));
    }
    out.set_actual_rate(seconds > 0 ? out.executed() / seconds : 0);
    out.set_max_clients(stage_max_clients_[i]);
  }
  // A staged open loop wants, over the run, what its stages wanted over their time.
  if (open && plan_.stages_size() > 0 && measured_s > 0) {
    double wanted = 0;
    for (const v1::StageReport& stage : report.stages()) wanted += stage.wanted_rate() * stage.duration_s();
    report.set_wanted_rate(wanted / measured_s);
  }
  for (const auto& sample : samples_) *report.add_intervals() = sample;
  report.set_not_started(not_started);
  report.set_end_reason(std::move(end_reason));
  return report;
}

std::string RenderIntervalLine(const v1::IntervalSample& s) {
  std::string target = s.target_rate() > 0 ? absl::StrFormat("%.0f/s", s.target_rate())
                       : s.clients() > 0   ? absl::StrFormat("%d clients", s.clients())
                                           : std::string("closed");
  // An interval keeps no histogram, but at most n − ⌈0.99 n⌉ of its n samples lie beyond its
  // p99: fewer than kFewSamplesBeyond of those marks the p99 as resting on too few, for certain.
  const uint64_t n = s.executed();
  const uint64_t beyond_at_most =
      n - std::min<uint64_t>(n, static_cast<uint64_t>(std::ceil(0.99 * static_cast<double>(n))));
  // Statements per second over the same length as the achieved rate (none shown in a report
  // from before dbload counted them).
  const std::string statements_rate =
      s.statements() > 0 && s.length_s() > 0
          ? absl::StrFormat(" (%.0f stmt/s)", static_cast<double>(s.statements()) / s.length_s())
          : "";
  return absl::StrFormat(
      "[%6.1fs]%s%s target %s  achieved %.0f/s%s  p50 %s ms  p99 %s%s ms  errors %s  lag p99 %s ms",
      s.elapsed_s(), s.warmup() ? " warm-up" : "",
      s.stage() > 0 ? absl::StrFormat(" stage %d", s.stage()) : "", target, s.achieved_rate(),
      statements_rate,
      FormatMs(s.p50_ms()), FormatMs(s.p99_ms()),
      n > 0 && beyond_at_most < kFewSamplesBeyond ? "*" : "",
      // Shown only when there are some: most scenarios ignore nothing.
      s.ignored() > 0 ? absl::StrFormat("%d  ignored %d", s.errors(), s.ignored())
                      : absl::StrCat(s.errors()),
      FormatMs(s.schedule_lag_p99_ms()));
}

namespace {

// The probe's values the text report shows (the JSON has them all): the common names, the
// server's processes, and the few server-specific ones the published comparisons discussed.
bool ShownInText(const v1::SaturationDelta& d) {
  static const std::set<std::string> kShown = {
      "commits", "rollbacks", "read_bytes", "written_bytes", "deadlocks", "lock_waiting",
      "connections", "database_size_bytes", "tup_inserted", "tup_updated", "tup_deleted",
      "Handler_write", "Handler_update", "Handler_delete", "Innodb_rows_inserted",
      "Innodb_rows_updated", "Innodb_rows_deleted", "blks_hit", "wal_bytes", "temp_bytes",
      "Innodb_buffer_pool_read_requests",
      "Innodb_os_log_written", "Innodb_row_lock_waits", "cpu_seconds", "rss_bytes"};
  return d.source() == "haproxy" || kShown.count(d.name()) > 0;
}

// 4 significant digits, large values with an SI suffix (sizes, byte counts).
std::string FormatQuantity(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e9) return absl::StrFormat("%.4gG", value / 1e9);
  if (magnitude >= 1e6) return absl::StrFormat("%.4gM", value / 1e6);
  if (magnitude >= 1e4) return absl::StrFormat("%.4gk", value / 1e3);
  return absl::StrFormat("%.4g", value);
}

// Right-aligned in 18 columns of the terminal, not bytes (kFewReadingsMark is 3 bytes wide).
std::string Cell18(const std::string& text) {
  size_t continuation = 0;
  for (char c : text) continuation += (static_cast<unsigned char>(c) & 0xC0) == 0x80 ? 1 : 0;
  const size_t width = 18 + continuation;
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

// A counter's figure over too few readings carries kFewReadingsMark.
bool MarkedFew(const v1::SaturationDelta& d) { return !d.gauge() && FewProbeReadings(d); }

std::string FormatDelta(const v1::SaturationDelta& d) {
  if (d.gauge()) return absl::StrCat(FormatQuantity(d.delta()), " max ", FormatQuantity(d.max()));
  return absl::StrCat(FormatQuantity(d.per_query()), MarkedFew(d) ? kFewReadingsMark : "");
}

// "database-stalled at 4.0–6.0 s; generator-limited at 0.0–1.0 s, 7.0–9.0 s": the measured
// intervals by their verdict, consecutive ones joined (empty when none has one).
std::string JudgedIntervals(const v1::RunReport& r) {
  std::vector<std::string> parts;
  for (const auto& [limit, name] :
       {std::pair{v1::INTERVAL_LIMIT_DATABASE_STALLED, "database-stalled"},
        std::pair{v1::INTERVAL_LIMIT_POOL, "pool-limited"},
        std::pair{v1::INTERVAL_LIMIT_GENERATOR, "generator-limited"}}) {
    std::vector<std::string> spans;
    double from = 0, run_from = -1, run_to = 0;
    for (const v1::IntervalSample& s : r.intervals()) {
      const bool marked = !s.warmup() && s.limit() == limit;
      if (marked && run_from < 0) run_from = from;
      if (marked) run_to = s.elapsed_s();
      if (!marked && run_from >= 0) {
        spans.push_back(absl::StrFormat("%.1f–%.1f s", run_from, run_to));
        run_from = -1;
      }
      from = s.elapsed_s();
    }
    if (run_from >= 0) spans.push_back(absl::StrFormat("%.1f–%.1f s", run_from, run_to));
    if (!spans.empty()) parts.push_back(absl::StrCat(name, " at ", absl::StrJoin(spans, ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

// Generator health and what the database probe read, for the text report.
std::string RenderGeneratorAndProbe(const v1::RunReport& r) {
  std::string out;
  // With stages, each stage carries its own marks (the run's repeat the first of them).
  auto marks = [&out](const auto& scope, const std::string& where) {
    if (scope.database_stalled()) {
      absl::StrAppend(&out, "\nDATABASE-STALLED", where, ": ", scope.database_stalled_reason(),
                      "\n");
    }
    if (scope.generator_limited()) {
      absl::StrAppend(&out, "\nGENERATOR-LIMITED", where, ": ", scope.generator_limited_reason(),
                      "\n");
    }
    if (scope.pool_limited()) {
      absl::StrAppend(&out, "\nPOOL-LIMITED", where, ": ", scope.pool_limited_reason(), "\n");
    }
  };
  if (r.stages_size() == 0) marks(r, "");
  for (const v1::StageReport& stage : r.stages()) {
    marks(stage, absl::StrCat(" stage ", stage.index(), " (", stage.name(), ")"));
  }
  if (const std::string judged = JudgedIntervals(r); !judged.empty()) {
    absl::StrAppend(&out, "\nIntervals judged: ", judged, "\n");
  }
  if (!r.probe_error().empty()) absl::StrAppend(&out, "\nDatabase probe: ", r.probe_error(), "\n");
  if (r.saturation_size() == 0) return out;
  absl::StrAppend(&out, absl::StrFormat(
                            "\nDatabase, as the server counts it (probe: %d readings; counters "
                            "per executed transaction, levels as the last reading and the highest):\n",
                            r.probe_samples_size()));
  std::string header = absl::StrFormat("  %-40s %18s", "source/name", "run");
  for (const v1::StageReport& stage : r.stages()) {
    absl::StrAppend(&header, absl::StrFormat(" %18s", absl::StrCat(stage.index(), " ", stage.name())));
  }
  absl::StrAppend(&out, header, "\n");
  // Failed transactions' work is in the counters but not in the divisor: say how many there were.
  if (r.errors() > 0 || std::any_of(r.stages().begin(), r.stages().end(),
                                    [](const v1::StageReport& s) { return s.errors() > 0; })) {
    auto share = [](uint64_t executed, uint64_t errors) {
      return absl::StrFormat("%.3g%%", executed + errors == 0
                                           ? 0.0
                                           : 100.0 * static_cast<double>(errors) /
                                                 static_cast<double>(executed + errors));
    };
    std::string line = absl::StrFormat("  %-40s %18s", "failed transactions (share, not divided)",
                                       share(r.executed(), r.errors()));
    for (const v1::StageReport& stage : r.stages()) {
      absl::StrAppend(&line, absl::StrFormat(" %18s", share(stage.executed(), stage.errors())));
    }
    absl::StrAppend(&out, line, "\n");
  }
  if (r.ignored() > 0) {
    // Their work (and their rollbacks) is in the counters too.
    std::string line =
        absl::StrFormat("  %-40s %18d", "ignored errors (rolled back, not divided)", r.ignored());
    for (const v1::StageReport& stage : r.stages()) {
      absl::StrAppend(&line, absl::StrFormat(" %18d", stage.ignored()));
    }
    absl::StrAppend(&out, line, "\n");
  }
  bool few = false;
  for (const v1::SaturationDelta& d : r.saturation()) {
    if (!ShownInText(d)) continue;
    few = few || MarkedFew(d);
    std::string line =
        absl::StrCat(absl::StrFormat("  %-40s ", absl::StrCat(d.source(), "/", d.name())),
                     Cell18(FormatDelta(d)));
    for (const v1::StageReport& stage : r.stages()) {
      std::string cell = "-";
      for (const v1::SaturationDelta& s : stage.saturation()) {
        if (s.source() == d.source() && s.name() == d.name()) {
          cell = FormatDelta(s);
          few = few || MarkedFew(s);
        }
      }
      absl::StrAppend(&line, " ", Cell18(cell));
    }
    absl::StrAppend(&out, line, "\n");
  }
  if (few) absl::StrAppend(&out, "  ", kFewReadingsNote, "\n");
  if (r.stages_size() > 0) {
    absl::StrAppend(&out,
                    "  (stage boundaries fall on the probe's readings, a second apart, and "
                    "PostgreSQL publishes\n   its counters about once a second: a short stage's "
                    "values borrow up to a second from its\n   neighbours; the run's span from "
                    "before the load to after it is whole)\n");
  }
  return out;
}

// The database's plans: per query type its statement(s) and the plan, indented.
void AppendPlans(std::string& out, const std::string& title,
                 const google::protobuf::RepeatedPtrField<v1::QueryPlan>& plans) {
  if (plans.empty()) return;
  absl::StrAppend(&out, "\n", title, ":\n");
  const auto indented = [](const std::string& text, const char* indent) {
    return absl::StrCat(indent, absl::StrReplaceAll(text, {{"\n", absl::StrCat("\n", indent)}}),
                        "\n");
  };
  for (const v1::QueryPlan& plan : plans) {
    absl::StrAppend(&out, "  [", plan.query_type(), "]\n");
    if (!plan.statement().empty()) absl::StrAppend(&out, indented(plan.statement(), "    "));
    if (!plan.plan().empty()) absl::StrAppend(&out, indented(plan.plan(), "      "));
    if (!plan.error().empty()) {
      absl::StrAppend(&out, indented(absl::StrCat("EXPLAIN failed: ", plan.error()), "    "));
    }
  }
}

// Agents lost before their final reports, the bound on what they ran uncounted, and the
// database's commit count against the report's.
std::string RenderLostAgents(const v1::RunReport& r) {
  std::string out;
  // Printed for degraded runs only (the JSON always has the reconciliation): without a loss
  // the counter's other commits (EXPLAIN, setup reads, other sessions) are no news.
  if (r.lost_agents_size() == 0) return out;
  absl::StrAppend(&out, "\nDEGRADED: ", r.lost_agents_size(),
                  " agent(s) lost before their final report; what they ran after their last "
                  "report is not counted above:\n");
  for (const v1::LostAgent& lost : r.lost_agents()) {
    absl::StrAppend(
        &out, absl::StrFormat("  %s (%s): last report at %.2f s, lost at %.2f s; ", lost.name(),
                              lost.why(), lost.last_report_s(), lost.lost_s()));
    if (lost.bound_known()) {
      absl::StrAppend(&out, absl::StrFormat("at most %d transactions uncounted if it stopped "
                                            "when lost, %d if it ran until its dead-man timeout "
                                            "(%.1f s)\n    (%s)\n",
                                            lost.unreported_if_stopped(), lost.unreported_max(),
                                            lost.dead_man_s(), lost.bound_note()));
    } else {
      absl::StrAppend(&out, "uncounted transactions: ", lost.bound_note(), "\n");
    }
  }
  const v1::CommitReconciliation& c = r.commit_reconciliation();
  if (c.available()) {
    absl::StrAppend(
        &out, absl::StrFormat("\nCommits: the database counted %d (%s), the report %d + %d of the "
                              "connections' set-up; difference %+d: %s",
                              c.database_commits(), c.counter(), c.report_commits(),
                              c.connection_commits(), c.difference(), c.verdict()));
    absl::StrAppend(&out, absl::StrFormat(" (bound %d; %d if they stopped when lost)",
                                          c.lost_bound(), c.lost_bound_if_stopped()));
    absl::StrAppend(&out, "\n  (", c.note(), ")\n");
  } else if (!c.note().empty()) {
    absl::StrAppend(&out, "Commits not reconciled: ", c.note(), "\n");
  }
  return out;
}

}  // namespace

std::string DispatchLagShareSentence(const v1::RunReport& r) {
  if (r.response_time().p99_ms() <= 0) return "";
  return absl::StrFormat("dispatch lag p99 %s ms = %.0f%% of response p99 %s ms (the "
                         "generator's own share of it)",
                         FormatMs(r.dispatch_lag().p99_ms()), r.dispatch_lag_share() * 100,
                         FormatMs(r.response_time().p99_ms()));
}

std::string RenderReportText(const v1::RunReport& r) {
  std::string out;
  absl::StrAppend(&out, "dbload ", r.dbload_version(), " report: ", r.plan().name(), "\n");
  absl::StrAppend(&out, "Target: ", DescribeTarget(r.plan().target()), "\n");
  // Where the load went: each agent's dialed address (a host name resolved once, checked by its
  // --allow-target). One line when every agent dialed the same.
  std::vector<std::string> dialed;
  for (const v1::RunManifest::AgentHost& agent : r.manifest().agents()) {
    if (agent.target_address().empty()) continue;
    dialed.push_back(absl::StrCat(agent.name(), " ", agent.target_address()));
  }
  if (!dialed.empty()) {
    const std::string& first = r.manifest().agents(0).target_address();
    const bool same = std::all_of(
        r.manifest().agents().begin(), r.manifest().agents().end(),
        [&](const v1::RunManifest::AgentHost& agent) { return agent.target_address() == first; });
    absl::StrAppend(&out, "Dialed: ",
                    same && !first.empty() ? absl::StrCat(first, " (every agent)")
                                           : absl::StrJoin(dialed, ", "),
                    "\n");
  }
  absl::StrAppend(&out, "Workload: ", r.plan().workload(), "/", r.plan().scenario(), ", ",
                  DescribeLoad(r.plan()), "\n");
  absl::StrAppend(&out, "Started: ", r.started_at(), "   Ended by: ", r.end_reason(), "\n\n");
  absl::StrAppend(&out, "Total test duration: ", IsoDuration(r.total_duration_s()), "\n");
  absl::StrAppend(&out, "Queries duration: ", IsoDuration(r.queries_duration_s()), "\n");
  absl::StrAppend(&out, "Executed queries: ", r.executed(), "\n");
  if (r.query_types_size() > 1) {
    for (const auto& q : r.query_types()) {
      absl::StrAppend(&out, "  ", q.name(), ": ", q.executed(), "\n");
    }
  }
  // sysbench's queries (read + write + other): statements ÷ queries duration is its QPS.
  if (const std::string statements =
          DescribeStatements(r.statements(), r.executed(), r.errors(), r.ignored(),
                             r.queries_duration_s());
      !statements.empty()) {
    absl::StrAppend(&out, "Statements: ", statements, "\n");
    if (r.query_types_size() > 1) {
      for (const auto& q : r.query_types()) {
        const std::string described = DescribeStatements(
            q.statements(), q.executed(), q.errors(), q.ignored(), r.queries_duration_s());
        absl::StrAppend(&out, "  ", q.name(), ": ", described.empty() ? "0" : described, "\n");
      }
    }
  }
  absl::StrAppend(&out, "Errors: ", r.errors(), "\n");
  const std::string ignored_class(db::ErrorClassName(db::ErrorClass::kIgnored));
  for (const auto& q : r.query_types()) {
    for (const auto& e : q.error_counts()) {
      if (e.error_class() == ignored_class) continue;
      absl::StrAppend(&out, "  ", q.name(), " ", e.error_class(), " ", e.code(), ": ", e.count(),
                      "\n");
    }
  }
  if (r.ignored() > 0) {
    absl::StrAppend(
        &out, "Ignored errors (rolled back, not transactions, as sysbench's): ", r.ignored(), "\n");
    for (const auto& q : r.query_types()) {
      for (const auto& e : q.error_counts()) {
        if (e.error_class() != ignored_class) continue;
        absl::StrAppend(&out, "  ", q.name(), " ", e.code(), ": ", e.count(), "\n");
      }
    }
  }
  if (r.wanted_rate() > 0) {
    absl::StrAppend(&out, "Wanted queries rate: ", absl::StrFormat("%.0f", r.wanted_rate()), "/s\n");
  } else {
    absl::StrAppend(&out, "Wanted queries rate: as fast as the clients go (closed loop)\n");
  }
  absl::StrAppend(&out, "Actual queries rate: ", absl::StrFormat("%.0f", r.actual_rate()), "/s\n");
  if (r.plan().load().has_open()) {
    absl::StrAppend(&out, "Not started (no free connection before the end): ", r.not_started(),
                    "\n");
  }
  absl::StrAppend(&out, "\n");
  AppendLatencyBlock(out, "Response time, from intended start", r.response_time());
  AppendLatencyBlock(out, "Service time, from actual start", r.service_time());
  const v1::LatencySummary& lag = r.schedule_lag();
  absl::StrAppend(&out, "Schedule lag (ms): p50 ", FormatPercentileMs(lag, 50, lag.p50_ms()),
                  "  p99 ", FormatPercentileMs(lag, 99, lag.p99_ms()), "  Max ",
                  FormatMs(lag.max_ms()), "\n");
  const v1::LatencySummary& dispatch = r.dispatch_lag();
  if (r.plan().load().has_open()) {
    absl::StrAppend(&out, "  of which with a free connection (dispatch lag): p50 ",
                    FormatPercentileMs(dispatch, 50, dispatch.p50_ms()), "  p99 ",
                    FormatPercentileMs(dispatch, 99, dispatch.p99_ms()), "  Max ",
                    FormatMs(dispatch.max_ms()), "\n");
  }
  if (RestsOnFewSamples(lag, 99) ||
      (r.plan().load().has_open() && RestsOnFewSamples(dispatch, 99))) {
    absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
  }
  if (const std::string share = DispatchLagShareSentence(r); !share.empty()) {
    absl::StrAppend(&out, "  ", share, "\n");
  }
  if (r.query_types_size() > 1) {
    for (const auto& q : r.query_types()) {
      absl::StrAppend(&out, "\n[", q.name(), "]\n");
      AppendLatencyBlock(out, "Response time", q.response_time());
    }
  }
  if (r.row_changes_size() > 0) {
    absl::StrAppend(&out, "\nRows changed (counted by the database, and as the executed "
                          "transactions say):\n");
    for (const v1::RowChange& change : r.row_changes()) {
      const int64_t counted = change.after() - change.before();
      absl::StrAppend(&out, absl::StrFormat("  %-20s %+12d %+12d  %s\n", change.table(), counted,
                                            change.expected(),
                                            counted == change.expected() ? "ok" : "MISMATCH"));
    }
  }
  if (!r.row_changes_not_checked().empty()) {
    absl::StrAppend(&out, "\nRows changed: not checked: ", r.row_changes_not_checked(), "\n");
  }
  if (r.agents_size() > 1) {
    absl::StrAppend(&out, "\nAgents (response time in ms, each from its own counts):\n");
    absl::StrAppend(&out, absl::StrFormat("  %-20s %10s %7s %9s %8s %8s %8s %8s  %s\n", "name",
                                          "executed", "errors", "measured", "proc cpu", "p50", "p99",
                                          "max", "ended by"));
    bool few = false;
    for (const v1::AgentSummary& agent : r.agents()) {
      const v1::LatencySummary& rt = agent.response_time();
      absl::StrAppend(
          &out, absl::StrFormat("  %-20s %10d %7d %8.1fs %7.2fs %8s %8s %8s  %s\n", agent.name(),
                                agent.executed(), agent.errors(), agent.measured_s(),
                                agent.cpu_seconds(), FormatPercentileMs(rt, 50, rt.p50_ms()),
                                FormatPercentileMs(rt, 99, rt.p99_ms()), FormatMs(rt.max_ms()),
                                agent.end_reason().empty() ? "(lost)" : agent.end_reason()));
      few = few || RestsOnFewSamples(rt, 99);
    }
    if (few) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
  }
  if (r.stages_size() > 0) {
    // One line per stage, each from that stage's merged counts only.
    const bool open = r.plan().load().has_open();
    absl::StrAppend(&out, "\nStages (response time in ms, from intended start):\n");
    absl::StrAppend(&out,
                    absl::StrFormat("  %-3s %-16s %9s %10s %9s %9s %9s %7s %8s %8s %8s %8s\n", "#",
                                    "name", "duration", "executed", open ? "wanted/s" : "clients",
                                    "actual/s", "stmt/s", "errors", "mean", "p50", "p99", "p99.9"));
    bool few = false;
    for (const v1::StageReport& stage : r.stages()) {
      const std::string load = open ? absl::StrFormat("%.0f", stage.wanted_rate())
                                    : absl::StrCat("<=", stage.max_clients());
      const v1::LatencySummary& rt = stage.response_time();
      const std::string statements_rate =
          StatementsPerSecondCell(stage.statements(), stage.duration_s());
      absl::StrAppend(
          &out, absl::StrFormat("  %-3d %-16s %8.1fs %10d %9s %9.0f %9s %7d %8s %8s %8s %8s\n",
                                stage.index(), stage.name(), stage.duration_s(), stage.executed(),
                                load, stage.actual_rate(), statements_rate, stage.errors(),
                                FormatMs(rt.mean_ms()), FormatPercentileMs(rt, 50, rt.p50_ms()),
                                FormatPercentileMs(rt, 99, rt.p99_ms()),
                                FormatPercentileMs(rt, 99.9, rt.p999_ms())));
      few = few || RestsOnFewSamples(rt, 99.9);
    }
    if (few) absl::StrAppend(&out, "  ", kFewSamplesNote, "\n");
    for (const v1::StageReport& stage : r.stages()) {
      if (stage.knee_steps_size() == 0) continue;
      const std::string unit = open ? "/s" : " clients";
      absl::StrAppend(&out, "\nKnee search, stage ", stage.index(), " (", stage.name(), "): ",
                      stage.knee() > 0
                          ? absl::StrFormat("the highest load that met the SLO was %.6g%s",
                                            stage.knee(), unit)
                          : std::string("no step met the SLO"),
                      "\n");
      absl::StrAppend(&out, absl::StrFormat("  %-4s %10s %-6s %8s %10s %10s %11s  %s\n", "step",
                                            "level", "SLO", "judged", "executed", "p99 ms",
                                            "achieved/s", "missed"));
      for (int i = 0; i < stage.knee_steps_size(); ++i) {
        const v1::KneeStep& step = stage.knee_steps(i);
        absl::StrAppend(&out, absl::StrFormat("  %-4d %10.6g %-6s %7.1fs %10d %10s %11.0f  %s\n",
                                              i + 1, step.level(), step.met() ? "met" : "missed",
                                              step.judged_s(), step.executed(),
                                              FormatMs(step.p99_ms()), step.achieved_rate(),
                                              step.missed()));
      }
    }
  }
  absl::StrAppend(&out, RenderLostAgents(r));
  absl::StrAppend(&out, RenderGeneratorAndProbe(r));
  AppendPlans(out, "EXPLAIN (captured as the measured part started)", r.explains());
  for (const v1::StageReport& stage : r.stages()) {
    AppendPlans(out, absl::StrCat("EXPLAIN, stage ", stage.index(), " (", stage.name(), ")"),
                stage.explains());
  }
  return out;
}

std::string RenderReportJson(const v1::RunReport& report) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string json;
  // Cannot fail for a message without Any fields.
  (void)google::protobuf::util::MessageToJsonString(report, &json, options);
  return json;
}

absl::StatusOr<v1::RunReport> ParseReportJson(const std::string& json) {
  v1::RunReport report;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &report);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("not a dbload report: ", status.ToString()));
  }
  if (report.format_version() != kReportFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("report format version ",
                                                   report.format_version(), " is not supported"));
  }
  return report;
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string temporary = path + ".tmp";
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot write ", temporary, ": ", strerror(errno)));
  }
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = strerror(errno);
      close(fd);
      unlink(temporary.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write ", temporary, ": ", why));
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = fsync(fd) == 0;
  const std::string sync_error = synced ? "" : strerror(errno);
  close(fd);
  if (!synced) {
    unlink(temporary.c_str());
    return absl::UnavailableError(absl::StrCat("cannot flush ", temporary, ": ", sync_error));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = strerror(errno);
    unlink(temporary.c_str());
    return absl::UnavailableError(
        absl::StrCat("cannot rename ", temporary, " to ", path, ": ", why));
  }
  return absl::OkStatus();
}

absl::Status SaveReportJson(const std::string& path, const v1::RunReport& report) {
  return WriteFileAtomically(path, RenderReportJson(report));
}

}  // namespace dbload
