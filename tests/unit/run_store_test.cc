#include "coordinator/run_store.h"

#include <filesystem>
#include <fstream>

#include "report/report.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

class RunStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/dbload_run_store_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static v1::RunReport Report(const std::string& id, const std::string& state, uint64_t executed) {
    v1::RunReport report;
    report.set_format_version(kReportFormatVersion);
    report.set_run_id(id);
    report.set_state(state);
    report.set_executed(executed);
    report.set_total_duration_s(5);
    return report;
  }
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ + "/runs/" + name) << content;
  }

  std::string dir_;
};

TEST_F(RunStoreTest, SavedReportsComeBackAndUnfinishedWritesAreIgnored) {
  absl::StatusOr<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Save(Report("run-1-aa", "finished", 10)).ok());
  ASSERT_TRUE((*store)->Save(Report("run-2-bb", "running", 20)).ok());
  ASSERT_TRUE((*store)->Save(Report("run-2-bb", "running", 30)).ok());  // replaced
  Write("run-3-cc.json.tmp", "{ half a rep");
  absl::StatusOr<std::vector<v1::RunReport>> loaded = (*store)->LoadAll();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 2u);
  std::map<std::string, uint64_t> executed;
  for (const auto& report : *loaded) executed[report.run_id()] = report.executed();
  EXPECT_EQ(executed["run-1-aa"], 10u);
  EXPECT_EQ(executed["run-2-bb"], 30u);
  EXPECT_FALSE((*store)->Save(Report("../escape", "finished", 1)).ok());
}

TEST_F(RunStoreTest, AReportThatCannotBeReadIsAnErrorNamingItsFile) {
  absl::StatusOr<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_TRUE(store.ok());
  Write("run-9-zz.json", "not json");
  absl::StatusOr<std::vector<v1::RunReport>> loaded = (*store)->LoadAll();
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("runs/run-9-zz.json: "));

  std::filesystem::remove(dir_ + "/runs/run-9-zz.json");
  ASSERT_TRUE((*store)->Save(Report("run-1-aa", "finished", 1)).ok());
  std::filesystem::rename(dir_ + "/runs/run-1-aa.json", dir_ + "/runs/run-5-xx.json");
  loaded = (*store)->LoadAll();
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("holds the report of run 'run-1-aa'"));
}

TEST(RunStoreRestartTest, ARunningReportIsInterruptedAfterARestart) {
  v1::RunReport report;
  report.set_state("running");
  report.set_total_duration_s(12.34);
  MarkInterruptedByRestart(report);
  EXPECT_EQ(report.state(), "interrupted");
  EXPECT_EQ(report.end_reason(),
            "interrupted: the coordinator stopped during the run; these are the numbers saved "
            "after 12.3 s");
  v1::RunReport finished;
  finished.set_state("finished");
  finished.set_end_reason("duration");
  MarkInterruptedByRestart(finished);
  EXPECT_EQ(finished.end_reason(), "duration");
}

}  // namespace
}  // namespace dbload
