#include "suite/suite_runner.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "report/report.h"
#include "suite/suite_index.h"
#include "suite/suite_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

namespace v1 = dbload::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSuite[] = R"(name: s
settings: {warmup_runs: 1, repetitions: 1, prepare: once, cleanup: true}
targets:
  - {name: a, target: {driver: noop}}
  - {name: b, target: {driver: noop}}
cases:
  - name: c
    plan: {workload: oltp, scenario: point_select, load: {closed: {}}, stop: {duration: 2s}}
    points: [1, 2]
)";

// Records what the runner asks for, and writes a report for each run unless told otherwise.
class FakeExecutor : public SuiteExecutor {
 public:
  absl::Status Prepare(const v1::Plan& plan) override {
    calls.push_back(absl::StrCat("prepare ", plan.target().driver(), " ", plan.name()));
    return prepare_status;
  }
  absl::Status Cleanup(const v1::Plan& plan) override {
    calls.push_back(absl::StrCat("cleanup ", plan.name()));
    return absl::OkStatus();
  }
  int Run(const v1::Plan& plan, const std::string& report_path,
          const IntervalSink& on_interval) override {
    const int index = runs++;
    calls.push_back(absl::StrCat("run ", plan.name(), " ", plan.load().closed().clients()));
    for (const v1::IntervalSample& sample : samples) on_interval(sample);
    v1::RunReport report;
    report.set_format_version(1);
    report.set_run_id(absl::StrCat("id-", plan.name(), "-", index));
    report.set_executed(10);
    int code = 0;
    if (index == fail_at) code = 1;
    if (index == degrade_at) code = 4;
    if (index == interrupt_at) {
      interrupted->store(true);
      code = 130;
    }
    report.set_state(code == 0 || code == 4 ? "finished" : code == 1 ? "failed" : "interrupted");
    report.set_degraded(code == 4);
    EXPECT_TRUE(SaveReportJson(report_path, report).ok());
    return code;
  }

  std::vector<std::string> calls;
  // Fed to every run's interval sink, as the agents' seconds would be.
  std::vector<v1::IntervalSample> samples;
  absl::Status prepare_status;
  int runs = 0;
  int fail_at = -1;
  int degrade_at = -1;
  int interrupt_at = -1;
  std::atomic<bool>* interrupted = nullptr;
};

class SuiteRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/suite_runner_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    absl::StatusOr<v1::Suite> suite = ParseSuite(kSuite, "s.yaml", {});
    ASSERT_TRUE(suite.ok()) << suite.status();
    suite_ = *suite;
    executor_.interrupted = &interrupted_;
  }

  int Run(bool resume, FakeExecutor& executor, const v1::Suite* suite = nullptr, double scale = 1,
          double time_scale = 1, std::vector<std::string> overrides = {}) {
    return RunSuite(suite == nullptr ? suite_ : *suite,
                    {.directory = dir_,
                     .resume = resume,
                     .interrupted = &interrupted_,
                     .out = &out_,
                     .now = [] { return std::string("2026-01-01T00:00:00Z"); },
                     .scale = scale,
                     .time_scale = time_scale,
                     .overrides = std::move(overrides)},
                    executor);
  }

  // Every file under DIR with its size, mtime and content: what "nothing written" compares.
  std::map<std::string, std::string> Snapshot() {
    std::map<std::string, std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
      std::ifstream in(entry.path());
      std::stringstream content;
      content << in.rdbuf();
      files[entry.path().string()] =
          absl::StrCat(entry.last_write_time().time_since_epoch().count(), " ", content.str());
    }
    return files;
  }

  v1::SuiteIndex Index() {
    absl::StatusOr<v1::SuiteIndex> index = LoadSuiteIndex(dir_ + "/suite.json");
    EXPECT_TRUE(index.ok()) << index.status();
    return index.ok() ? *index : v1::SuiteIndex();
  }

  std::vector<std::string> States() {
    std::vector<std::string> states;
    const v1::SuiteIndex index = Index();
    for (const v1::SuiteRun& run : index.runs()) states.push_back(run.state());
    return states;
  }

  std::string dir_;
  v1::Suite suite_;
  std::atomic<bool> interrupted_{false};
  std::ostringstream out_;
  FakeExecutor executor_;
};

