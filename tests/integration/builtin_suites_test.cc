// The built-in suites end to end, each scaled to seconds with the options a user has (--set with
// wildcards, --scale, --time-scale), on a real PostgreSQL 15 and a real MariaDB 10.11
// (tests/harness/dbenv), through the `dbload` executable with 2 agents in the process:
//   - sysbench-sweep: its three oltp cases at 2 and 8 clients, a warm-up run before each;
//   - mysql-vs-postgresql-shop: all 17 cases on a tiny data set;
//   - tpcc-postgresql-vs-mariadb: its two scales as 1 warehouse at 1 and 4 clients and 2 at 2,
//     each prepared before its case (a run on the other case's data is refused), tpmC in the
//     sweep tables;
//   - ingestion-ramp: a knee search with an SLO this test makes tight (between the p99 of 1
//     and of 33 clients, measured first), so that both databases reach a knee.
// Every figure of the publication tables in DIR/report.md (the sweep's TPS, QPS, p95, p99; the
// shop's 17-row table; each target's staircase and knee) is read back from the Markdown and
// checked against the run report it must come from, within the printed precision. read_write on
// PostgreSQL must finish, with its ignored errors (sysbench's) counted.

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "report/report.h"
#include "suite/suite_index.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/dbload_processes.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined (the path of the dbload executable)"
#endif

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;

const std::vector<std::string> kTargets = {"postgresql", "mariadb"};

// ----- reading the Markdown back ----------------------------------------------------------

// Markdown's backslash escapes undone ("read\\_write" is "read_write").
std::string Unescaped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

// The lines of the section whose heading is `heading` (unescaped, alone or followed by a
// " (category)") up to the next heading of the same or a higher level.
std::vector<std::string> Section(const std::string& markdown, const std::string& heading) {
  const std::vector<std::string> lines = absl::StrSplit(markdown, '\n');
  const size_t level = heading.find(' ');
  std::vector<std::string> out;
  bool inside = false;
  for (const std::string& line : lines) {
    if (inside && absl::StartsWith(line, "#")) {
      const size_t l = line.find(' ');
      if (l != std::string::npos && l <= level && line.substr(0, l) == std::string(l, '#')) break;
    }
    const std::string title = Unescaped(line);
    if (title == heading || absl::StartsWith(title, heading + " (")) {
      inside = true;
      continue;
    }
    if (inside) out.push_back(line);
  }
  return out;
}

// A Markdown table: header cells and rows of cells, Markdown's escapes undone.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // The column whose header is `name`; -1 when none is.
  int Column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  }
};

std::vector<std::string> Cells(const std::string& line) {
  std::string body(absl::StripAsciiWhitespace(line));
  body = std::string(absl::StripSuffix(absl::StripPrefix(body, "|"), "|"));
  // Split on '|' not escaped as "\|".
  std::vector<std::string> cells;
  std::string cell;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '\\' && i + 1 < body.size()) {
      cell += body[++i];
    } else if (body[i] == '|') {
      cells.push_back(std::string(absl::StripAsciiWhitespace(cell)));
      cell.clear();
    } else {
      cell += body[i];
    }
  }
  cells.push_back(std::string(absl::StripAsciiWhitespace(cell)));
  return cells;
}

// The `n`th table (0-based) of a section's lines.
std::optional<Table> TableIn(const std::vector<std::string>& lines, int n = 0) {
  int seen = -1;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (!absl::StartsWith(lines[i], "|") || !absl::StartsWith(lines[i + 1], "|---")) continue;
    if (++seen < n) continue;
    Table table{.header = Cells(lines[i]), .rows = {}};
    for (size_t r = i + 2; r < lines.size() && absl::StartsWith(lines[r], "|"); ++r) {
      table.rows.push_back(Cells(lines[r]));
    }
    return table;
  }
  return std::nullopt;
}

