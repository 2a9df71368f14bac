// The suite report on hand-built indexes and run reports with known numbers, in the layout a
// benchmarker publishes: headlines per category (ratios only at the same load point, best
// throughput naming each side's point), the machine and servers from the manifests, how the
// suite ran, one table per sweep (TPS, QPS, p95, p99), one table of the cases without points,
// the summary by category, the probe's counters per transaction (with the few-readings mark),
// the runs (a failed warm-up as failed); human units throughout; hostile names in Markdown and
// HTML; the HTML's log-2 sweep charts, bars and print stylesheet.
// Its length: one case per part of the publication, all on the same hand-built suite.
#include "suite/suite_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "report/report.h"
#include "report/report_compare.h"
#include "suite/suite_ramp.h"
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
  double p95 = 0;           // 0: the mean's
  uint64_t statements = 0;  // 0: not counted (a report from before dbload counted them)
  double queries_duration = 10;
};

v1::RunReport Report(const Figures& f) {
  v1::RunReport r;
  r.set_format_version(kReportFormatVersion);
  r.set_state(f.state);
  r.set_actual_rate(f.rate);
  r.set_queries_duration_s(f.queries_duration);
  r.set_statements(f.statements);
  r.mutable_response_time()->set_mean_ms(f.mean);
  r.mutable_response_time()->set_p50_ms(f.mean / 2);
  r.mutable_response_time()->set_p95_ms(f.p95 > 0 ? f.p95 : f.mean);
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
  v1::SuiteCase* Case(const std::string& name, const std::string& category,
                      std::vector<double> points, bool closed) {
    v1::SuiteCase* c = index_.mutable_suite()->add_cases();
    c->set_name(name);
    c->set_category(category);
    c->mutable_plan()->set_workload("shop");
    c->mutable_plan()->set_scenario(name);
    if (closed) {
      c->mutable_plan()->mutable_load()->mutable_closed()->set_clients(1);
    } else {
      c->mutable_plan()->mutable_load()->mutable_open()->set_rate(1000);
    }
    c->mutable_plan()->mutable_stop()->set_duration_ns(60'000'000'000);
    for (double p : points) c->add_points(p);
    return c;
  }
  // `index_state` is the index's; the report's is f.state.
  v1::RunReport& Run(const std::string& target, const std::string& name, double point,
                     uint32_t repetition, const Figures& f,
                     const std::string& index_state = "finished") {
    v1::SuiteRun* run = index_.add_runs();
    run->set_target(target);
    run->set_case_name(name);
    run->set_point(point);
    run->set_repetition(repetition);
    run->set_discarded(repetition == 0);
    run->set_state(index_state);
    run->set_report(absl::StrCat("runs/", index_.runs_size(), ".json"));
    reports_.push_back(Report(f));
    return reports_.back();
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

void AddDelta(v1::RunReport& r, const std::string& source, const std::string& name,
              double per_query, uint32_t readings) {
  v1::SaturationDelta* d = r.add_saturation();
  d->set_source(source);
  d->set_name(name);
  d->set_per_query(per_query);
  d->set_readings(readings);
}

void SetManifest(v1::RunReport& r, const std::string& product, const std::string& version,
                 const std::map<std::string, std::string>& settings) {
  v1::RunManifest* m = r.mutable_manifest();
  m->set_server_product(product);
  m->set_server_version(version);
  for (const auto& [name, value] : settings) (*m->mutable_server_settings())[name] = value;
  m->set_dbload_version("0.1.0");
  for (const char* name : {"agent-1", "agent-2"}) {
    v1::RunManifest::AgentHost* a = m->add_agents();
    a->set_name(name);
    a->set_host("lab1");
    a->set_cores(2);
  }
}

// The fixture a benchmarker would publish: the shop's shape (cases without points in two
// categories) and a sysbench sweep (point_select at 4 and 32 clients) on two databases, with the
// machine in the manifests, probe counters, a failed warm-up, and how the suite was run.
SuiteBuilder PublishedSuite() {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.index().mutable_suite()->set_name("shop and sweep");
  b.index().mutable_suite()->mutable_settings()->set_warmup_runs(1);
  b.index().set_scale(0.1);
  b.index().add_overrides("targets.0.target.port=5433");
  v1::SuiteCase* insert = b.Case("01-insert-users", "inserts", {}, false);
  insert->mutable_plan()->mutable_stop()->set_queries(50000);
  insert->mutable_plan()->mutable_stop()->set_duration_ns(600'000'000'000);
  b.Case("02-batch-insert-items", "inserts", {}, false)
      ->mutable_plan()
      ->mutable_load()
      ->mutable_open()
      ->set_rate(50);
  b.Case("05-select-users-by-id", "selects", {}, false);
  b.Case("point_select", "point_select", {4, 32}, true);

  const std::map<std::string, std::string> pg = {{"server_version", "15.5 (Debian 15.5-0+deb12u1)"},
                                                 {"shared_buffers", "128MB"},
                                                 {"max_connections", "100"},
                                                 {"synchronous_commit", "on"},
                                                 {"fsync", "on"},
                                                 {"wal_level", "replica"},
                                                 {"block_size", "8192"}};
  const std::map<std::string, std::string> maria = {{"innodb_buffer_pool_size", "134217728"},
                                                    {"innodb_flush_log_at_trx_commit", "1"},
                                                    {"max_connections", "151"},
                                                    {"sync_binlog", "0"}};
  const std::string pg_version =
      "PostgreSQL 15.5 (Debian 15.5-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc, 64-bit";
  auto pg_run = [&](const std::string& name, double point, const Figures& f) -> v1::RunReport& {
    v1::RunReport& r = b.Run("postgresql", name, point, 1, f);
    SetManifest(r, "PostgreSQL", pg_version, pg);
    return r;
  };
  auto maria_run = [&](const std::string& name, double point, const Figures& f,
                       const std::string& version = "10.11.4-MariaDB-1~deb12u1") -> v1::RunReport& {
    v1::RunReport& r = b.Run("mariadb", name, point, 1, f);
    SetManifest(r, "MariaDB", version, maria);
    return r;
  };
  v1::RunReport& pg_insert = pg_run("01-insert-users", 0, {.rate = 1000, .mean = 2, .p99 = 4});
  AddDelta(pg_insert, "process", "cpu_seconds", 6.679e-06, 3);  // too few readings: marked
  AddDelta(pg_insert, "postgresql", "written_bytes", 8192, 20);
  AddDelta(pg_insert, "postgresql", "commits", 1, 20);
  AddDelta(pg_insert, "postgresql", "xact_commit", 1, 20);  // the server's own name: not compared
  v1::RunReport& maria_insert =
      maria_run("01-insert-users", 0, {.rate = 205.3, .mean = 22.46, .p99 = 80});
  AddDelta(maria_insert, "process", "cpu_seconds", 0.00031, 0);  // readings unknown: unmarked
  AddDelta(maria_insert, "mysql", "written_bytes", 16384, 20);
  AddDelta(maria_insert, "mysql", "deadlocks", 0.0006, 20);
  AddDelta(maria_insert, "mysql", "Handler_write", 1, 20);  // the server's own name: not compared
  pg_run("02-batch-insert-items", 0, {.rate = 100, .mean = 10, .p99 = 20});
  maria_run("02-batch-insert-items", 0, {.rate = 50, .mean = 10, .p99 = 10});
  pg_run("05-select-users-by-id", 0, {.rate = 5000, .mean = 0.5, .p99 = 1});
  maria_run("05-select-users-by-id", 0, {.rate = 2500, .mean = 1, .p99 = 3},
            "10.11.6-MariaDB-1~deb12u1");
  // The sweep: postgresql is best at 4 clients, mariadb at 32.
  pg_run("point_select", 4,
         {.rate = 20000, .mean = 0.2, .p99 = 0.5, .p95 = 0.3, .statements = 2000000});
  pg_run("point_select", 32,
         {.rate = 18000, .mean = 1.78, .p99 = 6, .p95 = 3, .statements = 1800000});
  b.Run("mariadb", "point_select", 4, 0, {.rate = 999, .mean = 9, .p99 = 99}, "failed");
  maria_run("point_select", 4,
            {.rate = 10000, .mean = 0.4, .p99 = 1, .p95 = 0.6, .statements = 1000000});
  maria_run("point_select", 32, {.rate = 22000, .mean = 1.45, .p99 = 5, .p95 = 2.5});
  return b;
}

// The lines of a section of the Markdown, from its heading to the next "### ".
std::string MarkdownSection(const std::string& markdown, const std::string& heading) {
  const size_t at = markdown.find(absl::StrCat("### ", heading, "\n"));
  if (at == std::string::npos) return "";
  const size_t end = markdown.find("\n### ", at + 4);
  return markdown.substr(at, end == std::string::npos ? std::string::npos : end - at);
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

TEST(HumanUnitsTest, ThreeFiguresInTheirUnitNeverAnExponent) {
  EXPECT_EQ(FormatLatency(0.85), "850 µs");
  EXPECT_EQ(FormatLatency(12.3), "12.3 ms");
  EXPECT_EQ(FormatLatency(1250), "1.25 s");
  EXPECT_EQ(FormatLatency(2), "2.00 ms");
  EXPECT_EQ(FormatLatency(6.679e-06), "6.68 ns");
  EXPECT_EQ(FormatLatency(0.0009996), "1.00 µs");  // rounded up into the next unit
  EXPECT_EQ(FormatLatency(999.6), "1.00 s");
  EXPECT_EQ(FormatLatency(0), "0 ms");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(8192), "8.19 kB");
  EXPECT_EQ(FormatBytes(12.3e6), "12.3 MB");
  EXPECT_EQ(FormatBytes(1.25e9), "1.25 GB");
  EXPECT_EQ(FormatBytes(134217728), "134 MB");
  EXPECT_EQ(FormatBytes(0.5), "0.5 B");
  EXPECT_EQ(FormatCount(0.0006), "0.0006");
  EXPECT_EQ(FormatCount(6.679e-06), "0.00000668");
  EXPECT_EQ(FormatCount(12.34), "12.3");
  EXPECT_EQ(FormatCount(1.5), "1.5");
  EXPECT_EQ(FormatCount(1), "1");
  EXPECT_EQ(FormatCount(999.4), "999");
  EXPECT_EQ(FormatCount(999.6), "1,000");
  EXPECT_EQ(FormatCount(1234567.4), "1,234,567");
  EXPECT_EQ(FormatCount(0), "0");
  EXPECT_EQ(FormatPerSecond(1234), "1,234/s");
  EXPECT_EQ(FormatSpan(45), "45 s");
  EXPECT_EQ(FormatSpan(600), "10 min");
  EXPECT_EQ(FormatSpan(5400), "1 h 30 min");
  EXPECT_EQ(FormatSpan(2.5), "2.5 s");
  EXPECT_EQ(FormatSpan(0.25), "250 ms");
}

TEST(SuiteReportTest, TheFirstScreenIsHeadlinesMachineAndHowItRan) {
  const std::string md = PublishedSuite().Render(SuiteFormat::kMarkdown);
  EXPECT_EQ(MarkdownSection(md, "Headlines"),
            "### Headlines\n\n"
            "- **inserts** (2 cases, each at the plan's load): mariadb 2.00×–4.87× lower "
            "throughput, 1.00×–11.23× higher mean latency than postgresql\n"
            "- **selects** (1 case, each at the plan's load): mariadb 2.00× lower throughput, "
            "2.00× higher mean latency than postgresql\n"
            "- **point\\_select** (1 case at 2 points (4–32 clients), each against the same "
            "point): mariadb vs postgresql: from 2.00× lower to 1.22× higher throughput, from "
            "1.23× lower to 2.00× higher mean latency; best throughput: mariadb 22,000/s at 32 "
            "clients, postgresql 20,000/s at 4 clients\n");
  EXPECT_TRUE(absl::StartsWith(md, "## dbload suite report: shop and sweep\n\n### Headlines\n"));
  const std::string machine = MarkdownSection(md, "Machine and servers");
  EXPECT_THAT(machine, HasSubstr("- **postgresql**: PostgreSQL 15.5 (Debian 15.5-0+deb12u1); "
                                 "shared\\_buffers 128MB, max\\_connections 100, "
                                 "synchronous\\_commit on, fsync on, wal\\_level replica; load "
                                 "from 2 agents on lab1 (2 cores); dbload 0.1.0\n"));
  // One mariadb run reported another server version: shown, not hidden.
  EXPECT_THAT(machine, HasSubstr("- **mariadb**: differs across runs: MariaDB "
                                 "10.11.4-MariaDB-1\\~deb12u1 (4 runs), MariaDB "
                                 "10.11.6-MariaDB-1\\~deb12u1 (1 run); "
                                 "innodb\\_buffer\\_pool\\_size 134 MB, "
                                 "innodb\\_flush\\_log\\_at\\_trx\\_commit 1, sync\\_binlog 0, "
                                 "max\\_connections 151;"));
  const std::string how = MarkdownSection(md, "How it ran");
  EXPECT_THAT(how, HasSubstr("- Scale (--scale, rates and totals): ×0.1; time scale "
                             "(--time-scale): none\n"));
  EXPECT_THAT(how, HasSubstr("- Settings changed (--set): targets.0.target.port=5433\n"));
  EXPECT_THAT(how, HasSubstr("- Repetitions: 1 measured run per case, point and target; warm-up "
                             "runs: 1 before them, discarded; prepare: once\n"));
  EXPECT_THAT(how, HasSubstr("- 01-insert-users (inserts): shop/01-insert-users, open loop at "
                             "1,000/s; stops at 50,000 transactions or after 10 min\n"));
  EXPECT_THAT(how, HasSubstr("- point\\_select (point\\_select): shop/point\\_select, closed loop "
                             "at 4, 32 clients; 1 min per run\n"));
  // The sections in the contract's order; the runs at the end.
  size_t last = 0;
  for (const char* heading : {"### Headlines", "### Machine and servers", "### How it ran",
                              "### Sweep: point\\_select", "### Cases", "### Summary by category",
                              "### Database counters per transaction", "### Runs"}) {
    const size_t at = md.find(heading);
    ASSERT_NE(at, std::string::npos) << heading;
    EXPECT_GT(at, last) << heading;
    last = at;
  }
  // Nothing said about the suite's settings is left out when they are absent.
  SuiteBuilder plain = ThreeCases();
  const std::string none = MarkdownSection(plain.Render(SuiteFormat::kMarkdown), "How it ran");
  EXPECT_THAT(none, HasSubstr("- Scale (--scale, rates and totals): none; time scale "
                              "(--time-scale): none\n- Settings changed (--set): none\n"));
  EXPECT_THAT(MarkdownSection(plain.Render(SuiteFormat::kMarkdown), "Machine and servers"),
              HasSubstr("- **postgresql**: not recorded (no run report with a manifest)\n"));
}

TEST(SuiteReportTest, SweepIsOneTableOfTpsQpsP95AndP99PerTargetAndPoint) {
  const std::string md = PublishedSuite().Render(SuiteFormat::kMarkdown);
  // TPS: the actual rate; QPS: statements ÷ queries duration ("—" where the run counted no
  // statements: never invented); p95 and p99 in human units.
  EXPECT_EQ(MarkdownSection(md, "Sweep: point\\_select"),
            "### Sweep: point\\_select\n\n"
            "| clients | postgresql TPS | postgresql QPS | postgresql p95 | postgresql p99 | "
            "mariadb TPS | mariadb QPS | mariadb p95 | mariadb p99 |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            "| 4 | 20,000 | 200,000 | 300 µs | 500 µs | 10,000 | 100,000 | 600 µs | 1.00 ms |\n"
            "| 32 | 18,000 | 180,000 | 3.00 ms | 6.00 ms | 22,000 | — | 2.50 ms | 5.00 ms |\n"
            "\n"
            "- at 4 clients: mariadb vs postgresql: 2.00× lower TPS, 2.00× lower QPS, 2.00× "
            "higher p95 latency, 2.00× higher p99 latency\n"
            "- at 32 clients: mariadb vs postgresql: 1.22× higher TPS, 1.20× lower p95 latency, "
            "1.20× lower p99 latency\n");
  // An open-loop sweep's first column is the rate.
  SuiteBuilder open({"postgresql", "mariadb"}, 1);
  open.Case("by id", "selects", {300, 600}, /*closed=*/false);
  open.Run("postgresql", "by id", 300, 1, {.rate = 300, .mean = 1, .p99 = 2});
  open.Run("mariadb", "by id", 600, 1, {.rate = 598, .mean = 1, .p99 = 2});
  const std::string sweep = MarkdownSection(open.Render(SuiteFormat::kMarkdown), "Sweep: by id");
  EXPECT_THAT(sweep, HasSubstr("| rate | postgresql TPS |"));
  EXPECT_THAT(sweep, HasSubstr("| 300 | 300 | — | 1.00 ms | 2.00 ms | — | — | — | — |\n"));
  EXPECT_THAT(sweep, HasSubstr("| 600 | — | — | — | — | 598 | — | 1.00 ms | 2.00 ms |\n"));
}

// A sweep of tpcc leads with tpmC: each run's New-Orders per minute of its measured part.
TEST(SuiteReportTest, ATpccSweepLeadsWithTpmC) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("tpcc", "transactions", {8}, /*closed=*/true);
  const auto tpcc_run = [&](const std::string& target, uint64_t new_orders) {
    v1::RunReport& r =
        b.Run(target, "tpcc", 8, 1, {.rate = 1000, .mean = 2, .p99 = 4, .queries_duration = 30});
    r.mutable_plan()->set_workload("tpcc");
    r.mutable_plan()->set_scenario("standard");
    v1::QueryTypeReport& type = *r.add_query_types();
    type.set_name("new_order");
    type.set_executed(new_orders);
  };
  tpcc_run("postgresql", 16'000);  // 32,000 tpmC
  tpcc_run("mariadb", 10'000);     // 20,000
  const std::string sweep = MarkdownSection(b.Render(SuiteFormat::kMarkdown), "Sweep: tpcc");
  EXPECT_THAT(sweep, HasSubstr("| clients | postgresql tpmC | postgresql TPS |"));
  EXPECT_THAT(sweep, HasSubstr("| 8 | 32,000 | 1,000 | — |"));
  EXPECT_THAT(sweep, HasSubstr("mariadb vs postgresql: 1.60× lower tpmC"));
}

TEST(SuiteReportTest, SweepRepetitionsGiveMedianAndSpread) {
  SuiteBuilder b({"postgresql", "mariadb"}, 2);
  b.Case("read_only", "read_only", {4}, /*closed=*/true);
  b.Run("postgresql", "read_only", 4, 0, {.rate = 99999, .mean = 99, .p99 = 999});  // warm-up
  b.Run("postgresql", "read_only", 4, 1,
        {.rate = 1000, .mean = 1, .p99 = 2, .p95 = 1.5, .statements = 180000});
  b.Run("postgresql", "read_only", 4, 2,
        {.rate = 1100, .mean = 1, .p99 = 3, .p95 = 1.7, .statements = 200000});
  b.Run("mariadb", "read_only", 4, 1, {.rate = 1060, .mean = 3, .p99 = 8, .p95 = 4});
  b.Run("mariadb", "read_only", 4, 2, {.rate = 1200, .mean = 3.2, .p99 = 9, .p95 = 5});
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(md, HasSubstr("| 4 | 1,050 [1,000–1,100] | 19,000 [18,000–20,000] | 1.60 ms "
                            "[1.50 ms–1.70 ms] | 2.50 ms [2.00 ms–3.00 ms] | 1,130 [1,060–1,200] "
                            "| — | 4.50 ms [4.00 ms–5.00 ms] | 8.50 ms [8.00 ms–9.00 ms] |\n"));
  // 1130 / 1050 lies within the spread: no clear winner.
  EXPECT_THAT(md, HasSubstr("- at 4 clients: mariadb vs postgresql: 1.08× higher TPS (no clear "
                            "winner), 2.81× higher p95 latency, 3.40× higher p99 latency\n"));
  EXPECT_THAT(md, HasSubstr("Each figure is the median of its measured runs with their spread"));
  EXPECT_THAT(md, HasSubstr("| warm-up | discarded (warm-up) |"));
  EXPECT_THAT(md, Not(HasSubstr("99,999")));
}

TEST(SuiteReportTest, CasesWithoutPointsAreOneTableGroupedByCategory) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  // In the suite's order a select comes first; the table groups by category, inserts first.
  b.Case("select users by id", "selects", {}, false);
  b.Case("insert users", "inserts", {}, false);
  b.Case("mixed by id", "mixed", {}, false);
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 5000, .mean = 0.5, .p99 = 1});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 2500, .mean = 1, .p99 = 3});
  b.Run("postgresql", "insert users", 0, 1, {.rate = 1000, .mean = 2, .p99 = 4});
  b.Run("mariadb", "insert users", 0, 1, {.rate = 205.3, .mean = 22.46, .p99 = 80});
  b.Run("postgresql", "mixed by id", 0, 1, {.rate = 900, .mean = 1, .p99 = 2});
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_EQ(MarkdownSection(md, "Cases"),
            "### Cases\n\n"
            "| case | category | postgresql throughput | postgresql mean | postgresql p99 | "
            "mariadb throughput | mariadb mean | mariadb p99 | mariadb vs postgresql |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---|\n"
            "| insert users | inserts | 1,000/s | 2.00 ms | 4.00 ms | 205/s | 22.5 ms | 80.0 ms "
            "| 4.87× lower throughput, 11.23× higher mean latency, 20.00× higher p99 latency |\n"
            "| select users by id | selects | 5,000/s | 500 µs | 1.00 ms | 2,500/s | 1.00 ms | "
            "3.00 ms | 2.00× lower throughput, 2.00× higher mean latency, 3.00× higher p99 "
            "latency |\n"
            "| mixed by id | mixed | 900/s | 1.00 ms | 2.00 ms | — | — | — | — |\n");
  // The summary by category: the cases' rows, in the same order.
  const std::string summary = MarkdownSection(md, "Summary by category");
  EXPECT_THAT(summary, HasSubstr("| inserts | insert users | mariadb | 4.87× lower throughput | "
                                 "11.23× higher mean latency | 20.00× higher p99 latency |  |\n"));
  EXPECT_THAT(summary, HasSubstr("| mixed | mixed by id | mariadb | — | — | — | 1 of 1 cases "
                                 "without figures on both sides |\n"));
  EXPECT_LT(summary.find("| inserts |"), summary.find("| selects |"));
  EXPECT_THAT(MarkdownSection(md, "Headlines"),
              HasSubstr("- **mixed** (1 case, each at the plan's load): mariadb vs postgresql: "
                        "no case with figures on both sides (1 of 1 cases without figures on "
                        "both sides)\n"));
}

