#include "suite/suite_ramp.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_html.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;

// Human units: report/report.h's (FormatLatency, FormatCount, FormatPerSecond, FormatBytes,
// FormatSpan), and two of the ramp's own.

// `value` with `decimals` decimals, trailing zeros (and a bare point) removed: "1", "2.5".
std::string Trimmed(double value, int decimals) {
  std::string text = absl::StrFormat("%.*f", decimals, value);
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text == "-0" ? "0" : text;
}

// A fraction as a percentage: 0.01 → "1 %", 0.0123 → "1.23 %".
std::string HumanPercent(double fraction) {
  const double percent = fraction * 100;
  const double a = std::fabs(percent);
  return absl::StrCat(Trimmed(percent, a >= 10 ? 1 : a >= 1 ? 2 : 3), " %");
}

// CPU in cores as top shows it, % of one core, one decimal in every row: "77.0 %".
std::string HumanCpu(double cores) { return absl::StrFormat("%.1f %%", cores * 100); }

std::string BytesPerSecond(double bytes_per_s) { return FormatBytes(bytes_per_s) + "/s"; }

// Levels --------------------------------------------------------------------------------------

std::string LevelCell(double level, bool open) {
  return open ? FormatPerSecond(level) : FormatCount(level);
}

std::string LevelText(double level, bool open) {
  if (open) return FormatPerSecond(level);
  return absl::StrCat(FormatCount(level), std::llround(level) == 1 ? " client" : " clients");
}

// The SLO as the search judged it: "p99 ≤ 50 ms and errors ≤ 1 %".
std::string SloText(const v1::KneeSearch& spec, bool open) {
  std::vector<std::string> limits;
  if (spec.p99_ns() > 0) {
    limits.push_back("p99 ≤ " + FormatSpan(static_cast<double>(spec.p99_ns()) / 1e9));
  }
  if (spec.errors() > 0) limits.push_back("errors ≤ " + HumanPercent(spec.errors()));
  if (open && spec.achieved() > 0) {
    limits.push_back(absl::StrCat("achieved ≥ ", HumanPercent(spec.achieved()), " of the rate"));
  }
  if (limits.empty()) return "something completed";
  return absl::StrJoin(limits, " and ");
}

// What a step broke, in human units, from its own figures and the search's limits (the same
// comparisons as coordinator/knee_search.cc); the coordinator's words when those find nothing.
std::string MissedWords(const v1::KneeStep& step, const v1::KneeSearch& spec, bool open) {
  std::vector<std::string> parts;
  const uint64_t completed = step.executed() + step.errors();
  if (completed == 0) parts.push_back("nothing completed");
  const double p99_limit_ms = static_cast<double>(spec.p99_ns()) / 1e6;
  if (spec.p99_ns() > 0 && step.p99_ms() > p99_limit_ms) {
    parts.push_back(
        absl::StrCat("p99 ", FormatLatency(step.p99_ms()), " above ", FormatSpan(p99_limit_ms / 1e3)));
  }
  if (spec.errors() > 0 && completed > 0) {
    const double rate = static_cast<double>(step.errors()) / static_cast<double>(completed);
    if (rate > spec.errors()) {
      parts.push_back(
          absl::StrCat("errors ", HumanPercent(rate), " above ", HumanPercent(spec.errors())));
    }
  }
  if (open && spec.achieved() > 0 && step.achieved_rate() < spec.achieved() * step.level()) {
    parts.push_back(absl::StrCat("achieved ", FormatPerSecond(step.achieved_rate()), ", below ",
                                 HumanPercent(spec.achieved()), " of ",
                                 FormatPerSecond(step.level())));
  }
  if (parts.empty()) return step.missed();
  return absl::StrJoin(parts, ", ");
}

// Building ------------------------------------------------------------------------------------

const v1::Stage* KneeStageOf(const v1::Plan& plan, uint32_t* index) {
  for (int i = 0; i < plan.stages_size(); ++i) {
    if (plan.stages(i).has_knee()) {
      *index = static_cast<uint32_t>(i + 1);
      return &plan.stages(i);
    }
  }
  return nullptr;
}

