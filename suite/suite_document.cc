#include "suite/suite_document.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "suite/suite_ramp_render.h"

namespace dbload::suite_report {
namespace {

// several as such ("differs across runs: 15.4 (3 runs), 15.5 (1 run)").
std::string Distinct(const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, size_t>> seen;
  for (const std::string& v : values) {
    auto it = std::find_if(seen.begin(), seen.end(), [&v](const auto& s) { return s.first == v; });
    if (it == seen.end()) {
      seen.push_back({v, 1});
    } else {
      ++it->second;
    }
  }
  if (seen.empty()) return "";
  if (seen.size() == 1) return seen.front().first;
  std::vector<std::string> parts;
  for (const auto& [value, n] : seen) {
    parts.push_back(
        absl::StrCat(value.empty() ? "(none)" : value, " (", n, n == 1 ? " run)" : " runs)"));
  }
  return absl::StrCat("differs across runs: ", absl::StrJoin(parts, ", "));
}

// The settings that shape results, per product, as coordinator/db_probe.cc records them; the
// MySQL family's sizes are bytes.
struct KeySetting {
  const char* name;
  bool bytes;
};
const KeySetting kPostgresSettings[] = {{"shared_buffers", false},
                                        {"max_connections", false},
                                        {"synchronous_commit", false},
                                        {"fsync", false},
                                        {"full_page_writes", false},
                                        {"wal_level", false},
                                        {"work_mem", false},
                                        {"effective_cache_size", false},
                                        {"max_wal_size", false},
                                        {"checkpoint_timeout", false},
                                        {"default_transaction_isolation", false},
                                        {"deadlock_timeout", false},
                                        {"lock_timeout", false}};
const KeySetting kMySqlSettings[] = {{"innodb_buffer_pool_size", true},
                                     {"innodb_flush_log_at_trx_commit", false},
                                     {"innodb_log_file_size", true},
                                     {"innodb_doublewrite", false},
                                     {"sync_binlog", false},
                                     {"log_bin", false},
                                     {"max_connections", false},
                                     {"tx_isolation", false},
                                     {"transaction_isolation", false},
                                     {"innodb_lock_wait_timeout", false}};

std::string SettingValue(const KeySetting& s, const std::string& value) {
  double bytes = 0;
  if (s.bytes && absl::SimpleAtod(value, &bytes)) return FormatBytes(bytes);
  return value;
}

std::string ServerText(const v1::RunManifest& m) {
  if (m.server_product().empty() && m.server_version().empty()) return "";
  // PostgreSQL's version() is a sentence; its server_version setting is the version.
  const auto it = m.server_settings().find("server_version");
  const std::string version = it != m.server_settings().end() ? it->second : m.server_version();
  if (absl::StartsWith(version, m.server_product())) return version;
  return absl::StrCat(m.server_product(), " ", version);
}

std::string AgentsText(const v1::RunReport& r) {
  const v1::RunManifest& m = r.manifest();
  if (m.agents_size() == 0) return "";
  std::vector<std::string> hosts;
  for (const auto& a : m.agents()) {
    const std::string host = absl::StrCat(a.host().empty() ? "?" : a.host(), " (", a.cores(),
                                          a.cores() == 1 ? " core)" : " cores)");
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  return absl::StrCat(m.agents_size(), m.agents_size() == 1 ? " agent on " : " agents on ",
                      absl::StrJoin(hosts, ", "));
}

// One line per target: server, key settings, agents, dbload.
std::vector<std::pair<std::string, std::string>> MachineLines(
    const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports, const SuiteTable& t) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const std::string& target : t.targets) {
    std::vector<const v1::RunReport*> runs;
    for (int i = 0; i < index.runs_size() && i < static_cast<int>(reports.size()); ++i) {
      if (index.runs(i).target() == target && reports[i].format_version() != 0 &&
          reports[i].has_manifest()) {
        runs.push_back(&reports[i]);
      }
    }
    if (runs.empty()) {
      lines.push_back({target, "not recorded (no run report with a manifest)"});
      continue;
    }
    const auto over_runs = [&runs](auto get) {
      std::vector<std::string> values;
      for (const v1::RunReport* r : runs) values.push_back(get(*r));
      return Distinct(values);
    };
    std::vector<std::string> parts;
    const std::string server =
        over_runs([](const v1::RunReport& r) { return ServerText(r.manifest()); });
    parts.push_back(server.empty() ? "server not recorded" : server);
    bool mysql = false;
    for (const v1::RunReport* r : runs) {
      mysql = mysql || r->manifest().server_product() == "MariaDB" ||
              r->manifest().server_product() == "MySQL";
    }
    std::vector<std::string> settings;
    const auto add_settings = [&](const auto& list) {
      for (const KeySetting& s : list) {
        bool present = false;
        for (const v1::RunReport* r : runs)
          present = present || r->manifest().server_settings().contains(s.name);
        if (!present) continue;
        settings.push_back(absl::StrCat(s.name, " ", over_runs([&s](const v1::RunReport& r) {
                                          const auto it =
                                              r.manifest().server_settings().find(s.name);
                                          return it == r.manifest().server_settings().end()
                                                     ? std::string("(not recorded)")
                                                     : SettingValue(s, it->second);
                                        })));
      }
    };
    if (mysql) {
      add_settings(kMySqlSettings);
    } else {
      add_settings(kPostgresSettings);
    }
    if (!settings.empty()) parts.push_back(absl::StrJoin(settings, ", "));
    const std::string agents = over_runs(AgentsText);
    if (!agents.empty()) parts.push_back(absl::StrCat("load from ", agents));
    const std::string coordinator =
        over_runs([](const v1::RunReport& r) { return r.manifest().coordinator_host(); });
    if (!coordinator.empty()) parts.push_back(absl::StrCat("coordinator on ", coordinator));
    const std::string version = over_runs([](const v1::RunReport& r) {
      return r.manifest().dbload_version().empty() ? r.dbload_version()
                                                   : r.manifest().dbload_version();
    });
    if (!version.empty()) parts.push_back(absl::StrCat("dbload ", version));
    lines.push_back({target, absl::StrJoin(parts, "; ")});
  }
  return lines;
}

std::string LoadText(const v1::SuiteCase& c) {
  const v1::Plan& plan = c.plan();
  const bool closed = plan.load().has_closed();
  std::string text = closed ? "closed loop" : "open loop";
  if (plan.stages_size() > 0) {
    bool knee = false;
    for (const v1::Stage& s : plan.stages()) knee = knee || s.has_knee();
    absl::StrAppend(&text, ", ", plan.stages_size(), plan.stages_size() == 1 ? " stage" : " stages",
                    knee ? " (a knee search)" : "");
  } else if (c.points_size() > 0) {
    std::vector<std::string> points;
    for (double p : c.points()) points.push_back(FormatCount(p));
    absl::StrAppend(&text, " at ", absl::StrJoin(points, ", "), closed ? " clients" : "/s");
  } else if (closed) {
    absl::StrAppend(&text, " at ", plan.load().closed().clients(),
                    plan.load().closed().clients() == 1 ? " client" : " clients");
  } else {
    absl::StrAppend(&text, " at ", FormatPerSecond(plan.load().open().rate()));
  }
  if (closed && plan.load().closed().think_time_ns() > 0) {
    absl::StrAppend(&text, ", think time ",
                    FormatLatency(static_cast<double>(plan.load().closed().think_time_ns()) / 1e6));
  }
  return text;
}

std::string StopText(const v1::Plan& plan) {
  const double duration_s = static_cast<double>(plan.stop().duration_ns()) / 1e9;
  std::string text;
  if (plan.stop().queries() > 0 && duration_s > 0) {
    text = absl::StrCat("stops at ", FormatCount(static_cast<double>(plan.stop().queries())),
                        " transactions or after ", FormatSpan(duration_s));
  } else if (plan.stop().queries() > 0) {
    text = absl::StrCat("stops at ", FormatCount(static_cast<double>(plan.stop().queries())),
                        " transactions");
  } else if (duration_s > 0) {
    text = absl::StrCat(FormatSpan(duration_s), " per run");
  } else if (plan.stages_size() > 0) {
    text = "as long as its stages last";
  }
  if (plan.warmup_ns() > 0) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", "of which the first ",
                    FormatSpan(static_cast<double>(plan.warmup_ns()) / 1e9),
                    " warm up (not measured)");
  }
  return text;
}

