// The suite report on hand-built indexes and run reports with known numbers: medians and
// spreads of repetitions, ratios to the first target, "no clear winner", the summary by category
// with the range of ratios, runs that are missing, failed or discarded (listed, never in a
// figure), generator-limited marks, and hostile names in Markdown and HTML.
#include "common/suite_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/report.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::testing::HasSubstr;
using ::testing::Not;

struct Figures {
  double rate = 0, mean = 0, p99 = 0;
  bool limited = false;
  std::string state = "finished";
};

v1::RunReport Report(const Figures& f) {
  v1::RunReport r;
  r.set_format_version(kReportFormatVersion);
  r.set_state(f.state);
  r.set_actual_rate(f.rate);
  r.mutable_response_time()->set_mean_ms(f.mean);
  r.mutable_response_time()->set_p50_ms(f.mean / 2);
  r.mutable_response_time()->set_p99_ms(f.p99);
  if (f.limited) {
    r.set_generator_limited(true);
    r.set_generator_limited_reason("agent CPU 97 % of its cores");
  }
  return r;
}

class SuiteBuilder {
 public:
  SuiteBuilder(std::vector<std::string> targets, uint32_t repetitions) {
    index_.set_format_version(1);
    index_.mutable_suite()->set_name("shop, scaled down");
    index_.set_started_at("2026-12-01T05:00:00Z");
    index_.set_finished_at("2026-12-01T05:10:00Z");
    for (const std::string& t : targets) index_.mutable_suite()->add_targets()->set_name(t);
    index_.mutable_suite()->mutable_settings()->set_repetitions(repetitions);
  }
  void Case(const std::string& name, const std::string& category, std::vector<double> points,
            bool closed) {
    v1::SuiteCase* c = index_.mutable_suite()->add_cases();
    c->set_name(name);
    c->set_category(category);
    if (closed) {
      c->mutable_plan()->mutable_load()->mutable_closed()->set_clients(1);
    } else {
      c->mutable_plan()->mutable_load()->mutable_open()->set_rate(1);
    }
    for (double p : points) c->add_points(p);
  }
  // `index_state` is the index's; the report's is f.state.
  void Run(const std::string& target, const std::string& name, double point, uint32_t repetition,
           const Figures& f, const std::string& index_state = "finished") {
    v1::SuiteRun* run = index_.add_runs();
    run->set_target(target);
    run->set_case_name(name);
    run->set_point(point);
    run->set_repetition(repetition);
    run->set_discarded(repetition == 0);
    run->set_state(index_state);
    run->set_report(absl::StrCat("runs/", index_.runs_size(), ".json"));
    reports_.push_back(Report(f));
  }
  v1::SuiteIndex& index() { return index_; }
  std::vector<v1::RunReport>& reports() { return reports_; }
  std::string Render(SuiteFormat format) { return RenderSuiteReport(index_, reports_, format); }

 private:
  v1::SuiteIndex index_;
  std::vector<v1::RunReport> reports_;
};

// Two targets, single runs: two insert cases (one with two client counts), one select case.
SuiteBuilder ThreeCases() {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("insert users", "inserts", {1, 2}, /*closed=*/true);
  b.Case("batch insert items", "inserts", {}, /*closed=*/false);
  b.Case("select users by id", "selects", {}, /*closed=*/false);
  b.Run("postgresql", "insert users", 1, 1, {.rate = 1000, .mean = 2, .p99 = 4});
  b.Run("postgresql", "insert users", 2, 1, {.rate = 1800, .mean = 2.2, .p99 = 5});
  b.Run("mariadb", "insert users", 1, 1, {.rate = 500, .mean = 4, .p99 = 16});
  b.Run("mariadb", "insert users", 2, 1, {.rate = 600, .mean = 6, .p99 = 30});
  b.Run("postgresql", "batch insert items", 0, 1, {.rate = 100, .mean = 10, .p99 = 20});
  b.Run("mariadb", "batch insert items", 0, 1, {.rate = 50, .mean = 10, .p99 = 10});
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 5000, .mean = 0.5, .p99 = 1});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 2500, .mean = 1, .p99 = 3});
  return b;
}

