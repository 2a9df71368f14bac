// The ramp view of the suite report on hand-built indexes and run reports with known numbers:
// a search that found its knee (with bisecting steps after it), one that reached its maximum
// without missing, one whose first step missed, one cut short; the saturation columns computed
// from the probe readings over each step's seconds; the ratio at the knees; the Markdown table's
// shape, the HTML chart with its knee marks, and human units (never an exponent).
#include "suite/suite_ramp.h"
#include "suite/suite_ramp_render.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kMiB = 1024 * 1024;

struct Step {
  double level;
  bool met;
  double rate;    // achieved /s
  double p99_ms;
  uint64_t errors = 0;
};

// A run report of a closed-loop knee search (stage 1) whose steps each held `seconds_per_step`
// one-second intervals at their level, and a probe reading every second from 0. During step j
// (0-based) the server counts, per second: CPU 0.1 × (j + 1) cores (only `with_process`), rows
// inserted 1,000 × (j + 1), written bytes 1.5 MiB × (j + 1); its connections gauge reads the
// step's level. So step j's columns are exactly those per-second figures.
v1::RunReport KneeReport(const std::vector<Step>& steps, int seconds_per_step,
                         const std::string& source, bool with_process) {
  v1::RunReport r;
  r.set_format_version(kReportFormatVersion);
  r.set_state("finished");
  v1::StageReport* stage = r.add_stages();
  stage->set_name("knee");
  stage->set_index(1);
  double best = 0;
  for (const Step& s : steps) {
    v1::KneeStep* k = stage->add_knee_steps();
    k->set_level(s.level);
    k->set_met(s.met);
    k->set_executed(static_cast<uint64_t>(s.rate * seconds_per_step));
    k->set_errors(s.errors);
    k->set_p99_ms(s.p99_ms);
    k->set_achieved_rate(s.rate);
    k->set_judged_s(seconds_per_step);
    if (!s.met) k->set_missed("the coordinator's words");
    if (s.met) best = std::max(best, s.level);
  }
  stage->set_knee(best);
  double cpu = 0, rows = 0, bytes = 0;
  const int seconds = static_cast<int>(steps.size()) * seconds_per_step;
  for (int t = 0; t <= seconds; ++t) {
    const size_t j = t == 0 ? 0 : static_cast<size_t>((t - 1) / seconds_per_step);
    if (t > 0) {
      v1::IntervalSample* sample = r.add_intervals();
      sample->set_elapsed_s(t);
      sample->set_stage(1);
      sample->set_clients(static_cast<uint32_t>(steps[j].level));
      cpu += 0.1 * static_cast<double>(j + 1);
      rows += 1000 * static_cast<double>(j + 1);
      bytes += 1.5 * kMiB * static_cast<double>(j + 1);
    }
    v1::ProbeSample* probe = r.add_probe_samples();
    probe->set_elapsed_s(t);
    auto& values = *probe->mutable_values();
    if (with_process) values["process/cpu_seconds"] = cpu;
    values[source == "postgresql" ? "postgresql/tup_inserted" : "mysql/Handler_write"] = rows;
    values[source + "/written_bytes"] = bytes;
    values[source + "/connections"] = t == 0 ? 0 : steps[j].level;
  }
  return r;
}

