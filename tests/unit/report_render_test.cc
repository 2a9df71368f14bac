// The report's shareable forms on hand-built reports with known numbers: CSV (RFC 4180
// quoting, a row for every scope and query type), the comparison (ratios, matching of stages,
// refusals), and the HTML page (every report string inert, no network, the spectrum's points).
// Its length: the three renderers' cases share the hand-built reports of this file.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/histogram.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "report/report_csv.h"
#include "report/report_html.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHostile[] = "</script><img src=x onerror=alert(1)>";

v1::LatencySummary Latency(double mean_ms, double p50_ms, double p99_ms, double p999_ms) {
  v1::LatencySummary s;
  s.set_count(1000);
  s.set_min_ms(p50_ms / 10);
  s.set_mean_ms(mean_ms);
  s.set_p50_ms(p50_ms);
  s.set_p75_ms(p50_ms * 1.5);
  s.set_p90_ms(p50_ms * 2);
  s.set_p95_ms(p50_ms * 3);
  s.set_p99_ms(p99_ms);
  s.set_p999_ms(p999_ms);
  s.set_p9999_ms(p999_ms * 2);
  s.set_max_ms(p999_ms * 3);
  s.set_stddev_ms(mean_ms / 2);
  return s;
}

void SetQueryType(v1::QueryTypeReport* q, const std::string& name, uint64_t executed,
                  uint64_t errors, const v1::LatencySummary& latency) {
  q->set_name(name);
  q->set_executed(executed);
  q->set_errors(errors);
  *q->mutable_response_time() = latency;
}

// One query type, a whole run only.
v1::RunReport SimpleReport(const std::string& name, double rate, double mean_ms, double p99_ms,
                           uint64_t errors = 0) {
  v1::RunReport r;
  r.set_format_version(kReportFormatVersion);
  r.mutable_plan()->set_name(name);
  r.set_queries_duration_s(10);
  r.set_total_duration_s(10);
  r.set_executed(static_cast<uint64_t>(rate * 10));
  r.set_errors(errors);
  r.set_actual_rate(rate);
  *r.mutable_response_time() = Latency(mean_ms, mean_ms * 0.8, p99_ms, p99_ms * 2);
  SetQueryType(r.add_query_types(), "insert_user", r.executed(), errors, r.response_time());
  return r;
}

// ---------------------------------------------------------------------------------------------
// CSV

// RFC 4180 records (quoted fields may hold commas, quotes and line breaks).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      row.push_back(field);
      field.clear();
      rows.push_back(row);
      row.clear();
      ++i;
    } else {
      field.push_back(c);
    }
  }
  EXPECT_TRUE(field.empty() && row.empty()) << "the last record must end with CRLF";
  return rows;
}

TEST(CsvTest, FieldsAreQuotedOnlyWhenRfc4180SaysSo) {
  EXPECT_EQ(CsvField("plain name"), "plain name");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(CsvField(""), "");
}

TEST(CsvTest, OneRowPerScopeAndQueryTypeWithTheReportsNumbers) {
  v1::RunReport r;
  r.set_queries_duration_s(20);
  r.set_executed(3000);
  r.set_errors(7);
  r.set_wanted_rate(200);
  r.set_actual_rate(150);
  r.set_generator_limited(true);
  *r.mutable_response_time() = Latency(2, 1.5, 9, 12);
  SetQueryType(r.add_query_types(), "read, \"fast\"", 2000, 3, Latency(1, 0.9, 5, 6));
  SetQueryType(r.add_query_types(), "write", 1000, 4, Latency(4, 3, 15, 20));
  const std::vector<std::string> stage_names = {"warm\nup", "hold"};
  for (int i = 0; i < 2; ++i) {
    v1::StageReport* s = r.add_stages();
    s->set_name(stage_names[i]);
    s->set_index(i + 1);
    s->set_duration_s(10);
    s->set_executed(1500);
    s->set_actual_rate(150);
    s->set_wanted_rate(100 * (i + 1));
    s->set_generator_limited(i == 1);
    s->set_pool_limited(i == 0);
    *s->mutable_response_time() = Latency(2 + i, 1.5, 9, 12);
    SetQueryType(s->add_query_types(), "read, \"fast\"", 1000, 1, Latency(1, 0.9, 5, 6));
    SetQueryType(s->add_query_types(), "write", 500, 2, Latency(4, 3, 15, 20));
  }
  const std::string csv = RenderReportCsv(r);
  const auto rows = ParseCsv(csv);
  ASSERT_EQ(rows.size(), 1u + 3 * 3);  // header, then (all + 2 query types) × (run + 2 stages)
  EXPECT_EQ(rows[0][0], "scope");
  EXPECT_EQ(rows[0][18], "generator_limited");
  EXPECT_EQ(rows[0][19], "pool_limited");
  EXPECT_EQ(rows[0][20], "database_stalled");
  EXPECT_EQ(rows[0][21], "dispatch_lag_share");
  // Then per percentile its samples beyond and interval, and the thin ones.
  EXPECT_EQ(rows[0][22], "p50_samples_beyond");
  EXPECT_EQ(rows[0][22 + 7 * 3], "few_samples");
  EXPECT_EQ(rows[0][22 + 7 * 3 + 1], "ignored");
  EXPECT_EQ(rows[0][22 + 7 * 3 + 2], "statements");
  EXPECT_EQ(rows[0][rows[0].size() - 2], "retries");
  EXPECT_EQ(rows[0].back(), "rolled_back");
  for (const auto& row : rows) EXPECT_EQ(row.size(), 22u + 7 * 3 + 5);
  std::vector<std::string> scopes, types;
  for (size_t i = 1; i < rows.size(); ++i) {
    scopes.push_back(rows[i][0]);
    types.push_back(rows[i][1]);
  }
  EXPECT_THAT(scopes,
              ElementsAre("run", "run", "run", "stage 1: warm\nup", "stage 1: warm\nup",
                          "stage 1: warm\nup", "stage 2: hold", "stage 2: hold", "stage 2: hold"));
  EXPECT_THAT(types, ElementsAre("all", "read, \"fast\"", "write", "all", "read, \"fast\"", "write",
                                 "all", "read, \"fast\"", "write"));
  // run / all: the report's own numbers.
  EXPECT_THAT(std::vector<std::string>(rows[1].begin(), rows[1].begin() + 22),
              ElementsAre("run", "all", "3000", "7", "200.000", "150.000", "20.000", "0.150000",
                          "2.000000", "36.000000", "1.000000", "1.500000", "2.250000", "3.000000",
                          "4.500000", "9.000000", "12.000000", "24.000000", "true", "false",
                          "false", "0.0000"));
  // A query type: its executed over the scope's duration, no wanted rate of its own.
  EXPECT_EQ(rows[3][2], "1000");
  EXPECT_EQ(rows[3][3], "4");
  EXPECT_EQ(rows[3][4], "");
  EXPECT_EQ(rows[3][5], "50.000");
  EXPECT_EQ(rows[3][11], "3.000000");  // p50
  // Stages: their own numbers and generator- and pool-limited flags.
  EXPECT_EQ(rows[4][4], "100.000");
  EXPECT_EQ(rows[4][8], "2.000000");
  EXPECT_EQ(rows[4][18], "false");
  EXPECT_EQ(rows[4][19], "true");
  EXPECT_EQ(rows[6][19], "true");  // a query type row carries its scope's flags
  EXPECT_EQ(rows[7][4], "200.000");
  EXPECT_EQ(rows[7][8], "3.000000");
  EXPECT_EQ(rows[7][18], "true");
  EXPECT_EQ(rows[7][19], "false");
  EXPECT_EQ(rows[5][5], "100.000");  // 1000 in 10 s
}

