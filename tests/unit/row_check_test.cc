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

// The warm-up's transactions changed the rows too: the count before precedes them, and the
// report's warm-up counts join its executed ones in what the rows must have changed by.
TEST(RowCheckTest, AWarmUpsTransactionsCountInTheChangeExpected) {
  v1::Plan warm = WritePlan();
  warm.set_warmup_ns(1000000000);  // 1 s
  GatedRowCounter counter;
  RowCheck check = RowCheck::For(warm, Giving(counter), counter.on_counted());
  ASSERT_TRUE(check.active());
  check.CountBefore();
  counter.Answer(GatedRowCounter::Counts{{"orders", 100}});
  ASSERT_TRUE(counter.WaitCounted(1));
  check.CountAfter();
  counter.Answer(GatedRowCounter::Counts{{"orders", 105}});
  ASSERT_TRUE(counter.WaitCounted(2));
  v1::RunReport report = ReportOf(3);
  report.mutable_query_types(0)->set_warmup_executed(2);
  EXPECT_TRUE(check.FillReport(report).ok());
  ASSERT_EQ(report.row_changes_size(), 1);
  EXPECT_EQ(report.row_changes(0).expected(), 5);
  EXPECT_EQ(report.row_changes_not_checked(), "");
}

TEST(RowCheckTest, NoCounterIsNotCheckedAndTheReportSaysWhy) {
  v1::RunReport report;
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

// The workload's invariants are read with the rows, before and after the load (and its warm-up):
// one must keep its value, one must be 0.
TEST(RowCheckTest, InvariantsAreReadBeforeAndAfterTheLoadAndJudged) {
  v1::Plan plan = WritePlan();
  plan.set_warmup_ns(1'000'000'000);
  v1::Invariant& total = *plan.mutable_workload_spec()->add_invariants();
  total.set_name("total");
  total.mutable_sql()->set_postgresql("SELECT SUM(balance) FROM accounts");
  total.mutable_sql()->set_mysql("SELECT SUM(balance) FROM accounts -- mysql");
  total.set_unchanged(true);
  v1::Invariant& negative = *plan.mutable_workload_spec()->add_invariants();
  negative.set_name("no_negative");
  negative.mutable_sql()->set_any("SELECT COUNT(*) FROM accounts WHERE balance < 0");
  negative.set_expect("0");
  for (const bool broken : {false, true}) {
    SCOPED_TRACE(broken);
    GatedRowCounter counter;
    std::vector<std::vector<std::string>> asked;
    std::vector<std::vector<std::string>> answers = {{"4000", "0"},
                                                     {broken ? "4010" : "4000.00", "0"}};
    RowCheck check =
        RowCheck::For(plan, Giving(counter), counter.on_counted(),
                      [&](const v1::Plan&) -> absl::StatusOr<ValueReader> {
                        return ValueReader([&](const std::vector<std::string>& queries) {
                          asked.push_back(queries);
                          std::vector<std::string> answer = answers.front();
                          answers.erase(answers.begin());
                          return absl::StatusOr<std::vector<std::string>>(answer);
                        });
                      });
    ASSERT_TRUE(check.active());
    check.CountBefore();
    counter.Answer(GatedRowCounter::Counts{{"orders", 10}});
    ASSERT_TRUE(counter.WaitCounted(1));
    check.CountAfter();
    counter.Answer(GatedRowCounter::Counts{{"orders", 13}});
    ASSERT_TRUE(counter.WaitCounted(2));
    EXPECT_TRUE(check.CountAfter());
    EXPECT_EQ(counter.asked().size(), 2u);  // the rows, beside
    ASSERT_EQ(asked.size(), 2u);
    EXPECT_THAT(asked[0],
                ::testing::ElementsAre("SELECT SUM(balance) FROM accounts",
                                       "SELECT COUNT(*) FROM accounts WHERE balance < 0"));
    v1::RunReport report = ReportOf(3);
    const absl::Status verdict = check.FillReport(report);
    EXPECT_EQ(report.row_changes_not_checked(), "");
    ASSERT_EQ(report.invariants_size(), 2);
    EXPECT_EQ(report.invariants(0).before(), "4000");
    EXPECT_EQ(report.invariants(0).holds(), !broken);
    EXPECT_TRUE(report.invariants(1).holds());
    EXPECT_EQ(report.invariants(1).after(), "0");
    if (broken) {
      EXPECT_EQ(verdict.code(), absl::StatusCode::kFailedPrecondition);
      EXPECT_THAT(verdict.message(),
                  HasSubstr("total: BROKEN, `SELECT SUM(balance) FROM accounts` was 4000 before "
                            "the load and 4010 after (must not change)"));
    } else {
      EXPECT_TRUE(verdict.ok()) << verdict;
    }
  }
}

// WritePlan with one invariant: `SELECT 1` must return 1.
v1::Plan WritePlanWithAnInvariant() {
  v1::Plan plan = WritePlan();
  v1::Invariant& total = *plan.mutable_workload_spec()->add_invariants();
  total.set_name("total");
  total.mutable_sql()->set_any("SELECT 1");
  total.set_expect("1");
  return plan;
}

// A reader that reads `values`, or fails as they say.
RowCheck::ReaderFactory Reading(absl::StatusOr<std::vector<std::string>> values) {
  return [values](const v1::Plan&) -> absl::StatusOr<ValueReader> {
    return ValueReader([values](const std::vector<std::string>&) { return values; });
  };
}

TEST(RowCheckTest, InvariantsThatCannotBeReadSayWhy) {
  const v1::Plan plan = WritePlanWithAnInvariant();
  GatedRowCounter counter;
  RowCheck refused =
      RowCheck::For(plan, Giving(counter), counter.on_counted(),
                    [](const v1::Plan&) -> absl::StatusOr<ValueReader> {
                      return absl::PermissionDeniedError("the coordinator refuses target db:5432");
                    });
  v1::RunReport report = ReportOf(0);
  refused.FillReport(report).IgnoreError();
  EXPECT_EQ(report.invariants_not_checked(), "the coordinator refuses target db:5432");
  RowCheck failing =
      RowCheck::For(plan, Giving(counter), counter.on_counted(),
                    Reading(absl::InternalError("`SELECT 1`: no row returned")));
  failing.CountBefore();
  counter.Answer(GatedRowCounter::Counts{{"orders", 1}});
  ASSERT_TRUE(counter.WaitCounted(1));
  // The rows were counted: they are counted again after the load, and checked, all the same.
  EXPECT_FALSE(failing.CountAfter());
  counter.Answer(GatedRowCounter::Counts{{"orders", 1}});
  ASSERT_TRUE(counter.WaitCounted(2));
  EXPECT_TRUE(failing.CountAfter());
  report = ReportOf(0);
  EXPECT_TRUE(failing.FillReport(report).ok());
  EXPECT_EQ(report.invariants_not_checked(),
            "reading before the load: `SELECT 1`: no row returned");
  EXPECT_EQ(report.invariants_size(), 0);
  EXPECT_EQ(report.row_changes_not_checked(), "");
  ASSERT_EQ(report.row_changes_size(), 1);
}

// The other way round: rows that cannot be counted leave the invariants their check.
TEST(RowCheckTest, RowsThatCannotBeCountedLeaveTheInvariantsTheirCheck) {
  GatedRowCounter counter;
  RowCheck check = RowCheck::For(WritePlanWithAnInvariant(), Giving(counter),
                                 counter.on_counted(), Reading(std::vector<std::string>{"1"}));
  check.CountBefore();
  counter.Answer(absl::UnavailableError("orders: connection refused"));
  ASSERT_TRUE(counter.WaitCounted(1));
  EXPECT_FALSE(check.CountAfter());
  counter.Answer(absl::UnavailableError("orders: connection refused"));
  ASSERT_TRUE(counter.WaitCounted(2));
  v1::RunReport report = ReportOf(0);
  EXPECT_TRUE(check.FillReport(report).ok());
  EXPECT_THAT(report.row_changes_not_checked(), HasSubstr("connection refused"));
  ASSERT_EQ(report.invariants_size(), 1);
  EXPECT_TRUE(report.invariants(0).holds());
}

}  // namespace
}  // namespace dbload