bool AtLevel(const v1::IntervalSample& sample, double level, bool open) {
  if (!open) return static_cast<int64_t>(sample.clients()) == std::llround(level);
  return std::fabs(sample.target_rate() - level) <= 1e-6 * std::max(1.0, level);
}

// The key of a database value in ProbeSample.values: "postgresql/NAME" or "mysql/NAME", whichever
// the probe recorded ("" when neither).
// Whether any of the run's probe readings holds `key`.
bool Recorded(const v1::RunReport& report, const std::string& key) {
  for (const v1::ProbeSample& sample : report.probe_samples()) {
    if (sample.values().count(key) > 0) return true;
  }
  return false;
}

std::string DatabaseKey(const v1::RunReport& report, const std::string& name) {
  for (const char* source : {"postgresql", "mysql"}) {
    const std::string key = absl::StrCat(source, "/", name);
    if (Recorded(report, key)) return key;
  }
  return "";
}

// Rows inserted have no common name (the servers count them differently: coordinator/
// db_probe.h), so the column reads each server's own counter: PostgreSQL's tup_inserted, MySQL
// 8's Innodb_rows_inserted, else MariaDB's Handler_write.
std::string RowsInsertedKey(const v1::RunReport& report) {
  for (const char* key :
       {"postgresql/tup_inserted", "mysql/Innodb_rows_inserted", "mysql/Handler_write"}) {
    if (Recorded(report, key)) return key;
  }
  return "";
}

// A counter's increase per second over readings [first, last], reading by reading as
// coordinator/saturation.cc sums it (a reset counts the new value from zero; a smaller dip
// counts nothing until the counter passes its highest reading again).
std::optional<double> CounterRate(const v1::RunReport& report, const std::string& key,
                                  size_t first, size_t last) {
  if (key.empty()) return std::nullopt;
  std::optional<double> previous;
  double first_s = 0, last_s = 0, sum = 0;
  for (size_t i = first; i <= last; ++i) {
    const v1::ProbeSample& sample = report.probe_samples(static_cast<int>(i));
    auto it = sample.values().find(key);
    if (it == sample.values().end()) continue;
    const double value = it->second;
    if (!previous) {
      previous = value;
      first_s = sample.elapsed_s();
      continue;
    }
    last_s = sample.elapsed_s();
    if (value >= *previous) {
      sum += value - *previous;
      previous = value;
    } else if (value < *previous / 2) {  // coordinator/db_probe.h CounterWasReset
      sum += value;
      previous = value;
    }
  }
  if (!previous || !(last_s > first_s)) return std::nullopt;
  return sum / (last_s - first_s);
}

// A gauge's highest reading among those taken in the step: (first, last], or the one reading
// when the span has only one.
std::optional<double> GaugeMax(const v1::RunReport& report, const std::string& key, size_t first,
                               size_t last) {
  if (key.empty()) return std::nullopt;
  std::optional<double> high;
  for (size_t i = last > first ? first + 1 : first; i <= last; ++i) {
    const v1::ProbeSample& sample = report.probe_samples(static_cast<int>(i));
    auto it = sample.values().find(key);
    if (it == sample.values().end()) continue;
    high = high ? std::max(*high, it->second) : it->second;
  }
  return high;
}

StepSaturation SaturationOver(const v1::RunReport& report, double start_s, double end_s) {
  StepSaturation out;
  const int n = report.probe_samples_size();
  // As coordinator/saturation.cc bounds a stage: the first reading at or after each bound (the
  // newest reading when none is after the end).
  int first = -1, last = -1;
  for (int i = 0; i < n; ++i) {
    if (first < 0 && report.probe_samples(i).elapsed_s() >= start_s) first = i;
    if (last < 0 && report.probe_samples(i).elapsed_s() >= end_s) last = i;
  }
  if (first < 0) return out;
  if (last < 0) last = n - 1;
  const size_t a = static_cast<size_t>(first), b = static_cast<size_t>(last);
  out.readings = static_cast<uint32_t>(b - a + 1);
  out.from_s = report.probe_samples(first).elapsed_s();
  out.to_s = report.probe_samples(last).elapsed_s();
  out.cpu_cores = CounterRate(report, "process/cpu_seconds", a, b);
  out.written_bytes_per_s = CounterRate(report, DatabaseKey(report, "written_bytes"), a, b);
  out.rows_inserted_per_s = CounterRate(report, RowsInsertedKey(report), a, b);
  out.connections = GaugeMax(report, DatabaseKey(report, "connections"), a, b);
  return out;
}