TEST(SuiteReportTest, PointsAreComparedAtTheSamePointAndBestThroughputSaysWhere) {
  // postgresql is best at 4 clients (300/s), mariadb at 1 client (200/s): the old summary
  // compared those two ("1.50× lower throughput, 2.00× lower mean latency"), different loads.
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("insert", "inserts", {1, 4}, /*closed=*/true);
  b.Run("postgresql", "insert", 1, 1, {.rate = 100, .mean = 1, .p99 = 2});
  b.Run("postgresql", "insert", 4, 1, {.rate = 300, .mean = 2, .p99 = 4});
  b.Run("mariadb", "insert", 1, 1, {.rate = 200, .mean = 1, .p99 = 2});
  b.Run("mariadb", "insert", 4, 1, {.rate = 150, .mean = 5, .p99 = 10});
  for (SuiteFormat format : {SuiteFormat::kText, SuiteFormat::kMarkdown, SuiteFormat::kHtml}) {
    const std::string out = b.Render(format);
    // At 1 client 2.00× higher, at 4 clients 2.00× lower; mean the same at 1, 2.50× at 4.
    EXPECT_THAT(out, HasSubstr("mariadb vs postgresql: from 2.00× lower to 2.00× higher "
                               "throughput, 1.00×–2.50× higher mean latency; best throughput: "
                               "mariadb 200/s at 1 client, postgresql 300/s at 4 clients"));
    EXPECT_THAT(out, Not(HasSubstr("1.50× lower throughput")));
    EXPECT_THAT(out, Not(HasSubstr("2.00× lower mean latency")));
  }
  EXPECT_THAT(
      MarkdownSection(b.Render(SuiteFormat::kMarkdown), "Summary by category"),
      HasSubstr("| inserts | insert (1 case at 2 points (1–4 clients), each against the "
                "same point) | mariadb | from 2.00× lower to 2.00× higher throughput | "
                "1.00×–2.50× higher mean latency | 1.00×–2.50× higher p99 latency | best "
                "throughput: mariadb 200/s at 1 client, postgresql 300/s at 4 clients |\n"));
}