// ---------------------------------------------------------------------------------------------
// Comparison

TEST(CompareTest, RatioPhrasesAsThePublishedSummaries) {
  EXPECT_EQ(RatioPhrase(4383, 21338, "throughput"), "4.87× higher throughput");
  EXPECT_EQ(RatioPhrase(21338, 4383, "throughput"), "4.87× lower throughput");
  EXPECT_EQ(RatioPhrase(1.386, 0.1234, "mean latency"), "11.23× lower mean latency");
  EXPECT_EQ(RatioPhrase(2, 2.001, "p99 latency"), "same p99 latency");
  EXPECT_EQ(RatioPhrase(0, 5, "throughput"), "throughput: not comparable (0 in the baseline)");
  EXPECT_EQ(RatioPhrase(5, 0, "throughput"), "throughput: not comparable (0 in this report)");
  EXPECT_EQ(RatioPhrase(0, 0, "throughput"), "same throughput (0)");
}

TEST(CompareTest, WholeRunRatiosFromKnownNumbers) {
  const std::vector<ReportFile> reports = {
      {.path = "mysql.json", .report = SimpleReport("mysql", 4383, 1.386, 42.8, 2)},
      {.path = "pg.json", .report = SimpleReport("pg", 21338, 0.1234, 4.0)}};
  absl::StatusOr<Comparison> c = CompareReports(reports);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->labels, ElementsAre("mysql", "pg"));
  ASSERT_EQ(c->cases.size(), 1u);  // one query type: no per-type rows
  EXPECT_EQ(c->cases[0].Title(), "whole run");
  ASSERT_TRUE(c->cases[0].numbers[1].has_value());
  EXPECT_DOUBLE_EQ(c->cases[0].numbers[1]->throughput, 21338);

  const std::string text = RenderComparisonText(*c);
  EXPECT_THAT(text, HasSubstr("pg vs mysql: 4.87× higher throughput, 11.23× lower mean latency, "
                              "11.23× lower p50 latency, 10.70× lower p99 latency, 10.70× lower "
                              "p99.9 latency; errors 0 vs 2"));
  EXPECT_THAT(text, HasSubstr("21338 (4.87× higher)"));
  EXPECT_THAT(text, HasSubstr("baseline: mysql"));
  const std::string markdown = RenderComparisonMarkdown(*c);
  EXPECT_THAT(markdown, HasSubstr("| throughput (/s) | 4383 | 21338 (4.87× higher) |"));
  EXPECT_THAT(markdown, HasSubstr("| mean (ms) | 1.386 | 0.1234 (11.23× lower) |"));
  EXPECT_THAT(markdown, HasSubstr("| errors | 2 | 0 |"));
  EXPECT_THAT(markdown, HasSubstr("4.87× higher throughput, 11.23× lower mean latency"));
}

TEST(CompareTest, StagesMatchByNameAndQueryTypesWhereBothHaveThem) {
  auto staged = [](const std::string& name, std::vector<std::string> stages, double rate) {
    v1::RunReport r = SimpleReport(name, rate, 1, 5);
    SetQueryType(r.add_query_types(), "select_user", 10, 0, Latency(1, 1, 2, 3));
    for (size_t i = 0; i < stages.size(); ++i) {
      v1::StageReport* s = r.add_stages();
      s->set_name(stages[i]);
      s->set_index(i + 1);
      s->set_duration_s(5);
      s->set_actual_rate(rate * (i + 1));
      *s->mutable_response_time() = Latency(1, 1, 2, 3);
      SetQueryType(s->add_query_types(), "insert_user", 10, 0, Latency(1, 1, 2, 3));
    }
    return r;
  };
  const std::vector<ReportFile> reports = {
      {.path = "a/run.json", .report = staged("same", {"warm", "hold"}, 100)},
      {.path = "b/other.json", .report = staged("same", {"hold", "extra"}, 300)}};
  absl::StatusOr<Comparison> c = CompareReports(reports);
  ASSERT_TRUE(c.ok()) << c.status();
  // The plan names clash: the file names label the columns.
  EXPECT_THAT(c->labels, ElementsAre("run.json", "other.json"));
  std::vector<std::string> titles;
  for (const auto& row : c->cases) titles.push_back(row.Title());
  EXPECT_THAT(titles, ElementsAre("whole run", "whole run, query type insert_user",
                                  "whole run, query type select_user", "stage warm",
                                  "stage warm, query type insert_user", "stage hold",
                                  "stage hold, query type insert_user", "stage extra",
                                  "stage extra, query type insert_user"));
  // warm: only the baseline has it; hold is stage 2 of a and stage 1 of b.
  EXPECT_FALSE(c->cases[3].numbers[1].has_value());
  ASSERT_TRUE(c->cases[5].numbers[0] && c->cases[5].numbers[1]);
  EXPECT_DOUBLE_EQ(c->cases[5].numbers[0]->throughput, 200);
  EXPECT_DOUBLE_EQ(c->cases[5].numbers[1]->throughput, 300);
  EXPECT_FALSE(c->cases[7].numbers[0].has_value());
  EXPECT_THAT(RenderComparisonText(*c),
              HasSubstr("other.json vs run.json: 1.50× higher throughput, same mean latency"));
  // Per query type: executed over the scope's duration (10 in 5 s).
  EXPECT_DOUBLE_EQ(c->cases[6].numbers[0]->throughput, 2);
  EXPECT_THAT(RenderComparisonMarkdown(*c), HasSubstr("| throughput (/s) | — | 600 |"));
}

TEST(CompareTest, RefusesFewerThanTwoAndReportsWithNothingInCommon) {
  absl::StatusOr<Comparison> one =
      CompareReports({{.path = "a.json", .report = SimpleReport("a", 1, 1, 1)}});
  EXPECT_FALSE(one.ok());
  EXPECT_THAT(one.status().message(), HasSubstr("at least 2 reports, got 1"));

  v1::RunReport other = SimpleReport("b", 1, 1, 1);
  other.mutable_query_types(0)->set_name("select_user");
  absl::StatusOr<Comparison> apart =
      CompareReports({{.path = "a.json", .report = SimpleReport("a", 1, 1, 1)},
                      {.path = "b.json", .report = other}});
  ASSERT_FALSE(apart.ok());
  EXPECT_THAT(apart.status().message(),
              HasSubstr("b.json has nothing in common with the baseline a.json"));
  EXPECT_THAT(apart.status().message(), HasSubstr("query types: select_user vs insert_user"));
}