TEST_F(SuiteRunnerTest, PreparesRunsAndCleansUpPerTargetInOrder) {
  EXPECT_EQ(Run(false, executor_), 0) << out_.str();
  EXPECT_THAT(executor_.calls, ElementsAre("prepare noop s/a/c/1", "run s/a/c/1 1", "run s/a/c/1 1",
                                           "run s/a/c/2 2", "run s/a/c/2 2", "cleanup s/a/c/1",
                                           "prepare noop s/b/c/1", "run s/b/c/1 1", "run s/b/c/1 1",
                                           "run s/b/c/2 2", "run s/b/c/2 2", "cleanup s/b/c/1"));
  const v1::SuiteIndex index = Index();
  EXPECT_EQ(index.started_at(), "2026-01-01T00:00:00Z");
  EXPECT_EQ(index.finished_at(), "2026-01-01T00:00:00Z");
  ASSERT_EQ(index.runs_size(), 8);
  EXPECT_EQ(index.runs(0).report(), "runs/a/c/1-w1.json");
  EXPECT_TRUE(index.runs(0).discarded());
  EXPECT_EQ(index.runs(1).run_id(), "id-s/a/c/1-1");
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/runs/b/c/2-r1.json"));
  EXPECT_THAT(States(), ::testing::Each("finished"));
  // The ETA adds up the runs left: 8 x 2 s at first, 2 s before the last.
  EXPECT_THAT(out_.str(), HasSubstr("suite: run 1 of 8: a/c/1 (warm-up, discarded), ETA 16s"));
  EXPECT_THAT(out_.str(), HasSubstr("suite: run 8 of 8: b/c/2 (rep 1), ETA 2s"));
  EXPECT_THAT(out_.str(), HasSubstr("suite: b/c/2 finished: executed 10"));
  // The directory holds a suite now: only --resume continues it.
  FakeExecutor again;
  EXPECT_EQ(Run(false, again), 2);
  EXPECT_THAT(out_.str(), HasSubstr("already holds a suite"));
  EXPECT_TRUE(again.calls.empty());
}

TEST_F(SuiteRunnerTest, AFailedRunIsRecordedAndTheSuiteGoesOn) {
  executor_.fail_at = 2;
  EXPECT_EQ(Run(false, executor_), 1);
  EXPECT_THAT(States(), ElementsAre("finished", "finished", "failed", "finished", "finished",
                                    "finished", "finished", "finished"));
  // --resume runs the failed one again, and nothing else.
  FakeExecutor resumed;
  EXPECT_EQ(Run(true, resumed), 0);
  EXPECT_THAT(resumed.calls, ElementsAre("run s/a/c/2 2", "cleanup s/a/c/1"));
  EXPECT_THAT(States(), ::testing::Each("finished"));
}

// A degraded run (it lost an agent: exit code 4) is recorded as such, the suite goes on, and
// the suite exits with 4 unless something worse happened (a failed run: 1).
TEST_F(SuiteRunnerTest, ADegradedRunIsRecordedTheSuiteGoesOnAndExitsDegraded) {
  executor_.degrade_at = 3;
  EXPECT_EQ(Run(false, executor_), 4) << out_.str();
  EXPECT_EQ(executor_.runs, 8);
  EXPECT_THAT(States(), ElementsAre("finished", "finished", "finished", "degraded", "finished",
                                    "finished", "finished", "finished"));
  EXPECT_THAT(out_.str(), HasSubstr("suite: a/c/2 degraded: executed 10"));
  // Its report stands: --resume has nothing left to run.
  FakeExecutor resumed;
  EXPECT_EQ(Run(true, resumed), 4);
  EXPECT_EQ(resumed.runs, 0);

  std::filesystem::remove_all(dir_);
  FakeExecutor worse;
  worse.interrupted = &interrupted_;
  worse.degrade_at = 1;
  worse.fail_at = 5;
  EXPECT_EQ(Run(false, worse), 1);
}

TEST_F(SuiteRunnerTest, AFailedPrepareSkipsItsTargetsRuns) {
  executor_.prepare_status = absl::UnavailableError("no database");
  EXPECT_EQ(Run(false, executor_), 1);
  EXPECT_EQ(executor_.runs, 0);
  EXPECT_THAT(States(), ::testing::Each("failed"));
  EXPECT_THAT(out_.str(),
              HasSubstr("suite: prepare on a failed: no database; its runs are skipped"));
}