RampRun BuildRun(const v1::RunReport& report, uint32_t stage_index, const v1::KneeSearch& spec,
                 bool open) {
  RampRun run;
  const v1::StageReport* stage = nullptr;
  for (const v1::StageReport& s : report.stages()) {
    if (s.index() == stage_index) stage = &s;
  }
  if (stage == nullptr) return run;
  run.stage = stage->name();
  run.knee = stage->knee();
  bool missed = false;
  for (int j = 0; j < stage->knee_steps_size(); ++j) {
    RampStep& step = run.steps.emplace_back();
    step.number = static_cast<uint32_t>(j + 1);
    step.refine = missed;
    step.step = stage->knee_steps(j);
    missed = missed || !step.step.met();
    run.highest_level = std::max(run.highest_level, step.step.level());
    if (step.step.met() &&
        (run.reference < 0 || step.step.level() > run.steps[run.reference].step.level())) {
      run.reference = j;
    }
    int first = -1, last = -1;
    for (int i = 0; i < report.intervals_size(); ++i) {
      const v1::IntervalSample& sample = report.intervals(i);
      if (sample.warmup() || sample.stage() != stage_index) continue;
      if (!AtLevel(sample, step.step.level(), open)) continue;
      if (first < 0) first = i;
      last = i;
    }
    if (first >= 0) {
      step.found = true;
      step.start_s = first > 0 ? report.intervals(first - 1).elapsed_s() : 0;
      step.end_s = report.intervals(last).elapsed_s();
      step.saturation = SaturationOver(report, step.start_s, step.end_s);
    }
  }
  if (run.steps.empty()) {
    run.outcome = KneeOutcome::kNoSteps;
  } else if (run.reference < 0) {
    run.outcome = KneeOutcome::kNoStepMet;
  } else if (missed) {
    run.outcome = KneeOutcome::kKnee;
  } else {
    run.outcome = run.highest_level >= spec.max() ? KneeOutcome::kNoKneeUpToMax
                                                  : KneeOutcome::kSearchCut;
  }
  return run;
}

}  // namespace

bool IsRampCase(const dbload::v1::SuiteCase& suite_case) {
  for (const dbload::v1::Stage& stage : suite_case.plan().stages()) {
    if (stage.has_knee()) return true;
  }
  return false;
}

std::vector<RampCase> BuildRampCases(const v1::SuiteIndex& index,
                                     const std::vector<v1::RunReport>& reports,
                                     const std::vector<bool>& measured) {
  std::vector<RampCase> cases;
  for (const v1::SuiteCase& suite_case : index.suite().cases()) {
    uint32_t stage_index = 0;
    const v1::Stage* stage = KneeStageOf(suite_case.plan(), &stage_index);
    if (stage == nullptr) continue;
    RampCase& out = cases.emplace_back();
    out.name = suite_case.name();
    out.category = suite_case.category();
    out.spec = stage->knee();
    out.open_loop = suite_case.plan().load().has_open();
    for (const v1::SuiteTarget& target : index.suite().targets()) {
      RampTarget& t = out.targets.emplace_back();
      t.name = target.name();
      std::vector<size_t> runs;
      for (int r = 0; r < index.runs_size(); ++r) {
        const v1::SuiteRun& run = index.runs(r);
        const size_t i = static_cast<size_t>(r);
        if (run.case_name() != out.name || run.target() != t.name) continue;
        if (i >= measured.size() || !measured[i] || i >= reports.size()) continue;
        runs.push_back(i);
      }
      for (size_t i : runs) {
        RampRun run = BuildRun(reports[i], stage_index, out.spec, out.open_loop);
        run.run = i;
        if (runs.size() > 1) {
          const v1::SuiteRun& r = index.runs(static_cast<int>(i));
          std::vector<std::string> parts;
          if (r.point() != 0) parts.push_back(absl::StrCat("point ", Trimmed(r.point(), 3)));
          parts.push_back(absl::StrCat("repetition ", r.repetition()));
          run.label = absl::StrJoin(parts, ", ");
        }
        t.runs.push_back(std::move(run));
      }
    }
  }
  return cases;
}