class RampSuite {
 public:
  explicit RampSuite(std::vector<std::string> targets) {
    index_.set_format_version(1);
    index_.mutable_suite()->set_name("ingestion-ramp");
    for (const std::string& t : targets) index_.mutable_suite()->add_targets()->set_name(t);
    v1::SuiteCase* c = index_.mutable_suite()->add_cases();
    c->set_name("insert-events");
    c->set_category("inserts");
    c->mutable_plan()->mutable_load()->mutable_closed();
    v1::Stage* stage = c->mutable_plan()->add_stages();
    stage->set_name("knee");
    v1::KneeSearch* knee = stage->mutable_knee();
    knee->set_from(8);
    knee->set_step(8);
    knee->set_max(64);
    knee->set_every_ns(60'000'000'000);
    knee->set_refine(3);
    knee->set_p99_ns(50'000'000);
    knee->set_errors(0.01);
  }
  void Run(const std::string& target, v1::RunReport report, bool measured = true,
           uint32_t repetition = 1) {
    v1::SuiteRun* run = index_.add_runs();
    run->set_target(target);
    run->set_case_name("insert-events");
    run->set_repetition(repetition);
    run->set_state("finished");
    reports_.push_back(std::move(report));
    measured_.push_back(measured);
  }
  v1::SuiteIndex& index() { return index_; }
  std::string Markdown() const { return RenderRampMarkdown(index_, reports_, measured_); }
  std::string Text() const { return RenderRampText(index_, reports_, measured_); }
  std::string Html(std::string* charts) const {
    return RenderRampHtml(index_, reports_, measured_, charts);
  }
  std::vector<std::string> Headlines() const { return RampHeadlines(index_, reports_, measured_); }
  std::vector<RampCase> Build() const { return BuildRampCases(index_, reports_, measured_); }

 private:
  v1::SuiteIndex index_;
  std::vector<v1::RunReport> reports_;
  std::vector<bool> measured_;
};

// Climbs 8, 16, 24, misses at 32, then bisects 28, 26, 25 (all missed): knee 24.
std::vector<Step> PostgresSteps() {
  return {{8, true, 800, 5},      {16, true, 1600, 10},   {24, true, 2400, 20},
          {32, false, 3000, 60},  {28, false, 2800, 55},  {26, false, 2700, 52},
          {25, false, 2550, 51}};
}

// 8 … 64, every step met: no knee up to 64. The first step's p99 is 6.679 µs.
std::vector<Step> MariadbNoKneeSteps() {
  std::vector<Step> steps;
  for (int level = 8; level <= 64; level += 8) {
    steps.push_back({static_cast<double>(level), true, 100.0 * level, 15});
  }
  steps.front().p99_ms = 6.679e-06 * 1000;
  steps.back().rate = 1580;
  steps.back().p99_ms = 22;
  return steps;
}

// Climbs 8, misses at 16; with steps of 8 it bisects 12 (met), 14 (missed), 13 (missed).
std::vector<Step> MariadbKneeSteps() {
  return {{8, true, 900, 8}, {16, false, 1700, 70}, {12, true, 1580, 22},
          {14, false, 1650, 58}, {13, false, 1620, 53}};
}

RampSuite ThreeTargets() {
  RampSuite suite({"postgresql", "mariadb", "tiny", "absent"});
  // A warm-up run left out by the suite report: its numbers must appear nowhere.
  suite.Run("postgresql", KneeReport({{8, true, 777, 7}, {16, false, 999, 99}}, 5, "postgresql",
                                     true),
            /*measured=*/false, 0);
  suite.Run("postgresql", KneeReport(PostgresSteps(), 5, "postgresql", true));
  suite.Run("mariadb", KneeReport(MariadbNoKneeSteps(), 2, "mysql", false));
  suite.Run("tiny", KneeReport({{8, false, 100, 80, 10}}, 5, "postgresql", true));  // 10 of 510
  return suite;
}

std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find(needle) != absl::string_view::npos) out.emplace_back(line);
  }
  return out;
}

TEST(SuiteRampTest, OnlyCasesWithAKneeStageAreRampCases) {
  RampSuite suite({"postgresql"});
  EXPECT_TRUE(IsRampCase(suite.index().suite().cases(0)));
  v1::SuiteCase plain;
  plain.mutable_plan()->add_stages()->mutable_clients();
  EXPECT_FALSE(IsRampCase(plain));
  v1::SuiteIndex no_ramp;
  no_ramp.mutable_suite()->add_cases()->CopyFrom(plain);
  EXPECT_EQ(RenderRampMarkdown(no_ramp, {}, {}), "");
  EXPECT_EQ(RenderRampText(no_ramp, {}, {}), "");
  EXPECT_TRUE(RampHeadlines(no_ramp, {}, {}).empty());
}

TEST(SuiteRampTest, OutcomesAndStepsFromTheSearch) {
  const std::vector<RampCase> cases = ThreeTargets().Build();
  ASSERT_EQ(cases.size(), 1u);
  const RampCase& c = cases[0];
  ASSERT_EQ(c.targets.size(), 4u);
  ASSERT_EQ(c.targets[0].runs.size(), 1u);  // the warm-up run is left out
  const RampRun& pg = c.targets[0].runs[0];
  EXPECT_EQ(pg.outcome, KneeOutcome::kKnee);
  ASSERT_GE(pg.reference, 0);
  EXPECT_EQ(pg.steps[pg.reference].step.level(), 24);
  ASSERT_EQ(pg.steps.size(), 7u);
  for (size_t j = 0; j < pg.steps.size(); ++j) {
    EXPECT_EQ(pg.steps[j].number, j + 1);
    EXPECT_EQ(pg.steps[j].refine, j >= 4) << j;  // after step 4, the first that missed
  }
  const RampRun& maria = c.targets[1].runs[0];
  EXPECT_EQ(maria.outcome, KneeOutcome::kNoKneeUpToMax);
  EXPECT_EQ(maria.highest_level, 64);
  EXPECT_EQ(c.targets[2].runs[0].outcome, KneeOutcome::kNoStepMet);
  EXPECT_EQ(c.targets[2].runs[0].reference, -1);
  EXPECT_TRUE(c.targets[3].runs.empty());
}