TEST(CompareTest, LoadReportFileNamesTheFile) {
  char pattern[] = "/tmp/report_render_test.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << "{ not json";
  absl::StatusOr<ReportFile> parsed = LoadReportFile(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr(bad + ": not a dbload report"));
  absl::StatusOr<ReportFile> missing = LoadReportFile(dir + "/missing.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr(dir + "/missing.json: cannot read"));
  const std::string good = dir + "/good.json";
  ASSERT_TRUE(SaveReportJson(good, SimpleReport("a", 5, 1, 2)).ok());
  absl::StatusOr<ReportFile> loaded = LoadReportFile(good);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->report.plan().name(), "a");
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// HTML

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(HtmlTest, EveryReportStringIsInert) {
  v1::RunReport r = SimpleReport(kHostile, 100, 1, 5);
  r.mutable_query_types(0)->set_name(kHostile);
  r.set_run_id(kHostile);
  r.set_end_reason(kHostile);
  r.set_probe_error(kHostile);
  r.set_generator_limited(true);
  r.set_generator_limited_reason(kHostile);
  r.mutable_manifest()->set_server_version(kHostile);
  (*r.mutable_manifest()->mutable_server_settings())[kHostile] = kHostile;
  r.mutable_manifest()->add_agents()->set_name(kHostile);
  v1::StageReport* stage = r.add_stages();
  stage->set_name(kHostile);
  stage->set_index(1);
  stage->set_generator_limited(true);
  stage->set_generator_limited_reason(kHostile);
  v1::QueryPlan* plan = r.add_explains();
  plan->set_query_type(kHostile);
  plan->set_statement(absl::StrCat("SELECT '", kHostile, "'"));
  plan->set_plan(kHostile);
  v1::SaturationDelta* delta = r.add_saturation();
  delta->set_source(kHostile);
  delta->set_name("x");
  v1::ProbeSample* sample = r.add_probe_samples();
  (*sample->mutable_values())[absl::StrCat(kHostile, "/x")] = 1;
  for (int i = 0; i < 2; ++i) {
    v1::IntervalSample* s = r.add_intervals();
    s->set_elapsed_s(i + 1);
    s->set_stage(i + 1);
  }
  Histogram h;
  h.Record(1000);
  h.ToProto(r.mutable_query_types(0)->mutable_response_histogram());

  const std::string page = RenderReportHtml(r);
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  EXPECT_THAT(page, HasSubstr("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(page, HasSubstr("\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"));
  // Only the page's own three script elements open and close.
  EXPECT_EQ(Count(page, "<script"), 3u);
  EXPECT_EQ(Count(page, "</script>"), 3u);
}

TEST(HtmlTest, SelfContainedAndEmptyDataGivesNotes) {
  v1::RunReport r = SimpleReport("empty", 0, 0, 0);
  r.clear_query_types();
  const std::string page = RenderReportHtml(r);
  // Nothing is fetched: the only URL is the SVG namespace, and the policy forbids loads.
  EXPECT_EQ(Count(page, "://"), 1u);
  EXPECT_THAT(page, HasSubstr("http://www.w3.org/2000/svg"));
  EXPECT_THAT(page, HasSubstr("default-src 'none'"));
  EXPECT_THAT(page, Not(HasSubstr(" src=")));
  EXPECT_THAT(page, Not(HasSubstr(" href=")));
  EXPECT_THAT(page, HasSubstr("No database probe data in this report"));
  EXPECT_THAT(page, HasSubstr("\"series\":[]"));  // no spectrum without histograms
  EXPECT_THAT(page, HasSubstr("No intervals in this report."));
}

TEST(HtmlTest, ManifestStagesAndPlansAreShown) {
  v1::RunReport r = SimpleReport("shown", 100, 1, 5);
  v1::RunManifest& m = *r.mutable_manifest();
  m.set_dbload_version("9.9.9");
  m.set_server_product("PostgreSQL");
  m.set_server_version("PostgreSQL 15.14 on x86_64");
  m.set_seed(42);
  (*m.mutable_server_settings())["shared_buffers"] = "256MB";
  (*m.mutable_server_settings())["fsync"] = "off";
  v1::RunManifest::AgentHost* agent = m.add_agents();
  agent->set_name("agent-1");
  agent->set_host("loadbox");
  agent->set_cores(8);
  agent->set_version("0.1.0");
  agent->set_target_address("10.1.2.3:5432");
  for (int i = 0; i < 2; ++i) {
    v1::StageReport* s = r.add_stages();
    s->set_name(i == 0 ? "steady" : "peak");
    s->set_index(i + 1);
    s->set_generator_limited(i == 1);
    s->set_generator_limited_reason(i == 1 ? "agent-1 CPU 97% over 90%" : "");
  }
  v1::QueryPlan* plan = r.mutable_stages(1)->add_explains();
  plan->set_query_type("insert_user");
  plan->set_statement("INSERT INTO users VALUES (1)");
  plan->set_plan("Insert on users\n  ->  Result");
  const std::string page = RenderReportHtml(r);
  EXPECT_THAT(page, HasSubstr("<h2>Manifest</h2>"));
  EXPECT_THAT(page,
              HasSubstr("<tr><th>server version</th><td>PostgreSQL 15.14 on x86_64</td></tr>"));
  EXPECT_THAT(page, HasSubstr("<tr><th>seed</th><td>42</td></tr>"));
  // Settings sorted by name.
  EXPECT_LT(page.find("<th>fsync</th>"), page.find("<th>shared_buffers</th>"));
  EXPECT_THAT(page, HasSubstr("<td class=\"text\">loadbox</td><td>8</td>"));
  // Where the agent's load went: the address it dialed after its --allow-target check.
  EXPECT_THAT(page, HasSubstr("<td class=\"text\">0.1.0</td><td class=\"text\">10.1.2.3:5432</td>"));
  EXPECT_THAT(RenderReportText(r), HasSubstr("\nDialed: 10.1.2.3:5432 (every agent)\n"));
  EXPECT_THAT(page, HasSubstr("<tr class=\"generator-limited\"><td>2</td><td class=\"text\">peak"));
  EXPECT_THAT(page, HasSubstr("limited: agent-1 CPU 97% over 90%</td>"));
  EXPECT_EQ(Count(page, "class=\"generator-limited\""), 1u);
  EXPECT_THAT(page, HasSubstr("<h3>Stage 2: peak</h3>\n<h3>insert_user</h3>\n"
                              "<pre class=\"statement\">INSERT INTO users VALUES (1)</pre>\n"
                              "<pre class=\"plan\">Insert on users\n  -&gt;  Result</pre>"));
  // Without a manifest there is no empty section.
  EXPECT_THAT(RenderReportHtml(SimpleReport("bare", 1, 1, 1)), Not(HasSubstr("Manifest")));
}

// Probe counters are per executed transaction; failed ones' share is shown apart, per scope.
TEST(TextTest, ProbeFiguresShowTheFailedTransactionsShareApart) {
  v1::RunReport r;
  r.set_executed(900);
  r.set_errors(100);
  v1::StageReport* stage = r.add_stages();
  stage->set_index(1);
  stage->set_name("only");
  stage->set_executed(900);
  stage->set_errors(100);
  for (auto* deltas : {r.mutable_saturation(), stage->mutable_saturation()}) {
    v1::SaturationDelta* delta = deltas->Add();
    delta->set_source("postgresql");
    delta->set_name("commits");
    delta->set_delta(1000);
    delta->set_per_query(1000.0 / 900);
  }
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("per executed transaction"));
  EXPECT_THAT(text, ::testing::ContainsRegex("failed transactions \\(share, not divided\\) +10% +10%"));
  EXPECT_THAT(text, ::testing::ContainsRegex("postgresql/commits +1.111 +1.111"));
  EXPECT_THAT(RenderReportHtml(r),
              HasSubstr("Failed transactions, as a share of those attempted: run 10%, stage 1 10%."));
  r.set_errors(0);
  r.mutable_stages(0)->set_errors(0);
  EXPECT_THAT(RenderReportText(r), Not(HasSubstr("failed transactions")));
}

TEST(TextTest, PlansAreListedPerStageWithTheirStatementsAndIndentedPlans) {
  v1::RunReport r;
  r.mutable_plan()->set_name("plans");
  for (int i = 0; i < 2; ++i) {
    v1::StageReport* s = r.add_stages();
    s->set_index(i + 1);
    s->set_name(i == 0 ? "low" : "high");
  }
  v1::QueryPlan* plan = r.mutable_stages(1)->add_explains();
  plan->set_query_type("transfer");
  plan->set_statement("SELECT 1\nSET x = 1");
  plan->set_plan("-- statement 1: SELECT 1\nResult\n-- statement 2: SET x = 1\n"
                 "(EXPLAIN failed: see the error)");
  plan->set_error("statement 2: syntax error");
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("\nEXPLAIN, stage 2 (high):\n"
                              "  [transfer]\n"
                              "    SELECT 1\n"
                              "    SET x = 1\n"
                              "      -- statement 1: SELECT 1\n"
                              "      Result\n"
                              "      -- statement 2: SET x = 1\n"
                              "      (EXPLAIN failed: see the error)\n"
                              "    EXPLAIN failed: statement 2: syntax error\n"));
  EXPECT_THAT(text, Not(HasSubstr("EXPLAIN, stage 1")));
  EXPECT_THAT(text, Not(HasSubstr("captured as the measured part started")));
  // The HTML page shows the error and the plans that were had.
  const std::string page = RenderReportHtml(r);
  EXPECT_THAT(page, HasSubstr("EXPLAIN failed: statement 2: syntax error"));
  EXPECT_THAT(page, HasSubstr("-- statement 1: SELECT 1\nResult\n"));
}

// A plan that changed during the run is flagged with both shapes; after the load, only the
// changed plans are printed again.
TEST(ReportText, APlanThatChangedIsFlaggedWithBothShapes) {
  v1::RunReport r;
  r.mutable_plan()->set_name("plans");
  for (const char* query_type : {"reserve", "audit"}) {
    v1::QueryPlan* plan = r.add_explains_after_load();
    plan->set_query_type(query_type);
    plan->set_plan(absl::StrCat("Seq Scan on ", query_type, "  (cost=0.00..1.01)"));
  }
  v1::PlanChange* change = r.add_plan_changes();
  change->set_query_type("reserve");
  change->set_before("the start");
  change->set_after("after the load");
  change->set_before_shape("Update on items\n  ->  Index Scan using items_pkey on items");
  change->set_after_shape("Update on items\n  ->  Seq Scan on items");
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("PLAN CHANGED during the run"));
  EXPECT_THAT(text, HasSubstr("  [reserve] the start:\n"
                              "      Update on items\n"
                              "        ->  Index Scan using items_pkey on items\n"
                              "    became, after the load:\n"
                              "      Update on items\n"
                              "        ->  Seq Scan on items\n"));
  EXPECT_THAT(text, HasSubstr("EXPLAIN after the load (the plans that changed):\n  [reserve]\n"));
  EXPECT_THAT(text, Not(HasSubstr("Seq Scan on audit")));
  const std::string page = RenderReportHtml(r);
  EXPECT_THAT(page, HasSubstr("The plan of reserve changed between the start and after the load"));
  EXPECT_THAT(page, HasSubstr("<h3>After the load</h3>"));
}

// The generator's own share of the p99 reads the same in the text and the HTML report, and is
// left out where there is no p99 to be a share of.
TEST(TextTest, DispatchLagShareReadsTheSameInTextAndHtml) {
  v1::RunReport r = SimpleReport("share", 1000, 2.0, 20.0);
  *r.mutable_dispatch_lag() = Latency(0.5, 0.4, 4.0, 8.0);
  r.set_dispatch_lag_share(0.2);
  const std::string sentence =
      "dispatch lag p99 4.000 ms = 20% of response p99 20.000 ms (the generator's own share of "
      "it)";
  EXPECT_EQ(DispatchLagShareSentence(r), sentence);
  EXPECT_THAT(RenderReportText(r), HasSubstr(sentence));
  EXPECT_THAT(RenderReportHtml(r),
              HasSubstr("<p class=\"note\">dispatch lag p99 4.000 ms = 20% of response p99 "
                        "20.000 ms (the generator&#39;s own share of it)</p>"));
  r.mutable_response_time()->set_p99_ms(0);
  EXPECT_EQ(DispatchLagShareSentence(r), "");
  EXPECT_THAT(RenderReportText(r), Not(HasSubstr("own share of it")));
}

TEST(HtmlTest, JsonQuoteKeepsScriptsClosed) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n<&>"), "\"a\\\"b\\\\c\\n\\u003c\\u0026\\u003e\"");
  EXPECT_EQ(JsonQuote(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(JsonQuote("\xe2\x80\xa8"), "\"\\u2028\"");
  EXPECT_EQ(HtmlEscape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
}

TEST(HtmlTest, PercentileSpectrumRunsFromTheMinimumToTheMaximum) {
  Histogram h;
  for (int64_t us = 1; us <= 1000; ++us) h.Record(us * 1000);
  const auto spectrum = PercentileSpectrum(h);
  // 1 − ½^(k/5) for k = 0 … 49 (½^(49/5) × 1000 ≥ 1 > ½^(50/5) × 1000), then the maximum.
  ASSERT_EQ(spectrum.size(), 51u);
  EXPECT_DOUBLE_EQ(spectrum.front().first, 0);
  EXPECT_NEAR(spectrum.front().second, 0.001, 0.001 * 0.001);
  EXPECT_NEAR(spectrum[5].first, 50, 1e-9);
  EXPECT_NEAR(spectrum[5].second, 0.5, 0.5 * 0.002);
  EXPECT_DOUBLE_EQ(spectrum.back().first, 99.9);
  EXPECT_DOUBLE_EQ(spectrum.back().second, h.Max() / 1e6);
  for (size_t i = 1; i < spectrum.size(); ++i) {
    EXPECT_GT(spectrum[i].first, spectrum[i - 1].first);
    EXPECT_GE(spectrum[i].second, spectrum[i - 1].second);
  }
  EXPECT_TRUE(PercentileSpectrum(Histogram()).empty());
}

TEST(ReportBuilderTest, IntervalsCarryP999) {
  v1::Plan plan;
  RunReportBuilder builder(plan, {"q"});
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  for (int64_t us = 1; us <= 1000; ++us) snapshot.query_types[0].response_time.Record(us * 1000);
  const v1::IntervalSample sample = builder.AddInterval({.elapsed_s = 1, .length_s = 1}, snapshot);
  EXPECT_NEAR(sample.p999_ms(), 0.999, 0.999 * 0.002);
  EXPECT_NEAR(sample.p99_ms(), 0.990, 0.990 * 0.002);
}

// sysbench's ignored errors: counted apart from executed and errors in the run, the stage, the
// query type and the interval, and shown apart by code in every rendering.
TEST(ReportBuilderTest, IgnoredErrorsAreCountedApartEverywhere) {
  v1::Plan plan;
  RunReportBuilder builder(plan, {"read_write"});
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  QueryTypeInterval& q = snapshot.query_types[0];
  for (int64_t us = 1; us <= 100; ++us) q.response_time.Record(us * 1000);
  q.errors[{db::ErrorClass::kIgnored, "23505"}] = 7;
  q.errors[{db::ErrorClass::kIgnored, "40P01"}] = 2;
  q.errors[{db::ErrorClass::kRetryable, "55P03"}] = 1;
  const v1::IntervalSample sample = builder.AddInterval({.elapsed_s = 1, .length_s = 1}, snapshot);
  EXPECT_EQ(sample.executed(), 100u);
  EXPECT_EQ(sample.errors(), 1u);
  EXPECT_EQ(sample.ignored(), 9u);
  EXPECT_THAT(RenderIntervalLine(sample), HasSubstr("errors 1  ignored 9"));
  const v1::RunReport r = builder.Finish(1, 0, 0, "duration", "", {});
  EXPECT_EQ(r.executed(), 100u);
  EXPECT_EQ(r.errors(), 1u);
  EXPECT_EQ(r.ignored(), 9u);
  ASSERT_EQ(r.query_types_size(), 1);
  EXPECT_EQ(r.query_types(0).ignored(), 9u);
  EXPECT_EQ(r.query_types(0).errors(), 1u);
  EXPECT_EQ(r.query_types(0).response_time().count(), 100u);  // ignored ones have no latency

  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("Errors: 1\n  read_write retryable 55P03: 1\n"));
  EXPECT_THAT(text, HasSubstr("Ignored errors (rolled back, not transactions, as sysbench's): 9\n"
                              "  read_write 23505: 7\n  read_write 40P01: 2\n"));
  const std::string html = RenderReportHtml(r);
  EXPECT_THAT(html, HasSubstr("Ignored errors"));
  EXPECT_THAT(html, HasSubstr("<td class=\"text\">ignored</td>"));
  const auto rows = ParseCsv(RenderReportCsv(r));
  ASSERT_EQ(rows.size(), 3u);  // header, run/all, run/read_write
  const size_t ignored = rows[0].size() - 4;  // statements, retries and rolled_back come last
  EXPECT_EQ(rows[0][ignored], "ignored");
  EXPECT_EQ(rows[1][ignored], "9");
  EXPECT_EQ(rows[2][ignored], "9");
  EXPECT_EQ(rows[1][3], "1");  // errors
  absl::StatusOr<v1::RunReport> parsed = ParseReportJson(RenderReportJson(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ignored(), 9u);
  EXPECT_EQ(parsed->intervals(0).ignored(), 9u);

  // A report without ignored errors renders as before.
  const std::string plain = RenderReportText(SimpleReport("plain", 100, 1, 2));
  EXPECT_THAT(plain, Not(HasSubstr("Ignored")));
}

// A retry policy's counts, summed exactly over intervals and shown in every format.
// A run of tpcc: its rollbacks by design beside each query type's executed count, and tpmC
// (New-Orders per minute of the measured part) with the mix run.
TEST(ReportBuilderTest, TpccRunsShowTheirRollbacksTpmCAndMix) {
  v1::Plan plan;
  plan.set_workload("tpcc");
  plan.set_scenario("standard");
  RunReportBuilder builder(plan, {"new_order", "payment"});
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(2);
  for (int i = 0; i < 450; ++i) snapshot.query_types[0].response_time.Record(1'000'000);
  for (int i = 0; i < 550; ++i) snapshot.query_types[1].response_time.Record(1'000'000);
  snapshot.query_types[0].rolled_back = 5;
  builder.AddInterval({.elapsed_s = 30, .length_s = 30}, snapshot);
  const v1::RunReport r = builder.Finish(30, 0, 0, "duration", "", {});
  EXPECT_EQ(r.query_types(0).rolled_back(), 5u);
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("  new_order: 450 (5 rolled back by the workload)\n"));
  EXPECT_THAT(text, HasSubstr("  payment: 550\n"));
  EXPECT_THAT(text, HasSubstr("TPC-C: tpmC 900 (New-Orders completed per minute"));
  EXPECT_THAT(text, HasSubstr("mix new_order 45.0 %, payment 55.0 %"));
  EXPECT_THAT(RenderReportHtml(r), HasSubstr("tpmC 900"));
  EXPECT_THAT(text, HasSubstr("no keying or think times"));
  const auto rows = ParseCsv(RenderReportCsv(r));  // header, run/all, new_order, payment
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].back(), "rolled_back");
  EXPECT_EQ(rows[1].back(), "5");
  EXPECT_EQ(rows[2].back(), "5");
  EXPECT_EQ(rows[3].back(), "0");

  // With keying and think times: the efficiency against 12.86 per warehouse (70 here: 900.2).
  (*plan.mutable_workload_options())["terminal_waits"] = "true";
  (*plan.mutable_workload_options())["warehouses"] = "70";
  RunReportBuilder waiting(plan, {"new_order", "payment"});
  waiting.AddInterval({.elapsed_s = 30, .length_s = 30}, snapshot);
  EXPECT_THAT(RenderReportText(waiting.Finish(30, 0, 0, "duration", "", {})),
              HasSubstr("keying and think times; efficiency 100.0 % of the 70 warehouses' 900 "
                        "tpmC maximum"));

  // A single-transaction scenario's New-Orders are no tpmC: the figure is the standard mix's.
  plan.set_scenario("new_order");
  RunReportBuilder alone(plan, {"new_order"});
  alone.AddInterval({.elapsed_s = 30, .length_s = 30}, snapshot);
  EXPECT_THAT(RenderReportText(alone.Finish(30, 0, 0, "duration", "", {})), Not(HasSubstr("tpmC")));

  plan.set_workload("oltp");
  RunReportBuilder oltp(plan, {"new_order", "payment"});
  oltp.AddInterval({.elapsed_s = 30, .length_s = 30}, snapshot);
  EXPECT_THAT(RenderReportText(oltp.Finish(30, 0, 0, "duration", "", {})), Not(HasSubstr("tpmC")));
}