// A printed figure read back: its value in the unit the test compares in (ms for durations,
// 1 for counts and rates) and half a unit of its last printed digit, the most that printing
// can have changed it. Accepts "12.3 ms", "850 µs", "1.25 s", "1,234", "1,234/s", "0.0006";
// a trailing mark ("*", "†") or a spread " [lo–hi]" is left out.
struct Printed {
  double value = 0;
  double half_step = 0;
};
std::optional<Printed> ReadFigure(std::string text) {
  if (const size_t bracket = text.find(" ["); bracket != std::string::npos) text.resize(bracket);
  if (const size_t paren = text.find(" ("); paren != std::string::npos) text.resize(paren);
  text = absl::StrReplaceAll(text, {{",", ""}, {"*", ""}, {"†", ""}, {"/s", ""}});
  text = std::string(absl::StripAsciiWhitespace(text));
  double scale = 1;
  for (const auto& [unit, factor] :
       std::vector<std::pair<std::string, double>>{{" µs", 1e-3}, {" ms", 1}, {" s", 1e3}}) {
    if (absl::EndsWith(text, unit)) {
      text.resize(text.size() - unit.size());
      scale = factor;
      break;
    }
  }
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) return std::nullopt;
  const size_t dot = text.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  return Printed{.value = value * scale, .half_step = 0.5 * std::pow(10, -decimals) * scale};
}

// The cell shows `expected` (in the same unit as ReadFigure's) to its printed precision.
void ExpectFigure(const std::string& cell, double expected, const std::string& where) {
  const std::optional<Printed> printed = ReadFigure(cell);
  ASSERT_TRUE(printed.has_value()) << where << ": not a figure: '" << cell << "'";
  EXPECT_NEAR(printed->value, expected, printed->half_step * 1.0001 + 1e-12)
      << where << ": the report prints '" << cell << "', the run report says " << expected;
}

// ----- the suite's files ------------------------------------------------------------------

struct SuiteResult {
  v1::SuiteIndex index;
  std::vector<v1::RunReport> reports;  // in the index's order
  std::string markdown;
  // The measured run (repetition 1) of (target, case, point).
  const v1::RunReport* Measured(const std::string& target, const std::string& case_name,
                                double point) const {
    for (int i = 0; i < index.runs_size(); ++i) {
      const v1::SuiteRun& run = index.runs(i);
      if (run.target() == target && run.case_name() == case_name && run.point() == point &&
          !run.discarded() && run.repetition() == 1) {
        return &reports[i];
      }
    }
    return nullptr;
  }
};

class BuiltinSuitesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_builtin_suites_test");
    // The built-in suites read their passwords from these variables, as their headers say.
    absl::StatusOr<std::string> pg = servers().PostgresPassword();
    absl::StatusOr<std::string> maria = servers().MariaDbPassword();
    ASSERT_TRUE(pg.ok() && maria.ok());
    setenv("PGPASSWORD", pg->c_str(), 1);
    setenv("MYSQL_PWD", maria->c_str(), 1);
  }
  static void TearDownTestSuite() { delete dir_; }
  static TestServers& servers() { return TestServersEnvironment::Servers(); }

  // `dbload suite run NAME --agents 2` on the harness servers with `sets`, then its files.
  static SuiteResult RunSuite(const std::string& name, const std::string& out_name,
                              std::vector<std::string> extra, int timeout_s) {
    const std::string out = (std::filesystem::path(dir_->path()) / out_name).string();
    std::vector<std::string> args = {
        "suite",
        "run",
        name,
        "--agents",
        "2",
        "--out",
        out,
        "--set",
        absl::StrCat("targets.0.target.port=", servers().Get("PG_PORT")),
        "--set",
        absl::StrCat("targets.1.target.port=", servers().Get("MARIADB_PORT"))};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult run = testing::RunDbload(args, std::chrono::seconds(timeout_s));
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    SuiteResult result;
    absl::StatusOr<v1::SuiteIndex> index = LoadSuiteIndex(out + "/suite.json");
    EXPECT_TRUE(index.ok()) << index.status();
    if (!index.ok()) return result;
    result.index = *index;
    for (const v1::SuiteRun& r : result.index.runs()) {
      EXPECT_EQ(r.state(), "finished") << r.target() << " " << r.case_name() << " " << r.point();
      absl::StatusOr<v1::RunReport> report =
          testing::LoadReport((std::filesystem::path(out) / r.report()).string());
      EXPECT_TRUE(report.ok()) << r.report() << ": " << report.status();
      result.reports.push_back(report.ok() ? *report : v1::RunReport());
    }
    result.markdown = testing::ReadFile(out + "/report.md").value_or("");
    EXPECT_FALSE(result.markdown.empty()) << out << "/report.md";
    return result;
  }

  static testing::ScratchDir* dir_;
};
testing::ScratchDir* BuiltinSuitesTest::dir_ = nullptr;