TEST(SuiteReportTest, CountersPerTransactionInHumanUnitsWithTheFewReadingsMark) {
  SuiteBuilder b = PublishedSuite();
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_EQ(MarkdownSection(md, "Database counters per transaction"),
            "### Database counters per transaction\n\n"
            "The probe's counters over each run, per transaction executed (the median over "
            "repetitions).\n\n"
            "| case | point | counter | postgresql | mariadb |\n"
            "|---|---:|---|---:|---:|\n"
            "| 01-insert-users | plan's load | commits | 1 | — |\n"
            "| 01-insert-users | plan's load | deadlocks | — | 0.0006 |\n"
            "| 01-insert-users | plan's load | process/cpu\\_seconds | 6.68 µs† | 310 µs |\n"
            "| 01-insert-users | plan's load | written\\_bytes | 8.19 kB | 16.4 kB |\n"
            "\n" +
                MarkdownEscape(kFewReadingsNote) + "\n");
  // No figure in exponent form anywhere, in any format (6.679e-06 s is the CPU above).
  for (SuiteFormat format : {SuiteFormat::kText, SuiteFormat::kMarkdown, SuiteFormat::kHtml}) {
    const std::string out = b.Render(format);
    EXPECT_THAT(out, Not(::testing::ContainsRegex("[0-9]e-0[0-9]"))) << static_cast<int>(format);
    EXPECT_THAT(out, Not(HasSubstr("xact_commit")));
  }
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, HasSubstr("<td class=\"text\">process/cpu_seconds</td><td>6.68 µs†</td>"
                              "<td>310 µs</td>"));
  EXPECT_THAT(html, HasSubstr(kFewReadingsNote));
}