std::string Factor(double x) {
  return x == 0 || x == 1 ? "none" : absl::StrCat("×", FormatCount(x));
}

// The lines of "How it ran", as plain text (escaped by the caller).
std::vector<std::string> HowItRan(const v1::SuiteIndex& index, const SuiteTable& t) {
  std::vector<std::string> lines;
  lines.push_back(
      absl::StrCat("Started ", index.started_at().empty() ? "?" : index.started_at(), ", ",
                   index.finished_at().empty() ? "not finished"
                                               : absl::StrCat("finished ", index.finished_at())));
  lines.push_back(absl::StrCat("Scale (--scale, rates and totals): ", Factor(index.scale()),
                               "; time scale (--time-scale): ", Factor(index.time_scale())));
  lines.push_back(
      absl::StrCat("Settings changed (--set): ",
                   index.overrides_size() == 0 ? "none" : absl::StrJoin(index.overrides(), ", ")));
  const v1::SuiteSettings& s = index.suite().settings();
  const uint32_t repetitions = std::max<uint32_t>(1, s.repetitions());
  lines.push_back(absl::StrCat(
      "Repetitions: ", repetitions, repetitions == 1 ? " measured run" : " measured runs",
      " per case, point and target; warm-up runs: ",
      s.warmup_runs() == 0 ? "none" : absl::StrCat(s.warmup_runs(), " before them, discarded"),
      "; prepare: ", s.prepare().empty() ? "once" : s.prepare(),
      s.cleanup() ? ", cleanup after each target" : ""));
  size_t discarded = 0, measured = 0, left_out = 0;
  for (int i = 0; i < index.runs_size(); ++i) {
    if (t.runs[i].measured) {
      ++measured;
    } else if (index.runs(i).discarded()) {
      ++discarded;
    } else {
      ++left_out;
    }
  }
  lines.push_back(absl::StrCat("Runs: ", index.runs_size(), " (", measured, " measured, ",
                               discarded, " warm-up, ", left_out,
                               " missing or not finished); only measured runs enter the figures."));
  if (!t.targets.empty()) {
    lines.push_back(absl::StrCat("Baseline: ", t.targets[0],
                                 " (the first target); every ratio is a target against it, at "
                                 "the same load point."));
  }
  if (t.repetitions > 1) {
    lines.push_back(
        "Each figure is the median of its measured runs with their spread [min–max]; a "
        "difference between targets smaller than the spread of either is marked \"no clear "
        "winner\".");
  }
  lines.push_back(
      "GENERATOR-LIMITED marks figures from runs in which the generator, not the database, may "
      "have set the pace.");
  return lines;
}

