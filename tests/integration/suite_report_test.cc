// The suite report from real runs: the `dbload` executable runs short closed-loop plans against
// a real PostgreSQL and a real MariaDB (tests/harness/dbenv) — 2 targets × 2 cases × 2 client
// counts, a second repetition of one case's second point, and a discarded warm-up run — and the
// test writes their suite.json by hand as proto/dbload/v1/suite.proto describes it. `dbload suite
// report` renders it as text, Markdown and HTML; every cell of each sweep's Markdown table (TPS,
// QPS, p95, p99 per target and client count) and every ratio under it is checked against the run
// reports it came from (medians, spreads and ratios recomputed here), as is the summary by
// category, and a real headless Chromium opens the HTML: the log-2 charts hold as many points as
// the data, the script ran without an error, nothing was fetched.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "report/report.h"
#include "dbload/v1/suite.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/headless_page.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined (the path of the dbload executable)"
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

const std::vector<std::string> kTargets = {"postgresql", "mariadb"};
struct CaseDef {
  std::string name, category, scenario;
};
const std::vector<CaseDef> kCases = {{"point select", "selects", "point_select"},
                                     {"update non-index", "updates", "update_non_index"}};
const std::vector<int> kPoints = {1, 2};

ProcessResult RunDbload(std::vector<std::string> args) {
  args.insert(args.begin(), DBLOAD_BINARY);
  return RunProcess(args, std::chrono::seconds(90));
}


// Recomputed here, independently of the library: median (mean of the middle two), min, max.
struct Stat {
  double median = 0, min = 0, max = 0;
  size_t n = 0;
};
Stat StatOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stat s{.median = 0, .min = v.front(), .max = v.back(), .n = v.size()};
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  return s;
}

std::string Figure(const Stat& s, std::string (*format)(double)) {
  return s.n == 1 ? format(s.median)
                  : absl::StrCat(format(s.median), " [", format(s.min), "–", format(s.max), "]");
}
std::string Words(double base, double value) {
  const double ratio = value / base;
  const std::string up = absl::StrFormat("%.2f", ratio), down = absl::StrFormat("%.2f", 1 / ratio);
  if (up == "1.00" || down == "1.00") return "same";
  return ratio > 1 ? absl::StrCat(up, "× higher") : absl::StrCat(down, "× lower");
}
bool NoClearWinner(const Stat& a, const Stat& b) {
  const double spread = std::max(a.max - a.min, b.max - b.min);
  return spread > 0 && std::abs(a.median - b.median) < spread;
}
// The range of ratios over the points, as the summary says it.
std::string Range(const std::vector<double>& ratios, const std::string& what) {
  const double lo = *std::min_element(ratios.begin(), ratios.end());
  const double hi = *std::max_element(ratios.begin(), ratios.end());
  const std::string lo_words = Words(1, lo), hi_words = Words(1, hi);
  if (lo_words == hi_words) return absl::StrCat(lo_words, " ", what);
  if (lo_words == "same" || lo > 1) return absl::StrFormat("%.2f×–%.2f× higher %s", lo, hi, what);
  if (hi_words == "same" || hi < 1) {
    return absl::StrFormat("%.2f×–%.2f× lower %s", 1 / hi, 1 / lo, what);
  }
  return absl::StrCat("from ", lo_words, " to ", hi_words, " ", what);
}

