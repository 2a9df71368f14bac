#include "common/workloads/oltp.h"

#include <map>

#include "common/db/noop_driver.h"
#include "common/field_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dbload {
namespace {

TEST(OltpWorkloadTest, PointSelectUsesSysbenchStatementsPerTable) {
  auto workload = MakeWorkload("oltp", {{"tables", "3"}});
  ASSERT_TRUE(workload.ok()) << workload.status();
  auto scenario = (*workload)->MakeScenario("point_select");
  ASSERT_TRUE(scenario.ok());
  const auto pg = (*scenario)->Statements(db::Dialect::kPostgreSql);
  ASSERT_EQ(pg.size(), 3u);
  EXPECT_EQ(pg[2].sql, "SELECT c FROM sbtest3 WHERE id=$1");
  EXPECT_EQ((*scenario)->Statements(db::Dialect::kMySql)[0].sql, "SELECT c FROM sbtest1 WHERE id=?");
  EXPECT_THAT((*scenario)->query_types(), testing::ElementsAre("point_select"));
}

TEST(OltpWorkloadTest, BadOptionsAndNamesAreRefusedWithTheirName) {
  EXPECT_EQ(FieldOf(MakeWorkload("oltp", {{"tables", "zero"}}).status()),
            "workload_options.tables");
  const absl::Status unknown = MakeWorkload("oltp", {{"table_sise", "10"}}).status();
  EXPECT_THAT(unknown.message(), testing::HasSubstr("unknown option of workload oltp"));
  EXPECT_EQ(FieldOf(unknown), "workload_options.table_sise");
  EXPECT_THAT(MakeWorkload("tpcc", {}).status().message(), testing::HasSubstr("unknown workload 'tpcc'"));
  auto workload = MakeWorkload("oltp", {});
  EXPECT_THAT((*workload)->MakeScenario("read_wrote").status().message(),
              testing::HasSubstr("no scenario 'read_wrote'"));
  EXPECT_EQ(FieldOf((*workload)->MakeScenario("read_wrote").status()), "scenario");
}

TEST(OltpWorkloadTest, SpecialDistributionHasSysbenchsHotSpot) {
  OltpOptions options;
  Random random(1);
  constexpr int kDraws = 400'000;
  int in_hot_window = 0;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t id = SpecialDistribution(random, 1, 1'000'000, options);
    ASSERT_GE(id, 1);
    ASSERT_LE(id, 1'000'000);
    in_hot_window += id >= 495'000 && id <= 505'001;  // the central 1 %
  }
  // 75 % land in the hot window, plus the gaussian part's small share of it.
  EXPECT_NEAR(in_hot_window / static_cast<double>(kDraws), 0.75 + 0.25 * 0.05, 0.02);
}

TEST(OltpWorkloadTest, WorkersWithTheSameSlotDrawTheSameKeys) {
  auto workload = MakeWorkload("oltp", {{"tables", "4"}, {"table_size", "1000"}});
  auto scenario = *(*workload)->MakeScenario("point_select");
  SimulatedClock clock;
  db::NoopDriver driver({}, clock);
  auto session = *driver.Connect();
  auto a = scenario->NewWorker({.run_seed = 9, .index = 1, .count = 2});
  auto b = scenario->NewWorker({.run_seed = 9, .index = 1, .count = 2});
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(a->NextQueryType(), b->NextQueryType());
    EXPECT_TRUE(a->Run(0, *session).ok());
  }
}

}  // namespace
}  // namespace dbload