TEST(ReportBuilderTest, RetriesAreSummedAndShownInEveryFormat) {
  v1::Plan plan;
  RunReportBuilder builder(plan, {"transfer", "audit"});
  for (int k = 1; k <= 2; ++k) {
    IntervalSnapshot snapshot;
    snapshot.query_types.resize(2);
    QueryTypeInterval& q = snapshot.query_types[0];
    for (int i = 0; i < 50; ++i) q.response_time.Record(1'000'000);
    q.retry.retries[db::RetryCause::kDeadlock] = 3 * k;
    q.retry.retries[db::RetryCause::kSerialization] = k;
    q.retry.committed_by_tries[2] = 2 * k;
    q.retry.committed_by_tries[3] = 1;
    q.retry.failed_after_retries = k - 1;
    q.errors[{db::ErrorClass::kRetryable, "40P01"}] = k - 1;
    snapshot.query_types[1].response_time.Record(1'000'000);
    builder.AddInterval({.elapsed_s = static_cast<double>(k), .length_s = 1}, snapshot);
  }
  const v1::RunReport r = builder.Finish(2, 0, 0, "duration", "", {});
  EXPECT_EQ(r.retries(), 12u);
  const v1::QueryTypeReport& transfer = r.query_types(0);
  ASSERT_EQ(transfer.retries_size(), 2);
  EXPECT_EQ(transfer.retries(0).cause(), v1::SERIALIZATION);
  EXPECT_EQ(transfer.retries(0).count(), 3u);
  EXPECT_EQ(transfer.retries(1).cause(), v1::DEADLOCK);
  EXPECT_EQ(transfer.retries(1).count(), 9u);
  EXPECT_EQ(transfer.failed_after_retries(), 1u);
  EXPECT_EQ(transfer.errors(), 1u);
  EXPECT_EQ(r.query_types(1).retries_size(), 0);

  const std::string described =
      "serialization 3, deadlock 9; committed after 2 tries 6, after 3 "
      "tries 2; failed after retrying 1";
  EXPECT_THAT(RenderReportText(r),
              HasSubstr(absl::StrCat("Retries (tries again with the same values; latency runs "
                                     "through the last try): 12\n  transfer: ",
                                     described, "\n")));
  EXPECT_THAT(RenderReportText(r), Not(HasSubstr("  audit: serial")));
  EXPECT_THAT(RenderReportHtml(r), HasSubstr(described));
  const auto rows = ParseCsv(RenderReportCsv(r));
  ASSERT_EQ(rows.size(), 4u);  // header, run/all, run/transfer, run/audit
  EXPECT_EQ(rows[0][rows[0].size() - 2], "retries");
  EXPECT_EQ(rows[1][rows[1].size() - 2], "12");  // retries, before rolled_back
  EXPECT_EQ(rows[2][rows[2].size() - 2], "12");
  EXPECT_EQ(rows[3][rows[3].size() - 2], "0");
  absl::StatusOr<v1::RunReport> parsed = ParseReportJson(RenderReportJson(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->query_types(0).committed_by_tries(1).tries(), 3u);
  EXPECT_EQ(parsed->query_types(0).committed_by_tries(1).count(), 2u);
  EXPECT_THAT(RenderReportText(SimpleReport("plain", 100, 1, 2)), Not(HasSubstr("Retries")));
}

// Statements (sysbench's queries) from the merged counts: per query type, interval, stage and
// run, each sum exact; shown as a count, per transaction and per second of the queries duration.
TEST(ReportBuilderTest, StatementsAreSummedExactlyAndShownBesideExecuted) {
  v1::Plan plan;
  for (const char* name : {"low", "high"}) plan.add_stages()->set_name(name);
  RunReportBuilder builder(plan, {"point_select", "read_write"});
  // Interval k: 10·k point selects (1 statement each); 5·k read_write transactions of 20, plus
  // one ignored error that sent 7 (BEGIN, 5 statements, ROLLBACK). The first is the warm-up.
  uint64_t executed = 0, statements[2] = {0, 0}, stage_statements[2] = {0, 0};
  uint64_t interval_statements = 0;
  for (int k = 1; k <= 4; ++k) {
    IntervalSnapshot snapshot;
    snapshot.query_types.resize(2);
    for (int i = 0; i < 10 * k; ++i) snapshot.query_types[0].response_time.Record(100'000);
    for (int i = 0; i < 5 * k; ++i) snapshot.query_types[1].response_time.Record(2'000'000);
    snapshot.query_types[0].statements = 10 * k;
    snapshot.query_types[1].errors[{db::ErrorClass::kIgnored, "40P01"}] = 1;
    snapshot.query_types[1].statements = 20 * 5 * k + 7;
    const bool warmup = k == 1;
    const uint32_t stage = k <= 2 ? 1 : 2;
    const v1::IntervalSample sample = builder.AddInterval(
        {.elapsed_s = static_cast<double>(k), .length_s = 0.5, .warmup = warmup, .stage = stage},
        snapshot);
    EXPECT_EQ(sample.statements(), 10u * k + 100u * k + 7) << k;
    // Per second over the interval's length, as its achieved rate.
    EXPECT_THAT(RenderIntervalLine(sample),
                HasSubstr(absl::StrFormat("achieved %d/s (%d stmt/s)", 30 * k, 2 * (110 * k + 7))));
    if (warmup) continue;
    interval_statements += sample.statements();
    executed += 15 * k;
    statements[0] += 10 * k;
    statements[1] += 100 * k + 7;
    stage_statements[stage - 1] += 110 * k + 7;
  }
  const v1::RunReport r = builder.Finish(/*measured_s=*/6, /*outside_queries_s=*/1, 0, "duration",
                                         "", {2, 3});
  EXPECT_EQ(r.executed(), executed);
  ASSERT_EQ(r.query_types_size(), 2);
  EXPECT_EQ(r.query_types(0).statements(), statements[0]);
  EXPECT_EQ(r.query_types(1).statements(), statements[1]);
  EXPECT_EQ(r.statements(), statements[0] + statements[1]);
  EXPECT_EQ(r.statements(), interval_statements);  // the warm-up's in neither
  ASSERT_EQ(r.stages_size(), 2);
  EXPECT_EQ(r.stages(0).statements(), stage_statements[0]);
  EXPECT_EQ(r.stages(1).statements(), stage_statements[1]);
  EXPECT_EQ(r.stages(1).query_types(1).statements(), 100u * (3 + 4) + 2 * 7);
  EXPECT_EQ(r.statements(), r.stages(0).statements() + r.stages(1).statements());

  // 2 + 3 + 4 = 9: 90 point selects, 45 read_write, 3 ignored; 90 + 900 + 21 = 1011 statements
  // in 5 s of queries (6 measured, 1 outside the queries).
  ASSERT_EQ(r.statements(), 1011u);
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("Executed queries: 135\n  point_select: 90\n  read_write: 45\n"
                              "Statements: 1011 (7.3 per transaction, failed and ignored ones "
                              "included, 202.2/s)\n"
                              "  point_select: 90 (1.0 per transaction, 18.0/s)\n"
                              "  read_write: 921 (19.2 per transaction, failed and ignored ones "
                              "included, 184.2/s)\n"));
  const auto rows = ParseCsv(RenderReportCsv(r));
  ASSERT_EQ(rows.size(), 1u + 3 * 3);
  const size_t at = rows[0].size() - 3;  // retries and rolled_back come last
  EXPECT_EQ(rows[0][at], "statements");
  EXPECT_EQ(rows[1][at], "1011");                             // run, all
  EXPECT_EQ(rows[2][at], "90");                               // run, point_select
  EXPECT_EQ(rows[3][at], "921");                              // run, read_write
  EXPECT_EQ(rows[4][at], absl::StrCat(stage_statements[0]));  // stage 1, all
  absl::StatusOr<v1::RunReport> parsed = ParseReportJson(RenderReportJson(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->statements(), 1011u);
  EXPECT_EQ(parsed->query_types(1).statements(), 921u);
  EXPECT_EQ(parsed->stages(1).statements(), stage_statements[1]);
  EXPECT_EQ(parsed->intervals(0).statements(), 117u);  // the warm-up's sample keeps its own
  EXPECT_THAT(RenderReportJson(r), HasSubstr("\"statements\": \"1011\""));
  // Per stage, statements per second of the stage's length: 784 in 3 s.
  ASSERT_EQ(r.stages(1).statements(), 784u);
  EXPECT_EQ(StatementsPerSecondCell(784, 3), "261");
  EXPECT_EQ(StatementsPerSecondCell(0, 3), "-");  // none counted: no rate
  EXPECT_THAT(text, HasSubstr(" stmt/s "));
  EXPECT_THAT(text, ::testing::ContainsRegex(" 2 +high .* 261 "));
  const std::string html = RenderReportHtml(r);
  EXPECT_THAT(html, HasSubstr("<th>stmt/s</th>"));
  EXPECT_THAT(html, HasSubstr("<td>261</td>"));
  EXPECT_THAT(
      html, HasSubstr("<th>Statements (sysbench&#39;s queries)</th><td>1011 (7.3 per transaction"));
}

// ---------------------------------------------------------------------------------------------
// What each percentile rests on

// As the tenant_orders run: 5,100 samples whose p99.9 has 5 beyond it and whose p99.99
// is the maximum (none beyond).
Histogram ThinTail() {
  Histogram h;
  h.RecordMany(1'000'000, 5000);  // 1 ms
  h.RecordMany(10'000'000, 95);   // 10 ms
  h.RecordMany(30'000'000, 5);    // 30 ms
  return h;
}

v1::RunReport ReportOf(const Histogram& h, const std::string& name) {
  v1::RunReport r = SimpleReport(name, static_cast<double>(h.TotalCount()) / 10, 1, 1);
  *r.mutable_response_time() = Summarize(h);
  *r.mutable_service_time() = Summarize(h);
  *r.mutable_query_types(0)->mutable_response_time() = r.response_time();
  r.mutable_query_types(0)->set_executed(h.TotalCount());
  h.ToProto(r.mutable_query_types(0)->mutable_response_histogram());
  return r;
}

TEST(PercentileBasisTest, SummaryCarriesSamplesBeyondAndIntervals) {
  const Histogram h = ThinTail();
  const v1::LatencySummary s = Summarize(h);
  ASSERT_EQ(s.percentiles_size(), 7);
  const v1::PercentileBasis* p50 = BasisOf(s, 50);
  const v1::PercentileBasis* p99 = BasisOf(s, 99);
  const v1::PercentileBasis* p999 = BasisOf(s, 99.9);
  const v1::PercentileBasis* p9999 = BasisOf(s, 99.99);
  ASSERT_TRUE(p50 && p99 && p999 && p9999);
  EXPECT_DOUBLE_EQ(p50->value_ms(), s.p50_ms());
  EXPECT_EQ(p50->samples_beyond(), 100u);
  EXPECT_FALSE(p50->few_samples());
  EXPECT_LE(p50->ci_low_ms(), 1.0);
  EXPECT_GE(p50->ci_high_ms(), 1.0);
  EXPECT_LT(p50->ci_high_ms(), 1.002);
  // p99 and p99.9 both fall in the 10 ms bucket: the samples beyond are the five at 30 ms.
  EXPECT_DOUBLE_EQ(p99->value_ms(), s.p99_ms());
  EXPECT_EQ(p99->samples_beyond(), 5u);
  EXPECT_TRUE(p99->few_samples());
  EXPECT_EQ(p999->samples_beyond(), 5u);
  EXPECT_TRUE(p999->few_samples());
  EXPECT_EQ(p9999->samples_beyond(), 0u);
  EXPECT_TRUE(p9999->ci_high_open());
  EXPECT_DOUBLE_EQ(p9999->ci_high_ms(), s.max_ms());
  // An empty histogram publishes no basis.
  EXPECT_EQ(Summarize(Histogram()).percentiles_size(), 0);
}

TEST(PercentileBasisTest, TextJsonHtmlAndCsvShowWhatPercentilesRestOn) {
  const v1::RunReport r = ReportOf(ThinTail(), "thin");
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr("samples beyond"));
  EXPECT_THAT(text, HasSubstr("99: 10.002*  99.9: 10.002*  99.99: 30.015*"));
  EXPECT_THAT(text, HasSubstr("    50"));
  EXPECT_THAT(text, HasSubstr(kFewSamplesNote));
  // The p99.99 line: its value, no sample beyond, an interval open above, the mark.
  const std::string p9999 = text.substr(text.find("    99.99 "), 80);
  EXPECT_THAT(p9999, HasSubstr(" 0  ["));
  EXPECT_THAT(p9999, HasSubstr(", >30.015]  *"));

  const std::string json = RenderReportJson(r);
  EXPECT_THAT(json, HasSubstr("\"samples_beyond\": \"5\""));
  EXPECT_THAT(json, HasSubstr("\"few_samples\": true"));
  EXPECT_THAT(json, HasSubstr("\"ci_high_open\": true"));
  absl::StatusOr<v1::RunReport> parsed = ParseReportJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->response_time().percentiles_size(), 7);
  EXPECT_EQ(BasisOf(parsed->response_time(), 99.9)->samples_beyond(), 5u);

  const std::string html = RenderReportHtml(r);
  EXPECT_THAT(html, HasSubstr("What the response-time percentiles rest on"));
  EXPECT_THAT(html, HasSubstr("<td class=\"few\" title=\"5 samples beyond; 95% interval ["));
  EXPECT_THAT(html, HasSubstr("* too few samples beyond"));
  // The spectrum marks where fewer than 10 samples remain: 100 × (1 − 10 / 5,100).
  EXPECT_THAT(html, HasSubstr(absl::StrCat(
                        "\"vlines\":[{\"x\":", absl::StrFormat("%.10g", 100 * (1 - 10.0 / 5100)),
                        ",\"label\":\"\\u003c 10 samples beyond\",\"cls\":"
                        "\"few-samples\"}]")));
  EXPECT_THAT(html, HasSubstr(kFewSamplesNote));

  const auto rows = ParseCsv(RenderReportCsv(r));
  ASSERT_GE(rows.size(), 2u);
  const auto column = [&rows](const std::string& name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    EXPECT_NE(it, rows[0].end()) << name;
    return static_cast<size_t>(it - rows[0].begin());
  };
  EXPECT_EQ(rows[1][column("p50_samples_beyond")], "100");
  EXPECT_EQ(rows[1][column("p99.9_samples_beyond")], "5");
  EXPECT_EQ(rows[1][column("p99.99_ci_high_ms")], "");  // no upper bound
  EXPECT_EQ(rows[1][column("few_samples")], "p99 p99.9 p99.99");
}