// Per case: its workload, load and stop rule.
std::vector<std::string> CaseLines(const v1::SuiteIndex& index) {
  std::vector<std::string> lines;
  for (const v1::SuiteCase& c : index.suite().cases()) {
    const std::string stop = StopText(c.plan());
    lines.push_back(absl::StrCat(c.name(),
                                 c.category().empty() ? "" : absl::StrCat(" (", c.category(), ")"),
                                 ": ", c.plan().workload(), "/", c.plan().scenario(), ", ",
                                 LoadText(c), stop.empty() ? "" : absl::StrCat("; ", stop)));
  }
  return lines;
}

std::vector<const CaseView*> Sweeps(const std::vector<CaseView>& cases) {
  std::vector<const CaseView*> out;
  for (const CaseView& c : cases) {
    if (c.has_points && !c.ramp) out.push_back(&c);
  }
  return out;
}

Table SweepTable(const SuiteTable& t, const CaseView& c) {
  Table table;
  table.header.push_back(c.closed_loop ? "clients" : "rate");
  table.numeric.push_back(true);
  for (const std::string& target : t.targets) {
    for (const Metric& m : SweepMetricsOf(c)) {
      table.header.push_back(absl::StrCat(target, " ", m.header));
      table.numeric.push_back(true);
    }
  }
  table.generated.assign(table.header.size(), true);
  for (const SuitePoint* p : c.points) {
    std::vector<std::string> row = {FormatCount(p->point)};
    bool limited = false;
    for (size_t i = 0; i < t.targets.size(); ++i) {
      for (const Metric& m : SweepMetricsOf(c)) row.push_back(Cell(m, p->targets[i]));
      limited = limited || (p->targets[i] && p->targets[i]->generator_limited_runs > 0);
    }
    table.rows.push_back(std::move(row));
    table.row_css.push_back(limited ? "generator-limited" : "");
  }
  return table;
}

// Under a sweep's table: per point and compared target, the ratios at that point.
std::vector<std::string> SweepRatioLines(const SuiteTable& t, const CaseView& c) {
  std::vector<std::string> lines;
  for (const SuitePoint* p : c.points) {
    for (size_t i = 1; i < t.targets.size(); ++i) {
      if (!p->targets[0] || !p->targets[i]) continue;
      lines.push_back(absl::StrCat("at ", PointText(*p), ": ", t.targets[i], " vs ", t.targets[0],
                                   ": ",
                                   PhrasesOf(SweepMetricsOf(c), *p->targets[0], *p->targets[i])));
    }
  }
  return lines;
}