class SuiteReportTest : public ::testing::Test {
 protected:
  struct Group {
    std::vector<v1::RunReport> reports;
    Stat Of(double (*get)(const v1::RunReport&)) const {
      std::vector<double> values;
      for (const v1::RunReport& r : reports) values.push_back(get(r));
      return StatOf(values);
    }
    Stat rate() const {
      return Of([](const v1::RunReport& r) { return r.actual_rate(); });
    }
    Stat mean() const {
      return Of([](const v1::RunReport& r) { return r.response_time().mean_ms(); });
    }
    Stat p95() const {
      return Of([](const v1::RunReport& r) { return r.response_time().p95_ms(); });
    }
    Stat p99() const {
      return Of([](const v1::RunReport& r) { return r.response_time().p99_ms(); });
    }
    // Statements per second, known only when every run counted its statements.
    bool qps_known() const {
      return std::all_of(reports.begin(), reports.end(), [](const v1::RunReport& r) {
        return r.statements() > 0 && r.queries_duration_s() > 0;
      });
    }
    Stat qps() const {
      return Of([](const v1::RunReport& r) {
        return static_cast<double>(r.statements()) / r.queries_duration_s();
      });
    }
    // What the runs' p99 rest on, merged as the suite report merges it: the fewest samples
    // beyond it in any run and the union of the runs' 95 % intervals.
    bool P99Few() const {
      return std::any_of(reports.begin(), reports.end(), [](const v1::RunReport& r) {
        return RestsOnFewSamples(r.response_time(), 99);
      });
    }
    bool P99Inside(double ms) const {
      double low = 1e300, high = 0;
      bool open = false;
      for (const v1::RunReport& r : reports) {
        const v1::PercentileBasis* b = BasisOf(r.response_time(), 99);
        EXPECT_NE(b, nullptr);
        if (b == nullptr) return false;
        low = std::min(low, b->ci_low_ms());
        high = std::max(high, b->ci_high_ms());
        open = open || b->ci_high_open();
      }
      return ms >= low && (open || ms <= high);
    }
    bool limited() const {
      return std::any_of(reports.begin(), reports.end(),
                         [](const v1::RunReport& r) { return r.generator_limited(); });
    }
  };

  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_suite_report_test");
    ASSERT_EQ(chmod(dir().c_str(), 0755), 0);
    std::filesystem::create_directories(dir() + "/runs");
    ASSERT_EQ(access(kChromium, X_OK), 0)
        << kChromium << " is missing: scripts/setup installs Debian's chromium package";
    groups_ = new std::map<std::tuple<std::string, std::string, int>, Group>();
    testing::TestServers& servers = TestServersEnvironment::Servers();
    const std::map<std::string, v1::Target> targets = {{"postgresql", servers.PostgresTarget()},
                                                       {"mariadb", servers.MariaDbTarget()}};

    v1::SuiteIndex index;
    index.set_format_version(1);
    v1::Suite& suite = *index.mutable_suite();
    suite.set_name("two databases, two cases");
    for (const std::string& name : kTargets) {
      v1::SuiteTarget* t = suite.add_targets();
      t->set_name(name);
      *t->mutable_target() = targets.at(name);
    }
    for (const CaseDef& c : kCases) {
      v1::SuiteCase* sc = suite.add_cases();
      sc->set_name(c.name);
      sc->set_category(c.category);
      sc->mutable_plan()->set_workload("oltp");
      sc->mutable_plan()->set_scenario(c.scenario);
      sc->mutable_plan()->mutable_load()->mutable_closed();
      for (int p : kPoints) sc->add_points(p);
    }
    suite.mutable_settings()->set_repetitions(1);
    suite.mutable_settings()->set_prepare("once");
    index.set_started_at("2026-12-01T00:00:00Z");