TEST(PercentileBasisTest, ReportsWithoutTheBasisRenderAsBefore) {
  // A report written before the basis existed: no marks, no table, no note.
  const v1::RunReport old = SimpleReport("old", 100, 1, 5);
  absl::StatusOr<v1::RunReport> parsed = ParseReportJson(RenderReportJson(old));
  ASSERT_TRUE(parsed.ok());
  const std::string text = RenderReportText(*parsed);
  EXPECT_THAT(text, Not(HasSubstr("samples beyond")));
  EXPECT_THAT(text, Not(HasSubstr("*")));
  EXPECT_THAT(RenderReportHtml(*parsed), Not(HasSubstr("rest on")));
  const auto old_rows = ParseCsv(RenderReportCsv(*parsed));
  EXPECT_EQ(old_rows[1][old_rows[1].size() - 5], "");   // few_samples
  EXPECT_EQ(old_rows[1][old_rows[1].size() - 4], "0");  // ignored
  // Nor did it count statements: not a zero, which would read as a measurement.
  EXPECT_EQ(old_rows[0][old_rows[0].size() - 3], "statements");
  EXPECT_EQ(old_rows[1][old_rows[1].size() - 3], "");
  EXPECT_THAT(text, Not(HasSubstr("Statements")));
  EXPECT_THAT(text, Not(HasSubstr("stmt/s")));
}