TEST(SuiteReportTest, AFailedWarmUpIsShownAsFailed) {
  const std::string md = PublishedSuite().Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(MarkdownSection(md, "Runs"),
              HasSubstr("| 9 | mariadb | point\\_select | 4 clients | warm-up | failed (warm-up) | "
                        "runs/9.json |\n"));
  EXPECT_THAT(MarkdownSection(md, "Runs"), Not(HasSubstr("discarded")));
  EXPECT_THAT(md, Not(HasSubstr("999/s")));
  EXPECT_THAT(md, Not(HasSubstr("| 999 |")));
  SuiteBuilder b = PublishedSuite();
  const SuiteTable table = BuildSuiteTable(b.index(), b.reports());
  EXPECT_EQ(table.runs[8].status, "failed (warm-up)");
  EXPECT_FALSE(table.runs[8].measured);
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
  EXPECT_THAT(text, HasSubstr("Runs: 4 (1 measured, 0 warm-up, 3 missing or not finished)"));
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(md, HasSubstr("| failed | runs/2.json |"));
  EXPECT_THAT(md, HasSubstr("| report state: aborted | runs/3.json |"));
  EXPECT_THAT(md, HasSubstr("| pending | runs/4.json |"));
  EXPECT_THAT(text + md, Not(HasSubstr("7,777")));
  EXPECT_THAT(text + md, Not(HasSubstr("6,666")));
  EXPECT_THAT(md, HasSubstr("| 800/s | 1.00 ms | 2.00 ms | — | — | — | — |\n"));
  // Text: the same table, aligned.
  EXPECT_THAT(text, ::testing::ContainsRegex("delete orders +deletes +800/s +1.00 ms +2.00 ms +— "
                                             "+— +— +—\n"));
  EXPECT_THAT(text, HasSubstr("mariadb vs postgresql: no case with figures on both sides (1 of 1 "
                              "cases without figures on both sides)"));
}