TEST(SuiteRampTest, SaturationOverEachStepsSecondsFromTheProbeReadings) {
  const std::vector<RampCase> cases = ThreeTargets().Build();
  const RampRun& pg = cases[0].targets[0].runs[0];
  for (size_t j = 0; j < pg.steps.size(); ++j) {
    const RampStep& s = pg.steps[j];
    ASSERT_TRUE(s.found) << j;
    // Step j's intervals end at 5j+1 … 5j+5: it starts where interval 5j ended.
    EXPECT_DOUBLE_EQ(s.start_s, 5.0 * j);
    EXPECT_DOUBLE_EQ(s.end_s, 5.0 * j + 5);
    EXPECT_EQ(s.saturation.readings, 6u);
    const double k = static_cast<double>(j + 1);
    ASSERT_TRUE(s.saturation.cpu_cores.has_value());
    EXPECT_NEAR(*s.saturation.cpu_cores, 0.1 * k, 1e-9) << j;
    EXPECT_NEAR(*s.saturation.rows_inserted_per_s, 1000 * k, 1e-6) << j;
    EXPECT_NEAR(*s.saturation.written_bytes_per_s, 1.5 * kMiB * k, 1e-3) << j;
    EXPECT_EQ(*s.saturation.connections, s.step.level()) << j;  // not the previous step's
  }
  // MariaDB's probe has no process source here (a server on another machine): no CPU.
  const RampRun& maria = cases[0].targets[1].runs[0];
  EXPECT_FALSE(maria.steps[0].saturation.cpu_cores.has_value());
  EXPECT_NEAR(*maria.steps[0].saturation.rows_inserted_per_s, 1000, 1e-6);
  EXPECT_EQ(maria.steps[0].saturation.readings, 3u);
}

TEST(SuiteRampTest, ACounterResetInsideAStepCountsTheNewValueFromZero) {
  v1::RunReport r = KneeReport({{8, true, 800, 5}}, 4, "postgresql", true);
  // Readings at 0..4 read rows 0, 1000, 2000, 3000, 4000; the server restarts before 3.
  (*r.mutable_probe_samples(3)->mutable_values())["postgresql/tup_inserted"] = 400;
  (*r.mutable_probe_samples(4)->mutable_values())["postgresql/tup_inserted"] = 1400;
  RampSuite suite({"postgresql"});
  suite.Run("postgresql", r);
  const std::vector<RampCase> cases = suite.Build();  // kept: the step is a reference into it
  const RampStep& s = cases[0].targets[0].runs[0].steps[0];
  // 1000 + 1000 + 400 (from zero) + 1000 over 4 s.
  EXPECT_NEAR(*s.saturation.rows_inserted_per_s, 3400.0 / 4, 1e-9);
}

TEST(SuiteRampTest, MarkdownTablePerTargetWithKneeLines) {
  const std::string md = ThreeTargets().Markdown();
  EXPECT_THAT(md, HasSubstr("### Ramp: insert-events (inserts)\n"));
  EXPECT_THAT(md, HasSubstr("\n#### postgresql\n"));
  EXPECT_THAT(md, HasSubstr(
                      "| step | clients | throughput | p99 | SLO | CPU | connections | disk writes "
                      "| rows inserted |\n|---:|---:|---:|---:|:---|---:|---:|---:|---:|\n"));
  EXPECT_THAT(md,
              HasSubstr("| 1 | 8 | 800/s | 5.00 ms | met | 10.0 % | 8 | 1.57 MB/s | 1,000/s |\n"));
  EXPECT_THAT(md, HasSubstr("| 4 | 32 | 3,000/s | 60.0 ms | missed: p99 60.0 ms above 50 ms | "
                            "40.0 % | 32 | 6.29 MB/s | 4,000/s |\n"));
  EXPECT_THAT(md, HasSubstr("| 5 (refine) | 28 | 2,800/s | 55.0 ms | missed: p99 55.0 ms above 50 "
                            "ms | 50.0 % | 28 | 7.86 MB/s | 5,000/s |\n"));
  EXPECT_THAT(md, HasSubstr(
                      "Knee: 24 clients (the highest step that met p99 ≤ 50 ms and errors ≤ 1 %)"));
  // MariaDB: no CPU column data, and every figure over its 2-second steps (3 readings) marked.
  EXPECT_THAT(md,
              HasSubstr("| 1 | 8 | 800/s | 6.68 µs | met | — | 8† | 1.57 MB/s† | 1,000/s† |\n"));
  EXPECT_THAT(md, HasSubstr("No knee up to 64 clients: every step met the SLO"));
  EXPECT_THAT(md, HasSubstr(kFewReadingsNote));
  EXPECT_THAT(md, HasSubstr("No knee: no step met the SLO (p99 ≤ 50 ms and errors ≤ 1 %); the "
                            "first, at 8 clients, missed: p99 80.0 ms above 50 ms, errors 1.96 % "
                            "above 1 %"));
  EXPECT_THAT(md, HasSubstr("\n#### absent\n\nNo measured run.\n"));
  // The warm-up run's figures are nowhere.
  EXPECT_THAT(md, Not(HasSubstr("777")));
  // Every table line has the header's 9 cells.
  for (const std::string& line : LinesWith(md, "| ")) {
    if (line.rfind("|", 0) != 0) continue;
    size_t bars = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      bars += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    }
    EXPECT_EQ(bars, 10u) << line;
  }
  EXPECT_EQ(LinesWith(md, "| 1 | 8 |").size(), 3u);  // postgresql, mariadb, tiny
  EXPECT_EQ(LinesWith(md, "(refine)").size(), 3u);
}

