// `dbload suite run` end to end: the real executable against real PostgreSQL 15 and MariaDB
// 10.11 (tests/harness/dbenv), a suite of 2 targets x 3 cases x 2 load points with 2 agents in
// the process. Checked: every run's report exists where suite.json says, with its own plan
// (target, scenario, load point), and the reports' executed transactions add up, per database,
// to what the database itself counted over the suite (PostgreSQL: scans of sbtest1, one per
// point select; MariaDB: Com_stmt_execute, one per point select; see cli_test.cc for why these
// are exact). Then a second suite is interrupted (SIGINT) after its first run and --resume
// finishes it without running the finished run again, and cleans up after its last run.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "report/report.h"
#include "suite/suite_index.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/harness/child_process.h"
#include "tests/harness/scratch_dir.h"
#include "tests/harness/sql_clients.h"
#include "tests/harness/test_reports.h"
#include "tests/harness/test_servers.h"

#ifndef DBLOAD_BINARY
#error "DBLOAD_BINARY must be defined (the path of the dbload executable)"
#endif

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::dbload::testing::Child;
using ::dbload::testing::ProcessResult;
using ::dbload::testing::ReadReport;
using ::dbload::testing::RunProcess;
using ::dbload::testing::TestServers;
using ::dbload::testing::TestServersEnvironment;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

ProcessResult RunDbload(std::vector<std::string> args, int seconds = 60) {
  args.insert(args.begin(), DBLOAD_BINARY);
  return RunProcess(args, std::chrono::seconds(seconds));
}

int64_t ToInt(const std::string& text) {
  int64_t value = -1;
  return absl::SimpleAtoi(text, &value) ? value : -1;
}

class SuiteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir("dbload_suite_test");
    // Nothing but the suite may scan sbtest1 in database bench (see cli_test.cc).
    testing::TurnOffAutovacuum(servers());
  }
  static void TearDownTestSuite() { delete dir_; }

  static TestServers& servers() { return TestServersEnvironment::Servers(); }

  static std::string WriteFile(const std::string& name, const std::string& content) {
    return dir_->Write(name, content);
  }

  static std::string Targets() {
    return absl::StrCat(
        "targets:\n"
        "  - name: pg\n"
        "    target: {driver: postgresql, host: 127.0.0.1, port: ",
        servers().Get("PG_PORT"),
        ", user: bench, database: bench, password_file: ", servers().Get("PG_PASSWORD_FILE"),
        "}\n"
        "  - name: maria\n"
        "    target: {driver: mysql, host: 127.0.0.1, port: ",
        servers().Get("MARIADB_PORT"),
        ", user: bench, database: bench, password_file: ", servers().Get("MARIADB_PASSWORD_FILE"),
        "}\n");
  }

  // Scans of sbtest1 (each point select scans it once), once no session is left in bench and
  // two reads 300 ms apart agree (backends flush their statistics as they exit).
  static int64_t PgScans() {
    std::optional<int64_t> previous;
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    for (;;) {
      const std::vector<std::string> fields = absl::StrSplit(
          testing::Psql(servers(), "postgres",
                        "SELECT pg_stat_clear_snapshot(); SELECT (SELECT count(*) FROM "
                        "pg_stat_activity WHERE datname = 'bench' AND pid <> pg_backend_pid())"),
          '|');
      const bool idle = !fields.empty() && ToInt(fields[0]) == 0;
      const int64_t now = ToInt(testing::Psql(
          servers(), "bench",
          "SELECT pg_stat_clear_snapshot(); SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) "
          "FROM pg_stat_user_tables WHERE relname = 'sbtest1'"));
      if (idle && previous == now) return now;
      if (Clock::now() > give_up) {
        ADD_FAILURE() << "the scans of sbtest1 did not settle within 10 s";
        return now;
      }
      previous = idle ? std::optional(now) : std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }

  static int64_t MariaDbExecutes() {
    std::optional<int64_t> previous;
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
    for (;;) {
      const std::string line = testing::Mariadb(
          servers(), "SHOW GLOBAL STATUS WHERE Variable_name = 'Com_stmt_execute'");
      const std::vector<std::string> fields = absl::StrSplit(line, '\t');
      const int64_t now = fields.size() == 2 ? ToInt(fields[1]) : -1;
      if (previous == now) return now;
      if (Clock::now() > give_up) {
        ADD_FAILURE() << "Com_stmt_execute did not settle within 10 s";
        return now;
      }
      previous = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  static v1::SuiteIndex Index(const std::string& out) {
    absl::StatusOr<v1::SuiteIndex> index = LoadSuiteIndex(out + "/suite.json");
    EXPECT_TRUE(index.ok()) << index.status();
    return index.ok() ? *index : v1::SuiteIndex();
  }

  // Every file under DIR with its mtime and content: what "a refused run writes nothing"
  // compares, byte for byte.
  static std::map<std::string, std::string> Snapshot(const std::string& dir) {
    std::map<std::string, std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      std::ifstream in(entry.path());
      std::stringstream content;
      content << in.rdbuf();
      files[entry.path().string()] =
          absl::StrCat(entry.last_write_time().time_since_epoch().count(), " ", content.str());
    }
    return files;
  }

  static testing::ScratchDir* dir_;
};

testing::ScratchDir* SuiteTest::dir_ = nullptr;

constexpr char kCases[] = R"(cases:
  - name: closed
    category: selects
    plan: {workload: oltp, workload_options: {table_size: 1000}, scenario: point_select,
           load: {closed: {}}, stop: {duration: 1s}}
    points: [1, 3]
  - name: open-queries
    category: selects
    plan: {workload: oltp, workload_options: {table_size: 1000}, scenario: point_select,
           load: {open: {rate: 1}}, stop: {queries: 300, duration: 20s}}
    points: [300, 600]
  - name: poisson
    category: selects
    plan: {workload: oltp, workload_options: {table_size: 1000}, scenario: point_select,
           load: {open: {rate: 1, arrival: poisson}}, stop: {duration: 1s}}
    points: [200, 400]
)";