TEST(PercentileBasisTest, ComparisonInsideBothIntervalsClaimsNoDifference) {
  // 100 samples at 1..100 ms against the same 2 % slower: p50 and p99 of one lie inside the
  // other's interval, though the ratio would read "1.02× higher". The p99.9 (each the maximum)
  // has a lower bound of x_(99), which the baseline's maximum is below: a difference, but marked.
  Histogram a, b, far;
  for (int i = 1; i <= 100; ++i) {
    a.Record(i * 1'000'000LL);
    b.Record(i * 1'020'000LL);
    far.Record(i * 3'000'000LL);
  }
  const std::vector<ReportFile> close = {{.path = "a.json", .report = ReportOf(a, "a")},
                                         {.path = "b.json", .report = ReportOf(b, "b")}};
  absl::StatusOr<Comparison> c = CompareReports(close);
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string text = RenderComparisonText(*c);
  EXPECT_THAT(text, HasSubstr("b vs a: same throughput, 1.02× higher mean latency, p50 latency "
                              "within the 95% confidence intervals, p99 latency within the 95% "
                              "confidence intervals*, 1.02× higher p99.9 latency*"));
  EXPECT_THAT(text, Not(HasSubstr("higher p99 latency")));
  EXPECT_THAT(text, HasSubstr(kFewSamplesNote));
  EXPECT_THAT(RenderComparisonMarkdown(*c), HasSubstr("within the 95% confidence intervals"));
  const std::string html = RenderComparisonHtml(*c, close);
  EXPECT_THAT(html, HasSubstr("within the 95% confidence intervals"));

  // Three times slower: outside the intervals, the ratio stands (marked where thin).
  const std::vector<ReportFile> apart = {{.path = "a.json", .report = ReportOf(a, "a")},
                                         {.path = "f.json", .report = ReportOf(far, "far")}};
  c = CompareReports(apart);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(RenderComparisonText(*c),
              HasSubstr("3.00× higher p50 latency, 3.00× higher p99 latency*"));
}