namespace {

// Rendering -----------------------------------------------------------------------------------

constexpr char kNoData[] = "—";

std::string KneeLine(const RampCase& c, const RampRun& run) {
  const bool open = c.open_loop;
  switch (run.outcome) {
    case KneeOutcome::kKnee:
      return absl::StrCat("Knee: ", LevelText(run.steps[run.reference].step.level(), open),
                          " (the highest step that met ", SloText(c.spec, open), ")");
    case KneeOutcome::kNoKneeUpToMax:
      return absl::StrCat("No knee up to ", LevelText(run.highest_level, open),
                          ": every step met the SLO (", SloText(c.spec, open), ")");
    case KneeOutcome::kSearchCut:
      return absl::StrCat("No knee up to ", LevelText(run.highest_level, open),
                          ": every step met the SLO (", SloText(c.spec, open),
                          "), but the search ended before its maximum of ",
                          LevelText(c.spec.max(), open));
    case KneeOutcome::kNoStepMet: {
      const v1::KneeStep& first = run.steps.front().step;
      return absl::StrCat("No knee: no step met the SLO (", SloText(c.spec, open),
                          "); the first, at ", LevelText(first.level(), open),
                          ", missed: ", MissedWords(first, c.spec, open));
    }
    case KneeOutcome::kNoSteps:
      break;
  }
  return "No knee: the run's report holds no step of the knee search";
}

// The search as the plan asked for it: "from 1 client, +1 per 60 s up to 64 clients, then at most
// 3 bisecting steps, while p99 ≤ 50 ms and errors ≤ 1 %".
std::string SearchLine(const RampCase& c) {
  const bool open = c.open_loop;
  return absl::StrCat("Knee search: from ", LevelText(c.spec.from(), open), ", +",
                      open ? FormatPerSecond(c.spec.step()) : FormatCount(c.spec.step()), " every ",
                      FormatSpan(static_cast<double>(c.spec.every_ns()) / 1e9), " up to ",
                      LevelText(c.spec.max(), open), ", then at most ", c.spec.refine(),
                      " bisecting steps, while ", SloText(c.spec, open),
                      ". Each step's throughput and p99 are the search's own judgement of it; "
                      "its saturation is the database probe's over the step's seconds.");
}

std::vector<std::string> Header(const RampCase& c) {
  return {"step", c.open_loop ? "target rate" : "clients", "throughput", "p99", "SLO", "CPU",
          "connections", "disk writes", "rows inserted"};
}

std::vector<std::string> StepRow(const RampCase& c, const RampStep& s, bool* few_readings) {
  const v1::KneeStep& k = s.step;
  const bool completed = k.executed() + k.errors() > 0;
  std::vector<std::string> row = {
      s.refine ? absl::StrCat(s.number, " (refine)") : absl::StrCat(s.number),
      LevelCell(k.level(), c.open_loop),
      FormatPerSecond(k.achieved_rate()),
      completed ? FormatLatency(k.p99_ms()) : kNoData,
      k.met() ? "met" : absl::StrCat("missed: ", MissedWords(k, c.spec, c.open_loop))};
  const StepSaturation& sat = s.saturation;
  const bool few = sat.readings > 0 && sat.readings < kMinProbeReadings;
  auto cell = [&](const std::optional<double>& value, std::string (*format)(double)) {
    if (!value) return std::string(kNoData);
    if (few) *few_readings = true;
    return format(*value) + (few ? kFewReadingsMark : "");
  };
  row.push_back(cell(sat.cpu_cores, HumanCpu));
  row.push_back(cell(sat.connections, [](double v) { return FormatCount(v); }));
  row.push_back(cell(sat.written_bytes_per_s, BytesPerSecond));
  row.push_back(cell(sat.rows_inserted_per_s, FormatPerSecond));
  return row;
}

constexpr char kColumnsNote[] =
    "CPU: the server's processes, % of one core; connections: the highest reading in the step; "
    "disk writes: bytes the server wrote per second (PostgreSQL: buffers written, MariaDB/MySQL: "
    "Innodb_data_written); rows inserted: per second, by each server's own counter, which count "
    "differently (PostgreSQL tup_inserted, TOAST chunks included; MariaDB Handler_write, rows "
    "of every engine, internal temporary tables included; MySQL 8 Innodb_rows_inserted); —: the "
    "probe recorded no such value on this server.";

// What one run's table needs besides its rows.
struct RunNotes {
  bool few_readings = false;
  bool unplaced = false;  // a step with no interval at its level: no saturation figures
};

std::vector<std::vector<std::string>> RunTable(const RampCase& c, const RampRun& run,
                                               RunNotes* notes) {
  std::vector<std::vector<std::string>> table = {Header(c)};
  for (const RampStep& s : run.steps) {
    table.push_back(StepRow(c, s, &notes->few_readings));
    notes->unplaced = notes->unplaced || !s.found;
  }
  return table;
}

std::string RunHeading(const RampTarget& t, const RampRun& run) {
  return run.label.empty() ? t.name : absl::StrCat(t.name, " (", run.label, ")");
}

std::vector<std::string> NoteLines(const RunNotes& notes) {
  std::vector<std::string> lines;
  if (notes.few_readings) lines.push_back(kFewReadingsNote);
  if (notes.unplaced) {
    lines.push_back("A step without saturation figures had no interval at its level.");
  }
  return lines;
}

// How a target's reference step is named in the comparison: "24 clients" at a knee, "64
// clients, no knee up to there" otherwise.
std::string SideLabel(const RampCase& c, const RampRun& run) {
  const std::string level = LevelText(run.steps[run.reference].step.level(), c.open_loop);
  return run.outcome == KneeOutcome::kKnee ? level : absl::StrCat(level, ", no knee up to there");
}

// Target i against the baseline (target 0) at their reference steps (the knees, or the highest
// steps where there was none), each one's first measured run.
struct RampComparison {
  bool comparable = false;
  bool both_knees = false;
  std::string why_not;
  std::string ratios;  // "1.52× lower throughput, 1.10× higher p99"
};

RampComparison Compare(const RampCase& c, size_t i) {
  RampComparison out;
  const RampTarget& base = c.targets[0];
  const RampTarget& other = c.targets[i];
  for (const RampTarget* t : {&other, &base}) {
    if (t->runs.empty()) {
      out.why_not = absl::StrCat(t->name, " has no measured run");
      return out;
    }
    if (t->runs.front().reference < 0) {
      out.why_not = absl::StrCat("no step of ", t->name, " met the SLO");
      return out;
    }
  }
  const RampRun& b = base.runs.front();
  const RampRun& o = other.runs.front();
  const v1::KneeStep& bs = b.steps[b.reference].step;
  const v1::KneeStep& os = o.steps[o.reference].step;
  out.comparable = true;
  out.both_knees = b.outcome == KneeOutcome::kKnee && o.outcome == KneeOutcome::kKnee;
  out.ratios = absl::StrCat(RatioPhrase(bs.achieved_rate(), os.achieved_rate(), "throughput"),
                            ", ", RatioPhrase(bs.p99_ms(), os.p99_ms(), "p99"));
  return out;
}

// "At the knees: mariadb (12 clients) 1.52× lower throughput, 1.10× higher p99 than postgresql
// (24 clients)".
std::string CompareLine(const RampCase& c, size_t i) {
  const RampComparison cmp = Compare(c, i);
  if (!cmp.comparable) {
    return absl::StrCat("At the knees: ", c.targets[i].name, " against ", c.targets[0].name,
                        ": not comparable (", cmp.why_not, ")");
  }
  bool several = false;
  for (const RampTarget& t : c.targets) several = several || t.runs.size() > 1;
  const RampRun& b = c.targets[0].runs.front();
  const RampRun& o = c.targets[i].runs.front();
  return absl::StrCat(cmp.both_knees ? "At the knees" : "At the highest steps that met the SLO",
                      several ? " (each target's first measured run)" : "", ": ",
                      c.targets[i].name, " (", SideLabel(c, o), ") ", cmp.ratios, " than ",
                      c.targets[0].name, " (", SideLabel(c, b), ")");
}

// A target's outcome in a headline: "knee at 24 clients", "no knee up to 64 clients".
std::string OutcomeWords(const RampCase& c, const RampTarget& t) {
  if (t.runs.empty()) return "no measured run";
  const RampRun& run = t.runs.front();
  switch (run.outcome) {
    case KneeOutcome::kKnee:
      return absl::StrCat("knee at ",
                          LevelText(run.steps[run.reference].step.level(), c.open_loop));
    case KneeOutcome::kNoKneeUpToMax:
    case KneeOutcome::kSearchCut:
      return absl::StrCat("no knee up to ", LevelText(run.highest_level, c.open_loop));
    case KneeOutcome::kNoStepMet:
      return "no step met the SLO";
    case KneeOutcome::kNoSteps:
      break;
  }
  return "no knee step in the report";
}

std::string MarkdownRow(const std::vector<std::string>& cells) {
  std::vector<std::string> escaped;
  for (const std::string& cell : cells) escaped.push_back(MarkdownEscape(cell));
  return absl::StrCat("| ", absl::StrJoin(escaped, " | "), " |\n");
}

std::string Td(const std::string& text, bool left = false) {
  return absl::StrCat("<td", left ? " class=\"text\"" : "", ">", HtmlEscape(text), "</td>");
}
std::string Th(const std::string& text, bool left = false) {
  return absl::StrCat("<th", left ? " class=\"text\"" : "", ">", HtmlEscape(text), "</th>");
}

// Throughput and p99 against the level, one series per target (its first measured run, steps in
// level order), each target's knee marked.
std::pair<html::ChartSpec, html::ChartSpec> RampCharts(const RampCase& c) {
  const std::string x_label = c.open_loop ? "target rate (/s)" : "clients";
  html::ChartSpec throughput{.title = absl::StrCat("Throughput vs ", x_label, ": ", c.name),
                             .x_label = x_label,
                             .y_label = "throughput (/s)",
                             .percentile_x = false,
                             .series = {},
                             .vlines = {},
                             .empty = "No measured run of this case."};
  html::ChartSpec p99{.title = absl::StrCat("p99 vs ", x_label, ": ", c.name),
                      .x_label = x_label,
                      .y_label = "p99 (ms)",
                      .percentile_x = false,
                      .series = {},
                      .vlines = {},
                      .empty = "No measured run of this case."};
  for (const RampTarget& t : c.targets) {
    if (t.runs.empty()) continue;
    const RampRun& run = t.runs.front();
    std::vector<const v1::KneeStep*> steps;
    for (const RampStep& s : run.steps) steps.push_back(&s.step);
    std::sort(steps.begin(), steps.end(), [](const v1::KneeStep* a, const v1::KneeStep* b) {
      return a->level() < b->level();
    });
    html::Series rate{.name = t.name, .x = {}, .y = {}};
    html::Series latency{.name = t.name, .x = {}, .y = {}};
    for (const v1::KneeStep* s : steps) {
      rate.x.push_back(s->level());
      rate.y.push_back(s->achieved_rate());
      if (s->executed() + s->errors() == 0) continue;  // no p99 to draw
      latency.x.push_back(s->level());
      latency.y.push_back(s->p99_ms());
    }
    throughput.series.push_back(std::move(rate));
    p99.series.push_back(std::move(latency));
    if (run.outcome == KneeOutcome::kKnee) {
      const double knee = run.steps[run.reference].step.level();
      const html::VerticalLine line{.x = knee,
                                    .label = absl::StrCat("knee ", t.name, " ",
                                                          LevelCell(knee, c.open_loop)),
                                    .css_class = "stage-boundary"};
      throughput.vlines.push_back(line);
      p99.vlines.push_back(line);
    }
  }
  if (c.spec.p99_ns() > 0) {
    // The SLO's p99 limit as a flat line, so that the chart shows where steps crossed it.
    double low = 0, high = 0;
    bool any = false;
    for (const html::Series& s : p99.series) {
      for (double x : s.x) {
        low = any ? std::min(low, x) : x;
        high = any ? std::max(high, x) : x;
        any = true;
      }
    }
    if (any) {
      const double limit = static_cast<double>(c.spec.p99_ns()) / 1e6;
      p99.series.push_back({.name = absl::StrCat("SLO p99 ", FormatSpan(limit / 1e3)),
                            .x = {low, high},
                            .y = {limit, limit}});
    }
  }
  return {throughput, p99};
}

}  // namespace