double Qps(const v1::RunReport& r) {
  return r.queries_duration_s() > 0 ? r.statements() / r.queries_duration_s() : 0;
}

TEST_F(BuiltinSuitesTest, SysbenchSweepPublishesTpsQpsAndP95PerClientsAndTarget) {
  const std::vector<double> points = {2, 8};
  const SuiteResult suite =
      RunSuite("sysbench-sweep", "sweep",
               {"--set", "cases.*.points=[2, 8]", "--set", "cases.*.plan.stop.duration=1s", "--set",
                // One small table: few rows make read_write meet duplicate keys and deadlocks at 8
                // clients, as the source's runs did at many more.
                "cases.*.plan.workload_options={tables: 1, table_size: 100}"},
               300);
  ASSERT_FALSE(HasFailure());
  for (const std::string case_name : {"read_write", "read_only", "point_select"}) {
    const std::optional<Table> table =
        TableIn(Section(suite.markdown, absl::StrCat("### Sweep: ", case_name)));
    ASSERT_TRUE(table.has_value()) << case_name << "\n" << suite.markdown;
    ASSERT_EQ(table->header[0], "clients");
    ASSERT_EQ(table->rows.size(), points.size()) << case_name;
    for (size_t p = 0; p < points.size(); ++p) {
      const std::vector<std::string>& row = table->rows[p];
      ExpectFigure(row[0], points[p], "clients");
      for (const std::string& target : kTargets) {
        const v1::RunReport* r = suite.Measured(target, case_name, points[p]);
        ASSERT_NE(r, nullptr) << target << " " << case_name << " " << points[p];
        const std::string where = absl::StrCat(case_name, " ", target, " ", points[p]);
        for (const auto& [column, value] :
             std::vector<std::pair<std::string, double>>{{"TPS", r->actual_rate()},
                                                         {"QPS", Qps(*r)},
                                                         {"p95", r->response_time().p95_ms()},
                                                         {"p99", r->response_time().p99_ms()}}) {
          const int c = table->Column(absl::StrCat(target, " ", column));
          ASSERT_GE(c, 0) << absl::StrCat(target, " ", column) << " in " << case_name;
          ExpectFigure(row[c], value, absl::StrCat(where, " ", column));
        }
        // point_select sends 1 statement per transaction; read_only and read_write more.
        if (case_name == "point_select") {
          EXPECT_EQ(r->statements(), r->executed()) << where;
        } else {
          EXPECT_GT(r->statements(), 10 * r->executed()) << where;
        }
      }
    }
  }
  // read_write on PostgreSQL finished at 8 clients and counted what it ignored, apart.
  const v1::RunReport* rw = suite.Measured("postgresql", "read_write", 8);
  ASSERT_NE(rw, nullptr);
  EXPECT_EQ(rw->state(), "finished");
  EXPECT_EQ(rw->errors(), 0u);
  EXPECT_GT(rw->ignored(), 0u) << "100 rows at 8 clients meet duplicate keys or deadlocks";
  uint64_t ignored = 0;
  for (const v1::QueryTypeReport& q : rw->query_types()) ignored += q.ignored();
  EXPECT_EQ(ignored, rw->ignored());
  // The warm-up runs are there and left out.
  int warmups = 0;
  for (const v1::SuiteRun& r : suite.index.runs()) warmups += r.discarded();
  EXPECT_EQ(warmups, 2 * 3 * 2);
  EXPECT_THAT(suite.markdown, HasSubstr("### Headlines"));
}