// A run whose data broke the workload's invariants failed (dbload exited 5): its status in the
// run list says which invariant and what it read, and its figures count nowhere.
TEST(SuiteReportTest, ARunThatBrokeAnInvariantSaysWhich) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("hot items", "contention", {}, false);
  b.Run("postgresql", "hot items", 0, 1, {.rate = 800, .mean = 1, .p99 = 2});
  v1::InvariantResult& total =
      *b.Run("mariadb", "hot items", 0, 1, {.rate = 5555, .mean = 1, .p99 = 2}, "failed")
           .add_invariants();
  total.set_name("total");
  total.set_sql("SELECT SUM(stock + reserved) FROM inv_items");
  total.set_unchanged(true);
  total.set_before("1000");
  total.set_after("1010");
  total.set_holds(false);
  // The other target's run held both of its invariants.
  for (const char* name : {"total", "nothing_negative"}) {
    v1::InvariantResult& held = *b.reports()[0].add_invariants();
    held.set_name(name);
    held.set_holds(true);
  }
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(md, HasSubstr("| failed: an invariant of the workload is broken: total: BROKEN, "
                            "\\`SELECT SUM(stock + reserved) FROM inv\\_items\\` was 1000 "
                            "before the load and 1010 after (must not change) | BROKEN: total | "
                            "runs/2.json |"));
  // Each run's invariants in a column of their own.
  EXPECT_THAT(md, HasSubstr("| status | invariants | report |"));
  EXPECT_THAT(md, HasSubstr("| measured | 2 held | runs/1.json |"));
  EXPECT_THAT(md, Not(HasSubstr("5,555")));
}