    // The runs, in the order a suite runs them: per target, per case, per point; a warm-up
    // run first, and a second repetition of the first case's second point.
    for (const std::string& target : kTargets) {
      const std::string prepare_plan =
          WritePlan("prepare.yaml", targets.at(target), "point_select", 1);
      const ProcessResult cleanup = RunDbload({"cleanup", prepare_plan});
      ASSERT_EQ(cleanup.exit_code, 0) << cleanup.Describe();
      const ProcessResult prepare = RunDbload({"prepare", prepare_plan});
      ASSERT_EQ(prepare.exit_code, 0) << prepare.Describe();
      for (size_t c = 0; c < kCases.size(); ++c) {
        for (int point : kPoints) {
          std::vector<uint32_t> repetitions = {1};
          if (c == 0 && point == kPoints.front() && target == "postgresql")
            repetitions.insert(repetitions.begin(), 0);
          if (c == 0 && point == kPoints.back()) repetitions.push_back(2);
          for (uint32_t repetition : repetitions) {
            const std::string plan =
                WritePlan("plan.yaml", targets.at(target), kCases[c].scenario, point);
            const std::string report = absl::StrFormat("runs/%02d.json", index.runs_size() + 1);
            const ProcessResult run = RunDbload({"run", plan, "--report", dir() + "/" + report});
            ASSERT_EQ(run.exit_code, 0) << run.Describe();
            absl::StatusOr<v1::RunReport> parsed = testing::LoadReport(dir() + "/" + report);
            ASSERT_TRUE(parsed.ok()) << parsed.status();
            v1::SuiteRun* r = index.add_runs();
            r->set_target(target);
            r->set_case_name(kCases[c].name);
            r->set_point(point);
            r->set_repetition(repetition);
            r->set_discarded(repetition == 0);
            r->set_report(report);
            r->set_state(parsed->state());
            r->set_run_id(parsed->run_id());
            ASSERT_EQ(parsed->state(), "finished");
            if (repetition > 0) {
              (*groups_)[{kCases[c].name, target, point}].reports.push_back(*parsed);
            } else {
              warmup_ = new v1::RunReport(*parsed);
            }
          }
        }
      }
    }
    index.set_finished_at("2026-12-01T00:01:00Z");
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    options.add_whitespace = true;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(index, &json, options).ok());
    std::ofstream(dir() + "/suite.json") << json;
  }

  static void TearDownTestSuite() {
    delete dir_;
    delete groups_;
    delete warmup_;
    dir_ = nullptr;
  }

  static std::string WritePlan(const std::string& file, const v1::Target& target,
                               const std::string& scenario, int clients) {
    const std::string yaml = absl::StrCat(
        "name: '", target.driver(), "-", scenario, "-", clients,
        "'\ntarget: {driver: ", target.driver(), ", host: ", target.host(),
        ", port: ", target.port(), ", user: ", target.user(),
        ", password_file: ", target.password_file(), ", database: ", target.database(),
        ", pool: 2, connect_timeout: 5s}\n", "workload: oltp\nscenario: ", scenario,
        "\nworkload_options: {tables: 1, table_size: 1000}\nload: {closed: {clients: ", clients,
        "}}\nstop: {duration: 1s}\nseed: 7\n");
    return dir_->Write(file, yaml);
  }

  static const std::string& dir() { return dir_->path(); }

  static const Group& G(const std::string& name, const std::string& target, int point) {
    return groups_->at({name, target, point});
  }

  static testing::ScratchDir* dir_;
  static std::map<std::tuple<std::string, std::string, int>, Group>* groups_;
  static v1::RunReport* warmup_;
};

testing::ScratchDir* SuiteReportTest::dir_ = nullptr;
std::map<std::tuple<std::string, std::string, int>, SuiteReportTest::Group>*
    SuiteReportTest::groups_ = nullptr;
v1::RunReport* SuiteReportTest::warmup_ = nullptr;

std::string PointText(int point) {
  return absl::StrCat(point, point == 1 ? " client" : " clients");
}

