#include "coordinator/row_changes.h"

#include "base/clock.h"
#include "db/noop_driver.h"
#include "gtest/gtest.h"
#include "report/row_changes.h"

namespace dbload {
namespace {

v1::Plan PlanWithChanges() {
  v1::Plan plan;
  plan.set_scenario("write");
  v1::Scenario& other = *plan.mutable_workload_spec()->add_scenarios();
  other.set_name("read");
  (*other.add_query_types()->mutable_changes())["ignored"] = 5;
  v1::Scenario& write = *plan.mutable_workload_spec()->add_scenarios();
  write.set_name("write");
  v1::QueryType& insert = *write.add_query_types();
  insert.set_name("insert_order");
  (*insert.mutable_changes())["orders"] = 1;
  (*insert.mutable_changes())["order_lines"] = 3;
  v1::QueryType& remove = *write.add_query_types();
  remove.set_name("delete_order");
  (*remove.mutable_changes())["orders"] = -1;
  write.add_query_types()->set_name("select_order");
  return plan;
}

v1::RunReport ReportOf(uint64_t inserts, uint64_t deletes) {
  v1::RunReport report;
  v1::QueryTypeReport& insert = *report.add_query_types();
  insert.set_name("insert_order");
  insert.set_executed(inserts);
  v1::QueryTypeReport& remove = *report.add_query_types();
  remove.set_name("delete_order");
  remove.set_executed(deletes);
  return report;
}

TEST(RowChangesTest, DeclaredChangesAreThoseOfThePlansScenario) {
  const auto declared = DeclaredChanges(PlanWithChanges());
  ASSERT_EQ(declared.size(), 2u);
  EXPECT_EQ(declared.at("insert_order").at("orders"), 1);
  EXPECT_EQ(declared.at("insert_order").at("order_lines"), 3);
  EXPECT_EQ(declared.at("delete_order").at("orders"), -1);
}

TEST(RowChangesTest, AgreeingCountsPassAndAreRecorded) {
  const auto declared = DeclaredChanges(PlanWithChanges());
  v1::RunReport report = ReportOf(10, 4);
  const absl::Status checked = CheckRowChanges(declared, {{"orders", 100}, {"order_lines", 0}},
                                               {{"orders", 106}, {"order_lines", 30}}, report);
  EXPECT_TRUE(checked.ok()) << checked;
  ASSERT_EQ(report.row_changes_size(), 2);
  EXPECT_EQ(report.row_changes(0).table(), "order_lines");
  EXPECT_EQ(report.row_changes(0).expected(), 30);
  EXPECT_EQ(report.row_changes(1).table(), "orders");
  EXPECT_EQ(report.row_changes(1).before(), 100);
  EXPECT_EQ(report.row_changes(1).after(), 106);
  EXPECT_EQ(report.row_changes(1).expected(), 6);
}

TEST(RowChangesTest, ADisagreementNamesTheTableAndBothChanges) {
  const auto declared = DeclaredChanges(PlanWithChanges());
  v1::RunReport report = ReportOf(10, 4);
  const absl::Status checked = CheckRowChanges(declared, {{"orders", 100}, {"order_lines", 0}},
                                               {{"orders", 105}, {"order_lines", 30}}, report);
  EXPECT_EQ(checked.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(checked.message(),
            "the database disagrees with the report: orders changed by +5 rows, the executed "
            "transactions say +6");
  EXPECT_EQ(report.row_changes_size(), 2);
}

TEST(RowChangesTest, ATableNoExecutedTransactionTouchedMustStayUnchanged) {
  const auto declared = DeclaredChanges(PlanWithChanges());
  v1::RunReport report;  // nothing executed
  EXPECT_TRUE(CheckRowChanges(declared, {{"orders", 7}, {"order_lines", 9}},
                              {{"orders", 7}, {"order_lines", 9}}, report)
                  .ok());
  EXPECT_EQ(report.row_changes(1).expected(), 0);
}

// What the CLI reads back from a report it was served: the same verdict as the check's.
TEST(RowChangesTest, TheReportsRowChangesAloneGiveTheVerdict) {
  v1::RunReport report;
  EXPECT_TRUE(RowChangesDisagreement(report).ok());
  v1::RowChange& orders = *report.add_row_changes();
  orders.set_table("orders");
  orders.set_before(100);
  orders.set_after(106);
  orders.set_expected(6);
  EXPECT_TRUE(RowChangesDisagreement(report).ok());
  v1::RowChange& lines = *report.add_row_changes();
  lines.set_table("order_lines");
  lines.set_before(10);
  lines.set_after(7);
  lines.set_expected(-4);
  const absl::Status verdict = RowChangesDisagreement(report);
  EXPECT_EQ(verdict.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(verdict.message(),
            "the database disagrees with the report: order_lines changed by -3 rows, the "
            "executed transactions say -4");
}

// The noop driver answers no number: the count fails and names the table.
TEST(RowChangesTest, ACountWithoutANumberFailsNamingTheTable) {
  SteadyClock clock;
  db::NoopDriver driver({}, clock);
  const absl::StatusOr<std::map<std::string, int64_t>> counted = CountRows(driver, {"orders"});
  EXPECT_EQ(counted.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(counted.status().message(), "counting the rows of orders: no number returned");
}

}  // namespace
}  // namespace dbload