TEST(SuiteReportTest, GeneratorLimitedFiguresAreMarked) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  b.Case("mixed by id", "mixed", {}, false);
  b.Run("postgresql", "mixed by id", 0, 1, {.rate = 900, .mean = 1, .p99 = 2, .limited = true});
  b.Run("mariadb", "mixed by id", 0, 1, {.rate = 300, .mean = 3, .p99 = 6});
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(md, HasSubstr("measured, GENERATOR-LIMITED: agent CPU 97 % of its cores"));
  EXPECT_THAT(MarkdownSection(md, "Cases"),
              HasSubstr("\n- mixed by id: postgresql at the plan's load: 1 of 1 runs "
                        "GENERATOR-LIMITED\n"));
  EXPECT_THAT(MarkdownSection(md, "Headlines"),
              HasSubstr("than postgresql (GENERATOR-LIMITED runs in 1 of 1 cases)\n"));
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, HasSubstr("<tr class=\"generator-limited\">"));
  EXPECT_THAT(html, HasSubstr("<div class=\"bar series-0 limited\""));
}

TEST(SuiteReportTest, HostileNamesStayText) {
  const std::string target = "<script>alert(1)</script>";
  const std::string name = "</script><img src=x onerror=alert(1)>|x";
  SuiteBuilder b({"postgresql", target}, 1);
  b.Case(name, "selects", {1, 2}, true);
  b.Run("postgresql", name, 1, 1, {.rate = 100, .mean = 1, .p99 = 2});
  b.Run(target, name, 1, 1, {.rate = 200, .mean = 1, .p99 = 2});
  const std::string html = b.Render(SuiteFormat::kHtml);
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;|x"));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"));
  // Inside the embedded chart data the names are JSON with < and > escaped.
  EXPECT_THAT(html, HasSubstr("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"));
  const std::string markdown = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(markdown, HasSubstr("### Sweep: \\</script\\>\\<img src=x onerror=alert(1)\\>\\|x"));
  EXPECT_THAT(markdown, HasSubstr("| \\<script\\>alert(1)\\</script\\> TPS |"));
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
  b.Case("sweep", "point_select", {4}, true);
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 1000, .mean = 1, .p99 = 4});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 1000, .mean = 1, .p99 = 4.4});
  b.Run("postgresql", "insert users", 0, 1, {.rate = 1000, .mean = 1, .p99 = 4});
  b.Run("mariadb", "insert users", 0, 1, {.rate = 1000, .mean = 1, .p99 = 8});
  b.Run("postgresql", "sweep", 4, 1, {.rate = 1000, .mean = 1, .p99 = 4});
  b.Run("mariadb", "sweep", 4, 1, {.rate = 1000, .mean = 1, .p99 = 8});
  SetP99Basis(b.reports()[0], 100, 3.5, 4.6);  // 4.4 inside, and 4 inside [3.9, 4.9]
  SetP99Basis(b.reports()[1], 100, 3.9, 4.9);
  SetP99Basis(b.reports()[2], 100, 3.9, 4.1);
  SetP99Basis(b.reports()[3], 3, 7.5, 9);  // thin
  SetP99Basis(b.reports()[5], 3, 7.5, 9);  // thin
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(md, HasSubstr("| select users by id | selects | 1,000/s | 1.00 ms | 4.00 ms | "
                            "1,000/s | 1.00 ms | 4.40 ms | same throughput, same mean latency, "
                            "p99 latency within the 95% confidence intervals |\n"));
  EXPECT_THAT(md, HasSubstr("| 1,000/s | 1.00 ms | 8.00 ms* | same throughput, same mean "
                            "latency, 2.00× higher p99 latency* |\n"));
  EXPECT_THAT(md,
              HasSubstr("| 4 | 1,000 | — | 1.00 ms | 4.00 ms | 1,000 | — | 1.00 ms | 8.00 ms* |"));
  EXPECT_THAT(md, Not(HasSubstr("1.10× higher p99")));  // nor in the summary by category
  EXPECT_THAT(md, HasSubstr("| selects | select users by id | mariadb | same throughput | same "
                            "mean latency | p99 latency within the 95% confidence intervals |"));
  EXPECT_THAT(md, HasSubstr(MarkdownEscape(kFewSamplesNote)));
  EXPECT_THAT(b.Render(SuiteFormat::kHtml), HasSubstr("within the 95% confidence intervals"));
}