TEST(SuiteRampTest, RatioAtTheReferenceSteps) {
  const std::string md = ThreeTargets().Markdown();
  // MariaDB had no knee: compared at its highest step, 64 clients (1,580/s, 22 ms).
  EXPECT_THAT(md, HasSubstr("- At the highest steps that met the SLO: mariadb (64 clients, no knee "
                            "up to there) 1.52× lower throughput, 1.10× higher p99 than "
                            "postgresql (24 clients)\n"));
  EXPECT_THAT(md, HasSubstr("- At the knees: tiny against postgresql: not comparable (no step of "
                            "tiny met the SLO)\n"));
  EXPECT_THAT(md, HasSubstr("- At the knees: absent against postgresql: not comparable (absent has "
                            "no measured run)\n"));
  // Never a figure over the whole staircase: the one ratio is from the two steps' own figures.
  EXPECT_EQ(LinesWith(md, "× ").size(), 1u);
}

TEST(SuiteRampTest, BothKneesAndTheHeadline) {
  RampSuite suite({"postgresql", "mariadb"});
  suite.Run("postgresql", KneeReport(PostgresSteps(), 5, "postgresql", true));
  suite.Run("mariadb", KneeReport(MariadbKneeSteps(), 5, "mysql", true));
  const std::string md = suite.Markdown();
  EXPECT_THAT(md, HasSubstr("- At the knees: mariadb (12 clients) 1.52× lower throughput, 1.10× "
                            "higher p99 than postgresql (24 clients)\n"));
  EXPECT_THAT(md, HasSubstr("| 3 (refine) | 12 | 1,580/s | 22.0 ms | met |"));
  EXPECT_THAT(md, HasSubstr("Knee: 12 clients"));
  EXPECT_THAT(suite.Headlines(),
              testing::ElementsAre("insert-events: knee at 12 clients (mariadb) and 24 clients "
                                   "(postgresql); at the knees mariadb 1.52× lower throughput, "
                                   "1.10× higher p99"));
  EXPECT_THAT(ThreeTargets().Headlines(),
              testing::ElementsAre(
                  "insert-events: no knee up to 64 clients (mariadb) and knee at 24 clients "
                  "(postgresql); at the highest steps that met the SLO mariadb 1.52× lower "
                  "throughput, 1.10× higher p99",
                  "insert-events: no step met the SLO (tiny) and knee at 24 clients (postgresql)",
                  "insert-events: no measured run (absent) and knee at 24 clients (postgresql)"));
}

TEST(SuiteRampTest, ASearchCutShortIsNoKneeUpToWhereItGot) {
  RampSuite suite({"postgresql"});
  suite.Run("postgresql", KneeReport({{8, true, 800, 5}, {16, true, 1600, 9}}, 5, "postgresql",
                                     true));
  EXPECT_EQ(suite.Build()[0].targets[0].runs[0].outcome, KneeOutcome::kSearchCut);
  EXPECT_THAT(suite.Text(), HasSubstr("No knee up to 16 clients: every step met the SLO (p99 ≤ "
                                      "50 ms and errors ≤ 1 %), but the search ended before its "
                                      "maximum of 64 clients"));
  EXPECT_THAT(suite.Headlines(),
              testing::ElementsAre("insert-events: no knee up to 16 clients (postgresql)"));
}

