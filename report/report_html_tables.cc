#include "report/report_html_tables.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/html_kit.h"
#include "report/invariants.h"
#include "report/report.h"

namespace dbload::report_html {


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
  if (!m.isolation().empty() || m.session_size() > 0) {
    absl::StrAppend(&out, MetaRow("connections start with", ConnectionSetup(m)));
  }
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
      absl::StrAppend(&out, MetaRow(absl::StrCat("  ", q.name()), DescribeExecuted(q)));
    }
  }
  if (const std::string tpcc = DescribeTpcc(r); !tpcc.empty()) {
    absl::StrAppend(&out, MetaRow("TPC-C", tpcc));
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
  for (const auto& q : r.query_types()) {
    if (const std::string retries = DescribeRetries(q); !retries.empty()) {
      absl::StrAppend(&out, MetaRow(absl::StrCat("Retries of ", q.name(),
                                                 " (same values; latency "
                                                 "through the last try)"),
                                    retries));
    }
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
  if (r.connect_time().count() > 0) {
    absl::StrAppend(
        &out, LatencyRow("connect, one per transaction (in the response time)", r.connect_time()));
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
  for (const v1::PlanChange& change : r.plan_changes()) {
    absl::StrAppend(
        &out, "<p class=\"warn\">The plan of ", HtmlEscape(change.query_type()),
        " changed between ", HtmlEscape(change.before()), " and ", HtmlEscape(change.after()),
        ": its figures mix both plans.</p>\n<pre class=\"plan\">",
        HtmlEscape(change.before_shape()), "</pre>\n<p>became</p>\n<pre class=\"plan\">",
        HtmlEscape(change.after_shape()), "</pre>\n");
  }
  if (r.explains_size() > 0) absl::StrAppend(&out, ExplainBlock(r.explains()));
  for (const auto& s : r.stages()) {
    if (s.explains_size() == 0) continue;
    absl::StrAppend(&out, "<h3>Stage ", s.index(), ": ", HtmlEscape(s.name()), "</h3>\n",
                    ExplainBlock(s.explains()));
  }
  if (r.explains_after_load_size() > 0) {
    absl::StrAppend(&out, "<h3>After the load</h3>\n", ExplainBlock(r.explains_after_load()));
  }
  if (out.empty()) return "";
  return absl::StrCat("<h2>EXPLAIN plans</h2>\n", out);
}

std::string AgentsAndRowsSection(const v1::RunReport& r) {
  std::string out;
  if (r.agents_size() > 0) {
    absl::StrAppend(&out, "<h2>Agents</h2>\n<table>\n<tr>", ThText("name"), Th("ready"),
                    Th("executed"), Th("errors"), Th("measured"), Th("process CPU"), Th("p50 ms"),
                    Th("p99 ms"), Th("max ms"), ThText("ended by"), "</tr>\n");
    bool few = false;
    for (const auto& a : r.agents()) {
      absl::StrAppend(&out, "<tr>", TdText(a.name()),
                      Td(a.ready_s() > 0 ? Seconds(a.ready_s()) : std::string("-")),
                      Td(absl::StrCat(a.executed())), Td(absl::StrCat(a.errors())),
                      Td(Seconds(a.measured_s())), Td(Seconds(a.cpu_seconds())),
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
  if (r.invariants_size() > 0) {
    absl::StrAppend(&out, "<h2>Invariants</h2>\n<table>\n<tr>", ThText("invariant"),
                    ThText("query"), ThText("before"), ThText("after"), ThText("rule"), ThText(""),
                    "</tr>\n");
    for (const v1::InvariantResult& invariant : r.invariants()) {
      absl::StrAppend(
          &out, "<tr>", TdText(invariant.name()), TdText(invariant.sql()),
          TdText(invariant.before()), TdText(invariant.after()),
          TdText(invariant.unchanged() ? "must not change" : "must be " + invariant.expect()),
          TdText(invariant.holds() ? "holds" : "BROKEN"), "</tr>\n");
    }
    absl::StrAppend(&out, "</table>\n");
  }
  if (!r.invariants_not_checked().empty()) {
    absl::StrAppend(&out, "<h2>Invariants</h2>\n<p class=\"warn\">Not checked: ",
                    HtmlEscape(r.invariants_not_checked()), "</p>\n");
  }
  return out;
}

// A degraded run: the lost agents, the bound on what they ran uncounted.
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
  return out;
}

std::string CommitReconciliationHtml(const v1::RunReport& r) {
  const v1::CommitReconciliation& c = r.commit_reconciliation();
  if (!c.available()) return "";
  return absl::StrCat("<p", c.verdict() == "matches" ? "" : " class=\"warn\"", ">",
                      HtmlEscape(absl::StrCat("Commits: ", DescribeCommits(r), ".")), "</p>\n");
}

}  // namespace dbload::report_html
