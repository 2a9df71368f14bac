// Reports users share, from real runs: the `dbload` executable runs two short two-stage plans
// against a real PostgreSQL (tests/harness/dbenv), then renders their JSON reports as CSV,
// HTML and comparisons, and a real headless Chromium opens the HTML pages. The checks are on
// what Chromium made of them (--dump-dom: the DOM after the inline script ran): every chart's
// SVG holds a line with as many points as the report has data, stage boundaries are drawn, the
// script reported no error, a hostile plan name stays text, and the page made no network
// request (Chromium's own net log, with a control page proving that the check catches one).
#include "report/report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/histogram.h"
#include "report/report_compare.h"
#include "report/report_html.h"
#include "dbload/v1/suite.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/headless_page.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined (the path of the dbload executable)"
#endif
#ifndef DBLOAD_COORDINATOR_BINARY
#error "DBLOAD_COORDINATOR_BINARY must be defined (the path of dbload-coordinator)"
#endif

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::dbload::testing::ChartSection;
using ::dbload::testing::CountOf;
using ::dbload::testing::kChromium;
using ::dbload::testing::Polylines;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHostileName[] = "</script><img src=x onerror=alert(1)>";
// The second stage's name: markup too, so that it reaches the pages' embedded data (chart
// labels) as well as their tables.
constexpr char kHighStage[] = "high</script><b>";
constexpr char kHighStageHtml[] = "high&lt;/script&gt;&lt;b&gt;";

ProcessResult RunDbload(std::vector<std::string> args) {
  args.insert(args.begin(), DBLOAD_BINARY);
  return RunProcess(args, std::chrono::seconds(60));
}

size_t StageChanges(const v1::RunReport& report) {
  size_t changes = 0;
  for (int i = 1; i < report.intervals_size(); ++i) {
    changes += report.intervals(i).stage() != report.intervals(i - 1).stage() &&
               report.intervals(i).stage() > 0;
  }
  return changes;
}

size_t SpectrumPoints(const google::protobuf::RepeatedPtrField<v1::QueryTypeReport>& types) {
  return PercentileSpectrum(MergedResponseHistogram(types)).size();
}

class ReportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_report_test");
    ASSERT_EQ(chmod(dir_->path().c_str(), 0755), 0);
    ASSERT_EQ(access(kChromium, X_OK), 0)
        << kChromium << " is missing: scripts/setup installs Debian's chromium package";
    // Two short two-stage runs over the same stages and query type: an open loop (with a
    // hostile plan name, which every page must show as text) and a closed loop.
    const std::string open =
        WritePlan("open.yaml", kHostileName, "load: {open: {arrival: uniform}}\n",
                  absl::StrCat("  - {name: low, duration: 2s, rate: 200}\n  - {name: '", kHighStage,
                               "', duration: 2s, rate: 400}\n"));
    const std::string closed =
        WritePlan("closed.yaml", "closed-pg", "load: {closed: {think_time: 0s}}\n",
                  absl::StrCat("  - {name: low, duration: 2s, clients: 1}\n  - {name: '",
                               kHighStage, "', duration: 2s, clients: 2}\n"));
    const ProcessResult cleanup = RunDbload({"cleanup", open});
    ASSERT_EQ(cleanup.exit_code, 0) << cleanup.Describe();
    const ProcessResult prepare = RunDbload({"prepare", open});
    ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
    for (const auto& [plan, report] : {std::pair{open, Path("a.json")}, {closed, Path("b.json")}}) {
      const ProcessResult run = RunDbload({"run", plan, "--report", report});
      ASSERT_EQ(run.exit_code, 0) << run.Describe();
    }
  }

  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  static std::string Path(const std::string& name) { return dir_->path() + "/" + name; }

  static std::string WritePlan(const std::string& file, const std::string& name,
                               const std::string& load, const std::string& stages) {
    testing::TestServers& servers = TestServersEnvironment::Servers();
    const std::string yaml = absl::StrCat(
        "name: '", name,
        "'\ntarget: {driver: postgresql, host: 127.0.0.1, port: ", servers.Get("PG_PORT"),
        ", user: bench, password_file: ", servers.Get("PG_PASSWORD_FILE"),
        ", database: bench, pool: 2, connect_timeout: 5s}\n",
        "workload: oltp\nscenario: point_select\nworkload_options: {tables: 1, table_size: 1000}\n",
        load, "stages:\n", stages, "seed: 7\n");
    return dir_->Write(file, yaml);
  }

  static v1::RunReport Load(const std::string& name) { return testing::ReadReport(Path(name)); }

  // Chromium, headless, on a local file: the DOM after the page's scripts ran. Name resolution
  // is mapped to nothing (no request could leave this machine anyway), and every request is
  // written to a net log, which `page_requests` receives: the URLs the page itself asked for
  // (requests isolated under file://; the browser's own background requests are not).
  static std::string DumpDom(const std::string& file, std::vector<std::string>* page_requests) {
    testing::RenderedPage page =
        testing::RenderInChromium(file, Path(absl::StrCat("chromium-", ++runs_)));
    *page_requests = std::move(page.requests);
    return page.dom;
  }

  // What every rendered page must show: the script ran to its end without an error, nothing
  // was fetched, and the hostile name is text, not markup.
  static void ExpectCleanPage(const std::string& dom, const std::vector<std::string>& requests) {
    // Set only when every chart was drawn without an error (an error leaves data-errors and
    // its message in this element instead).
    EXPECT_TRUE(testing::ChartsRendered(dom)) << dom.substr(0, 2000);
    EXPECT_TRUE(requests.empty()) << requests.front();
    EXPECT_THAT(dom, Not(HasSubstr("<img")));
    EXPECT_THAT(dom, Not(HasSubstr("<b>")));
    EXPECT_THAT(dom, HasSubstr("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
  }

  static testing::ScratchDir* dir_;
  static int runs_;
};

testing::ScratchDir* ReportTest::dir_ = nullptr;
int ReportTest::runs_ = 0;

TEST_F(ReportTest, HtmlReportChartsRenderInChromium) {
  const v1::RunReport report = Load("a.json");
  ASSERT_EQ(report.stages_size(), 2);
  ASSERT_GE(report.intervals_size(), 3);
  const ProcessResult html =
      RunDbload({"report", Path("a.json"), "--format", "html", "--output", Path("a.html")});
  ASSERT_EQ(html.exit_code, 0) << html.Describe();
  EXPECT_EQ(html.out, "");
  EXPECT_FALSE(std::filesystem::exists(Path("a.html.tmp")));
  std::vector<std::string> requests;
  const std::string dom = DumpDom(Path("a.html"), &requests);
  ExpectCleanPage(dom, requests);

  const size_t intervals = report.intervals_size();
  const std::string rate = ChartSection(dom, "rate");
  EXPECT_THAT(rate, HasSubstr("<svg class=\"chart\""));
  EXPECT_EQ(Polylines(rate),
            (std::map<std::string, size_t>{{"achieved", intervals}, {"target", intervals}}));
  const std::string latency = ChartSection(dom, "latency");
  EXPECT_EQ(Polylines(latency), (std::map<std::string, size_t>{
                                    {"p50", intervals}, {"p99", intervals}, {"p99.9", intervals}}));
  // One boundary per change of stage, labelled with the stage that begins.
  ASSERT_EQ(StageChanges(report), 1u);
  for (const std::string& section : {rate, latency}) {
    EXPECT_EQ(CountOf(section, "class=\"stage-boundary\""), 1u);
    EXPECT_THAT(section, HasSubstr(absl::StrCat(">", kHighStageHtml, "</text>")));
  }
  const std::string spectrum = ChartSection(dom, "spectrum");
  ASSERT_EQ(report.query_types_size(), 1);
  const size_t points = SpectrumPoints(report.query_types());
  EXPECT_GT(points, 10u);
  EXPECT_EQ(Polylines(spectrum), (std::map<std::string, size_t>{{"point_select", points}}));
  EXPECT_THAT(spectrum, HasSubstr(">99.9%<"));  // the 1/(1 − p) axis
  // Where fewer than 10 samples remain beyond: a line on the same axis.
  EXPECT_EQ(CountOf(spectrum, "class=\"few-samples\""), 1u);
  // The coordinator's database probe read PostgreSQL during the run: one panel per value it
  // read, a counter drawn as one rate per pair of readings.
  const std::string saturation = ChartSection(dom, "saturation");
  std::set<std::string> keys;
  for (const v1::ProbeSample& sample : report.probe_samples()) {
    for (const auto& [key, value] : sample.values()) keys.insert(key);
  }
  ASSERT_GT(keys.size(), 10u);
  EXPECT_EQ(CountOf(saturation, "<svg"), keys.size());
  const std::string commits = saturation.substr(saturation.find("postgresql/xact_commit (per second)"));
  EXPECT_EQ(Polylines(commits.substr(0, commits.find("</svg>"))),
            (std::map<std::string, size_t>{
                {"per second", static_cast<size_t>(report.probe_samples_size() - 1)}}));
  // The tables: the report's own numbers.
  EXPECT_THAT(dom, HasSubstr(absl::StrCat("<td>", report.executed(), "</td>")));
  // A percentile's cell carries what it rests on as its title.
  const v1::PercentileBasis* p99 = BasisOf(report.response_time(), 99);
  ASSERT_NE(p99, nullptr);
  EXPECT_THAT(dom, HasSubstr(absl::StrCat(" title=\"", p99->samples_beyond(),
                                          p99->samples_beyond() == 1 ? " sample" : " samples",
                                          " beyond; 95% interval ", FormatInterval(*p99), " ms\">",
                                          FormatPercentileMs(report.response_time(), 99,
                                                             report.response_time().p99_ms()),
                                          "</td>")));
  EXPECT_THAT(dom, HasSubstr(absl::StrCat("<td class=\"text\">", kHighStageHtml, "</td>")));
}

TEST_F(ReportTest, ProbeDataBecomesSaturationPanels) {
  // Readings with known values written into a real report in place of the probe's: a counter
  // (drawn per second) and a gauge (as read).
  v1::RunReport report = Load("a.json");
  report.clear_probe_samples();
  report.clear_saturation();
  for (v1::StageReport& stage : *report.mutable_stages()) stage.clear_saturation();
  {
    // Without any: a note instead of a chart.
    ASSERT_TRUE(SaveReportJson(Path("no_probe.json"), report).ok());
    const ProcessResult html = RunDbload(
        {"report", Path("no_probe.json"), "--format", "html", "--output", Path("no_probe.html")});
    ASSERT_EQ(html.exit_code, 0) << html.Describe();
    std::vector<std::string> requests;
    const std::string dom = DumpDom(Path("no_probe.html"), &requests);
    ExpectCleanPage(dom, requests);
    const std::string saturation = ChartSection(dom, "saturation");
    EXPECT_THAT(saturation, HasSubstr("No database probe data in this report"));
    EXPECT_EQ(CountOf(saturation, "<svg"), 0u);
  }
  const std::vector<double> commits = {100, 200, 400, 700, 1100};
  const std::vector<double> backends = {3, 4, 5, 4, 3};
  for (size_t i = 0; i < commits.size(); ++i) {
    v1::ProbeSample* sample = report.add_probe_samples();
    sample->set_elapsed_s(static_cast<double>(i + 1));
    (*sample->mutable_values())["postgresql/xact_commit"] = commits[i];
    (*sample->mutable_values())["postgresql/numbackends"] = backends[i];
  }
  v1::SaturationDelta* counter = report.add_saturation();
  counter->set_source("postgresql");
  counter->set_name("xact_commit");
  counter->set_delta(1000);
  counter->set_per_query(1.25);
  v1::SaturationDelta* gauge = report.add_saturation();
  gauge->set_source("postgresql");
  gauge->set_name("numbackends");
  gauge->set_gauge(true);
  gauge->set_delta(3);
  gauge->set_min(3);
  gauge->set_max(5);
  *report.mutable_stages(1)->add_saturation() = *counter;
  ASSERT_TRUE(SaveReportJson(Path("probe.json"), report).ok());
  const ProcessResult html =
      RunDbload({"report", Path("probe.json"), "--format", "html", "--output", Path("probe.html")});
  ASSERT_EQ(html.exit_code, 0) << html.Describe();
  std::vector<std::string> requests;
  const std::string dom = DumpDom(Path("probe.html"), &requests);
  ExpectCleanPage(dom, requests);
  const std::string saturation = ChartSection(dom, "saturation");
  EXPECT_EQ(CountOf(saturation, "<svg"), 2u);
  EXPECT_THAT(saturation, HasSubstr("postgresql/xact_commit (per second)"));
  EXPECT_THAT(saturation, HasSubstr("postgresql/numbackends (level)"));
  // A counter of 5 readings gives 4 rates; a gauge 5 levels.
  const std::string panels = saturation.substr(saturation.find("numbackends (level)"));
  EXPECT_EQ(Polylines(panels.substr(0, panels.find("</svg>"))),
            (std::map<std::string, size_t>{{"level", 5}}));
  const std::string rates = saturation.substr(saturation.find("xact_commit (per second)"));
  EXPECT_EQ(Polylines(rates.substr(0, rates.find("</svg>"))),
            (std::map<std::string, size_t>{{"per second", 4}}));
  EXPECT_THAT(dom, HasSubstr("<td class=\"text\">postgresql/xact_commit</td>"
                             "<td class=\"text\">counter</td><td>1000</td><td>1.25</td>"));
  EXPECT_THAT(dom, HasSubstr("<td>3 – 5</td>"));
}

TEST_F(ReportTest, CsvAndJsonCarryTheReportsNumbers) {
  const v1::RunReport report = Load("a.json");
  const ProcessResult csv = RunDbload({"report", Path("a.json"), "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.Describe();
  const std::vector<std::string> rows = absl::StrSplit(csv.out, "\r\n", absl::SkipEmpty());
  // header + (all + point_select) × (run, low, high)
  ASSERT_EQ(rows.size(), 7u) << csv.out;
  EXPECT_THAT(rows[0], ::testing::StartsWith("scope,query_type,executed,errors,wanted_rate,"));
  EXPECT_EQ(
      rows[1].rfind(absl::StrCat("run,all,", report.executed(), ",", report.errors(), ","), 0), 0u)
      << rows[1];
  EXPECT_EQ(rows[3].rfind(absl::StrCat("stage 1: low,all,", report.stages(0).executed(), ","), 0),
            0u)
      << rows[3];
  EXPECT_EQ(rows[6].rfind(absl::StrCat("stage 2: ", kHighStage, ",point_select,"), 0), 0u)
      << rows[6];
  const ProcessResult json = RunDbload({"report", Path("a.json"), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.Describe();
  absl::StatusOr<v1::RunReport> again = ParseReportJson(json.out);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*again, report));
  const ProcessResult text = RunDbload({"report", Path("a.json")});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_THAT(text.out, HasSubstr(absl::StrCat("Executed queries: ", report.executed(), "\n")));
}

// What each percentile rests on, against the report's own histograms of a real run: the samples
// beyond a percentile are the samples in buckets above its value, and its interval holds it.
TEST_F(ReportTest, PercentilesRestOnTheSamplesOfTheirHistogram) {
  for (const char* file : {"a.json", "b.json"}) {
    const v1::RunReport report = Load(file);
    ASSERT_EQ(report.query_types_size(), 1);
    const v1::QueryTypeReport& q = report.query_types(0);
    absl::StatusOr<Histogram> h = Histogram::FromProto(q.response_histogram());
    ASSERT_TRUE(h.ok()) << h.status();
    ASSERT_EQ(h->TotalCount(), q.executed());
    ASSERT_GT(q.executed(), 500u) << file;
    ASSERT_EQ(q.response_time().percentiles_size(), 7);
    for (const v1::PercentileBasis& b : q.response_time().percentiles()) {
      uint64_t above = 0;
      for (int i = 0; i < histogram_layout::kBucketCount; ++i) {
        if (histogram_layout::LowestValueAt(i) / 1e6 > b.value_ms()) above += h->CountAtIndex(i);
      }
      EXPECT_EQ(b.samples_beyond(), above) << file << " p" << b.percentile();
      // Nearest rank: at most (1 − q)·n samples lie beyond it.
      EXPECT_LE(static_cast<double>(b.samples_beyond()),
                (1 - b.percentile() / 100) * static_cast<double>(q.executed()) + 1e-6)
          << file << " p" << b.percentile();
      EXPECT_EQ(b.few_samples(), b.samples_beyond() < kFewSamplesBeyond);
      EXPECT_LE(b.ci_low_ms(), b.value_ms());
      EXPECT_GE(b.ci_high_ms(), b.value_ms());
      EXPECT_LE(b.ci_high_ms(), h->Max() / 1e6);
    }
    // Under 10,000 samples the p99.99 is the maximum: nothing beyond, no upper bound; under
    // 100,000 it rests on fewer than 10 samples. The text says so.
    const v1::PercentileBasis* top = BasisOf(q.response_time(), 99.99);
    if (q.executed() < 10000) {
      EXPECT_EQ(top->samples_beyond(), 0u);
      EXPECT_TRUE(top->ci_high_open());
    }
    const ProcessResult text = RunDbload({"report", Path(file)});
    ASSERT_EQ(text.exit_code, 0) << text.Describe();
    EXPECT_THAT(text.out, HasSubstr("samples beyond"));
    if (q.executed() < 100000) {
      EXPECT_TRUE(top->few_samples());
      EXPECT_THAT(text.out, HasSubstr(kFewSamplesNote));
    }
  }
}

std::string Phrase(double baseline, double value, const std::string& what) {
  const double ratio = value / baseline;
  const std::string up = absl::StrFormat("%.2f", ratio), down = absl::StrFormat("%.2f", 1 / ratio);
  if (up == "1.00" || down == "1.00") return absl::StrCat("same ", what);
  return ratio > 1 ? absl::StrCat(up, "× higher ", what) : absl::StrCat(down, "× lower ", what);
}

// A percentile's phrase: no difference claimed when each value lies in the other's interval, and
// "*" when either rests on too few samples beyond it.
std::string PercentilePhrase(const v1::LatencySummary& a, const v1::LatencySummary& b,
                             double percentile, double va, double vb, const std::string& what) {
  const v1::PercentileBasis* pa = BasisOf(a, percentile);
  const v1::PercentileBasis* pb = BasisOf(b, percentile);
  EXPECT_TRUE(pa != nullptr && pb != nullptr);
  if (pa == nullptr || pb == nullptr) return "";
  std::string phrase = Phrase(va, vb, what);
  if (!absl::StartsWith(phrase, "same") && WithinIntervals(*pa, *pb)) {
    phrase = absl::StrCat(what, " within the 95% confidence intervals");
  }
  if (pa->few_samples() || pb->few_samples()) phrase += "*";
  return phrase;
}

TEST_F(ReportTest, ComparisonRatiosAreTheJsonNumbers) {
  const v1::RunReport a = Load("a.json"), b = Load("b.json");
  const ProcessResult text = RunDbload({"compare", Path("a.json"), Path("b.json")});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  const ProcessResult markdown =
      RunDbload({"compare", Path("a.json"), Path("b.json"), "--format", "markdown"});
  ASSERT_EQ(markdown.exit_code, 0) << markdown.Describe();
  EXPECT_THAT(text.out, HasSubstr(absl::StrCat("baseline: ", kHostileName)));
  const auto expect_case = [&](const std::string& title, const v1::LatencySummary& la,
                               const v1::LatencySummary& lb, double ra, double rb) {
    const std::string phrases = absl::StrCat(
        Phrase(ra, rb, "throughput"), ", ", Phrase(la.mean_ms(), lb.mean_ms(), "mean latency"),
        ", ", PercentilePhrase(la, lb, 50, la.p50_ms(), lb.p50_ms(), "p50 latency"), ", ",
        PercentilePhrase(la, lb, 99, la.p99_ms(), lb.p99_ms(), "p99 latency"));
    const size_t at = text.out.find(absl::StrCat("\n", title, "\n"));
    ASSERT_NE(at, std::string::npos) << title << "\n" << text.out;
    const std::string block = text.out.substr(at, text.out.find("\n\n", at + 1) - at);
    EXPECT_THAT(block, HasSubstr(absl::StrCat("closed-pg vs ", kHostileName, ": ", phrases)));
    EXPECT_THAT(markdown.out, HasSubstr(phrases));
  };
  expect_case("whole run", a.response_time(), b.response_time(), a.actual_rate(), b.actual_rate());
  for (int i = 0; i < 2; ++i) {
    expect_case(absl::StrCat("stage ", a.stages(i).name()), a.stages(i).response_time(),
                b.stages(i).response_time(), a.stages(i).actual_rate(), b.stages(i).actual_rate());
  }
  EXPECT_THAT(markdown.out, HasSubstr(absl::StrFormat("| throughput (/s) | %.0f | %.0f (",
                                                      a.actual_rate(), b.actual_rate())));
  EXPECT_THAT(markdown.out, HasSubstr("\\</script\\>\\<img"));  // a label is text in Markdown
}

TEST_F(ReportTest, ComparisonHtmlRendersInChromium) {
  const v1::RunReport a = Load("a.json"), b = Load("b.json");
  const ProcessResult html = RunDbload({"compare", Path("a.json"), Path("b.json"), "--format",
                                        "html", "--output", Path("compare.html")});
  ASSERT_EQ(html.exit_code, 0) << html.Describe();
  std::vector<std::string> requests;
  const std::string dom = DumpDom(Path("compare.html"), &requests);
  ExpectCleanPage(dom, requests);
  const std::map<std::string, size_t> rate = Polylines(ChartSection(dom, "compare-rate"));
  ASSERT_EQ(rate.size(), 2u);
  EXPECT_EQ(rate.at("closed-pg"), static_cast<size_t>(b.intervals_size()));
  const std::map<std::string, size_t> spectrum = Polylines(ChartSection(dom, "compare-spectrum"));
  ASSERT_EQ(spectrum.size(), 2u);
  EXPECT_EQ(spectrum.at("closed-pg"), SpectrumPoints(b.query_types()));
  // The other line is the hostile label's: compare by point count, whatever the serializer
  // did to the attribute.
  for (const auto& [series, points] : spectrum) {
    if (series != "closed-pg") {
      EXPECT_EQ(points, SpectrumPoints(a.query_types()));
    }
  }
  for (const auto& [series, points] : rate) {
    if (series != "closed-pg") {
      EXPECT_EQ(points, static_cast<size_t>(a.intervals_size()));
    }
  }
  EXPECT_THAT(dom, HasSubstr(absl::StrCat("<h2>stage ", kHighStageHtml, "</h2>")));
}

TEST_F(ReportTest, SuiteReportHtmlRendersItsChartsInChromium) {
  // A suite directory around the two real reports: the closed loop as a one-point sweep (its
  // TPS and p95 charts, on the log-2 axis), the open loop as a case without points (bars), its
  // name the hostile one.
  const std::string dir = Path("suite");
  std::filesystem::create_directories(dir + "/runs");
  std::filesystem::copy_file(Path("b.json"), dir + "/runs/1.json");
  std::filesystem::copy_file(Path("a.json"), dir + "/runs/2.json");
  v1::SuiteIndex index;
  index.set_format_version(1);
  index.mutable_suite()->set_name("two reports");
  index.mutable_suite()->add_targets()->set_name("postgresql");
  v1::SuiteCase* sweep = index.mutable_suite()->add_cases();
  sweep->set_name("closed-pg");
  sweep->mutable_plan()->mutable_load()->mutable_closed();
  sweep->add_points(2);
  v1::SuiteCase* open = index.mutable_suite()->add_cases();
  open->set_name(kHostileName);
  open->set_category("selects");
  open->mutable_plan()->mutable_load()->mutable_open()->set_rate(300);
  for (const auto& [name, point, file] :
       {std::tuple{std::string("closed-pg"), 2.0, "runs/1.json"},
        std::tuple{std::string(kHostileName), 0.0, "runs/2.json"}}) {
    v1::SuiteRun* run = index.add_runs();
    run->set_target("postgresql");
    run->set_case_name(name);
    run->set_point(point);
    run->set_repetition(1);
    run->set_report(file);
    run->set_state("finished");
  }
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(index, &json, options).ok());
  std::ofstream(dir + "/suite.json") << json;
  const ProcessResult html =
      RunDbload({"suite", "report", dir, "--format", "html", "--output", Path("suite.html")});
  ASSERT_EQ(html.exit_code, 0) << html.Describe();
  std::vector<std::string> requests;
  const std::string dom = DumpDom(Path("suite.html"), &requests);
  ExpectCleanPage(dom, requests);
  for (const std::string chart : {"sweep-1-tps", "sweep-1-p95"}) {
    const std::string section = ChartSection(dom, chart);
    EXPECT_THAT(section, HasSubstr("<svg class=\"chart\""));
    EXPECT_EQ(Polylines(section), (std::map<std::string, size_t>{{"postgresql", 1}})) << chart;
    // The log-2 axis around 2 clients: ticks at 2 and 4, none at 0.
    EXPECT_THAT(section, HasSubstr("text-anchor=\"middle\">2</text>"));
    EXPECT_THAT(section, HasSubstr("text-anchor=\"middle\">4</text>"));
    EXPECT_THAT(section, Not(HasSubstr("text-anchor=\"middle\">0</text>")));
  }
  EXPECT_THAT(ChartSection(dom, "sweep-1-tps"), HasSubstr(">transactions/s</text>"));
  // The case without points is a bar, not a line against a load it does not have.
  EXPECT_EQ(CountOf(dom, "<div class=\"bar series-0"), 2u);  // throughput and mean latency
  EXPECT_THAT(dom, HasSubstr("@media print"));
}

TEST_F(ReportTest, ACoordinatorsReportRendersAsTheSavedFile) {
  // A coordinator that finds the report in its state dir (as after a restart) serves it; every
  // format of `report RUN --coordinator` is the saved file's.
  const v1::RunReport report = Load("a.json");
  ASSERT_FALSE(report.run_id().empty());
  const std::string state = Path("state");
  std::filesystem::create_directories(state + "/runs");
  std::filesystem::copy_file(Path("a.json"), state + "/runs/" + report.run_id() + ".json");
  testing::Child coordinator(
      {DBLOAD_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--state-dir", state});
  ASSERT_TRUE(coordinator.PumpUntil(
      [](const std::string& out) { return out.find('\n') != std::string::npos; },
      std::chrono::seconds(10)))
      << coordinator.out() << coordinator.err();
  const std::string first_line = coordinator.out().substr(0, coordinator.out().find('\n'));
  ASSERT_TRUE(absl::StartsWith(first_line, "listening on ")) << first_line;
  const std::string address = first_line.substr(std::strlen("listening on "));
  for (const std::string format : {"csv", "html"}) {
    const ProcessResult saved = RunDbload({"report", Path("a.json"), "--format", format});
    ASSERT_EQ(saved.exit_code, 0) << saved.Describe();
    const std::string output = Path(absl::StrCat("remote.", format));
    const ProcessResult remote = RunDbload({"report", report.run_id(), "--coordinator", address,
                                            "--format", format, "--output", output});
    ASSERT_EQ(remote.exit_code, 0) << remote.Describe();
    absl::StatusOr<std::string> written = testing::ReadFile(output);
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_EQ(*written, saved.out) << format;
  }
}

TEST_F(ReportTest, TheNetworkCheckCatchesARequest) {
  // The control for ExpectCleanPage: a page that asks for an image and a fetch is caught.
  const std::string page = Path("fetching.html");
  std::ofstream(page) << "<!DOCTYPE html><img src=\"http://example.invalid/x.png\"><script>"
                         "fetch('https://example.invalid/y').catch(function () {});</script>";
  std::vector<std::string> requests;
  DumpDom(page, &requests);
  EXPECT_THAT(requests, ::testing::Contains("http://example.invalid/x.png"));
}

TEST_F(ReportTest, BadInputIsRefusedNamingWhatIsWrong) {
  const auto refused = [](const std::vector<std::string>& args, const std::string& message) {
    const ProcessResult result = RunDbload(args);
    EXPECT_EQ(result.exit_code, 2) << result.Describe();
    EXPECT_THAT(result.err, HasSubstr(message)) << result.Describe();
    EXPECT_EQ(result.out, "");
  };
  refused({"compare", Path("a.json")}, "dbload compare: give at least 2 JSON report files");
  std::ofstream(Path("broken.json")) << "{\"format_version\": 1, \"executed\": ";
  refused({"compare", Path("a.json"), Path("broken.json")},
          absl::StrCat(Path("broken.json"), ": not a dbload report"));
  refused({"compare", Path("a.json"), Path("missing.json")},
          absl::StrCat(Path("missing.json"), ": cannot read"));
  refused({"report", Path("a.json"), "--format", "pdf"},
          "dbload report: --format: expected text, json, csv, html; got \"pdf\"");
  refused({"compare", Path("a.json"), Path("b.json"), "--format", "csv"},
          "dbload compare: --format: expected text, markdown, html; got \"csv\"");
  refused({"report", Path("a.json"), "--format", "html", "--output", Path("no/such/dir/a.html")},
          absl::StrCat("--output ", Path("no/such/dir/a.html"), ": cannot write"));
  // Reports of different scenarios, no stage in common.
  v1::RunReport other = Load("b.json");
  other.clear_stages();
  other.mutable_query_types(0)->set_name("insert_user");
  ASSERT_TRUE(SaveReportJson(Path("other.json"), other).ok());
  refused({"compare", Path("a.json"), Path("other.json")},
          absl::StrCat(Path("other.json"), " has nothing in common with the baseline ",
                       Path("a.json")));
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres"});
}