TEST_F(BuiltinSuitesTest, ShopComparisonPublishesItsSeventeenCasesInOneTable) {
  const SuiteResult suite = RunSuite(
      "mysql-vs-postgresql-shop", "shop",
      // Pools of 8: case 15 deletes batches of 100 orders out of one connection's share of
      // the order ids (split among all the run's connections), which a tiny data set must hold.
      {"--scale", "0.1", "--time-scale", "0.1", "--set", "targets.*.target.pool=8", "--set",
       "cases.*.plan.workload_options={users: 2000, items: 2000, orders: 8000, order_items: "
       "16000}"},
      400);
  ASSERT_FALSE(HasFailure());
  const std::optional<Table> table = TableIn(Section(suite.markdown, "### Cases"));
  ASSERT_TRUE(table.has_value()) << suite.markdown;
  ASSERT_EQ(table->rows.size(), 17u) << suite.markdown;
  ASSERT_EQ(table->header[0], "case");
  ASSERT_EQ(table->header[1], "category");
  std::map<std::string, std::string> category_of;
  for (const v1::SuiteCase& c : suite.index.suite().cases()) category_of[c.name()] = c.category();
  for (const std::vector<std::string>& row : table->rows) {
    ASSERT_TRUE(category_of.contains(row[0])) << row[0];
    EXPECT_EQ(row[1], category_of[row[0]]) << row[0];
    for (const std::string& target : kTargets) {
      const v1::RunReport* r = suite.Measured(target, row[0], 0);
      ASSERT_NE(r, nullptr) << target << " " << row[0];
      for (const auto& [column, value] :
           std::vector<std::pair<std::string, double>>{{"throughput", r->actual_rate()},
                                                       {"mean", r->response_time().mean_ms()},
                                                       {"p99", r->response_time().p99_ms()}}) {
        const int c = table->Column(absl::StrCat(target, " ", column));
        ASSERT_GE(c, 0) << absl::StrCat(target, " ", column);
        ExpectFigure(row[c], value, absl::StrCat(row[0], " ", target, " ", column));
      }
    }
  }
  const std::vector<std::string> headlines = Section(suite.markdown, "### Headlines");
  for (const std::string category :
       {"inserts", "selects", "updates", "deletes", "transactions", "mixed"}) {
    EXPECT_TRUE(std::any_of(headlines.begin(), headlines.end(),
                            [&](const std::string& l) { return absl::StrContains(l, category); }))
        << "no headline for " << category << "\n"
        << suite.markdown;
  }
}

// The stage report of the ramp's knee search.
const v1::StageReport* KneeStage(const v1::RunReport& report) {
  for (const v1::StageReport& s : report.stages()) {
    if (!s.knee_steps().empty()) return &s;
  }
  return nullptr;
}

// The inventory suite at 1 s per point: every run finished with every invariant of the workload
// read and holding, and the hot items' conflicts retried on PostgreSQL (repeatable read).
TEST_F(BuiltinSuitesTest, InventoryContentionKeepsItsInvariantsAndRetriesItsConflicts) {
  const SuiteResult suite = RunSuite("inventory-contention", "inventory",
                                     {"--set", "cases.*.plan.stop.duration=1s"}, 180);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(suite.reports.size(), 8u);
  for (const v1::RunReport& report : suite.reports) {
    EXPECT_EQ(report.invariants_size(), 3) << report.invariants_not_checked();
    for (const v1::InvariantResult& invariant : report.invariants()) {
      EXPECT_TRUE(invariant.holds()) << invariant.name() << " " << invariant.after();
    }
    EXPECT_EQ(report.row_changes_not_checked(), "");
    EXPECT_GT(report.executed(), 0u);
  }
  const v1::RunReport* hot = suite.Measured("postgresql", "hot_items", 16);
  ASSERT_NE(hot, nullptr);
  EXPECT_GT(hot->retries(), 0u) << RenderReportText(*hot);
  EXPECT_EQ(hot->manifest().isolation(), "repeatable_read");
}