std::vector<const CaseView*> PlainCases(const std::vector<CaseView>& cases) {
  std::vector<const CaseView*> out;
  for (const std::string& category : CategoryOrder(cases)) {
    for (const CaseView& c : cases) {
      if (!c.has_points && !c.ramp && c.category == category) out.push_back(&c);
    }
  }
  return out;
}

Table CasesTable(const SuiteTable& t, const std::vector<const CaseView*>& cases) {
  Table table;
  table.header = {"case", "category"};
  table.numeric = {false, false};
  for (const std::string& target : t.targets) {
    for (const Metric& m : kCaseMetrics) {
      table.header.push_back(absl::StrCat(target, " ", m.header));
      table.numeric.push_back(true);
    }
  }
  for (size_t i = 1; i < t.targets.size(); ++i) {
    table.header.push_back(absl::StrCat(t.targets[i], " vs ", t.targets[0]));
    table.numeric.push_back(false);
  }
  table.generated.assign(table.header.size(), true);
  table.generated[0] = table.generated[1] = false;  // the case and its category
  for (const CaseView* c : cases) {
    for (const SuitePoint* p : c->points) {
      std::vector<std::string> row = {c->name, CategoryName(c->category)};
      bool limited = false;
      for (size_t i = 0; i < t.targets.size(); ++i) {
        for (const Metric& m : kCaseMetrics) row.push_back(Cell(m, p->targets[i]));
        limited = limited || (p->targets[i] && p->targets[i]->generator_limited_runs > 0);
      }
      for (size_t i = 1; i < t.targets.size(); ++i) {
        row.push_back(p->targets[0] && p->targets[i]
                          ? PhrasesOf(kCaseMetrics, *p->targets[0], *p->targets[i])
                          : "—");
      }
      table.rows.push_back(std::move(row));
      table.row_css.push_back(limited ? "generator-limited" : "");
    }
  }
  return table;
}

Table SummaryTable(const std::vector<SummaryRow>& rows) {
  Table table;
  table.header = {"category", "cases", "target"};
  for (const Metric& m : kCaseMetrics) table.header.push_back(m.what);
  table.header.push_back("notes");
  table.numeric.assign(table.header.size(), false);
  table.generated.assign(table.header.size(), true);
  table.generated[0] = table.generated[1] = table.generated[2] = false;
  table.generated.back() = false;  // notes name cases and targets
  for (const SummaryRow& row : rows) {
    std::vector<std::string> cells = {row.category, row.cases, row.target};
    for (const std::string& m : row.metrics) cells.push_back(m);
    cells.push_back(row.notes);
    table.rows.push_back(std::move(cells));
    table.row_css.push_back("");
  }
  return table;
}

// A per-transaction figure in its unit: bytes, the server's CPU time, or a count.
std::string CounterValue(const std::string& key, double v) {
  if (absl::EndsWith(key, "_bytes")) return FormatBytes(v);
  if (key == "process/cpu_seconds") return FormatLatency(v * 1e3);
  return FormatCount(v);
}