TEST(SpreadTest, MedianMinMax) {
  const Spread odd = SpreadOf({3, 1, 2});
  EXPECT_EQ(odd.median, 2);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 3);
  EXPECT_EQ(odd.n, 3u);
  EXPECT_EQ(SpreadOf({10, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(SpreadOf({}).n, 0u);
}

TEST(SpreadTest, NoClearWinnerOnlyWithinTheSpread) {
  const Spread base{.median = 1050, .min = 1000, .max = 1100, .n = 2};
  EXPECT_TRUE(NoClearWinner(base, {.median = 1130, .min = 1060, .max = 1200, .n = 2}));
  EXPECT_FALSE(NoClearWinner(base, {.median = 1300, .min = 1290, .max = 1310, .n = 2}));
  // Single runs have no spread: every difference counts.
  EXPECT_FALSE(NoClearWinner({.median = 1, .min = 1, .max = 1, .n = 1},
                             {.median = 1.01, .min = 1.01, .max = 1.01, .n = 1}));
}

TEST(SuiteReportTest, PerCaseRatiosAgainstTheFirstTarget) {
  SuiteBuilder b = ThreeCases();
  const SuiteTable table = BuildSuiteTable(b.index(), b.reports());
  ASSERT_EQ(table.points.size(), 4u);  // insert users × 2 points, batch, select
  EXPECT_EQ(table.points[1].point, 2);
  EXPECT_EQ(table.points[1].targets[1]->throughput.median, 600);

  const std::string text = b.Render(SuiteFormat::kText);
  EXPECT_THAT(text, HasSubstr("Baseline: postgresql (the first target)"));
  EXPECT_THAT(text, HasSubstr("\ninsert users (inserts), 1 client\n"));
  EXPECT_THAT(text, HasSubstr("\ninsert users (inserts), 2 clients\n"));
  EXPECT_THAT(text, HasSubstr("500 (2.00× lower)"));
  EXPECT_THAT(text, HasSubstr("16.000 (4.00× higher)"));
  EXPECT_THAT(text, HasSubstr("mariadb vs postgresql: 2.00× lower throughput, 2.00× higher mean "
                              "latency, 4.00× higher p99 latency\n"));
  EXPECT_THAT(text, HasSubstr("mariadb vs postgresql: 2.00× lower throughput, 2.00× higher mean "
                              "latency, 3.00× higher p99 latency\n"));  // select
  // Single runs: no spread, no "no clear winner".
  EXPECT_THAT(text, Not(HasSubstr("[")));
  EXPECT_THAT(text, Not(HasSubstr("no clear winner\n")));
  const std::string markdown = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(markdown, HasSubstr("| throughput (/s) | 1800 | 600 (3.00× lower) |\n"));
  EXPECT_THAT(markdown, HasSubstr("#### insert users (inserts), 2 clients\n"));
}

TEST(SuiteReportTest, SummaryByCategoryUsesTheBestThroughputAndGivesTheRange) {
  SuiteBuilder b = ThreeCases();
  const std::string text = b.Render(SuiteFormat::kText);
  // inserts: insert users at 2 clients on both (1800 vs 600: ×1/3, mean 6/2.2, p99 30/5) and
  // batch insert items (50/100, mean equal, p99 10/20).
  EXPECT_THAT(text, HasSubstr("  inserts (2 cases: insert users, batch insert items)\n"
                              "    mariadb vs postgresql: 2.00×–3.00× lower throughput, "
                              "1.00×–2.73× higher mean latency, from 2.00× lower to 6.00× higher "
                              "p99 latency (best throughput: insert users at 2 clients on "
                              "both)\n"));
  EXPECT_THAT(text, HasSubstr("  selects (1 case: select users by id)\n"
                              "    mariadb vs postgresql: 2.00× lower throughput, 2.00× higher "
                              "mean latency, 3.00× higher p99 latency\n"));
  // Categories in WORKLOADS.md's order whatever the cases' order.
  EXPECT_LT(text.find("  inserts ("), text.find("  selects ("));
  const std::string markdown = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(markdown, HasSubstr("| selects | select users by id | mariadb | 2.00× lower "
                                  "throughput | 2.00× higher mean latency | 3.00× higher p99 "
                                  "latency |  |\n"));
}

TEST(SuiteReportTest, SummaryComparesEachTargetAtItsOwnBestPoint) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("insert", "inserts", {1, 4}, /*closed=*/true);
  b.Run("postgresql", "insert", 1, 1, {.rate = 100, .mean = 1, .p99 = 2});
  b.Run("postgresql", "insert", 4, 1, {.rate = 300, .mean = 2, .p99 = 4});
  b.Run("mariadb", "insert", 1, 1, {.rate = 200, .mean = 1, .p99 = 2});
  b.Run("mariadb", "insert", 4, 1, {.rate = 150, .mean = 5, .p99 = 10});
  // postgresql at 4 clients (300/s) against mariadb at 1 client (200/s).
  EXPECT_THAT(b.Render(SuiteFormat::kText),
              HasSubstr("    mariadb vs postgresql: 1.50× lower throughput, 2.00× lower mean "
                        "latency, 2.00× lower p99 latency (best throughput: insert at 1 client "
                        "(mariadb) and 4 clients (postgresql))\n"));
}

TEST(SuiteReportTest, RepetitionsGiveMedianSpreadAndNoClearWinner) {
  SuiteBuilder b({"postgresql", "mariadb"}, 2);
  b.Case("select users by id", "selects", {}, false);
  // A warm-up run with numbers that would move every median: discarded.
  b.Run("postgresql", "select users by id", 0, 0, {.rate = 99999, .mean = 99, .p99 = 999});
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 1000, .mean = 1.0, .p99 = 2});
  b.Run("postgresql", "select users by id", 0, 2, {.rate = 1100, .mean = 1.2, .p99 = 3});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 1060, .mean = 3.0, .p99 = 8});
  b.Run("mariadb", "select users by id", 0, 2, {.rate = 1200, .mean = 3.2, .p99 = 9});
  const SuiteTable table = BuildSuiteTable(b.index(), b.reports());
  ASSERT_EQ(table.points.size(), 1u);
  const PointFigures& pg = *table.points[0].targets[0];
  EXPECT_EQ(pg.throughput.n, 2u);
  EXPECT_EQ(pg.throughput.median, 1050);
  EXPECT_DOUBLE_EQ(pg.mean_ms.median, 1.1);
  EXPECT_EQ(table.runs[0].status, "discarded (warm-up)");
  EXPECT_FALSE(table.runs[0].measured);

  const std::string text = b.Render(SuiteFormat::kText);
  EXPECT_THAT(text, HasSubstr("Repetitions: up to 2 measured runs per case, point and target"));
  EXPECT_THAT(text, HasSubstr("1050 [1000–1100]"));
  // 1130 / 1050 = 1.08, within the spread (140): no clear winner; mean 3.1 / 1.1 is clear.
  EXPECT_THAT(text, HasSubstr("1130 [1060–1200] (1.08× higher, no clear winner)"));
  EXPECT_THAT(text, HasSubstr("3.100 [3.000–3.200] (2.82× higher)"));
  EXPECT_THAT(text, HasSubstr("mariadb vs postgresql: 1.08× higher throughput (no clear winner), "
                              "2.82× higher mean latency, 3.40× higher p99 latency"));
  EXPECT_THAT(text, HasSubstr("(no clear winner on throughput in 1 of 1 cases)"));
  EXPECT_THAT(text, HasSubstr("warm-up | discarded (warm-up)"));
  EXPECT_THAT(text, Not(HasSubstr("99999")));
  EXPECT_THAT(text, Not(HasSubstr("999.0")));
}