std::string RenderRampText(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                           const std::vector<bool>& measured) {
  std::string out;
  for (const RampCase& c : BuildRampCases(index, reports, measured)) {
    absl::StrAppend(&out, "\nRamp: ", c.name, c.category.empty() ? "" : " (" + c.category + ")",
                    "\n  ", SearchLine(c), "\n");
    RunNotes notes;
    for (const RampTarget& t : c.targets) {
      if (t.runs.empty()) {
        absl::StrAppend(&out, "\n  ", t.name, ": no measured run\n");
        continue;
      }
      for (const RampRun& run : t.runs) {
        absl::StrAppend(&out, "\n  ", RunHeading(t, run), "\n");
        if (!run.steps.empty()) absl::StrAppend(&out, FormatTextTable(RunTable(c, run, &notes)));
        absl::StrAppend(&out, "  ", KneeLine(c, run), "\n");
      }
    }
    absl::StrAppend(&out, "\n");
    for (size_t i = 1; i < c.targets.size(); ++i) {
      absl::StrAppend(&out, "  ", CompareLine(c, i), "\n");
    }
    absl::StrAppend(&out, "  ", kColumnsNote, "\n");
    for (const std::string& line : NoteLines(notes)) absl::StrAppend(&out, "  ", line, "\n");
  }
  return out;
}