TEST_F(SuiteTest, RunsEveryTargetCaseAndPointInOrderWithReportsOfTheirOwn) {
  // The tables, prepared as `dbload prepare` does, so that the suite's runs are the only
  // statements the counters see (prepare: none).
  for (const std::string& target : {std::string("pg"), std::string("maria")}) {
    const std::string plan = WriteFile(
        absl::StrCat("prepare-", target, ".yaml"),
        absl::StrCat(
            "target: ",
            target == "pg" ? absl::StrCat("{driver: postgresql, port: ", servers().Get("PG_PORT"),
                                          ", user: bench, database: bench, password_file: ",
                                          servers().Get("PG_PASSWORD_FILE"), "}")
                           : absl::StrCat("{driver: mysql, port: ", servers().Get("MARIADB_PORT"),
                                          ", user: bench, database: bench, password_file: ",
                                          servers().Get("MARIADB_PASSWORD_FILE"), "}"),
            "\nworkload: oltp\nworkload_options: {table_size: 1000}\nscenario: point_select\n"
            "load: {closed: {clients: 1}}\nstop: {duration: 1s}\n"));
    ASSERT_EQ(RunDbload({"cleanup", plan}).exit_code, 0);
    const ProcessResult prepared = RunDbload({"prepare", plan});
    ASSERT_EQ(prepared.exit_code, 0) << prepared.Describe();
  }
  const std::string suite = WriteFile(
      "suite.yaml", absl::StrCat("name: small\nsettings: {prepare: none}\n", Targets(), kCases));
  const ProcessResult checked = RunDbload({"suite", "check", suite});
  ASSERT_EQ(checked.exit_code, 0) << checked.Describe();
  EXPECT_THAT(checked.out, HasSubstr("2 targets x 3 cases, 12 runs"));

  const int64_t scans_before = PgScans();
  const int64_t executes_before = MariaDbExecutes();
  const std::string out = dir_->path() + "/out-small";
  const ProcessResult run = RunDbload({"suite", "run", suite, "--agents", "2", "--out", out}, 200);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_THAT(run.out, HasSubstr("suite: run 1 of 12: pg/closed/1 (rep 1), ETA "));
  EXPECT_THAT(run.out, HasSubstr("suite: run 12 of 12: maria/poisson/400 (rep 1), ETA 1s"));
  // Each run's progress, from its own per-second samples (these runs are short: the line at
  // their end).
  const std::string figures = ", [0-9,]+ tx/s, p99 [0-9.]+\\*? ms, 0 errors\n";
  EXPECT_THAT(run.out, ::testing::ContainsRegex(
                           "\n  \\[1/12\\] pg closed 1 client: [0-9.]+ s of 1 s" + figures));
  EXPECT_THAT(run.out, ::testing::ContainsRegex(
                           "\n  \\[4/12\\] pg open-queries 600/s: [0-9.]+ s of 0.5 s" + figures));
  EXPECT_THAT(run.out, ::testing::ContainsRegex(
                           "\n  \\[12/12\\] maria poisson 400/s: [0-9.]+ s of 1 s" + figures));
  const int64_t scans = PgScans() - scans_before;
  const int64_t executes = MariaDbExecutes() - executes_before;

  const v1::SuiteIndex index = Index(out);
  EXPECT_EQ(index.suite().name(), "small");
  EXPECT_FALSE(index.started_at().empty());
  EXPECT_FALSE(index.finished_at().empty());
  ASSERT_EQ(index.runs_size(), 12);
  std::vector<std::string> order;
  std::map<std::string, int64_t> executed_by_target;
  std::set<std::string> run_ids;
  std::map<std::tuple<std::string, std::string, double>, v1::RunReport> reports;
  for (const v1::SuiteRun& entry : index.runs()) {
    order.push_back(absl::StrCat(entry.target(), "/", entry.case_name(), "/", entry.point()));
    EXPECT_EQ(entry.state(), "finished") << entry.report();
    EXPECT_EQ(entry.repetition(), 1u);
    EXPECT_EQ(entry.report(), absl::StrCat("runs/", entry.target(), "/", entry.case_name(), "/",
                                           entry.point(), "-r1.json"));
    const v1::RunReport report = ReadReport(out + "/" + entry.report());
    EXPECT_EQ(report.run_id(), entry.run_id());
    EXPECT_TRUE(run_ids.insert(report.run_id()).second) << "a report of another run";
    EXPECT_EQ(report.state(), "finished");
    EXPECT_EQ(report.plan().target().driver(), entry.target() == "pg" ? "postgresql" : "mysql");
    EXPECT_EQ(report.plan().target().port(),
              static_cast<uint32_t>(
                  servers().GetInt(entry.target() == "pg" ? "PG_PORT" : "MARIADB_PORT")));
    EXPECT_EQ(report.plan().scenario(), "point_select");
    EXPECT_GT(report.executed(), 0u) << entry.report();
    EXPECT_EQ(report.errors(), 0u) << entry.report();
    if (entry.case_name() == "closed") {
      EXPECT_EQ(report.plan().load().closed().clients(), entry.point());
      EXPECT_EQ(report.plan().target().pool(), entry.point());
    } else {
      EXPECT_EQ(report.plan().load().open().rate(), entry.point());
      EXPECT_EQ(report.wanted_rate(), entry.point());
    }
    if (entry.case_name() == "open-queries") {
      EXPECT_EQ(report.executed(), 300u);
    }
    if (entry.case_name() == "poisson") {
      EXPECT_EQ(report.plan().load().open().arrival(), v1::OpenLoad::POISSON);
      // 1 s at the point's rate: its own figures, not the other point's.
      EXPECT_NEAR(static_cast<double>(report.executed()), entry.point(), 0.3 * entry.point());
    }
    EXPECT_GE(report.agents_size(), 1);
    executed_by_target[entry.target()] += static_cast<int64_t>(report.executed());
    reports[{entry.target(), entry.case_name(), entry.point()}] = report;
  }
  EXPECT_THAT(order, ::testing::ElementsAre("pg/closed/1", "pg/closed/3", "pg/open-queries/300",
                                            "pg/open-queries/600", "pg/poisson/200",
                                            "pg/poisson/400", "maria/closed/1", "maria/closed/3",
                                            "maria/open-queries/300", "maria/open-queries/600",
                                            "maria/poisson/200", "maria/poisson/400"));
  // The database's own counts: every point select of the suite is in exactly one report.
  EXPECT_EQ(scans, executed_by_target["pg"]);
  EXPECT_EQ(executes, executed_by_target["maria"]);

  // The suite report at the end: printed, and written beside the runs as Markdown and HTML,
  // exactly what `dbload suite report DIR` renders from them.
  EXPECT_THAT(run.out, HasSubstr("Suite report: " + out + "/report.html"));
  for (const auto& [format, file] : {std::pair{"markdown", "report.md"}, {"html", "report.html"}}) {
    const ProcessResult rendered = RunDbload({"suite", "report", out, "--format", format});
    ASSERT_EQ(rendered.exit_code, 0) << rendered.Describe();
    std::ifstream in(out + "/" + file);
    std::stringstream written;
    written << in.rdbuf();
    EXPECT_EQ(written.str(), rendered.out) << file;
  }
  const ProcessResult text = RunDbload({"suite", "report", out});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_THAT(run.out, HasSubstr(text.out));
  // Its figures are the run reports': each case and point's TPS and p99 on both targets in
  // the case's sweep table, with the ratio to the first under it (suite_report_test checks
  // every figure in detail).
  const ProcessResult markdown = RunDbload({"suite", "report", out, "--format", "markdown"});
  ASSERT_EQ(markdown.exit_code, 0) << markdown.Describe();
  for (const auto& [key, pg] : reports) {
    const auto& [target, case_name, point] = key;
    if (target != "pg") continue;
    const v1::RunReport& maria = reports.at({"maria", case_name, point});
    const size_t at = markdown.out.find(absl::StrCat("### Sweep: ", case_name, "\n"));
    ASSERT_NE(at, std::string::npos) << case_name << markdown.out;
    const std::string sweep = markdown.out.substr(at, markdown.out.find("\n### ", at + 1) - at);
    const size_t row = sweep.find(absl::StrCat("\n| ", FormatCount(point), " | "));
    ASSERT_NE(row, std::string::npos) << sweep;
    const std::string line = sweep.substr(row + 1, sweep.find('\n', row + 1) - row - 1);
    EXPECT_THAT(line, HasSubstr(absl::StrCat("| ", FormatCount(point), " | ",
                                             FormatCount(pg.actual_rate()), " | ")));
    EXPECT_THAT(line, HasSubstr(absl::StrCat(" | ", FormatCount(maria.actual_rate()), " | ")));
    EXPECT_THAT(line, HasSubstr(FormatLatency(pg.response_time().p99_ms()))) << line;
    EXPECT_THAT(line, HasSubstr(FormatLatency(maria.response_time().p99_ms()))) << line;
    const double ratio = maria.actual_rate() / pg.actual_rate();
    const std::string up = absl::StrFormat("%.2f", ratio), down = absl::StrFormat("%.2f", 1 / ratio);
    const std::string words = up == "1.00" || down == "1.00" ? "same"
                              : ratio > 1 ? absl::StrCat(up, "× higher")
                                          : absl::StrCat(down, "× lower");
    const std::string at_point = case_name == "closed"
                                     ? absl::StrCat(point, point == 1 ? " client" : " clients")
                                     : FormatPerSecond(point);
    EXPECT_THAT(sweep, HasSubstr(absl::StrCat("- at ", at_point, ": maria vs pg: ", words, " TPS")))
        << sweep;
  }

  // The same directory again is refused without --resume: one line, no report, no file in DIR
  // created or changed (report.md and report.html included).
  const auto before = Snapshot(out);
  ASSERT_TRUE(before.contains(out + "/report.md"));
  const ProcessResult again = RunDbload({"suite", "run", suite, "--out", out});
  EXPECT_EQ(again.exit_code, 2) << again.Describe();
  EXPECT_EQ(again.out, "");
  EXPECT_EQ(again.err, absl::StrCat("dbload: suite run: ", out,
                                    " already holds a suite (suite.json); --resume continues it, "
                                    "or choose another --out\n"));
  EXPECT_EQ(Snapshot(out), before);
}