TEST(SuiteReportTest, MissingFailedAndUnfinishedRunsAreListedNotCounted) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("delete orders", "deletes", {}, false);
  b.Run("postgresql", "delete orders", 0, 1, {.rate = 800, .mean = 1, .p99 = 2});
  b.Run("mariadb", "delete orders", 0, 1, {.rate = 7777, .mean = 1, .p99 = 2}, "failed");
  b.Run("mariadb", "delete orders", 0, 1,
        {.rate = 6666, .mean = 1, .p99 = 2, .limited = false, .state = "aborted"});
  b.Run("mariadb", "delete orders", 0, 1, {}, "pending");
  const std::string text = b.Render(SuiteFormat::kText);
  EXPECT_THAT(text, HasSubstr("Runs: 4 (1 measured, 0 discarded warm-up, 3 missing or not "
                              "finished)"));
  EXPECT_THAT(text, HasSubstr("| failed | runs/2.json"));
  EXPECT_THAT(text, HasSubstr("| report state: aborted | runs/3.json"));
  EXPECT_THAT(text, HasSubstr("| pending | runs/4.json"));
  EXPECT_THAT(text, Not(HasSubstr("7777")));
  EXPECT_THAT(text, Not(HasSubstr("6666")));
  // mariadb has no figure for the case: a dash, and the category says so.
  EXPECT_THAT(text, HasSubstr("—"));
  EXPECT_THAT(text, HasSubstr("mariadb vs postgresql: no case with figures on both sides (1 of 1 "
                              "cases without figures on both sides)"));
}

