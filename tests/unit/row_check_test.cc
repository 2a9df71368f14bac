// One run's row check on its own: what a plan asks for, the counts before and after the load on
// the check's thread (a gated fake counter), and what the report says of them.
#include "coordinator/row_check.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/gated_row_counter.h"

namespace dbload {
namespace {

using ::testing::HasSubstr;

// Scenario "write": each "insert" adds a row to `orders`; "select" changes nothing.
v1::Plan WritePlan() {
  v1::Plan plan;
  plan.mutable_target()->set_driver("postgresql");
  plan.set_scenario("write");
  v1::Scenario& write = *plan.mutable_workload_spec()->add_scenarios();
  write.set_name("write");
  v1::QueryType& insert = *write.add_query_types();
  insert.set_name("insert");
  (*insert.mutable_changes())["orders"] = 1;
  write.add_query_types()->set_name("select");
  return plan;
}

v1::RunReport ReportOf(uint64_t inserts) {
  v1::RunReport report;
  v1::QueryTypeReport& insert = *report.add_query_types();
  insert.set_name("insert");
  insert.set_executed(inserts);
  return report;
}

RowCheck::CounterFactory Giving(GatedRowCounter& counter) {
  return [&counter](const v1::Plan&) -> absl::StatusOr<RowCounter> { return counter.counter(); };
}

TEST(RowCheckTest, APlanWithoutDeclaredChangesOrAPrepareChecksNothing) {
  GatedRowCounter counter;
  v1::Plan read = WritePlan();
  read.set_scenario("read");
  v1::Plan prepare = WritePlan();
  prepare.set_prepare_only(true);
  for (const v1::Plan& plan : {read, prepare}) {
    RowCheck check = RowCheck::For(plan, Giving(counter), counter.on_counted());
    EXPECT_FALSE(check.active());
    check.CountBefore();
    EXPECT_TRUE(check.BeforeIn());
    EXPECT_TRUE(check.CountAfter());
    v1::RunReport report = ReportOf(3);
    EXPECT_TRUE(check.FillReport(report).ok());
    EXPECT_EQ(report.row_changes_size(), 0);
    EXPECT_EQ(report.row_changes_not_checked(), "");
  }
  EXPECT_TRUE(counter.asked().empty());
}

TEST(RowCheckTest, ATargetWithoutRowsChecksNothing) {
  RowCheck check = RowCheck::For(
      WritePlan(), [](const v1::Plan&) -> absl::StatusOr<RowCounter> { return RowCounter(); },
      [] {});
  EXPECT_FALSE(check.active());
  v1::RunReport report = ReportOf(3);
  EXPECT_TRUE(check.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_not_checked(), "");
}

TEST(RowCheckTest, AWarmUpOrNoCounterIsNotCheckedAndTheReportSaysWhy) {
  v1::Plan warm = WritePlan();
  warm.set_warmup_ns(1000000000);  // 1 s
  bool asked = false;
  RowCheck warmed = RowCheck::For(
      warm,
      [&asked](const v1::Plan&) -> absl::StatusOr<RowCounter> {
        asked = true;
        return RowCounter();
      },
      [] {});
  EXPECT_FALSE(asked);  // nothing to count with: no connection either
  v1::RunReport report = ReportOf(3);
  EXPECT_TRUE(warmed.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_not_checked(),
            "the warm-up's transactions change rows but are not in the report");

  RowCheck refused = RowCheck::For(
      WritePlan(),
      [](const v1::Plan&) -> absl::StatusOr<RowCounter> {
        return absl::PermissionDeniedError("the coordinator refuses target db:5432");
      },
      [] {});
  EXPECT_FALSE(refused.active());
  report = ReportOf(3);
  EXPECT_TRUE(refused.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_size(), 0);
  EXPECT_EQ(report.row_changes_not_checked(), "the coordinator refuses target db:5432");
}

TEST(RowCheckTest, TheCountsBeforeAndAfterTheLoadGoIntoTheReport) {
  GatedRowCounter counter;
  RowCheck check = RowCheck::For(WritePlan(), Giving(counter), counter.on_counted());
  ASSERT_TRUE(check.active());
  EXPECT_TRUE(check.BeforeIn());  // not started: nothing to wait for
  check.CountBefore();
  EXPECT_FALSE(check.BeforeIn());
  counter.Answer(GatedRowCounter::Counts{{"orders", 100}});
  ASSERT_TRUE(counter.WaitCounted(1));
  EXPECT_TRUE(check.BeforeIn());
  EXPECT_FALSE(check.CountAfter());
  EXPECT_FALSE(check.CountAfter());  // one count after, however often asked
  counter.Answer(GatedRowCounter::Counts{{"orders", 103}});
  ASSERT_TRUE(counter.WaitCounted(2));
  EXPECT_TRUE(check.CountAfter());
  ASSERT_EQ(counter.asked().size(), 2u);
  EXPECT_EQ(counter.asked()[0], std::set<std::string>{"orders"});

  v1::RunReport report = ReportOf(3);
  EXPECT_TRUE(check.FillReport(report).ok());
  ASSERT_EQ(report.row_changes_size(), 1);
  EXPECT_EQ(report.row_changes(0).table(), "orders");
  EXPECT_EQ(report.row_changes(0).before(), 100);
  EXPECT_EQ(report.row_changes(0).after(), 103);
  EXPECT_EQ(report.row_changes(0).expected(), 3);
  EXPECT_EQ(report.row_changes_not_checked(), "");

  v1::RunReport more = ReportOf(4);
  const absl::Status disagrees = check.FillReport(more);
  EXPECT_EQ(disagrees.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(disagrees.message(), HasSubstr("orders changed by +3 rows"));
  EXPECT_EQ(more.row_changes(0).expected(), 4);
}

// The database unreachable before the load: the load is not held for it and nothing is counted
// after it; the report says why the rows were not checked.
TEST(RowCheckTest, ACountThatFailsBeforeTheLoadChecksNothingAndSaysWhy) {
  GatedRowCounter counter;
  RowCheck check = RowCheck::For(WritePlan(), Giving(counter), counter.on_counted());
  check.CountBefore();
  counter.Answer(absl::UnavailableError("target: connection refused"));
  ASSERT_TRUE(counter.WaitCounted(1));
  EXPECT_TRUE(check.BeforeIn());
  EXPECT_TRUE(check.CountAfter());
  EXPECT_EQ(counter.asked().size(), 1u);
  v1::RunReport report = ReportOf(3);
  EXPECT_TRUE(check.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_size(), 0);
  EXPECT_EQ(report.row_changes_not_checked(),
            "counting before the load: target: connection refused");
}

TEST(RowCheckTest, ACountThatFailsAfterTheLoadSaysWhy) {
  GatedRowCounter counter;
  RowCheck check = RowCheck::For(WritePlan(), Giving(counter), counter.on_counted());
  check.CountBefore();
  counter.Answer(GatedRowCounter::Counts{{"orders", 100}});
  counter.Answer(absl::InternalError("counting the rows of orders: server closed the connection"));
  ASSERT_TRUE(counter.WaitCounted(1));
  check.CountAfter();
  ASSERT_TRUE(counter.WaitCounted(2));
  EXPECT_TRUE(check.CountAfter());
  v1::RunReport report = ReportOf(3);
  EXPECT_TRUE(check.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_size(), 0);
  EXPECT_EQ(report.row_changes_not_checked(),
            "counting after the load: counting the rows of orders: server closed the connection");
}

// A run that ends while its count before the load is under way (refused by the server, say):
// the check waits for the count when it goes, and says nothing was compared.
TEST(RowCheckTest, ARunThatEndsBeforeItsCountsSaysSo) {
  GatedRowCounter counter;
  RowCheck check = RowCheck::For(WritePlan(), Giving(counter), counter.on_counted());
  v1::RunReport report = ReportOf(0);
  EXPECT_TRUE(check.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_not_checked(), "the run ended before the count before its load");
  check.CountBefore();
  RowCheck moved = std::move(check);  // the count's thread keeps its state
  counter.Answer(GatedRowCounter::Counts{{"orders", 1}});
  ASSERT_TRUE(counter.WaitCounted(1));
  EXPECT_TRUE(moved.BeforeIn());
  report = ReportOf(0);
  EXPECT_TRUE(moved.FillReport(report).ok());
  EXPECT_EQ(report.row_changes_not_checked(), "the run ended before the count after its load");
}

}  // namespace
}  // namespace dbload