std::string RenderRampMarkdown(const v1::SuiteIndex& index,
                               const std::vector<v1::RunReport>& reports,
                               const std::vector<bool>& measured) {
  std::string out;
  for (const RampCase& c : BuildRampCases(index, reports, measured)) {
    absl::StrAppend(&out, "\n### Ramp: ", MarkdownEscape(c.name),
                    c.category.empty() ? "" : " (" + MarkdownEscape(c.category) + ")", "\n\n",
                    MarkdownEscape(SearchLine(c)), "\n");
    RunNotes notes;
    for (const RampTarget& t : c.targets) {
      absl::StrAppend(&out, "\n#### ", MarkdownEscape(t.name), "\n");
      if (t.runs.empty()) {
        absl::StrAppend(&out, "\nNo measured run.\n");
        continue;
      }
      for (const RampRun& run : t.runs) {
        if (!run.label.empty()) absl::StrAppend(&out, "\n", MarkdownEscape(run.label), ":\n");
        if (!run.steps.empty()) {
          const auto table = RunTable(c, run, &notes);
          absl::StrAppend(&out, "\n", MarkdownRow(table[0]),
                          "|---:|---:|---:|---:|:---|---:|---:|---:|---:|\n");
          for (size_t r = 1; r < table.size(); ++r) absl::StrAppend(&out, MarkdownRow(table[r]));
        }
        absl::StrAppend(&out, "\n", MarkdownEscape(KneeLine(c, run)), "\n");
      }
    }
    if (c.targets.size() > 1) absl::StrAppend(&out, "\n");
    for (size_t i = 1; i < c.targets.size(); ++i) {
      absl::StrAppend(&out, "- ", MarkdownEscape(CompareLine(c, i)), "\n");
    }
    absl::StrAppend(&out, "\n", MarkdownEscape(kColumnsNote), "\n");
    for (const std::string& line : NoteLines(notes)) {
      absl::StrAppend(&out, "\n", MarkdownEscape(line), "\n");
    }
  }
  return out;
}