// TPC-C on 1 warehouse, scaled to seconds: the sweep table's tpmC is each measured run's (its
// New-Orders per minute), the consistency conditions hold after every run.
// Warehouses x clients: the two cases load different scales into the same tables, each
// prepared before its first run on a target (prepare: per_case). A run refuses a warehouse
// table that does not hold its warehouses (TpccRunTest), so every run finishing is the proof
// that each case ran on its own data.
TEST_F(BuiltinSuitesTest, TpccComparisonPublishesTpmCAndStaysConsistent) {
  const std::map<std::string, std::pair<int, std::vector<double>>> cases = {
      {"tpcc-1-warehouse", {1, {1, 4}}}, {"tpcc-10-warehouses", {2, {2}}}};
  const SuiteResult suite = RunSuite(
      "tpcc-postgresql-vs-mariadb", "tpcc",
      {"--set", "cases.0.points=[1, 4]", "--set", "cases.1.points=[2]", "--set",
       "cases.1.plan.workload_options.warehouses=2", "--set", "cases.*.plan.stop.duration=2s"},
      300);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(suite.reports.size(), 12u) << "2 targets x 3 points x (warm-up + measured)";
  for (const v1::RunReport& report : suite.reports) {
    EXPECT_EQ(report.invariants_size(), 4) << report.invariants_not_checked();
    for (const v1::InvariantResult& invariant : report.invariants()) {
      EXPECT_TRUE(invariant.holds()) << invariant.name() << " " << invariant.after();
    }
  }
  for (const auto& [name, scale] : cases) {
    const auto& [warehouses, points] = scale;
    const std::optional<Table> table =
        TableIn(Section(suite.markdown, absl::StrCat("### Sweep: ", name)));
    ASSERT_TRUE(table.has_value()) << suite.markdown;
    ASSERT_EQ(table->rows.size(), points.size());
    for (size_t p = 0; p < points.size(); ++p) {
      for (const std::string& target : kTargets) {
        const v1::RunReport* r = suite.Measured(target, name, points[p]);
        ASSERT_NE(r, nullptr) << target << " " << name << " " << points[p];
        EXPECT_EQ(r->plan().workload_options().at("warehouses"), absl::StrCat(warehouses));
        const std::optional<double> tpmc = TpmC(*r);
        ASSERT_TRUE(tpmc.has_value());
        EXPECT_GT(*tpmc, 0);
        const int c = table->Column(absl::StrCat(target, " tpmC"));
        ASSERT_GE(c, 0) << suite.markdown;
        ExpectFigure(table->rows[p][c], *tpmc, absl::StrCat(target, " tpmC at ", points[p]));
        const int tps = table->Column(absl::StrCat(target, " TPS"));
        ASSERT_GE(tps, 0);
        ExpectFigure(table->rows[p][tps], r->actual_rate(), absl::StrCat(target, " TPS"));
      }
    }
  }
}