TEST_F(SuiteRunnerTest, InterruptedSuiteResumesFromTheFirstUnfinishedRun) {
  executor_.interrupt_at = 1;
  EXPECT_EQ(Run(false, executor_), 130);
  EXPECT_THAT(States(), ElementsAre("finished", "interrupted", "pending", "pending", "pending",
                                    "pending", "pending", "pending"));
  EXPECT_TRUE(Index().finished_at().empty());

  // Another suite in the same directory is refused, naming what differs.
  v1::Suite other = suite_;
  other.mutable_cases(0)->set_points(1, 4);
  FakeExecutor refused;
  EXPECT_EQ(Run(true, refused, &other), 2);
  EXPECT_THAT(out_.str(), HasSubstr("points[1]: 2 -> 4"));
  EXPECT_TRUE(refused.calls.empty());

  interrupted_.store(false);
  FakeExecutor resumed;
  EXPECT_EQ(Run(true, resumed), 0);
  // Target a already had a run: no second prepare; b is prepared as usual.
  EXPECT_THAT(resumed.calls,
              ElementsAre("run s/a/c/1 1", "run s/a/c/2 2", "run s/a/c/2 2", "cleanup s/a/c/1",
                          "prepare noop s/b/c/1", "run s/b/c/1 1", "run s/b/c/1 1", "run s/b/c/2 2",
                          "run s/b/c/2 2", "cleanup s/b/c/1"));
  EXPECT_EQ(Index().runs(0).run_id(), "id-s/a/c/1-0");  // the finished run was not redone
  EXPECT_THAT(States(), ::testing::Each("finished"));
}

// Two scales of one workload, loaded into the same tables: each case prepares its own data on
// each target and drops it before the next case loads; the last case's stays (cleanup: false).
constexpr char kPerCaseSuite[] = R"(name: s
settings: {prepare: per_case, cleanup: false}
targets:
  - {name: a, target: {driver: noop}}
  - {name: b, target: {driver: noop}}
cases:
  - name: small
    plan: {workload: oltp, workload_options: {table_size: 10}, scenario: point_select,
           load: {closed: {}}, stop: {duration: 2s}}
    points: [1, 2]
  - name: large
    plan: {workload: oltp, workload_options: {table_size: 100}, scenario: point_select,
           load: {closed: {}}, stop: {duration: 2s}}
    points: [1]
)";

// What follows case small's last run on target a: its data dropped, then case large on a, then
// both cases on b.
std::vector<std::string> PerCaseCallsAfterSmallOnA() {
  return {"cleanup s/a/small/1", "cleanup s/a/large/1", "prepare noop s/a/large/1",
          "run s/a/large/1 1",   "cleanup s/b/small/1", "prepare noop s/b/small/1",
          "run s/b/small/1 1",   "run s/b/small/2 2",   "cleanup s/b/small/1",
          "cleanup s/b/large/1", "prepare noop s/b/large/1", "run s/b/large/1 1"};
}

TEST_F(SuiteRunnerTest, PerCasePreparesEachCaseAndDropsItBeforeTheNext) {
  absl::StatusOr<v1::Suite> suite = ParseSuite(kPerCaseSuite, "s.yaml", {});
  ASSERT_TRUE(suite.ok()) << suite.status();
  EXPECT_EQ(Run(false, executor_, &*suite), 0) << out_.str();
  std::vector<std::string> expected = {"cleanup s/a/small/1", "prepare noop s/a/small/1",
                                       "run s/a/small/1 1", "run s/a/small/2 2"};
  for (std::string& call : PerCaseCallsAfterSmallOnA()) expected.push_back(std::move(call));
  EXPECT_EQ(executor_.calls, expected);
  EXPECT_THAT(out_.str(), HasSubstr("suite: preparing oltp for large on b"));
}

// Resumed inside a case: its data is there (the case has a run done), so it is not prepared
// again; the next case is.
TEST_F(SuiteRunnerTest, PerCaseResumedInsideACaseKeepsItsData) {
  absl::StatusOr<v1::Suite> suite = ParseSuite(kPerCaseSuite, "s.yaml", {});
  ASSERT_TRUE(suite.ok()) << suite.status();
  executor_.interrupt_at = 1;
  EXPECT_EQ(Run(false, executor_, &*suite), 130);
  interrupted_.store(false);
  FakeExecutor resumed;
  EXPECT_EQ(Run(true, resumed, &*suite), 0) << out_.str();
  std::vector<std::string> expected = {"run s/a/small/2 2"};
  for (std::string& call : PerCaseCallsAfterSmallOnA()) expected.push_back(std::move(call));
  EXPECT_EQ(resumed.calls, expected);
}

v1::IntervalSample Second(double elapsed, double rate, double p99_ms, uint64_t errors) {
  v1::IntervalSample sample;
  sample.set_elapsed_s(elapsed);
  sample.set_achieved_rate(rate);
  sample.set_executed(static_cast<uint64_t>(rate));
  sample.set_p99_ms(p99_ms);
  sample.set_errors(errors);
  return sample;
}