TEST(PercentileBasisTest, ProgressLineMarksAThinP99) {
  v1::IntervalSample sample;
  sample.set_p99_ms(2);
  sample.set_executed(999);  // at most 9 samples beyond its p99
  EXPECT_THAT(RenderIntervalLine(sample), HasSubstr("p99 2.000* ms"));
  sample.set_executed(1000);
  EXPECT_THAT(RenderIntervalLine(sample), HasSubstr("p99 2.000 ms"));
  sample.set_executed(0);
  EXPECT_THAT(RenderIntervalLine(sample), Not(HasSubstr("*")));
}

TEST(PercentileBasisTest, WithinIntervalsNeedsEachValueInsideTheOther) {
  v1::PercentileBasis a, b;
  a.set_value_ms(10);
  a.set_ci_low_ms(9);
  a.set_ci_high_ms(11);
  b.set_value_ms(10.5);
  b.set_ci_low_ms(10.2);
  b.set_ci_high_ms(10.8);
  EXPECT_FALSE(WithinIntervals(a, b));  // 10 is below b's interval
  b.set_ci_low_ms(9.9);
  EXPECT_TRUE(WithinIntervals(a, b));
  b.set_value_ms(12);
  b.set_ci_high_ms(12.5);
  EXPECT_FALSE(WithinIntervals(a, b));  // 12 is above a's interval
  a.set_ci_high_open(true);
  EXPECT_TRUE(WithinIntervals(a, b));
}

}  // namespace
}  // namespace dbload