// The Markdown between a heading and the next one.
std::string MarkdownSection(const std::string& md, const std::string& heading) {
  const size_t at = md.find(absl::StrCat(heading, "\n"));
  if (at == std::string::npos) return "";
  const size_t end = md.find("\n### ", at + heading.size());
  return md.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The cells of a Markdown table's rows (header and alignment row left out).
std::vector<std::vector<std::string>> TableRows(const std::string& section) {
  std::vector<std::vector<std::string>> rows;
  bool header = true;
  for (absl::string_view text : absl::StrSplit(section, '\n')) {
    if (!absl::StartsWith(text, "| ")) continue;  // also the alignment row, |---:|…
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    text.remove_prefix(2);
    text.remove_suffix(2);
    for (absl::string_view cell : absl::StrSplit(text, " | ")) cells.emplace_back(cell);
    rows.push_back(std::move(cells));
  }
  return rows;
}

TEST_F(SuiteReportTest, TextAndMarkdownFiguresAreTheRunReports) {
  const ProcessResult text = RunDbload({"suite", "report", dir()});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  const ProcessResult markdown = RunDbload({"suite", "report", dir(), "--format", "markdown"});
  ASSERT_EQ(markdown.exit_code, 0) << markdown.Describe();
  const std::string& md = markdown.out;
  EXPECT_THAT(text.out, HasSubstr("Baseline: postgresql (the first target)"));
  EXPECT_THAT(text.out, HasSubstr("Runs: 11 (10 measured, 1 warm-up, 0 missing"));
  EXPECT_THAT(
      MarkdownSection(md, "### Runs"),
      HasSubstr("| 1 | postgresql | point select | 1 client | warm-up | discarded (warm-up) "
                "| runs/01.json |\n"));
  // The machine: what the probe recorded of each server, from the reports' manifests.
  const std::string machine = MarkdownSection(md, "### Machine and servers");
  EXPECT_THAT(machine, HasSubstr("- **postgresql**: PostgreSQL 15"));
  EXPECT_THAT(machine, HasSubstr("shared\\_buffers "));
  EXPECT_THAT(machine, HasSubstr("- **mariadb**: MariaDB 10.11"));
  EXPECT_THAT(machine, HasSubstr("innodb\\_buffer\\_pool\\_size "));

  size_t checked = 0;
  for (const CaseDef& c : kCases) {
    // One table per sweep: a row per client count, TPS, QPS, p95 and p99 of each target.
    const std::string sweep = MarkdownSection(md, absl::StrCat("### Sweep: ", c.name));
    ASSERT_FALSE(sweep.empty()) << md;
    EXPECT_THAT(sweep, HasSubstr("| clients | postgresql TPS | postgresql QPS | postgresql p95 | "
                                 "postgresql p99 | mariadb TPS | mariadb QPS | mariadb p95 | "
                                 "mariadb p99 |\n|---:|"));
    const std::vector<std::vector<std::string>> rows = TableRows(sweep);
    ASSERT_EQ(rows.size(), kPoints.size()) << sweep;
    std::vector<double> rate_ratios, mean_ratios;
    for (size_t r = 0; r < kPoints.size(); ++r) {
      const int point = kPoints[r];
      std::vector<std::string> expected = {absl::StrCat(point)};
      for (const std::string& target : kTargets) {
        const Group& g = G(c.name, target, point);
        expected.push_back(Figure(g.rate(), FormatCount));
        expected.push_back(g.qps_known() ? Figure(g.qps(), FormatCount) : "—");
        expected.push_back(Figure(g.p95(), FormatLatency));
        expected.push_back(absl::StrCat(Figure(g.p99(), FormatLatency), g.P99Few() ? "*" : ""));
      }
      EXPECT_EQ(rows[r], expected) << sweep;
      ++checked;

      // Under the table: the ratios at this point, each against the same point.
      const Group& base = G(c.name, "postgresql", point);
      const Group& other = G(c.name, "mariadb", point);
      std::vector<std::string> phrases;
      const auto phrase = [&](const Stat& a, const Stat& b, const std::string& what) {
        phrases.push_back(absl::StrCat(Words(a.median, b.median), " ", what,
                                       NoClearWinner(a, b) ? " (no clear winner)" : ""));
      };
      phrase(base.rate(), other.rate(), "TPS");
      if (base.qps_known() && other.qps_known()) phrase(base.qps(), other.qps(), "QPS");
      phrase(base.p95(), other.p95(), "p95 latency");
      const std::string p99_words = Words(base.p99().median, other.p99().median);
      const bool within = p99_words != "same" && base.P99Inside(other.p99().median) &&
                          other.P99Inside(base.p99().median);
      if (within) {
        phrases.push_back("p99 latency within the 95% confidence intervals");
      } else {
        phrase(base.p99(), other.p99(), "p99 latency");
      }
      if (base.P99Few() || other.P99Few()) phrases.back() += "*";
      const std::string line = absl::StrCat(
          "at ", PointText(point), ": mariadb vs postgresql: ", absl::StrJoin(phrases, ", "));
      EXPECT_THAT(sweep,
                  HasSubstr(absl::StrCat("\n- ", absl::StrReplaceAll(line, {{"*", "\\*"}}), "\n")));
      EXPECT_THAT(text.out, HasSubstr(absl::StrCat("\n  ", line, "\n")));
      rate_ratios.push_back(other.rate().median / base.rate().median);
      mean_ratios.push_back(other.mean().median / base.mean().median);
    }
    // The summary by category: the range of the ratios over the points, each at the same point.
    EXPECT_THAT(MarkdownSection(md, "### Summary by category"),
                HasSubstr(absl::StrCat("| ", c.category, " | ", c.name,
                                       " (1 case at 2 points (1–2 clients), each against the "
                                       "same point) | mariadb | ",
                                       Range(rate_ratios, "throughput"), " | ",
                                       Range(mean_ratios, "mean latency"), " | ")))
        << md;
  }
  EXPECT_EQ(checked, kCases.size() * kPoints.size());
  // The repeated point has a spread; the warm-up run is in none of its figures.
  const Group& repeated = G(kCases[0].name, "postgresql", kPoints.back());
  ASSERT_EQ(repeated.reports.size(), 2u);
  EXPECT_THAT(md, HasSubstr(Figure(repeated.rate(), FormatCount)));
  EXPECT_EQ(G(kCases[0].name, "postgresql", kPoints.front()).reports.size(), 1u);
  EXPECT_NE(warmup_->actual_rate(), G(kCases[0].name, "postgresql", 1).rate().median);
  EXPECT_THAT(md, Not(::testing::ContainsRegex("[0-9]e-0[0-9]")));
}

TEST_F(SuiteReportTest, HtmlChartsRenderInChromium) {
  const std::string page = dir() + "/suite.html";
  const ProcessResult html =
      RunDbload({"suite", "report", dir(), "--format", "html", "--output", page});
  ASSERT_EQ(html.exit_code, 0) << html.Describe();
  EXPECT_EQ(html.out, "");
  const testing::RenderedPage rendered = testing::RenderInChromium(page, dir() + "/chromium");
  const std::string& dom = rendered.dom;
  // The script drew every chart without an error, and the page asked for nothing.
  EXPECT_TRUE(testing::ChartsRendered(dom)) << dom.substr(0, 2000);
  EXPECT_TRUE(rendered.requests.empty()) << rendered.requests.front();

  for (size_t c = 0; c < kCases.size(); ++c) {
    // TPS and p95 against clients: one line per target, one point per client count.
    for (const std::string chart : {"tps", "p95"}) {
      const std::string section = ChartSection(dom, absl::StrCat("sweep-", c + 1, "-", chart));
      EXPECT_EQ(Polylines(section), (std::map<std::string, size_t>{{"postgresql", kPoints.size()},
                                                                   {"mariadb", kPoints.size()}}))
          << chart;
      // A dot per measured point (2 targets × 2 client counts).
      EXPECT_EQ(CountOf(section, "class=\"point\""), kTargets.size() * kPoints.size());
      // The log-2 axis: a tick at each power of 2 from 1 to 2 clients.
      EXPECT_THAT(section, HasSubstr("text-anchor=\"middle\">1</text>"));
      EXPECT_THAT(section, HasSubstr("text-anchor=\"middle\">2</text>"));
    }
    const std::string tps = ChartSection(dom, absl::StrCat("sweep-", c + 1, "-tps"));
    EXPECT_THAT(tps, HasSubstr(">transactions/s</text>"));
    // A spread bar where repetitions differ.
    size_t spreads = 0;
    for (const std::string& target : kTargets) {
      for (int point : kPoints) {
        const Stat s = G(kCases[c].name, target, point).rate();
        spreads += s.max > s.min;
      }
    }
    EXPECT_EQ(CountOf(tps, "class=\"spread\""), spreads) << kCases[c].name;
  }
  // The probe's common counters per transaction, side by side (both databases give commits).
  EXPECT_THAT(dom, HasSubstr("<td class=\"text\">commits</td>"));
  EXPECT_THAT(dom, HasSubstr("<td class=\"text\">process/cpu_seconds</td>"));
  EXPECT_THAT(dom, HasSubstr("<h2>Summary by category</h2>"));
}

TEST_F(SuiteReportTest, BadInputIsRefusedNamingTheFile) {
  const ProcessResult none = RunDbload({"suite", "report", dir() + "/runs"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr(absl::StrCat(dir(), "/runs/suite.json: cannot read the file")));
  const ProcessResult format = RunDbload({"suite", "report", dir(), "--format", "csv"});
  EXPECT_EQ(format.exit_code, 2);
  EXPECT_THAT(
      format.err,
      HasSubstr("dbload suite report: --format: expected text, markdown, html; got \"csv\""));
  const ProcessResult sub = RunDbload({"suite", "frobnicate"});
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_THAT(sub.err, HasSubstr("dbload suite: expected `dbload suite run SUITE"));
  EXPECT_THAT(sub.err, HasSubstr("`dbload suite report DIR [...]`"));
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
