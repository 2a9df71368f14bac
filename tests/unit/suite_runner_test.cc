#include "cli/suite_runner.h"

#include <atomic>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/report.h"
#include "common/suite_parser.h"
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
  int Run(const v1::Plan& plan, const std::string& report_path) override {
    const int index = runs++;
    calls.push_back(absl::StrCat("run ", plan.name(), " ", plan.load().closed().clients()));
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

  int Run(bool resume, FakeExecutor& executor, const v1::Suite* suite = nullptr) {
    return RunSuite(suite == nullptr ? suite_ : *suite,
                    {.directory = dir_,
                     .resume = resume,
                     .interrupted = &interrupted_,
                     .out = &out_,
                     .now = [] { return std::string("2026-01-01T00:00:00Z"); }},
                    executor);
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

}  // namespace
}  // namespace dbload