std::vector<std::string> ProgressLines(const std::string& out) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (absl::StartsWith(line, "  [")) lines.emplace_back(line);
  }
  return lines;
}

// Inside a run, a line when 10 s of the run's own clock passed since the last one, and the
// last second's at its end: from the samples' times, so no wall clock is involved.
TEST_F(SuiteRunnerTest, ProgressLinesEveryTenSecondsOfTheRunAndAtItsEnd) {
  absl::StatusOr<v1::Suite> suite = ParseSuite(R"(name: p
settings: {prepare: none}
targets:
  - {name: pg, target: {driver: noop}}
cases:
  - name: read_write
    plan: {workload: oltp, scenario: point_select, load: {closed: {}}, stop: {duration: 25s}}
    points: [1, 16]
)",
                                               "p.yaml", {});
  ASSERT_TRUE(suite.ok()) << suite.status();
  for (int second = 1; second <= 25; ++second) {
    executor_.samples.push_back(Second(second + 0.01, 1234 + second, 4.1,
                                       second == 12   ? 2
                                       : second == 21 ? 1
                                                      : 0));
  }
  executor_.samples[9].set_executed(500);  // second 10: under 1,000 samples, its p99 marked
  EXPECT_EQ(Run(false, executor_, &*suite), 0) << out_.str();
  EXPECT_THAT(ProgressLines(out_.str()),
              ElementsAre("  [1/2] pg read_write 1 client: 10 s of 25 s, 1,244 tx/s, p99 4.100* "
                          "ms, 0 errors",
                          "  [1/2] pg read_write 1 client: 20 s of 25 s, 1,254 tx/s, p99 4.100 ms, "
                          "2 errors",
                          "  [1/2] pg read_write 1 client: 25 s of 25 s, 1,259 tx/s, p99 4.100 ms, "
                          "3 errors",
                          "  [2/2] pg read_write 16 clients: 10 s of 25 s, 1,244 tx/s, p99 4.100* "
                          "ms, 0 errors",
                          "  [2/2] pg read_write 16 clients: 20 s of 25 s, 1,254 tx/s, p99 4.100 "
                          "ms, 2 errors",
                          "  [2/2] pg read_write 16 clients: 25 s of 25 s, 1,259 tx/s, p99 4.100 "
                          "ms, 3 errors"));
  // Between a run's start line and its end line.
  const std::string out = out_.str();
  EXPECT_LT(out.find("suite: run 1 of 2"), out.find("  [1/2]"));
  EXPECT_LT(out.find("  [1/2] pg read_write 1 client: 25 s"), out.find("suite: pg/read_write/1 "));
}

// A knee search's lines say its stage and the level it holds, and its length is a bound.
TEST_F(SuiteRunnerTest, ProgressOfAKneeSearchNamesItsLevel) {
  absl::StatusOr<v1::Suite> suite = ParseSuite(R"(name: k
settings: {prepare: none}
targets:
  - {name: pg, target: {driver: noop}}
cases:
  - name: ramp
    plan:
      workload: oltp
      scenario: point_select
      load: {closed: {}}
      stages: [{name: knee, knee: {from: 1, step: 1, max: 4, every: 10s, p99: 50ms}}]
)",
                                               "k.yaml", {});
  ASSERT_TRUE(suite.ok()) << suite.status();
  v1::IntervalSample sample = Second(10, 800, 2.5, 0);
  sample.set_stage(1);
  sample.set_clients(3);
  executor_.samples = {sample};
  EXPECT_EQ(Run(false, executor_, &*suite), 0) << out_.str();
  // 4 steps and 3 of refinement (the default), each 10 s and 5 s for its judgement: at most
  // 105 s.
  EXPECT_THAT(ProgressLines(out_.str()),
              ElementsAre("  [1/1] pg ramp: 10 s of at most 105 s, stage 1 (knee search) at 3 "
                          "clients, 800 tx/s, p99 2.500* ms, 0 errors"));
  EXPECT_EQ(DescribePlannedLoad(*suite),
            "1 run, at most 105 s of load planned (a bound: a knee search ends at its knee, a "
            "closed loop at its query count, often well before)");
}