TEST(SuiteReportTest, KneeCasesAreLeftToTheRampView) {
  SuiteBuilder b({"postgresql", "mariadb"}, 1);
  v1::SuiteCase* ramp = b.Case("insert-events", "inserts", {}, true);
  ramp->mutable_plan()->add_stages()->mutable_knee()->set_max(64);
  b.Case("select users by id", "selects", {}, false);
  b.Run("postgresql", "insert-events", 0, 1, {.rate = 1234, .mean = 1, .p99 = 2});
  b.Run("mariadb", "insert-events", 0, 1, {.rate = 4321, .mean = 1, .p99 = 2});
  b.Run("postgresql", "select users by id", 0, 1, {.rate = 5000, .mean = 0.5, .p99 = 1});
  b.Run("mariadb", "select users by id", 0, 1, {.rate = 2500, .mean = 1, .p99 = 3});
  ASSERT_TRUE(IsRampCase(b.index().suite().cases(0)));
  const std::string md = b.Render(SuiteFormat::kMarkdown);
  EXPECT_THAT(MarkdownSection(md, "Cases"), Not(HasSubstr("insert-events")));
  EXPECT_THAT(MarkdownSection(md, "Summary by category"), Not(HasSubstr("insert-events")));
  EXPECT_THAT(MarkdownSection(md, "Headlines"), Not(HasSubstr("inserts")));
  EXPECT_THAT(md, Not(HasSubstr("### Sweep")));
  EXPECT_THAT(md, Not(HasSubstr("1,234")));
  // Still in the runs and in how it ran.
  EXPECT_THAT(MarkdownSection(md, "Runs"), HasSubstr("| insert-events |"));
  EXPECT_THAT(MarkdownSection(md, "How it ran"),
              HasSubstr("- insert-events (inserts): shop/insert-events, closed loop, 1 stage (a "
                        "knee search); 1 min per run\n"));
}