// The probe's counters per transaction: one row per case, point and counter, targets side by
// side. `*few` is set when a figure carries kFewReadingsMark.
Table CountersTable(const SuiteTable& t, const std::vector<CaseView>& cases, bool* few) {
  Table table;
  table.header = {"case", "point", "counter"};
  table.numeric = {false, true, false};
  for (const std::string& target : t.targets) {
    table.header.push_back(target);
    table.numeric.push_back(true);
  }
  table.generated.assign(table.header.size(), true);
  table.generated[0] = table.generated[2] = false;
  *few = false;
  for (const CaseView& c : cases) {
    if (c.ramp) continue;
    for (const SuitePoint* p : c.points) {
      std::vector<std::string> keys;
      for (const auto& f : p->targets) {
        if (!f) continue;
        for (const auto& [key, spread] : f->per_query) {
          if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
      }
      std::sort(keys.begin(), keys.end());
      for (const std::string& key : keys) {
        std::vector<std::string> row = {c.name, p->point == 0 ? "plan's load" : PointText(*p), key};
        for (const auto& f : p->targets) {
          if (!f || !f->per_query.contains(key)) {
            row.push_back("—");
            continue;
          }
          const Spread& s = f->per_query.at(key);
          const auto v = [&key](double x) { return CounterValue(key, x); };
          // A spread only where the repetitions differ: most counters are the same in every run.
          std::string cell = s.n <= 1 || s.max == s.min
                                 ? v(s.median)
                                 : absl::StrCat(v(s.median), " [", v(s.min), "–", v(s.max), "]");
          if (f->few_readings.contains(key)) {
            absl::StrAppend(&cell, kFewReadingsMark);
            *few = true;
          }
          row.push_back(std::move(cell));
        }
        table.rows.push_back(std::move(row));
        table.row_css.push_back("");
      }
    }
  }
  return table;
}

std::string PointLabel(const v1::SuiteRun& run, const v1::SuiteIndex& index) {
  for (const v1::SuiteCase& c : index.suite().cases()) {
    if (c.name() == run.case_name()) {
      return PointText({.case_name = "",
                        .category = "",
                        .point = run.point(),
                        .closed_loop = c.plan().load().has_closed(),
                        .targets = {}});
    }
  }
  return FormatCount(run.point());
}

std::string RepetitionText(const v1::SuiteRun& run) {
  return run.discarded() || run.repetition() == 0 ? "warm-up" : absl::StrCat(run.repetition());
}

// What a run's report says of the workload's invariants: "3 held", the broken ones by name,
// why they were not read, or "" when the workload has none.
std::string InvariantsText(const v1::RunReport& report) {
  if (!report.invariants_not_checked().empty()) {
    return absl::StrCat("not checked: ", report.invariants_not_checked());
  }
  std::vector<std::string> broken;
  for (const v1::InvariantResult& invariant : report.invariants()) {
    if (!invariant.holds()) broken.push_back(invariant.name());
  }
  if (!broken.empty()) return absl::StrCat("BROKEN: ", absl::StrJoin(broken, ", "));
  if (report.invariants().empty()) return "";
  return absl::StrCat(report.invariants_size(), " held");
}

Table RunsTable(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                const SuiteTable& t) {
  Table table;
  // The invariants column only for a suite whose workloads declare some.
  std::vector<std::string> invariants;
  for (int i = 0; i < index.runs_size(); ++i) {
    invariants.push_back(static_cast<size_t>(i) < reports.size() ? InvariantsText(reports[i]) : "");
  }
  const bool any_invariants = std::any_of(invariants.begin(), invariants.end(),
                                          [](const std::string& text) { return !text.empty(); });
  table.header = {"#", "target", "case", "point", "repetition", "status", "report"};
  if (any_invariants) table.header.insert(table.header.end() - 1, "invariants");
  table.numeric.assign(table.header.size(), false);
  table.numeric[0] = true;
  table.generated.assign(table.header.size(), false);
  for (int i = 0; i < index.runs_size(); ++i) {
    const v1::SuiteRun& run = index.runs(i);
    std::vector<std::string>& row = table.rows.emplace_back(std::vector<std::string>{
        absl::StrCat(i + 1), run.target(), run.case_name(), PointLabel(run, index),
        RepetitionText(run), t.runs[i].status, run.report()});
    if (any_invariants) row.insert(row.end() - 1, invariants[static_cast<size_t>(i)]);
    table.row_css.push_back(t.runs[i].status.find("GENERATOR-LIMITED") != std::string::npos
                                ? "generator-limited"
                            : t.runs[i].measured ? ""
                                                 : "left-out");
  }
  return table;
}

}  // namespace

SuiteDocument Document(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                       const SuiteTable& t, const std::vector<CaseView>& cases) {
  SuiteDocument d;
  d.name = index.suite().name();
  d.compare = t.targets.size() >= 2;
  d.headlines = Headlines(t, cases);
  d.ramp_headlines = RampHeadlines(index, reports, t.Measured());
  d.machine = MachineLines(index, reports, t);
  d.how = HowItRan(index, t);
  d.case_lines = CaseLines(index);
  for (const CaseView* c : Sweeps(cases)) {
    SuiteDocument::Sweep sweep{.c = c,
                               .table = SweepTable(t, *c),
                               .ratios = SweepRatioLines(t, *c),
                               .notes = {},
                               .few_samples = false};
    for (const SuitePoint* p : c->points) {
      for (std::string& note : FigureNotes(t, *p)) sweep.notes.push_back(std::move(note));
      sweep.few_samples = sweep.few_samples || AnyFewSamples(*p);
    }
    d.sweeps.push_back(std::move(sweep));
  }
  d.plain = PlainCases(cases);
  d.cases = CasesTable(t, d.plain);
  for (const CaseView* c : d.plain) {
    for (const SuitePoint* p : c->points) {
      for (std::string& note : FigureNotes(t, *p)) {
        d.case_notes.push_back(absl::StrCat(c->name, ": ", note));
      }
      d.cases_few_samples = d.cases_few_samples || AnyFewSamples(*p);
    }
  }
  d.summary = SummaryTable(SummaryRows(t, cases));
  d.counters = CountersTable(t, cases, &d.counters_few);
  d.runs = RunsTable(index, reports, t);
  return d;
}

}  // namespace dbload::suite_report
