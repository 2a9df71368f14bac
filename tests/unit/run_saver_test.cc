#include "coordinator/run_saver.h"

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/run_store.h"
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

  // What the coordinator gives its saver: the store's Save.
  static RunSaver::Write Into(RunStore& store) {
    return [&store](const v1::RunReport& report) { return store.Save(report); };
  }

  std::string dir_;
  std::vector<std::string> logged_;
  RunSaver::Log log_ = [this](const std::string& line) { logged_.push_back(line); };
};

TEST_F(RunSaverTest, SavesUnderTheRunsIdAndOnlyWhenDue) {
  absl::StatusOr<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status();
  RunSaver saver(Into(**store), log_);
  EXPECT_TRUE(saver.enabled());
  EXPECT_FALSE(saver.Due(10 * kSecond, 10 * kSecond + kSaveEvery - 1));
  EXPECT_TRUE(saver.Due(10 * kSecond, 10 * kSecond + kSaveEvery));

  v1::RunReport so_far;  // a report so far does not name its run
  so_far.set_format_version(kReportFormatVersion);
  so_far.set_state("running");
  so_far.set_executed(7);
  saver.Save(so_far, "run-1-aa");
  saver.Flush();
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
  RunSaver saver(Into(**store), log_);
  saver.Save(v1::RunReport(), "../escape");
  saver.Flush();
  ASSERT_EQ(logged_.size(), 1u);
  EXPECT_THAT(logged_[0], HasSubstr("run ../escape: "));
}

TEST_F(RunSaverTest, WithoutAStoreNothingIsSavedOrDue) {
  RunSaver saver({}, log_);
  EXPECT_FALSE(saver.enabled());
  EXPECT_FALSE(saver.Due(0, 100 * kSecond));
  saver.Save(v1::RunReport(), "run-1-aa");
  EXPECT_TRUE(logged_.empty());
}

// The coordinator saves under the mutex its heartbeats need: a disk that takes seconds to
// write must not hold the caller, and what piles up meanwhile is each run's latest report.
TEST_F(RunSaverTest, ASlowDiskHoldsNeitherTheCallerNorStaleReports) {
  std::mutex mu;
  std::condition_variable changed;
  bool disk_free = false;
  int writing = 0;
  std::vector<std::pair<std::string, uint64_t>> written;
  RunSaver saver(
      [&](const v1::RunReport& report) {
        std::unique_lock lock(mu);
        ++writing;
        changed.notify_all();
        changed.wait(lock, [&] { return disk_free; });
        written.emplace_back(report.run_id(), report.executed());
        return absl::OkStatus();
      },
      log_);
  v1::RunReport report;
  report.set_executed(1);
  saver.Save(report, "run-1-aa");
  {
    std::unique_lock lock(mu);
    changed.wait(lock, [&] { return writing == 1; });  // stuck in the write
  }
  // The disk is stuck: every Save below returns at once.
  for (uint64_t executed : {2, 3, 4}) {
    report.set_executed(executed);
    saver.Save(report, "run-1-aa");
  }
  report.set_executed(10);
  saver.Save(report, "run-2-bb");
  {
    std::lock_guard lock(mu);
    disk_free = true;
  }
  changed.notify_all();
  saver.Flush();
  std::lock_guard lock(mu);
  EXPECT_THAT(written, ::testing::ElementsAre(std::pair<std::string, uint64_t>("run-1-aa", 1),
                                              std::pair<std::string, uint64_t>("run-1-aa", 4),
                                              std::pair<std::string, uint64_t>("run-2-bb", 10)));
  EXPECT_TRUE(logged_.empty());
}

TEST_F(RunSaverTest, WhatIsQueuedIsWrittenBeforeTheSaverGoes) {
  absl::StatusOr<std::unique_ptr<RunStore>> store = RunStore::Open(dir_);
  ASSERT_TRUE(store.ok()) << store.status();
  {
    RunSaver saver(Into(**store), log_);
    for (const char* run_id : {"run-1-aa", "run-2-bb", "run-3-cc"}) {
      v1::RunReport report;
      report.set_format_version(kReportFormatVersion);
      saver.Save(report, run_id);
    }
  }
  absl::StatusOr<std::vector<v1::RunReport>> loaded = (*store)->LoadAll();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->size(), 3u);
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