std::string RenderRampHtml(const v1::SuiteIndex& index, const std::vector<v1::RunReport>& reports,
                           const std::vector<bool>& measured, std::string* charts) {
  std::string out;
  const std::vector<RampCase> cases = BuildRampCases(index, reports, measured);
  for (size_t n = 0; n < cases.size(); ++n) {
    const RampCase& c = cases[n];
    absl::StrAppend(&out, "<h2 class=\"case\">Ramp: ", HtmlEscape(c.name),
                    c.category.empty() ? "" : " (" + HtmlEscape(c.category) + ")", "</h2>\n",
                    "<p class=\"note\">", HtmlEscape(SearchLine(c)), "</p>\n");
    const auto [throughput, p99] = RampCharts(c);
    const std::string tname = absl::StrCat("ramp-", n + 1, "-throughput");
    const std::string pname = absl::StrCat("ramp-", n + 1, "-p99");
    absl::StrAppend(&out, html::ChartDiv(tname, throughput.empty),
                    html::ChartDiv(pname, p99.empty));
    if (charts != nullptr) {
      absl::StrAppend(charts, charts->empty() ? "" : ",", JsonQuote(tname), ":",
                      html::ChartJson(throughput), ",", JsonQuote(pname), ":",
                      html::ChartJson(p99));
    }
    RunNotes notes;
    for (const RampTarget& t : c.targets) {
      absl::StrAppend(&out, "<h3>", HtmlEscape(t.name), "</h3>\n");
      if (t.runs.empty()) {
        absl::StrAppend(&out, "<p>No measured run.</p>\n");
        continue;
      }
      for (const RampRun& run : t.runs) {
        if (!run.label.empty()) absl::StrAppend(&out, "<p>", HtmlEscape(run.label), ":</p>\n");
        if (!run.steps.empty()) {
          const auto table = RunTable(c, run, &notes);
          absl::StrAppend(&out, "<table class=\"ramp\">\n<tr>");
          for (size_t k = 0; k < table[0].size(); ++k) {
            absl::StrAppend(&out, Th(table[0][k], k == 4));
          }
          absl::StrAppend(&out, "</tr>\n");
          for (size_t r = 1; r < table.size(); ++r) {
            const bool missed = !run.steps[r - 1].step.met();
            absl::StrAppend(&out, missed ? "<tr class=\"worse\">" : "<tr>");
            for (size_t k = 0; k < table[r].size(); ++k) {
              absl::StrAppend(&out, Td(table[r][k], k == 4));
            }
            absl::StrAppend(&out, "</tr>\n");
          }
          absl::StrAppend(&out, "</table>\n");
        }
        absl::StrAppend(&out, "<p><strong>", HtmlEscape(KneeLine(c, run)), "</strong></p>\n");
      }
    }
    for (size_t i = 1; i < c.targets.size(); ++i) {
      absl::StrAppend(&out, "<p>", HtmlEscape(CompareLine(c, i)), "</p>\n");
    }
    absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(kColumnsNote), "</p>\n");
    for (const std::string& line : NoteLines(notes)) {
      absl::StrAppend(&out, "<p class=\"note\">", HtmlEscape(line), "</p>\n");
    }
  }
  return out;
}