TEST(SuiteReportTest, HtmlDrawsSweepsOnALog2AxisAndCasesAsBars) {
  const std::string html = PublishedSuite().Render(SuiteFormat::kHtml);
  // TPS and p95 against clients, one line per target, on a log-2 axis.
  EXPECT_THAT(html, HasSubstr("data-chart=\"sweep-1-tps\""));
  EXPECT_THAT(html, HasSubstr("data-chart=\"sweep-1-p95\""));
  EXPECT_THAT(html, HasSubstr("\"sweep-1-tps\":{\"title\":\"TPS vs clients\",\"x_label\":"
                              "\"clients\",\"y_label\":\"transactions/s\",\"x_scale\":\"log2\""));
  EXPECT_THAT(html, HasSubstr("\"sweep-1-p95\":{\"title\":\"p95 vs clients\",\"x_label\":"
                              "\"clients\",\"y_label\":\"ms\",\"x_scale\":\"log2\""));
  EXPECT_THAT(html, HasSubstr("{\"name\":\"postgresql\",\"x\":[4,32],\"y\":[20000,18000]"));
  EXPECT_THAT(html, HasSubstr("{\"name\":\"mariadb\",\"x\":[4,32],\"y\":[0.6,2.5]"));
  EXPECT_THAT(html, Not(HasSubstr("queries/s")));
  // The cases without points: bars per category, no chart against a load they do not have.
  EXPECT_THAT(html, Not(HasSubstr("data-chart=\"case-")));
  EXPECT_THAT(html, HasSubstr("<h3>inserts</h3>\n<table class=\"bars\">"));
  EXPECT_THAT(html, HasSubstr("style=\"width:80.0%\"></div><span>1,000/s</span>"));
  EXPECT_THAT(html, HasSubstr("style=\"width:16.4%\"></div><span>205/s</span>"));
  // It prints: a page per section, table headers repeated.
  EXPECT_THAT(html, HasSubstr("@media print"));
  EXPECT_THAT(html, HasSubstr("<section class=\"print-page\">\n<h2>Sweep: point_select</h2>"));
  EXPECT_THAT(html, HasSubstr("<thead><tr><th>clients</th>"));
  EXPECT_THAT(html, HasSubstr("<h2>Headlines</h2>"));
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
  EXPECT_THAT(text,
              ::testing::ContainsRegex(absl::StrCat(
                  "report unreadable: ", dir_, "/runs/2.json: cannot read the file +runs/2.json")));
  EXPECT_THAT(text, HasSubstr("Runs: 2 (1 measured, 0 warm-up, 1 missing"));
  EXPECT_THAT(text, Not(HasSubstr("2,500")));
}

}  // namespace
}  // namespace dbload