TEST(SuiteReportTest, GeneratorLimitedFiguresAreMarked) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("mixed by id", "mixed", {}, false);
  b.Run("postgresql", "mixed by id", 0, 1, {.rate = 900, .mean = 1, .p99 = 2, .limited = true});
  b.Run("mariadb", "mixed by id", 0, 1, {.rate = 300, .mean = 3, .p99 = 6});
  const std::string text = b.Render(SuiteFormat::kText);
  EXPECT_THAT(text, HasSubstr("measured, GENERATOR-LIMITED: agent CPU 97 % of its cores"));
  EXPECT_THAT(text, HasSubstr("1 (1 GENERATOR-LIMITED)"));
  EXPECT_THAT(text, HasSubstr("3.00× higher p99 latency — GENERATOR-LIMITED runs in these "
                              "figures"));
  EXPECT_THAT(text, HasSubstr("(GENERATOR-LIMITED runs in 1 of 1 cases)"));
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, HasSubstr("<tr class=\"generator-limited\">"));
  EXPECT_THAT(html, HasSubstr("\"flags\":[true]"));
}

TEST(SuiteReportTest, HostileNamesStayText) {
  const std::string target = "<script>alert(1)</script>";
  const std::string name = "</script><img src=x onerror=alert(1)>|x";
  SuiteBuilder b({"postgresql", target}, 1);
  b.Case(name, "selects", {}, false);
  b.Run("postgresql", name, 0, 1, {.rate = 100, .mean = 1, .p99 = 2});
  b.Run(target, name, 0, 1, {.rate = 200, .mean = 1, .p99 = 2});
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;|x"));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  // Inside the embedded chart data the names are JSON with < and > escaped.
  EXPECT_THAT(html, HasSubstr("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"));
  const std::string markdown = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(markdown, HasSubstr("\\</script\\>\\<img src=x onerror=alert(1)\\>\\|x"));
}

// A p99 with what it rests on: `beyond` samples beyond it, its 95 % interval [low, high].
void SetP99Basis(v1::RunReport& r, uint64_t beyond, double low, double high) {
  v1::PercentileBasis* b = r.mutable_response_time()->add_percentiles();
  b->set_percentile(99);
  b->set_value_ms(r.response_time().p99_ms());
  b->set_samples_beyond(beyond);
  b->set_ci_low_ms(low);
  b->set_ci_high_ms(high);
  b->set_few_samples(beyond < 10);
}

TEST(SuiteReportTest, P99InsideBothIntervalsIsNoDifferenceAndThinP99IsMarked) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("select users by id", "selects", {}, false);
  b.Case("insert users", "inserts", {}, false);
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 1000, .mean = 1, .p99 = 4});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 1000, .mean = 1, .p99 = 4.4});
  b.Run("postgresql", "insert users", 0, 1, {.rate = 1000, .mean = 1, .p99 = 4});
  b.Run("mariadb", "insert users", 0, 1, {.rate = 1000, .mean = 1, .p99 = 8});
  SetP99Basis(b.reports()[0], 100, 3.5, 4.6);  // 4.4 inside, and 4 inside [4.1, 4.9]
  SetP99Basis(b.reports()[1], 100, 3.9, 4.9);
  SetP99Basis(b.reports()[2], 100, 3.9, 4.1);
  SetP99Basis(b.reports()[3], 3, 7.5, 9);  // thin
  const std::string text = b.Render(SuiteFormat::kText);
  EXPECT_THAT(text, HasSubstr("4.400 (within the 95% confidence intervals)"));
  EXPECT_THAT(text, HasSubstr("p99 latency within the 95% confidence intervals\n"));
  EXPECT_THAT(text, Not(HasSubstr("1.10× higher p99")));  // nor in the summary by category
  EXPECT_THAT(text, HasSubstr("8.000* (2.00× higher)"));
  EXPECT_THAT(text, HasSubstr("2.00× higher p99 latency*"));
  EXPECT_THAT(text, HasSubstr(kFewSamplesNote));
  EXPECT_THAT(b.Render(SuiteFormat::kHtml), HasSubstr("within the 95% confidence intervals"));
  EXPECT_THAT(b.Render(SuiteFormat::kMarkdown), HasSubstr("| 8.000* (2.00× higher) |"));
}