std::vector<std::string> RampHeadlines(const v1::SuiteIndex& index,
                                       const std::vector<v1::RunReport>& reports,
                                       const std::vector<bool>& measured) {
  std::vector<std::string> lines;
  for (const RampCase& c : BuildRampCases(index, reports, measured)) {
    if (c.targets.empty()) continue;
    if (c.targets.size() == 1) {
      lines.push_back(absl::StrCat(c.name, ": ", OutcomeWords(c, c.targets[0]), " (",
                                   c.targets[0].name, ")"));
      continue;
    }
    for (size_t i = 1; i < c.targets.size(); ++i) {
      const RampTarget& o = c.targets[i];
      const RampTarget& b = c.targets[0];
      const std::string ow = OutcomeWords(c, o), bw = OutcomeWords(c, b);
      std::string outcomes;
      if (ow == bw) {
        outcomes = absl::StrCat(ow, " (", o.name, " and ", b.name, ")");
      } else if (ow.rfind("knee at ", 0) == 0 && bw.rfind("knee at ", 0) == 0) {
        outcomes = absl::StrCat(ow, " (", o.name, ") and ", bw.substr(8), " (", b.name, ")");
      } else {
        outcomes = absl::StrCat(ow, " (", o.name, ") and ", bw, " (", b.name, ")");
      }
      const RampComparison cmp = Compare(c, i);
      std::string line = absl::StrCat(c.name, ": ", outcomes);
      if (cmp.comparable) {
        absl::StrAppend(&line, "; ",
                        cmp.both_knees ? "at the knees " : "at the highest steps that met the SLO ",
                        o.name, " ", cmp.ratios);
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace dbload