namespace dbload {
namespace {

TEST(ReportBuilderTest, ConnectTimesOfAConnectionPerTransactionAreSummarizedAndShown) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("postgresql");
  plan.mutable_target()->set_connect(v1::CONNECT_MODE_PER_TRANSACTION);
  RunReportBuilder builder(plan, {"q"});
  for (int k = 1; k <= 3; ++k) {
    IntervalSnapshot snapshot;
    snapshot.query_types.resize(1);
    for (int i = 0; i < 100; ++i) {
      snapshot.query_types[0].response_time.Record(4'000'000);
      snapshot.connect_time.Record(3'000'000);
    }
    builder.AddInterval({.elapsed_s = static_cast<double>(k), .length_s = 1, .warmup = k == 1},
                        snapshot);
  }
  const v1::RunReport r = builder.Finish(2, 0, 0, "duration", "", {});
  EXPECT_EQ(r.connect_time().count(), 200u) << "the warm-up's are in neither";
  EXPECT_NEAR(r.connect_time().p99_ms(), 3.0, 0.003);
  const std::string text = RenderReportText(r);
  EXPECT_THAT(text, HasSubstr(", a connection per transaction"));
  EXPECT_THAT(text, HasSubstr("Connect time, one per transaction (in the response time, not the "
                              "service time)"));
  EXPECT_THAT(RenderReportHtml(r),
              HasSubstr("connect, one per transaction (in the response time)"));

  RunReportBuilder held(v1::Plan(), {"q"});
  IntervalSnapshot snapshot;
  snapshot.query_types.resize(1);
  snapshot.query_types[0].response_time.Record(1'000'000);
  held.AddInterval({.elapsed_s = 1, .length_s = 1}, snapshot);
  const v1::RunReport once = held.Finish(1, 0, 0, "duration", "", {});
  EXPECT_FALSE(once.has_connect_time());
  EXPECT_THAT(RenderReportText(once), Not(HasSubstr("Connect time")));
}

TEST(ReportTextTest, ThePlansTargetSaysWhetherTransactionsWerePipelined) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("postgresql");
  plan.mutable_target()->set_host("db");
  plan.mutable_target()->set_port(5432);
  RunReportBuilder plain(plan, {"q"});
  EXPECT_THAT(RenderReportText(plain.Finish(1, 0, 0, "duration", "", {})),
              AllOf(HasSubstr("postgresql db:5432"), Not(HasSubstr("pipelined"))));
  plan.mutable_target()->set_pipeline(true);
  RunReportBuilder pipelined(plan, {"q"});
  EXPECT_THAT(RenderReportText(pipelined.Finish(1, 0, 0, "duration", "", {})),
              HasSubstr("postgresql db:5432, each transaction pipelined"));
}

TEST(ReportTextTest, ThePlansTargetSaysHowManyEventLoops) {
  v1::Plan plan;
  plan.mutable_target()->set_driver("postgresql");
  plan.mutable_target()->set_host("db");
  plan.mutable_target()->set_port(5432);
  plan.mutable_target()->set_engine(v1::ENGINE_EVENT_LOOPS);
  const auto target_line = [&] {
    return RenderReportText(RunReportBuilder(plan, {"q"}).Finish(1, 0, 0, "duration", "", {}));
  };
  EXPECT_THAT(target_line(),
              HasSubstr("postgresql db:5432, on event loops (one per core each agent may use)"));
  plan.mutable_target()->set_event_loops(1);
  EXPECT_THAT(target_line(), HasSubstr("postgresql db:5432, on 1 event loop per agent\n"));
  plan.mutable_target()->set_event_loops(4);
  EXPECT_THAT(target_line(), HasSubstr("postgresql db:5432, on 4 event loops per agent\n"));
  plan.mutable_target()->set_timer_slack_ns(100'000);
  EXPECT_THAT(target_line(), HasSubstr("postgresql db:5432, on 4 event loops per agent, waking up "
                                       "to 100us late for arrivals (timer_slack)\n"));
  plan.mutable_target()->clear_timer_slack_ns();
  plan.mutable_target()->set_engine(v1::ENGINE_THREADS);
  EXPECT_THAT(target_line(), HasSubstr("postgresql db:5432, a thread per connection\n"));
}

}  // namespace
}  // namespace dbload