TEST_F(SuiteTest, InterruptedSuiteResumesWithoutRedoingFinishedRuns) {
  const std::string suite = WriteFile(
      "resume.yaml",
      absl::StrCat("name: resume\nsettings: {prepare: once, cleanup: true}\n", Targets(),
                   "cases:\n"
                   "  - name: closed\n"
                   "    plan: {workload: oltp, workload_options: {table_size: 1000}, scenario: "
                   "point_select, load: {closed: {}}, stop: {duration: 1s}}\n"
                   "    points: [1, 2, 3]\n"));
  const std::string out = dir_->path() + "/out-resume";
  {
    Child child({DBLOAD_BINARY, "suite", "run", suite, "--out", out});
    ASSERT_TRUE(child.PumpUntil(
        [](const std::string& text) { return text.find("suite: run 2 of 6") != std::string::npos; },
        std::chrono::seconds(60)))
        << child.out() << child.err();
    child.Signal(SIGINT);
    const ProcessResult interrupted = child.Wait(std::chrono::seconds(30));
    ASSERT_EQ(interrupted.exit_code, 130) << interrupted.Describe();
  }
  v1::SuiteIndex index = Index(out);
  ASSERT_EQ(index.runs_size(), 6);
  EXPECT_EQ(index.runs(0).state(), "finished");
  EXPECT_EQ(index.runs(1).state(), "interrupted");
  for (int i = 2; i < 6; ++i) EXPECT_EQ(index.runs(i).state(), "pending");
  EXPECT_TRUE(index.finished_at().empty());
  const std::string first_report = out + "/" + index.runs(0).report();
  const std::string first_id = index.runs(0).run_id();
  struct stat before {};
  ASSERT_EQ(stat(first_report.c_str(), &before), 0);

  // Another suite in the same directory, or the same one read another way, is refused, saying
  // what differs, and writes nothing (no report.md either).
  const auto before_refusals = Snapshot(out);
  for (const std::vector<std::string>& how :
       {std::vector<std::string>{"--set", "cases.0.points=[1, 4]"}, {"--time-scale", "2"}}) {
    std::vector<std::string> args = {"suite", "run", suite, "--out", out, "--resume"};
    args.insert(args.end(), how.begin(), how.end());
    const ProcessResult other = RunDbload(args);
    EXPECT_EQ(other.exit_code, 2) << other.Describe();
    EXPECT_EQ(other.out, "");
    EXPECT_THAT(other.err, ::testing::StartsWith(absl::StrCat("dbload: suite run: --resume ", out,
                                                              ": the suite was run with ")));
    EXPECT_THAT(other.err, HasSubstr(how[0]));
    EXPECT_EQ(std::count(other.err.begin(), other.err.end(), '\n'), 1) << other.err;
  }
  EXPECT_EQ(Snapshot(out), before_refusals);
  EXPECT_FALSE(std::filesystem::exists(out + "/report.md"));

  const ProcessResult resumed = RunDbload({"suite", "run", suite, "--out", out, "--resume"}, 120);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_THAT(resumed.out, ::testing::Not(HasSubstr("suite: run 1 of 6")));
  EXPECT_THAT(resumed.out, HasSubstr("suite: run 2 of 6: pg/closed/2"));
  EXPECT_THAT(resumed.out, ::testing::Not(HasSubstr("preparing oltp on pg")));
  EXPECT_THAT(resumed.out, HasSubstr("preparing oltp on maria"));
  EXPECT_THAT(resumed.out, HasSubstr("cleaning up oltp on pg"));
  index = Index(out);
  for (const v1::SuiteRun& entry : index.runs()) {
    EXPECT_EQ(entry.state(), "finished") << entry.report();
    EXPECT_EQ(ReadReport(out + "/" + entry.report()).run_id(), entry.run_id());
  }
  EXPECT_FALSE(index.finished_at().empty());
  EXPECT_EQ(index.runs(0).run_id(), first_id);
  struct stat after {};
  ASSERT_EQ(stat(first_report.c_str(), &after), 0);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  // cleanup: true dropped the tables after each target's last run.
  EXPECT_EQ(testing::Psql(servers(), "bench", "SELECT to_regclass('public.sbtest1') IS NULL"), "t");
  EXPECT_EQ(testing::Mariadb(servers(),
                             "SELECT COUNT(*) FROM information_schema.tables WHERE "
                             "table_schema = 'bench' AND table_name = 'sbtest1'"),
            "0");
}