TEST(SuiteRampTest, TextIsAlignedTables) {
  const std::string text = ThreeTargets().Text();
  EXPECT_THAT(text, HasSubstr("Ramp: insert-events (inserts)\n"));
  // postgresql's table (ASCII only): the header and its 7 rows are equally long.
  const size_t from = text.find("\n  postgresql\n");
  ASSERT_NE(from, std::string::npos);
  const size_t to = text.find("  Knee: 24 clients", from);
  ASSERT_NE(to, std::string::npos);
  const std::vector<std::string> lines =
      absl::StrSplit(text.substr(from + 14, to - from - 14), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[0].rfind("  step ", 0), 0u) << lines[0];
  EXPECT_THAT(lines[0], HasSubstr(" clients throughput "));
  for (const std::string& line : lines) EXPECT_EQ(line.size(), lines[0].size()) << line;
  EXPECT_THAT(lines[5], HasSubstr("5 (refine)"));
  EXPECT_THAT(text, HasSubstr("  absent: no measured run\n"));
  EXPECT_THAT(text, HasSubstr("At the highest steps that met the SLO: mariadb (64 clients, no "
                              "knee up to there) 1.52× lower throughput"));
}

TEST(SuiteRampTest, HtmlHasTheTablesAndAChartWithTheKneeMarked) {
  RampSuite suite({"postgresql", "mariadb"});
  suite.Run("postgresql", KneeReport(PostgresSteps(), 5, "postgresql", true));
  suite.Run("mariadb", KneeReport(MariadbKneeSteps(), 5, "mysql", true));
  std::string charts;
  const std::string html = suite.Html(&charts);
  EXPECT_THAT(html, HasSubstr("Ramp: insert-events"));
  EXPECT_THAT(html, HasSubstr("data-chart=\"ramp-1-throughput\""));
  EXPECT_THAT(html, HasSubstr("data-chart=\"ramp-1-p99\""));
  EXPECT_THAT(html, HasSubstr("<th>rows inserted</th>"));
  EXPECT_THAT(html, HasSubstr("<td>5 (refine)</td>"));
  EXPECT_THAT(html, HasSubstr("Knee: 24 clients"));
  EXPECT_THAT(charts, HasSubstr("\"ramp-1-throughput\":{"));
  EXPECT_THAT(charts, HasSubstr("\"y_label\":\"throughput (/s)\""));
  EXPECT_THAT(charts, HasSubstr("\"y_label\":\"p99 (ms)\""));
  EXPECT_THAT(charts, HasSubstr("{\"x\":24,\"label\":\"knee postgresql 24\""));
  EXPECT_THAT(charts, HasSubstr("{\"x\":12,\"label\":\"knee mariadb 12\""));
  // Series in level order: postgresql's x runs 8, 16, 24, 25, 26, 28, 32.
  EXPECT_THAT(charts, HasSubstr("\"name\":\"postgresql\",\"x\":[8,16,24,25,26,28,32]"));
  // Appended after what the caller already had, comma-separated.
  std::string more = "\"other\":{}";
  suite.Html(&more);
  EXPECT_EQ(more.rfind("\"other\":{},\"ramp-1-throughput\":{", 0), 0u);
}

TEST(SuiteRampTest, HumanUnitsNeverAnExponent) {
  RampSuite suite({"postgresql"});
  v1::RunReport r = KneeReport({{1, true, 0.25, 6.679e-06}, {2, false, 123456.7, 1234.5, 3}}, 5,
                               "postgresql", true);
  // Tiny and huge probe figures.
  for (v1::ProbeSample& s : *r.mutable_probe_samples()) {
    (*s.mutable_values())["postgresql/written_bytes"] = s.elapsed_s() * 3e-6;
  }
  suite.Run("postgresql", r);
  std::string charts;
  for (const std::string& out : {suite.Markdown(), suite.Text(), suite.Html(&charts)}) {
    EXPECT_FALSE(std::regex_search(out, std::regex("[0-9]e[-+]?[0-9]"))) << out;
    EXPECT_THAT(out, HasSubstr("0.25/s"));
    EXPECT_THAT(out, HasSubstr("123,457/s"));
    EXPECT_THAT(out, HasSubstr("1.23 s"));  // p99 1,234.5 ms
    EXPECT_THAT(out, HasSubstr("0.000003 B/s"));  // 3e-6 B/s, in full
  }
  // 6.679e-06 ms is 6.68 ns.
  EXPECT_THAT(suite.Markdown(), HasSubstr("| 1 | 1 | 0.25/s | 6.68 ns | met |"));
}

}  // namespace
}  // namespace dbload
