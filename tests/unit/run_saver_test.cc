#include "coordinator/run_saver.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "report/report.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

class RunSaverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/dbload_run_saver_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  std::vector<std::string> logged_;
  RunSaver::Log log_ = [this](const std::string& line) { logged_.push_back(line); };
};

TEST_F(RunSaverTest, SavesUnderTheRunsIdAndOnlyWhenDue) {
  absl::StatusOr<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status();
  RunSaver saver(store->get(), log_);
  EXPECT_TRUE(saver.enabled());
  EXPECT_FALSE(saver.Due(10 * kSecond, 10 * kSecond + kSaveEvery - 1));
  EXPECT_TRUE(saver.Due(10 * kSecond, 10 * kSecond + kSaveEvery));

  v1::RunReport so_far;  // a report so far does not name its run
  so_far.set_format_version(kReportFormatVersion);
  so_far.set_state("running");
  so_far.set_executed(7);
  saver.Save(so_far, "run-1-aa");
  absl::StatusOr<std::vector<v1::RunReport>> loaded = (*store)->LoadAll();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].run_id(), "run-1-aa");
  EXPECT_EQ((*loaded)[0].executed(), 7u);
  EXPECT_TRUE(logged_.empty());
}

TEST_F(RunSaverTest, AFailedSaveIsLoggedAndNothingElse) {
  absl::StatusOr<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status();
  RunSaver saver(store->get(), log_);
  saver.Save(v1::RunReport(), "../escape");
  ASSERT_EQ(logged_.size(), 1u);
  EXPECT_THAT(logged_[0], HasSubstr("run ../escape: "));
}

TEST_F(RunSaverTest, WithoutAStoreNothingIsSavedOrDue) {
  RunSaver saver(nullptr, log_);
  EXPECT_FALSE(saver.enabled());
  EXPECT_FALSE(saver.Due(0, 100 * kSecond));
  saver.Save(v1::RunReport(), "run-1-aa");
  EXPECT_TRUE(logged_.empty());
}

TEST(RestoreTest, ARestoredRunShowsHowItEnded) {
  v1::RunReport report;
  report.set_run_id("run-3-cc");
  report.set_end_reason("duration; degraded: agent a lost (silent)");
  report.set_degraded(true);
  RestoredRun restored = Restore(report);
  EXPECT_EQ(restored.state, "finished");  // an older report without a state
  EXPECT_EQ(restored.progress.run_id(), "run-3-cc");
  EXPECT_EQ(restored.progress.state(), "finished");
  EXPECT_EQ(restored.progress.end_reason(), report.end_reason());
  EXPECT_TRUE(restored.progress.degraded());
  report.set_state("interrupted");
  EXPECT_EQ(Restore(report).progress.state(), "interrupted");
}

TEST(RestoreTest, TheLatestIsTheLastStartedAndTheLaterOfATie) {
  std::vector<v1::RunReport> reports(3);
  reports[0].set_run_id("run-1-aa");
  reports[0].set_started_at("2026-01-02T00:00:00Z");
  reports[1].set_run_id("run-2-bb");
  reports[1].set_started_at("2026-01-01T00:00:00Z");
  reports[2].set_run_id("run-3-cc");
  reports[2].set_started_at("2026-01-02T00:00:00Z");
  EXPECT_EQ(LatestRestored(reports), "run-3-cc");
  reports.pop_back();
  EXPECT_EQ(LatestRestored(reports), "run-1-aa");
  EXPECT_EQ(LatestRestored({}), "");
}

}  // namespace
}  // namespace dbload