TEST(SuiteReportTest, HtmlHasChartsPerCaseWithEveryPoint) {
  SuiteBuilder b = ThreeCases();
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, HasSubstr("data-chart=\"case-1-throughput\""));
  EXPECT_THAT(html, HasSubstr("data-chart=\"case-1-latency\""));
  EXPECT_THAT(html, HasSubstr("data-chart=\"case-3-latency\""));
  // Throughput vs clients: both points per target, medians as measured.
  EXPECT_THAT(html, HasSubstr("{\"name\":\"postgresql\",\"x\":[1,2],\"y\":[1000,1800]"));
  // Latency vs achieved throughput: x is the throughput, y the p50 and p99.
  EXPECT_THAT(html, HasSubstr("{\"name\":\"mariadb p99\",\"x\":[500,600],\"y\":[16,30]"));
  // Bars scaled to the highest throughput of the point.
  EXPECT_THAT(html, HasSubstr("style=\"width:33.3%\""));
  EXPECT_THAT(html, HasSubstr("<h2>Summary by category</h2>"));
}

TEST(SuiteReportTest, SaturationPerQuerySideBySide) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("insert users", "inserts", {}, false);
  b.Run("postgresql", "insert users", 0, 1, {.rate = 100, .mean = 1, .p99 = 2});
  b.Run("mariadb", "insert users", 0, 1, {.rate = 50, .mean = 1, .p99 = 2});
  const auto add = [](v1::RunReport& r, const std::string& source, const std::string& name,
                      double per_query) {
    v1::SaturationDelta* d = r.add_saturation();
    d->set_source(source);
    d->set_name(name);
    d->set_per_query(per_query);
  };
  add(b.reports()[0], "postgresql", "written_bytes", 8192);
  add(b.reports()[0], "postgresql", "xact_commit", 1);  // the server's own name: not compared
  add(b.reports()[0], "process", "cpu_seconds", 0.00012);
  add(b.reports()[1], "mysql", "written_bytes", 16384);
  add(b.reports()[1], "process", "cpu_seconds", 0.00031);
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, HasSubstr("<tr><td class=\"text\">written_bytes</td><td>8192</td><td>16384"
                              "</td></tr>"));
  EXPECT_THAT(html, HasSubstr("<tr><td class=\"text\">process/cpu_seconds</td><td>0.00012</td>"
                              "<td>0.00031</td></tr>"));
  EXPECT_THAT(html, Not(HasSubstr("xact_commit")));
}

class LoadSuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/suite_report_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + name).parent_path());
    std::ofstream(dir_ + "/" + name) << content;
  }
  std::string dir_;
};

TEST_F(LoadSuiteTest, ErrorsNameTheFile) {
  absl::StatusOr<LoadedSuite> missing = LoadSuite(dir_);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(dir_ + "/suite.json: cannot read"));
  Write("suite.json", "{\"format_version\": 1, \"runs\": [");
  absl::StatusOr<LoadedSuite> broken = LoadSuite(dir_);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.status().message(), HasSubstr(dir_ + "/suite.json: not a dbload suite index"));
  Write("suite.json", "{\"format_version\": 7}");
  absl::StatusOr<LoadedSuite> version = LoadSuite(dir_);
  ASSERT_FALSE(version.ok());
  EXPECT_THAT(version.status().message(), HasSubstr("suite index format version 7"));
}

TEST_F(LoadSuiteTest, AMissingReportIsShownAsSuch) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("select users by id", "selects", {}, false);
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 5000, .mean = 0.5, .p99 = 1});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 2500, .mean = 1, .p99 = 3});
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(b.index(), &json, options).ok());
  Write("suite.json", json);
  Write("runs/1.json", RenderReportJson(b.reports()[0]));  // runs/2.json never written
  absl::StatusOr<LoadedSuite> suite = LoadSuite(dir_);
  ASSERT_TRUE(suite.ok()) << suite.status();
  ASSERT_EQ(suite->reports.size(), 2u);
  EXPECT_EQ(suite->reports[0].actual_rate(), 5000);
  EXPECT_EQ(suite->problems[0], "");
  EXPECT_THAT(suite->problems[1], HasSubstr(dir_ + "/runs/2.json: cannot read"));
  const std::string text =
      RenderSuiteReport(suite->index, suite->reports, SuiteFormat::kText, suite->problems);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("| report unreadable: ", dir_,
                                           "/runs/2.json: cannot read the file | runs/2.json")));
  EXPECT_THAT(text, HasSubstr("Runs: 2 (1 measured, 0 discarded warm-up, 1 missing"));
  EXPECT_THAT(text, Not(HasSubstr("2500")));
}

}  // namespace
}  // namespace dbload