TEST_F(BuiltinSuitesTest, IngestionRampReportsEachTargetsStaircaseAndKnee) {
  const std::vector<std::string> small = {
      "--set", "cases.0.plan.workload_options={customers: 1000, events: 1000}",
      "--set", "cases.0.plan.stages.0.knee.every=1s",
      "--set", "cases.0.plan.stages.0.knee.refine=2"};
  // First the two ends of the staircase on each database, with no latency limit: 1 and 33
  // clients. The SLO is the geometric mean of the slower database's p99 at 1 client and the
  // faster one's at 33, so that both meet it at 1 client and miss it at 33 with a margin of
  // the same factor on each side (one client's p99 varies several-fold between runs here).
  std::vector<std::string> ends = small;
  ends.insert(ends.end(),
              {"--set", "cases.0.plan.stages.0.knee.p99=null", "--set",
               "cases.0.plan.stages.0.knee.step=32", "--set", "cases.0.plan.stages.0.knee.max=33"});
  const SuiteResult first = RunSuite("ingestion-ramp", "ramp-ends", ends, 120);
  ASSERT_FALSE(HasFailure());
  double one_client_ms = 0, many_clients_ms = 1e300;
  for (const std::string& target : kTargets) {
    const v1::RunReport* r = first.Measured(target, "insert-events", 0);
    ASSERT_NE(r, nullptr);
    const v1::StageReport* stage = KneeStage(*r);
    ASSERT_NE(stage, nullptr) << target;
    ASSERT_EQ(stage->knee_steps_size(), 2) << target;
    one_client_ms = std::max(one_client_ms, stage->knee_steps(0).p99_ms());
    many_clients_ms = std::min(many_clients_ms, stage->knee_steps(1).p99_ms());
  }
  ASSERT_GT(many_clients_ms, 2 * one_client_ms)
      << "33 clients must be clearly slower than 1 for an SLO to fall between them";
  const std::string slo =
      absl::StrCat(std::llround(std::sqrt(one_client_ms * many_clients_ms) * 1000), "us");

  std::vector<std::string> ramp = small;
  ramp.insert(ramp.end(), {"--set", "cases.0.plan.stages.0.knee.step=8", "--set",
                           "cases.0.plan.stages.0.knee.max=33", "--set",
                           absl::StrCat("cases.0.plan.stages.0.knee.p99=", slo)});
  const SuiteResult suite = RunSuite("ingestion-ramp", "ramp", ramp, 300);
  ASSERT_FALSE(HasFailure());
  const std::vector<std::string> section = Section(suite.markdown, "### Ramp: insert-events");
  ASSERT_FALSE(section.empty()) << suite.markdown;
  const std::string ramp_text = absl::StrJoin(section, "\n");
  for (const std::string& target : kTargets) {
    const v1::RunReport* r = suite.Measured(target, "insert-events", 0);
    ASSERT_NE(r, nullptr) << target;
    const v1::StageReport* stage = KneeStage(*r);
    ASSERT_NE(stage, nullptr) << target;
    const std::vector<std::string> lines = Section(ramp_text, absl::StrCat("#### ", target));
    const std::optional<Table> table = TableIn(lines);
    ASSERT_TRUE(table.has_value()) << target << "\n" << ramp_text;
    ASSERT_EQ(table->rows.size(), static_cast<size_t>(stage->knee_steps_size())) << ramp_text;
    const int clients = table->Column("clients"), throughput = table->Column("throughput"),
              p99 = table->Column("p99"), met = table->Column("SLO");
    ASSERT_TRUE(clients >= 0 && throughput >= 0 && p99 >= 0 && met >= 0) << ramp_text;
    bool missed = false;
    for (int i = 0; i < stage->knee_steps_size(); ++i) {
      const v1::KneeStep& step = stage->knee_steps(i);
      const std::vector<std::string>& row = table->rows[i];
      const std::string where = absl::StrCat(target, " step ", i + 1);
      ExpectFigure(row[clients], step.level(), where + " clients");
      ExpectFigure(row[throughput], step.achieved_rate(), where + " throughput");
      ExpectFigure(row[p99], step.p99_ms(), where + " p99");
      EXPECT_EQ(absl::StartsWith(row[met], "met"), step.met()) << where << ": " << row[met];
      missed = missed || !step.met();
    }
    // The SLO was made tight: the search met it at one client and missed it further up.
    EXPECT_TRUE(stage->knee_steps(0).met()) << target << " (SLO p99 " << slo << ")";
    EXPECT_TRUE(missed) << target << ": no step missed p99 " << slo;
    ASSERT_GT(stage->knee(), 0) << target;
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                            [&](const std::string& l) {
                              return absl::StartsWith(
                                  l, absl::StrCat("Knee: ", absl::StrFormat("%.6g", stage->knee()),
                                                  " clients"));
                            }))
        << target << ": knee " << stage->knee() << "\n"
        << ramp_text;
  }
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
