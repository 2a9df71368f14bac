// The report as text: the terminal's view, laid out as the published comparisons print theirs.
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "db/driver.h"
#include "report/invariants.h"
#include "report/report.h"

namespace dbload {

namespace {

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

// Query types whose plan changed during the run, each with the shapes before and after.
void AppendPlanChanges(std::string& out, const v1::RunReport& r) {
  if (r.plan_changes().empty()) return;
  absl::StrAppend(&out,
                  "\nPLAN CHANGED during the run (these query types' figures mix both "
                  "plans; statistics the load changed, e.g. rows added to a table analyzed "
                  "empty, are the usual cause):\n");
  const auto indented = [](const std::string& text) {
    return absl::StrCat("      ", absl::StrReplaceAll(text, {{"\n", "\n      "}}), "\n");
  };
  for (const v1::PlanChange& change : r.plan_changes()) {
    absl::StrAppend(&out, "  [", change.query_type(), "] ", change.before(), ":\n",
                    indented(change.before_shape()), "    became, ", change.after(), ":\n",
                    indented(change.after_shape()));
  }
}

// Agents lost before their final reports, and the bound on what they ran uncounted.
std::string RenderLostAgents(const v1::RunReport& r) {
  std::string out;
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
  return out;
}

// The database's commit count against the report's, whenever the target counts commits: the
// report's promise is the database's count. Why there is none is news only for a degraded run.
std::string RenderCommitReconciliation(const v1::RunReport& r) {
  std::string out;
  const v1::CommitReconciliation& c = r.commit_reconciliation();
  if (c.available()) {
    absl::StrAppend(&out, "\nCommits: ", DescribeCommits(r), "\n");
    if (c.verdict() != "matches") absl::StrAppend(&out, "  (", c.note(), ")\n");
  } else if (r.lost_agents_size() > 0 && !c.note().empty()) {
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
  if (const std::string setup = ConnectionSetup(r.manifest()); !setup.empty()) {
    absl::StrAppend(&out, "Connections start with: ", setup, "\n");
  }
  absl::StrAppend(&out, "Workload: ", r.plan().workload(), "/", r.plan().scenario(), ", ",
                  DescribeLoad(r.plan()), "\n");
  absl::StrAppend(&out, "Started: ", r.started_at(), "   Ended by: ", r.end_reason(), "\n\n");
  absl::StrAppend(&out, "Total test duration: ", IsoDuration(r.total_duration_s()), "\n");
  absl::StrAppend(&out, "Queries duration: ", IsoDuration(r.queries_duration_s()), "\n");
  absl::StrAppend(&out, "Executed queries: ", r.executed(), "\n");
  if (r.query_types_size() > 1) {
    for (const auto& q : r.query_types()) {
      absl::StrAppend(&out, "  ", q.name(), ": ", DescribeExecuted(q), "\n");
    }
  }
  if (const std::string tpcc = DescribeTpcc(r); !tpcc.empty()) {
    absl::StrAppend(&out, "TPC-C: ", tpcc, "\n");
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
  std::string retry_lines;
  for (const auto& q : r.query_types()) {
    if (const std::string retries = DescribeRetries(q); !retries.empty()) {
      absl::StrAppend(&retry_lines, "  ", q.name(), ": ", retries, "\n");
    }
  }
  if (!retry_lines.empty()) {
    absl::StrAppend(&out,
                    "Retries (tries again with the same values; latency runs through the last "
                    "try): ",
                    r.retries(), "\n", retry_lines);
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
  if (r.connect_time().count() > 0) {
    AppendLatencyBlock(
        out, "Connect time, one per transaction (in the response time, not the service time)",
        r.connect_time());
  }
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
  if (r.invariants_size() > 0) {
    absl::StrAppend(&out, "\nInvariants (read on the database before and after the load):\n");
    for (const v1::InvariantResult& invariant : r.invariants()) {
      absl::StrAppend(&out, "  ", DescribeInvariant(invariant), "\n");
    }
  }
  if (!r.invariants_not_checked().empty()) {
    absl::StrAppend(&out, "\nInvariants: not checked: ", r.invariants_not_checked(), "\n");
  }
  if (r.agents_size() > 1) {
    absl::StrAppend(&out, "\nAgents (response time in ms, each from its own counts):\n");
    // "ready": when the agent's sessions were all open, from the run's start; the load began on
    // every agent at the latest of them.
    absl::StrAppend(&out, absl::StrFormat("  %-20s %8s %10s %7s %9s %8s %8s %8s %8s  %s\n", "name",
                                          "ready", "executed", "errors", "measured", "proc cpu",
                                          "p50", "p99", "max", "ended by"));
    bool few = false;
    for (const v1::AgentSummary& agent : r.agents()) {
      const v1::LatencySummary& rt = agent.response_time();
      absl::StrAppend(
          &out,
          absl::StrFormat(
              "  %-20s %8s %10d %7d %8.1fs %7.2fs %8s %8s %8s  %s\n", agent.name(),
              agent.ready_s() > 0 ? absl::StrFormat("%.2fs", agent.ready_s()) : std::string("-"),
              agent.executed(), agent.errors(), agent.measured_s(), agent.cpu_seconds(),
              FormatPercentileMs(rt, 50, rt.p50_ms()), FormatPercentileMs(rt, 99, rt.p99_ms()),
              FormatMs(rt.max_ms()), agent.end_reason().empty() ? "(lost)" : agent.end_reason()));
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
  absl::StrAppend(&out, RenderLostAgents(r), RenderCommitReconciliation(r));
  absl::StrAppend(&out, RenderGeneratorAndProbe(r));
  AppendPlanChanges(out, r);
  AppendPlans(out, "EXPLAIN (captured as the measured part started)", r.explains());
  for (const v1::StageReport& stage : r.stages()) {
    AppendPlans(out, absl::StrCat("EXPLAIN, stage ", stage.index(), " (", stage.name(), ")"),
                stage.explains());
  }
  // After the load, only the plans that changed: the others are those above.
  google::protobuf::RepeatedPtrField<v1::QueryPlan> changed;
  for (const v1::QueryPlan& plan : r.explains_after_load()) {
    if (std::any_of(r.plan_changes().begin(), r.plan_changes().end(),
                    [&](const v1::PlanChange& c) { return c.query_type() == plan.query_type(); })) {
      *changed.Add() = plan;
    }
  }
  AppendPlans(out, "EXPLAIN after the load (the plans that changed)", changed);
  return out;
}

}  // namespace dbload