TEST(SuiteRunnerPlannedLoadTest, SecondsUnderTwoMinutesAndMinutesAbove) {
  auto describe = [](const std::string& stop, const std::string& points) {
    absl::StatusOr<v1::Suite> suite = ParseSuite(
        absl::StrCat("name: d\ntargets: [{name: t, target: {driver: noop}}]\ncases:\n"
                     "  - {name: c, points: ",
                     points,
                     ", plan: {workload: oltp, scenario: point_select, load: {closed: {}}, "
                     "stop: ",
                     stop, "}}\n"),
        "d.yaml", {});
    EXPECT_TRUE(suite.ok()) << suite.status();
    return suite.ok() ? DescribePlannedLoad(*suite) : "";
  };
  EXPECT_EQ(describe("{duration: 2s}", "[1, 4, 8, 16]"), "4 runs, about 8 s of load planned");
  EXPECT_EQ(describe("{duration: 1m}", "[1, 4]"), "2 runs, about 2 min of load planned");
  EXPECT_EQ(describe("{duration: 61s}", "[1, 4]"), "2 runs, about 3 min of load planned");
  EXPECT_EQ(describe("{queries: 100}", "[1]"), "1 run of unknown length");
}

// A refused run (DIR holds a suite and no --resume, or --resume of another suite, or of the
// same suite read another way) writes nothing: every file, its content and mtime, stays.
TEST_F(SuiteRunnerTest, RefusedRunsWriteNothing) {
  executor_.interrupt_at = 1;
  EXPECT_EQ(Run(false, executor_, nullptr, 2, 0.5, {"cases.0.points=[1, 2]"}), 130);
  const v1::SuiteIndex recorded = Index();
  EXPECT_EQ(recorded.scale(), 2);
  EXPECT_EQ(recorded.time_scale(), 0.5);
  EXPECT_THAT(recorded.overrides(), ElementsAre("cases.0.points=[1, 2]"));
  interrupted_.store(false);
  const auto before = Snapshot();
  ASSERT_GE(before.size(), 3u);

  struct Refusal {
    bool resume;
    double scale, time_scale;
    std::vector<std::string> overrides;
    std::string message;
  };
  const std::vector<Refusal> refusals = {
      {false, 2, 0.5, {"cases.0.points=[1, 2]"}, "already holds a suite"},
      {true, 1, 0.5, {"cases.0.points=[1, 2]"}, "the suite was run with --scale 2, not 1"},
      {true, 2, 1, {"cases.0.points=[1, 2]"}, "the suite was run with --time-scale 0.5, not 1"},
      {true, 2, 0.5, {}, "the suite was run with --set cases.0.points=[1, 2], not no --set"},
  };
  for (const Refusal& refusal : refusals) {
    out_.str("");
    FakeExecutor refused;
    EXPECT_EQ(
        Run(refusal.resume, refused, nullptr, refusal.scale, refusal.time_scale, refusal.overrides),
        2);
    EXPECT_TRUE(refused.calls.empty());
    EXPECT_EQ(out_.str(), absl::StrCat("dbload: suite: ",
                                       refusal.resume ? absl::StrCat("--resume ", dir_, ": ") : "",
                                       refusal.resume ? refusal.message
                                                      : absl::StrCat(dir_, " ", refusal.message,
                                                                     " (suite.json); --resume "
                                                                     "continues it, or choose "
                                                                     "another --out"),
                                       refusal.resume ? "; run it the same way, or choose another "
                                                        "--out"
                                                      : "",
                                       "\n"));
    EXPECT_TRUE(CheckSuiteDirectory(suite_, {.directory = dir_,
                                             .resume = refusal.resume,
                                             .scale = refusal.scale,
                                             .time_scale = refusal.time_scale,
                                             .overrides = refusal.overrides})
                    .message()
                    .find(refusal.message) != absl::string_view::npos);
  }
  // Another suite read the same way: the suites' difference is named.
  v1::Suite other = suite_;
  other.mutable_cases(0)->set_points(1, 4);
  out_.str("");
  FakeExecutor refused;
  EXPECT_EQ(Run(true, refused, &other, 2, 0.5, {"cases.0.points=[1, 2]"}), 2);
  EXPECT_THAT(out_.str(), HasSubstr("points[1]: 2 -> 4"));
  EXPECT_EQ(Snapshot(), before);

  // Read the same way it resumes.
  FakeExecutor resumed;
  EXPECT_EQ(Run(true, resumed, nullptr, 2, 0.5, {"cases.0.points=[1, 2]"}), 0) << out_.str();
  EXPECT_EQ(resumed.runs, 7);
}

// A failed warm-up run is recorded as failed (discarded, but not called finished).
TEST_F(SuiteRunnerTest, AFailedWarmupRunIsRecordedAsFailed) {
  executor_.fail_at = 0;
  EXPECT_EQ(Run(false, executor_), 1);
  const v1::SuiteIndex index = Index();
  EXPECT_TRUE(index.runs(0).discarded());
  EXPECT_EQ(index.runs(0).state(), "failed");
}

}  // namespace
}  // namespace dbload