TEST_F(SuiteTest, BadSuitesNameFileLineAndField) {
  const std::string suite = WriteFile(
      "bad.yaml",
      absl::StrCat("name: bad\n", Targets(),
                   "cases:\n  - name: c\n    plan: {workload: oltp, scenario: "
                   "point_selekt, load: {closed: {clients: 1}}, stop: {duration: 1s}}\n"));
  const ProcessResult checked = RunDbload({"suite", "check", suite});
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_THAT(checked.err, HasSubstr(absl::StrCat(suite, ":9:38: cases.0.plan.scenario: ")));
  EXPECT_THAT(checked.err, HasSubstr("(case c on target pg)"));
  const ProcessResult list = RunDbload({"suites"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_THAT(list.out, HasSubstr("mysql-vs-postgresql-shop: 2 targets x 17 cases, 34 runs"));
  EXPECT_THAT(list.out, HasSubstr("sysbench-sweep: 2 targets x 3 cases, 72 runs"));
  EXPECT_THAT(list.out, HasSubstr("ingestion-ramp: 2 targets x 1 cases, 2 runs, at most "));
  EXPECT_THAT(list.out, HasSubstr("a knee search ends at its knee"));
  EXPECT_THAT(list.out, HasSubstr("inventory-contention: 2 targets x 2 cases, 8 runs"));
  EXPECT_THAT(list.out, HasSubstr("postgresql-vs-mariadb-quick: 2 targets x 2 cases, 8 runs, "
                                  "about 16 s of load planned"));
  const ProcessResult builtin = RunDbload({"suite", "check", "sysbench-sweep", "--scale", "2"});
  EXPECT_EQ(builtin.exit_code, 0) << builtin.Describe();
  // Two scales of one workload into the same tables, prepared once: refused before any load
  // (nothing written), naming both cases and the setting that loads each case's own.
  const std::string out = (std::filesystem::path(dir_->path()) / "two-scales").string();
  const ProcessResult once = RunDbload({"suite", "run", "tpcc-postgresql-vs-mariadb", "--set",
                                        "settings.prepare=once", "--out", out});
  EXPECT_EQ(once.exit_code, 2);
  EXPECT_THAT(once.err, HasSubstr("suites/tpcc-postgresql-vs-mariadb.yaml: cases.1 "
                                  "(tpcc-10-warehouses) loads other data of workload tpcc than "
                                  "cases.0 (tpcc-1-warehouse)"));
  EXPECT_THAT(once.err, HasSubstr("set settings.prepare to per_case"));
  EXPECT_FALSE(std::filesystem::exists(out));
  const ProcessResult same =
      RunDbload({"suite", "check", "tpcc-postgresql-vs-mariadb", "--set", "settings.prepare=once",
                 "--set", "cases.*.plan.workload_options.warehouses=3"});
  EXPECT_EQ(same.exit_code, 0) << same.Describe();
}

}  // namespace
}  // namespace dbload

int main(int argc, char** argv) {
  return dbload::testing::RunTestsWithServers(argc, argv, {"postgres", "mariadb"});
}
